"""Pod (anti-)affinity terms and topology spread constraints as parsed from a pod spec."""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_core.api._fields import Fields
from scheduler_core.api.selectors import LabelSelector, NodeSelector, NodeSelectorTerm

__all__ = [
    "Affinity",
    "PodAffinityTerm",
    "TopologySpreadConstraint",
    "WeightedNodeTerm",
    "WeightedPodAffinityTerm",
]


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    label_selector: LabelSelector | None
    topology_key: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()

    @classmethod
    def from_fields(cls, f: Fields) -> PodAffinityTerm:
        f.check_keys(("labelSelector", "topologyKey", "namespaces", "namespaceSelector",
                      "matchLabelKeys", "mismatchLabelKeys"))
        key = f.str("topologyKey", required=True)
        if not key:
            raise f.error("topologyKey", "must be non-empty")
        sel = LabelSelector.from_fields(f.sub("labelSelector")) if f.has("labelSelector") else None
        ns_sel = (LabelSelector.from_fields(f.sub("namespaceSelector"))
                  if f.has("namespaceSelector") else None)
        return cls(sel, key, tuple(f.str_list("namespaces")), ns_sel,
                   tuple(f.str_list("matchLabelKeys")), tuple(f.str_list("mismatchLabelKeys")))


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm

    @classmethod
    def from_fields(cls, f: Fields) -> WeightedPodAffinityTerm:
        f.check_keys(("weight", "podAffinityTerm"))
        weight = f.int("weight")
        if weight is None or not 1 <= weight <= 100:
            raise f.error("weight", f"must be in the range 1-100, got {weight}")
        if not f.has("podAffinityTerm"):
            raise f.error("podAffinityTerm", "required field is missing")
        return cls(weight, PodAffinityTerm.from_fields(f.sub("podAffinityTerm")))


@dataclass(frozen=True, slots=True)
class WeightedNodeTerm:
    weight: int
    term: NodeSelectorTerm

    @classmethod
    def from_fields(cls, f: Fields) -> WeightedNodeTerm:
        f.check_keys(("weight", "preference"))
        weight = f.int("weight")
        if weight is None or not 1 <= weight <= 100:
            raise f.error("weight", f"must be in the range 1-100, got {weight}")
        return cls(weight, NodeSelectorTerm.from_fields(f.sub("preference")))


@dataclass(frozen=True, slots=True)
class Affinity:
    required_node: NodeSelector | None = None
    preferred_node: tuple[WeightedNodeTerm, ...] = ()
    required_pod_affinity: tuple[PodAffinityTerm, ...] = ()
    preferred_pod_affinity: tuple[WeightedPodAffinityTerm, ...] = ()
    required_pod_anti_affinity: tuple[PodAffinityTerm, ...] = ()
    preferred_pod_anti_affinity: tuple[WeightedPodAffinityTerm, ...] = ()

    @property
    def has_pod_affinity(self) -> bool:
        return bool(self.required_pod_affinity or self.preferred_pod_affinity
                    or self.required_pod_anti_affinity or self.preferred_pod_anti_affinity)

    @classmethod
    def from_fields(cls, f: Fields) -> Affinity:
        f.check_keys(("nodeAffinity", "podAffinity", "podAntiAffinity"))
        req_node = None
        pref_node: tuple[WeightedNodeTerm, ...] = ()
        if f.has("nodeAffinity"):
            na = f.sub("nodeAffinity")
            na.check_keys(("requiredDuringSchedulingIgnoredDuringExecution",
                           "preferredDuringSchedulingIgnoredDuringExecution"))
            key = "requiredDuringSchedulingIgnoredDuringExecution"
            if na.has(key):
                req_node = NodeSelector.from_fields(na.sub(key))
            pref_node = tuple(WeightedNodeTerm.from_fields(t) for _, t in
                              na.items("preferredDuringSchedulingIgnoredDuringExecution"))
        parts: dict[str, tuple] = {}
        for name in ("podAffinity", "podAntiAffinity"):
            sub = f.sub(name)
            sub.check_keys(("requiredDuringSchedulingIgnoredDuringExecution",
                            "preferredDuringSchedulingIgnoredDuringExecution"))
            parts[name] = (
                tuple(PodAffinityTerm.from_fields(t) for _, t in
                      sub.items("requiredDuringSchedulingIgnoredDuringExecution")),
                tuple(WeightedPodAffinityTerm.from_fields(t) for _, t in
                      sub.items("preferredDuringSchedulingIgnoredDuringExecution")),
            )
        return cls(req_node, pref_node, *parts["podAffinity"], *parts["podAntiAffinity"])


_WHEN = ("DoNotSchedule", "ScheduleAnyway")
_POLICIES = ("Honor", "Ignore")


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()

    @classmethod
    def from_fields(cls, f: Fields) -> TopologySpreadConstraint:
        f.check_keys(("maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                      "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"))
        max_skew = f.int("maxSkew")
        if max_skew is None:
            raise f.error("maxSkew", "required field is missing")
        if max_skew < 1:
            raise f.error("maxSkew", f"must be greater than zero, got {max_skew}")
        key = f.str("topologyKey", required=True)
        if not key:
            raise f.error("topologyKey", "must be non-empty")
        when = f.str("whenUnsatisfiable", required=True)
        if when not in _WHEN:
            raise f.error("whenUnsatisfiable", f'unsupported value "{when}" (expected one of: '
                          f'{", ".join(_WHEN)})')
        min_domains = f.int("minDomains")
        if min_domains is not None:
            if min_domains < 1:
                raise f.error("minDomains", f"must be greater than zero, got {min_domains}")
            if when != "DoNotSchedule":
                raise f.error("minDomains",
                              "can only be set when whenUnsatisfiable is DoNotSchedule")
        policies = []
        for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = f.str(name) or None
            if v is not None and v not in _POLICIES:
                raise f.error(name, f'unsupported value "{v}" (expected Honor or Ignore)')
            policies.append(v)
        sel = LabelSelector.from_fields(f.sub("labelSelector")) if f.has("labelSelector") else None
        return cls(max_skew, key, when, sel, min_domains, policies[0], policies[1],
                   tuple(f.str_list("matchLabelKeys")))
