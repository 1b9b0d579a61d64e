"""Label selectors, node selector terms and tolerations, table-driven
(docs/scheduling-model.md, "Label selectors, taints and tolerations")."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api import (
    LabelRequirement,
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Taint,
    Toleration,
)
from scheduler_core.api._fields import Fields
from scheduler_core.api.selectors import parse_int64


def _case(name: str, *args: Any) -> Any:
    return pytest.param(*args, id=name)


# ------------------------------------------------------------------------ LabelSelector
def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


LABEL_SELECTOR_CASES = [
    _case("empty-selector-matches-everything", {}, {"a": "1"}, True),
    _case("empty-selector-matches-no-labels", {}, {}, True),
    _case("matchLabels-hit", {"matchLabels": {"app": "web"}}, {"app": "web", "x": "y"}, True),
    _case("matchLabels-wrong-value", {"matchLabels": {"app": "web"}}, {"app": "db"}, False),
    _case("matchLabels-absent", {"matchLabels": {"app": "web"}}, {}, False),
    _case("matchLabels-all-anded", {"matchLabels": {"app": "web", "tier": "fe"}},
          {"app": "web"}, False),
    _case("In-hit", {"matchExpressions": [expr("zone", "In", "a", "b")]}, {"zone": "b"}, True),
    _case("In-miss", {"matchExpressions": [expr("zone", "In", "a", "b")]}, {"zone": "c"}, False),
    _case("In-absent", {"matchExpressions": [expr("zone", "In", "a")]}, {}, False),
    _case("NotIn-other-value", {"matchExpressions": [expr("zone", "NotIn", "a")]},
          {"zone": "b"}, True),
    _case("NotIn-listed-value", {"matchExpressions": [expr("zone", "NotIn", "a")]},
          {"zone": "a"}, False),
    _case("NotIn-absent-matches", {"matchExpressions": [expr("zone", "NotIn", "a")]}, {}, True),
    _case("Exists-present", {"matchExpressions": [expr("gpu", "Exists")]}, {"gpu": ""}, True),
    _case("Exists-absent", {"matchExpressions": [expr("gpu", "Exists")]}, {}, False),
    _case("DoesNotExist-absent-matches", {"matchExpressions": [expr("gpu", "DoesNotExist")]},
          {"cpu": "x"}, True),
    _case("DoesNotExist-present", {"matchExpressions": [expr("gpu", "DoesNotExist")]},
          {"gpu": "1"}, False),
    _case("labels-and-expressions-anded",
          {"matchLabels": {"app": "web"}, "matchExpressions": [expr("zone", "In", "a")]},
          {"app": "web", "zone": "b"}, False),
    _case("labels-and-expressions-both-hit",
          {"matchLabels": {"app": "web"}, "matchExpressions": [expr("zone", "In", "a")]},
          {"app": "web", "zone": "a"}, True),
    _case("empty-label-value-In", {"matchExpressions": [expr("k", "In", "")]}, {"k": ""}, True),
]


@pytest.mark.parametrize(("selector", "labels", "want"), LABEL_SELECTOR_CASES)
def test_label_selector_matches(selector: dict, labels: dict[str, str], want: bool) -> None:
    assert LabelSelector.parse(selector).matches(labels) is want


def test_label_selector_structure() -> None:
    sel = LabelSelector.parse({"matchLabels": {"b": "2", "a": "1"},
                               "matchExpressions": [expr("z", "NotIn", "x", "y")]})
    assert sel.requirements == (
        LabelRequirement("a", "In", frozenset({"1"})),
        LabelRequirement("b", "In", frozenset({"2"})),
        LabelRequirement("z", "NotIn", frozenset({"x", "y"})),
    )
    assert not sel.empty
    assert LabelSelector.parse({}).empty
    assert LabelSelector.parse(None).empty  # an absent mapping reads as {}
    extended = LabelSelector.parse({}).with_requirements((LabelRequirement("k", "Exists"),))
    assert extended.matches({"k": "v"}) and not extended.matches({})


# ------------------------------------------------------------------------ node selector
def term(exprs: list[dict] | None = None, fields: list[dict] | None = None) -> NodeSelectorTerm:
    data: dict[str, Any] = {}
    if exprs is not None:
        data["matchExpressions"] = exprs
    if fields is not None:
        data["matchFields"] = fields
    return NodeSelectorTerm.from_fields(Fields(data, "term", "test"))


def name_is(op: str, name: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": op, "values": [name]}


NODE_TERM_CASES = [
    _case("In-hit", [expr("zone", "In", "a", "b")], None, "n1", {"zone": "a"}, True),
    _case("In-miss", [expr("zone", "In", "a")], None, "n1", {"zone": "c"}, False),
    _case("In-absent", [expr("zone", "In", "a")], None, "n1", {}, False),
    _case("NotIn-hit", [expr("zone", "NotIn", "a")], None, "n1", {"zone": "b"}, True),
    _case("NotIn-miss", [expr("zone", "NotIn", "a")], None, "n1", {"zone": "a"}, False),
    _case("NotIn-absent-matches", [expr("zone", "NotIn", "a")], None, "n1", {}, True),
    _case("Exists-hit", [expr("gpu", "Exists")], None, "n1", {"gpu": "x"}, True),
    _case("Exists-absent", [expr("gpu", "Exists")], None, "n1", {}, False),
    _case("DoesNotExist-absent", [expr("gpu", "DoesNotExist")], None, "n1", {}, True),
    _case("DoesNotExist-present", [expr("gpu", "DoesNotExist")], None, "n1", {"gpu": "x"},
          False),
    _case("Gt-greater", [expr("cores", "Gt", "4")], None, "n1", {"cores": "8"}, True),
    _case("Gt-equal", [expr("cores", "Gt", "4")], None, "n1", {"cores": "4"}, False),
    _case("Gt-less", [expr("cores", "Gt", "4")], None, "n1", {"cores": "2"}, False),
    _case("Gt-negative-bound", [expr("t", "Gt", "-5")], None, "n1", {"t": "-4"}, True),
    _case("Gt-absent", [expr("cores", "Gt", "4")], None, "n1", {}, False),
    _case("Gt-non-integer-label", [expr("cores", "Gt", "4")], None, "n1", {"cores": "eight"},
          False),
    _case("Gt-float-label", [expr("cores", "Gt", "4")], None, "n1", {"cores": "8.5"}, False),
    _case("Gt-label-with-spaces", [expr("cores", "Gt", "4")], None, "n1", {"cores": " 8"},
          False),
    _case("Gt-label-with-underscore", [expr("cores", "Gt", "4")], None, "n1",
          {"cores": "1_000"}, False),
    _case("Gt-label-beyond-int64", [expr("cores", "Gt", "4")], None, "n1",
          {"cores": str(2**63)}, False),
    _case("Gt-label-int64-max", [expr("cores", "Gt", "4")], None, "n1",
          {"cores": str(2**63 - 1)}, True),
    _case("Gt-label-plus-sign", [expr("cores", "Gt", "4")], None, "n1", {"cores": "+5"}, True),
    _case("Lt-less", [expr("cores", "Lt", "4")], None, "n1", {"cores": "3"}, True),
    _case("Lt-equal", [expr("cores", "Lt", "4")], None, "n1", {"cores": "4"}, False),
    _case("Lt-greater", [expr("cores", "Lt", "4")], None, "n1", {"cores": "5"}, False),
    _case("Lt-absent", [expr("cores", "Lt", "4")], None, "n1", {}, False),
    _case("Lt-non-integer-label", [expr("cores", "Lt", "4")], None, "n1", {"cores": "x"},
          False),
    _case("expressions-anded", [expr("a", "Exists"), expr("b", "Exists")], None, "n1",
          {"a": "1"}, False),
    _case("expressions-anded-hit", [expr("a", "Exists"), expr("b", "Exists")], None, "n1",
          {"a": "1", "b": "2"}, True),
    _case("field-In-hit", None, [name_is("In", "n1")], "n1", {}, True),
    _case("field-In-miss", None, [name_is("In", "n1")], "n2", {}, False),
    _case("field-NotIn-hit", None, [name_is("NotIn", "n1")], "n2", {}, True),
    _case("field-NotIn-miss", None, [name_is("NotIn", "n1")], "n1", {}, False),
    _case("fields-and-expressions-anded", [expr("zone", "In", "a")], [name_is("In", "n1")],
          "n1", {"zone": "b"}, False),
    _case("fields-and-expressions-hit", [expr("zone", "In", "a")], [name_is("In", "n1")],
          "n1", {"zone": "a"}, True),
    _case("empty-term-matches-nothing", None, None, "n1", {"a": "1"}, False),
    _case("empty-lists-term-matches-nothing", [], [], "n1", {}, False),
]


@pytest.mark.parametrize(("exprs", "fields", "node", "labels", "want"), NODE_TERM_CASES)
def test_node_selector_term_matches(exprs: list | None, fields: list | None, node: str,
                                    labels: dict[str, str], want: bool) -> None:
    assert term(exprs, fields).matches(node, labels) is want


def test_empty_term_is_empty() -> None:
    assert term().empty
    assert not term([expr("a", "Exists")]).empty
    assert not term(None, [name_is("In", "n")]).empty


def node_selector(*terms: dict) -> NodeSelector:
    return NodeSelector.from_fields(Fields({"nodeSelectorTerms": list(terms)}, "sel", "test"))


NODE_SELECTOR_CASES = [
    _case("no-terms-matches-nothing", [], "n1", {"a": "1"}, False),
    _case("only-empty-term-matches-nothing", [{}], "n1", {"a": "1"}, False),
    _case("terms-ored-first",
          [{"matchExpressions": [expr("zone", "In", "a")]},
           {"matchExpressions": [expr("zone", "In", "b")]}], "n1", {"zone": "a"}, True),
    _case("terms-ored-second",
          [{"matchExpressions": [expr("zone", "In", "a")]},
           {"matchExpressions": [expr("zone", "In", "b")]}], "n1", {"zone": "b"}, True),
    _case("terms-ored-none",
          [{"matchExpressions": [expr("zone", "In", "a")]},
           {"matchExpressions": [expr("zone", "In", "b")]}], "n1", {"zone": "c"}, False),
    _case("empty-term-does-not-rescue", [{}, {"matchExpressions": [expr("z", "Exists")]}],
          "n1", {}, False),
    _case("field-term-ored", [{"matchExpressions": [expr("z", "Exists")]},
                              {"matchFields": [name_is("In", "n1")]}], "n1", {}, True),
]


@pytest.mark.parametrize(("terms", "node", "labels", "want"), NODE_SELECTOR_CASES)
def test_node_selector_matches(terms: list[dict], node: str, labels: dict[str, str],
                               want: bool) -> None:
    assert node_selector(*terms).matches(node, labels) is want


def test_direct_requirement_with_bad_gt_values_never_matches() -> None:
    # objects built in code (not from a manifest) must not raise while matching
    assert NodeSelectorRequirement("k", "Gt", ()).matches({"k": "1"}) is False
    assert NodeSelectorRequirement("k", "Gt", ("x",)).matches({"k": "1"}) is False
    assert NodeSelectorRequirement("k", "Lt", ("1", "2")).matches({"k": "0"}) is False


NAME_SET_CASES = [
    _case("no-fields", term([expr("a", "Exists")]), None),
    _case("one-In", term(None, [name_is("In", "n1")]), frozenset({"n1"})),
    _case("two-In-intersected", term(None, [name_is("In", "n1"), name_is("In", "n2")]),
          frozenset()),
    _case("NotIn-does-not-narrow", term(None, [name_is("NotIn", "n1")]), None),
]


@pytest.mark.parametrize(("t", "want"), NAME_SET_CASES)
def test_term_name_set(t: NodeSelectorTerm, want: frozenset | None) -> None:
    assert t.name_set() == want


INT64_CASES = [
    ("0", 0), ("42", 42), ("-7", -7), ("+7", 7), (str(2**63 - 1), 2**63 - 1),
    (str(-(2**63)), -(2**63)), (str(2**63), None), ("", None), (" 1", None), ("1 ", None),
    ("1_0", None), ("1.0", None), ("0x1", None), ("\u0661", None), ("+", None),
]


@pytest.mark.parametrize(("text", "want"), INT64_CASES, ids=[repr(c[0]) for c in INT64_CASES])
def test_parse_int64_is_go_strconv(text: str, want: int | None) -> None:
    assert parse_int64(text) == want


# ------------------------------------------------------------------------ tolerations
NS = "NoSchedule"
NE = "NoExecute"
PNS = "PreferNoSchedule"

TOLERATION_CASES = [
    _case("equal-key-value-effect", Toleration("k", "Equal", "v", NS), Taint("k", "v", NS), True),
    _case("equal-wrong-value", Toleration("k", "Equal", "v", NS), Taint("k", "w", NS), False),
    _case("equal-empty-value-vs-value", Toleration("k", "Equal", "", NS), Taint("k", "v", NS),
          False),
    _case("equal-empty-both", Toleration("k", "Equal", "", NS), Taint("k", "", NS), True),
    _case("equal-wrong-key", Toleration("k", "Equal", "v", NS), Taint("j", "v", NS), False),
    _case("effect-mismatch", Toleration("k", "Equal", "v", NS), Taint("k", "v", NE), False),
    _case("effect-mismatch-prefer", Toleration("k", "Exists", "", NS), Taint("k", "v", PNS),
          False),
    _case("empty-effect-matches-NoSchedule", Toleration("k", "Equal", "v", ""),
          Taint("k", "v", NS), True),
    _case("empty-effect-matches-NoExecute", Toleration("k", "Equal", "v", ""),
          Taint("k", "v", NE), True),
    _case("empty-effect-matches-PreferNoSchedule", Toleration("k", "Exists", "", ""),
          Taint("k", "v", PNS), True),
    _case("exists-any-value", Toleration("k", "Exists", "", NS), Taint("k", "anything", NS),
          True),
    _case("exists-wrong-key", Toleration("k", "Exists", "", NS), Taint("j", "v", NS), False),
    _case("empty-key-exists-matches-all", Toleration("", "Exists", "", ""), Taint("any", "v", NE),
          True),
    _case("empty-key-exists-effect-filtered", Toleration("", "Exists", "", NS),
          Taint("any", "v", NE), False),
    _case("empty-key-exists-effect-hit", Toleration("", "Exists", "", NE),
          Taint("any", "v", NE), True),
    _case("default-operator-is-equal", Toleration("k", value="v"), Taint("k", "v", NS), True),
]


@pytest.mark.parametrize(("toleration", "taint", "want"), TOLERATION_CASES)
def test_toleration_tolerates(toleration: Toleration, taint: Taint, want: bool) -> None:
    assert toleration.tolerates(taint) is want


PARSED_TOLERATION_CASES = [
    _case("operator-defaults-to-Equal", {"key": "k", "value": "v"}, Toleration("k", "Equal", "v")),
    _case("exists-no-key", {"operator": "Exists"}, Toleration("", "Exists", "", "")),
    _case("full", {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute",
                   "tolerationSeconds": 30}, Toleration("k", "Equal", "v", "NoExecute")),
]


@pytest.mark.parametrize(("data", "want"), PARSED_TOLERATION_CASES)
def test_toleration_from_manifest(data: dict, want: Toleration) -> None:
    f = Fields(data, "tolerations[0]", "test")
    assert Toleration.from_fields(f) == want
    if "tolerationSeconds" in data:
        assert f.warnings == ["test: tolerations[0].tolerationSeconds: ignored (not modelled)"]


def test_taint_from_manifest_and_str() -> None:
    f = Fields({"key": "k", "value": "v", "effect": "NoSchedule", "timeAdded": "x"}, "t", "n")
    taint = Taint.from_fields(f)
    assert taint == Taint("k", "v", "NoSchedule")
    assert str(taint) == "{k: v}"
    assert Taint.from_fields(Fields({"key": "k", "effect": "NoExecute"}, "t", "n")).value == ""
