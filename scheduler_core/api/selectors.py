"""Label selectors, node selector terms, taints and tolerations.

These are plain, hashable value objects with scalar ``matches`` methods. The vectorised
versions that run over the node table live in ``scheduler_core.nodetable.matching``.

See docs/scheduling-model.md, "Label selectors, taints and tolerations".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scheduler_core.api._fields import Fields

__all__ = [
    "TAINT_EFFECTS",
    "LabelRequirement",
    "LabelSelector",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "Taint",
    "Toleration",
    "parse_int64",
]

_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist")
_NODE_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_INT64_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: ASCII digits with an optional sign, within int64.

    None when Go would fail. Python's ``int()`` is looser (it takes " 5", "1_000", and
    non-ASCII digits).
    """
    if not _INT64_RE.fullmatch(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    key: str
    op: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: dict[str, str]) -> bool:
        op = self.op
        if op == "In":
            return labels.get(self.key) in self.values
        if op == "NotIn":
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """``metav1.LabelSelector``: matchLabels AND matchExpressions. ``{}`` matches everything."""

    requirements: tuple[LabelRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: dict[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    @classmethod
    def from_fields(cls, f: Fields) -> LabelSelector:
        f.check_keys(("matchLabels", "matchExpressions"))
        reqs = [
            LabelRequirement(k, "In", frozenset((v,)))
            for k, v in sorted(f.str_map("matchLabels").items())
        ]
        for _, e in f.items("matchExpressions"):
            key, op, values = _requirement(e, _LABEL_OPS)
            reqs.append(LabelRequirement(key, op, frozenset(values)))
        return cls(tuple(reqs))

    @classmethod
    def parse(cls, data: Any, *, path: str = "selector", obj: str = "") -> LabelSelector:
        return cls.from_fields(Fields(data, path, obj))

    def with_requirements(self, extra: tuple[LabelRequirement, ...]) -> LabelSelector:
        return LabelSelector(self.requirements + extra)


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        op = self.op
        if op == "In":
            return labels.get(self.key) in self.values
        if op == "NotIn":
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        v = labels.get(self.key)
        if v is None or len(self.values) != 1:
            return False
        lhs, rhs = parse_int64(v), parse_int64(self.values[0])
        if lhs is None or rhs is None:
            return False
        return lhs > rhs if op == "Gt" else lhs < rhs


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """matchExpressions AND matchFields (metadata.name only). An empty term matches nothing."""

    expressions: tuple[NodeSelectorRequirement, ...] = ()
    fields: tuple[NodeSelectorRequirement, ...] = ()  # key is always metadata.name

    @property
    def empty(self) -> bool:
        return not self.expressions and not self.fields

    def matches(self, node_name: str, labels: dict[str, str]) -> bool:
        if self.empty:
            return False
        for r in self.expressions:
            if not r.matches(labels):
                return False
        return all((node_name in r.values) == (r.op == "In") for r in self.fields)

    def name_set(self) -> frozenset[str] | None:
        """The node names this term admits through matchFields ``In``, or None if not narrowed."""
        sets = [frozenset(r.values) for r in self.fields if r.op == "In"]
        if not sets:
            return None
        return frozenset.intersection(*sets)

    @classmethod
    def from_fields(cls, f: Fields) -> NodeSelectorTerm:
        f.check_keys(("matchExpressions", "matchFields"))
        exprs = tuple(_node_req(e) for _, e in f.items("matchExpressions"))
        fields = []
        for _, e in f.items("matchFields"):
            r = _node_req(e)
            if r.key != "metadata.name":
                raise e.error("key", f'unsupported field "{r.key}" (only metadata.name)')
            if r.op not in ("In", "NotIn"):
                raise e.error("operator", f'unsupported operator "{r.op}" for matchFields '
                              "(expected In or NotIn)")
            if len(r.values) != 1:
                raise e.error("values", "must have exactly one value for matchFields")
            fields.append(r)
        return cls(exprs, tuple(fields))


def _requirement(e: Fields, ops: tuple[str, ...]) -> tuple[str, str, list[str]]:
    """key, operator and values of one selector requirement, with the checks every kind of
    requirement shares."""
    e.check_keys(("key", "operator", "values"))
    key = e.str("key", required=True)
    op = e.str("operator", required=True)
    if op not in ops:
        raise e.error("operator", f'unsupported operator "{op}" (expected one of: '
                      f'{", ".join(ops)})')
    values = e.str_list("values")
    if op in ("In", "NotIn") and not values:
        raise e.error("values", f"must be non-empty for operator {op}")
    if op in ("Exists", "DoesNotExist") and values:
        raise e.error("values", f"must be empty for operator {op}")
    return key, op, values


def _node_req(e: Fields) -> NodeSelectorRequirement:
    key, op, values = _requirement(e, _NODE_OPS)
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise e.error("values", f"must have exactly one value for operator {op}")
        if parse_int64(values[0]) is None:
            raise e.error("values", f"must be an integer for operator {op}, "
                          f'got "{values[0]}"')
    return NodeSelectorRequirement(key, op, tuple(values))


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """Required node affinity: terms ORed. An empty list matches nothing."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, node_name: str, labels: dict[str, str]) -> bool:
        return any(t.matches(node_name, labels) for t in self.terms)

    @classmethod
    def from_fields(cls, f: Fields) -> NodeSelector:
        f.check_keys(("nodeSelectorTerms",))
        if not f.has("nodeSelectorTerms"):
            raise f.error("nodeSelectorTerms", "required field is missing")
        return cls(tuple(NodeSelectorTerm.from_fields(t) for _, t in f.items("nodeSelectorTerms")))


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    @classmethod
    def from_fields(cls, f: Fields) -> Taint:
        f.check_keys(("key", "value", "effect"), ignored=("timeAdded",))
        key = f.str("key", required=True)
        if not key:
            raise f.error("key", "must be non-empty")
        effect = f.str("effect", required=True)
        if effect not in TAINT_EFFECTS:
            raise f.error("effect", f'unsupported value "{effect}" (expected one of: '
                          f'{", ".join(TAINT_EFFECTS)})')
        return cls(key, f.str("value"), effect)

    def __str__(self) -> str:
        return f"{{{self.key}: {self.value}}}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value

    @classmethod
    def from_fields(cls, f: Fields) -> Toleration:
        f.check_keys(("key", "operator", "value", "effect"), ignored=("tolerationSeconds",))
        op = f.str("operator") or "Equal"
        if op not in ("Equal", "Exists"):
            raise f.error("operator", f'unsupported value "{op}" (expected Equal or Exists)')
        key = f.str("key")
        value = f.str("value")
        if not key and op != "Exists":
            raise f.error("operator", "must be Exists when key is empty")
        if op == "Exists" and value:
            raise f.error("value", "must be empty when operator is Exists")
        effect = f.str("effect")
        if effect and effect not in TAINT_EFFECTS:
            raise f.error("effect", f'unsupported value "{effect}" (expected one of: '
                          f'{", ".join(TAINT_EFFECTS)})')
        return cls(key, op, value, effect)


def tolerates_any(tolerations: tuple[Toleration, ...], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)
