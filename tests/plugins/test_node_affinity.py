"""NodeAffinity: PreFilter Skip and PreFilterResult narrowing, filter reasons (pod and
scheduler-enforced), preferred-term scores, args and hints."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import SKIP, Code, CycleState, QueueingHint
from scheduler_core.plugins.node_affinity import (
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
)
from tests.builders import (
    expr,
    make_node,
    make_pod,
    name_in,
    run_filter,
    run_score,
    table_of,
    term,
)

PLUGIN = NodeAffinity()
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


def nodes():
    return [make_node("a").label("zone", "z1").label("gen", "3").obj(),
            make_node("b").label("zone", "z2").label("gen", "5").obj(),
            make_node("c").label("disk", "ssd").obj()]


FILTER_CASES = [
    ("node-selector", make_pod().node_selector(zone="z1"), {"a"}),
    ("node-selector-unknown-value", make_pod().node_selector(zone="z9"), set()),
    ("in", make_pod().node_affinity_in("zone", "z1", "z2"), {"a", "b"}),
    ("not-in-matches-absent-key", make_pod().required_terms(term(expr("zone", "NotIn", "z1"))),
     {"b", "c"}),
    ("exists", make_pod().required_terms(term(expr("disk", "Exists"))), {"c"}),
    ("does-not-exist", make_pod().required_terms(term(expr("disk", "DoesNotExist"))),
     {"a", "b"}),
    ("gt", make_pod().required_terms(term(expr("gen", "Gt", "4"))), {"b"}),
    ("lt", make_pod().required_terms(term(expr("gen", "Lt", "4"))), {"a"}),
    ("terms-are-ored", make_pod().required_terms(term(expr("zone", "In", "z1")),
                                                 term(expr("disk", "Exists"))), {"a", "c"}),
    ("expressions-are-anded", make_pod().required_terms(
        term(expr("zone", "In", "z1", "z2"), expr("gen", "Gt", "4"))), {"b"}),
    ("selector-and-affinity", make_pod().node_selector(zone="z1").node_affinity_in("gen", "5"),
     set()),
    ("empty-term-matches-nothing", make_pod().required_terms({}), set()),
    ("match-fields-not-in", make_pod().required_terms(
        term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["a"]}])),
     {"b", "c"}),
]


@pytest.mark.parametrize(("pod", "passing"), [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(pod, passing):
    got = run_filter(PLUGIN, pod.obj(), table_of(nodes()))
    assert {n for n, s in got.items() if s is None} == passing
    for s in got.values():
        if s is not None:
            assert s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            assert s.reasons == (ERR_REASON_POD,)


def test_filter_on_small_candidate_set_matches_directly():
    # the daemonset pattern: the framework filters only the narrowed slot(s); the plugin
    # must not compute (and memoise) a mask over every node
    table = table_of([make_node(f"n{i}").obj() for i in range(64)])
    pod = make_pod().required_terms(term(fields=[name_in("n7")])).obj()
    table.memo.clear()
    state = CycleState()
    result, status = PLUGIN.pre_filter(state, pod, table)
    assert status is None and result.node_names == frozenset({"n7"})
    idx = np.array([table.slot_of["n7"]], dtype=np.int64)
    assert PLUGIN.filter(state, pod, table, idx).tolist() == [True]
    assert not any(isinstance(k, tuple) and k and k[0] == "NodeAffinity" for k in table.memo)


def test_filter_memo_follows_label_changes():
    table = table_of(nodes())
    pod = make_pod().node_selector(disk="ssd").obj()
    assert {n for n, s in run_filter(PLUGIN, pod, table).items() if s is None} == {"c"}
    table.update_node(make_node("a").label("disk", "ssd").obj())
    assert {n for n, s in run_filter(PLUGIN, pod, table).items() if s is None} == {"a", "c"}


PRE_FILTER_CASES = [
    ("nothing-to-do", make_pod(), None, SKIP),
    ("preferred-only", make_pod().preferred(1, term(expr("zone", "In", "z1"))), None, SKIP),
    ("node-selector-all-nodes", make_pod().node_selector(zone="z1"), None, None),
    ("expressions-all-nodes", make_pod().node_affinity_in("zone", "z1"), None, None),
    ("one-name", make_pod().required_terms(term(fields=[name_in("a")])), {"a"}, None),
    ("union-over-terms", make_pod().required_terms(term(fields=[name_in("a")]),
                                                   term(fields=[name_in("b")])), {"a", "b"}, None),
    ("intersection-within-term", make_pod().required_terms(
        term(fields=[name_in("a"), name_in("a")]), term(fields=[name_in("a"), name_in("b")])),
     {"a"}, None),
    ("term-without-names-admits-all", make_pod().required_terms(
        term(fields=[name_in("a")]), term(expr("zone", "In", "z1"))), None, None),
    ("not-in-does-not-narrow", make_pod().required_terms(
        term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["a"]}])),
     None, None),
    ("names-of-missing-nodes-kept", make_pod().required_terms(term(fields=[name_in("zz")])),
     {"zz"}, None),
]


@pytest.mark.parametrize(("pod", "names", "status"), [c[1:] for c in PRE_FILTER_CASES],
                         ids=[c[0] for c in PRE_FILTER_CASES])
def test_pre_filter(pod, names, status):
    result, got = PLUGIN.pre_filter(CycleState(), pod.obj(), table_of(nodes()))
    assert got == status
    if names is None:
        assert result is None or result.all_nodes
    else:
        assert result.node_names == frozenset(names)


def test_pre_filter_conflicting_terms():
    pod = make_pod().required_terms(term(fields=[name_in("a"), name_in("b")])).obj()
    result, status = PLUGIN.pre_filter(CycleState(), pod, table_of(nodes()))
    assert result is None
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("pod affinity terms conflict",)


def test_pre_filter_with_added_affinity_never_skips():
    plugin = NodeAffinity({"addedAffinity": {REQ: {"nodeSelectorTerms": [
        term(expr("zone", "Exists"))]}}})
    assert plugin.pre_filter(CycleState(), make_pod().obj(), table_of(nodes())) == (None, None)


def test_added_affinity_filter_and_explain():
    plugin = NodeAffinity({"addedAffinity": {REQ: {"nodeSelectorTerms": [
        term(expr("zone", "Exists"))]}}})
    got = run_filter(plugin, make_pod().node_selector(zone="z1").obj(), table_of(nodes()))
    assert got["a"] is None
    assert got["b"].reasons == (ERR_REASON_POD,)
    assert got["c"].reasons == (ERR_REASON_ENFORCED,)
    # a pod with no rules of its own still meets the enforced affinity
    got = run_filter(plugin, make_pod().obj(), table_of(nodes()))
    assert got["a"] is None and got["b"] is None
    assert got["c"].reasons == (ERR_REASON_ENFORCED,)


SCORE_CASES = [
    ("one-term", make_pod().preferred(5, term(expr("zone", "In", "z1"))),
     {"a": 100, "b": 0, "c": 0}),
    ("weights-sum", make_pod().preferred(2, term(expr("zone", "In", "z1", "z2")))
     .preferred(6, term(expr("gen", "Gt", "4"))).preferred(3, term(expr("disk", "Exists"))),
     # raw a 2, b 8, c 3 -> 100 * raw // 8
     {"a": 25, "b": 100, "c": 37}),
    ("nothing-matches", make_pod().preferred(5, term(expr("zone", "In", "z9"))),
     {"a": 0, "b": 0, "c": 0}),
    ("empty-preference-ignored", make_pod().preferred(5, {}).preferred(1, term(
        expr("disk", "Exists"))), {"a": 0, "b": 0, "c": 100}),
]


@pytest.mark.parametrize(("pod", "expected"), [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score(pod, expected):
    assert run_score(PLUGIN, pod.obj(), table_of(nodes())) == expected


def test_raw_scores_are_weight_sums():
    pod = make_pod().preferred(2, term(expr("zone", "In", "z1", "z2"))).preferred(
        6, term(expr("gen", "Gt", "4"))).obj()
    assert run_score(PLUGIN, pod, table_of(nodes()), normalize=False) == {"a": 2, "b": 8, "c": 0}


def test_pre_score_skip_and_added_preferred_terms():
    assert run_score(PLUGIN, make_pod().obj(), table_of(nodes())) == "skip"
    plugin = NodeAffinity({"addedAffinity": {PREF: [
        {"weight": 3, "preference": term(expr("disk", "Exists"))},
        {"weight": 0, "preference": term(expr("zone", "Exists"))}]}})
    assert len(plugin.added_preferred) == 1  # weight 0 is ignored
    assert run_score(plugin, make_pod().obj(), table_of(nodes()), normalize=False) == \
        {"a": 0, "b": 0, "c": 3}
    pod = make_pod().preferred(1, term(expr("zone", "In", "z1"))).obj()
    assert run_score(plugin, pod, table_of(nodes()), normalize=False) == {"a": 1, "b": 0, "c": 3}


@pytest.mark.parametrize(("args", "field", "problem"), [
    ({"addedAffinity": {REQ: {"nodeSelectorTerms": [term(expr("k", "Bad"))]}}},
     f"args.addedAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator",
     "unsupported operator"),
    ({"addedAffinity": {"foo": 1}}, "args.addedAffinity.foo", "unknown field"),
    ({"addedAffinity": {PREF: [{"weight": 200, "preference": {}}]}},
     f"args.addedAffinity.{PREF}[0].weight", "range"),
    ({"other": 1}, "args.other", "unknown field"),
], ids=["bad-operator", "unknown-added-field", "weight-range", "unknown-field"])
def test_bad_args(args, field, problem):
    with pytest.raises(ConfigError) as err:
        NodeAffinity(args, args_path="args")
    assert err.value.field == field
    assert problem in err.value.problem


def _node_hint(plugin=PLUGIN):
    (e,) = plugin.events_to_register()
    assert e.event.resource == "Node"
    return e.hint


Z1 = make_node("n").label("zone", "z1")
Z2 = make_node("n").label("zone", "z2")


@pytest.mark.parametrize(("old", "new", "expected"), [
    (None, Z1, QueueingHint.QUEUE),
    (None, Z2, QueueingHint.QUEUE_SKIP),
    (Z2, Z1, QueueingHint.QUEUE),
    (Z1, make_node("n").label("zone", "z1").label("x", "y"), QueueingHint.QUEUE_SKIP),
    (Z1, Z2, QueueingHint.QUEUE_SKIP),
], ids=["added-matching", "added-not-matching", "now-matches", "matched-before", "no-longer"])
def test_hint_node_change(old, new, expected):
    pod = make_pod().node_affinity_in("zone", "z1").obj()
    assert _node_hint()(pod, old and old.obj(), new.obj()) == expected


def test_hint_respects_added_affinity():
    plugin = NodeAffinity({"addedAffinity": {REQ: {"nodeSelectorTerms": [
        term(expr("disk", "Exists"))]}}})
    assert _node_hint(plugin)(make_pod().obj(), None, Z1.obj()) == QueueingHint.QUEUE_SKIP
    ssd = make_node("n").label("disk", "ssd").obj()
    assert _node_hint(plugin)(make_pod().obj(), None, ssd) == QueueingHint.QUEUE
