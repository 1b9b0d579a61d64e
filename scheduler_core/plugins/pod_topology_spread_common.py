"""PodTopologySpread building blocks: the internal constraint, the selector a Service-backed
pod is spread by, and per-slot node eligibility and counts over the node table.

Everything per node is a numpy column over slots ``[0, table.high)``; nothing loops over nodes
or placed pods in Python (counts come from the incremental ``SelectorCounts`` index).

See docs/scheduling-model.md, "PodTopologySpread".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from scheduler_core.api.affinity import TopologySpreadConstraint
from scheduler_core.api.pod import Pod, PodSpec
from scheduler_core.api.selectors import LabelRequirement, LabelSelector
from scheduler_core.nodetable.matching import (
    BLOCKING_EFFECTS,
    match_node_selector,
    match_node_selector_map,
    taint_lookup,
)
from scheduler_core.nodetable.pod_index import NamespaceFilter, selector_counts
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import memo_by_version

__all__ = [
    "DomainLayout",
    "SpreadConstraint",
    "build_constraints",
    "default_selector",
    "domain_layout",
    "has_all_keys",
    "pod_counts",
    "with_default_selector",
]

_HONOR = "Honor"


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """A pod's constraint with its selector resolved (kube's internal topologySpreadConstraint).

    ``selector`` None stands for a nil labelSelector, which matches nothing."""

    max_skew: int
    key: str
    selector: LabelSelector | None
    min_domains: int = 1
    honor_affinity: bool = True  # nodeAffinityPolicy, default Honor
    honor_taints: bool = False  # nodeTaintsPolicy, default Ignore

    def matches(self, labels: dict[str, str]) -> bool:
        """``Selector.Matches`` (self-match, AddPod/RemovePod, queueing hints)."""
        return self.selector is not None and self.selector.matches(labels)

    @property
    def counts_nothing(self) -> bool:
        """countPodsMatchSelector counts 0 for a nil or empty selector."""
        return self.selector is None or self.selector.empty


def _label_requirements(labels: dict[str, str]) -> tuple[LabelRequirement, ...]:
    return tuple(LabelRequirement(k, "In", frozenset((v,))) for k, v in sorted(labels.items()))


def build_constraints(raw: Iterable[TopologySpreadConstraint], pod_labels: dict[str, str],
                      when: str) -> tuple[SpreadConstraint, ...]:
    """kube's ``filterTopologySpreadConstraints``: the constraints with ``when``, with
    matchLabelKeys merged into the selector (a nil selector stays nil)."""
    out = []
    for c in raw:
        if c.when_unsatisfiable != when:
            continue
        selector = c.label_selector
        if c.match_label_keys and selector is not None:
            present = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if present:
                selector = LabelSelector(_label_requirements(present) + selector.requirements)
        out.append(SpreadConstraint(
            c.max_skew, c.topology_key, selector, c.min_domains or 1,
            (c.node_affinity_policy or _HONOR) == _HONOR,
            (c.node_taints_policy or "Ignore") == _HONOR))
    return tuple(out)


def default_selector(pod: Pod, services: Iterable[Any]) -> LabelSelector | None:
    """kube's ``helper.DefaultSelector`` restricted to Services: the union of the selectors of
    the pod's namespace's Services that select it (None when that union is empty).
    ReplicationControllers, ReplicaSets and StatefulSets are not modelled."""
    merged: dict[str, str] = {}
    labels = pod.labels
    for svc in services:
        if svc.namespace != pod.namespace or not svc.selector:
            continue
        if all(labels.get(k) == v for k, v in svc.selector.items()):
            merged.update(svc.selector)
    return LabelSelector(_label_requirements(merged)) if merged else None


def with_default_selector(constraints: tuple[SpreadConstraint, ...],
                          selector: LabelSelector | None) -> tuple[SpreadConstraint, ...]:
    """kube's ``buildDefaultConstraints`` tail: no selector, no default constraints."""
    if not constraints or selector is None:
        return ()
    return tuple(replace(c, selector=selector) for c in constraints)


def pod_counts(table: NodeTable, namespace: str, c: SpreadConstraint) -> np.ndarray | None:
    """Per slot: non-terminating pods in ``namespace`` matching ``c`` (None: zero everywhere).
    The column belongs to the shared index; read it, never write it."""
    if c.counts_nothing:
        return None
    assert c.selector is not None
    return selector_counts(table).counts(NamespaceFilter(frozenset((namespace,))), c.selector,
                                         include_terminating=False)


def _required_affinity(table: NodeTable, spec: PodSpec) -> np.ndarray | None:
    """RequiredNodeAffinity (nodeSelector AND required node affinity) over slots [0, high),
    memoised until a node changes; None when the pod has neither."""
    required = spec.affinity.required_node
    if not spec.node_selector and required is None:
        return None
    key = (names.POD_TOPOLOGY_SPREAD, "required", tuple(sorted(spec.node_selector.items())),
           required)

    def compute() -> np.ndarray:
        idx = slice(0, table.high)
        mask = np.ones(table.high, dtype=bool)
        if spec.node_selector:
            mask &= match_node_selector_map(table, spec.node_selector, idx)
        if required is not None:
            mask &= match_node_selector(table, required, idx)
        return mask

    return memo_by_version(table, key, compute)


@dataclass(frozen=True, slots=True)
class DomainLayout:
    """Where one constraint counts, for one incoming pod, over slots [0, high): memoised on
    the table until a node changes (pods do not affect it). Never write its arrays.

    ``bins`` maps each slot to its domain bin, the key's label code. When keys are not all
    required a keyless node reads the value "": it shares that value's bin, or the spare bin
    ``n`` when no node has it. ``codes`` are the bins of the counted slots (``slots``; None
    means every slot in [0, high) counts)."""

    counted: np.ndarray  # bool per slot: live, has the keys (if required), passes the policies
    slots: np.ndarray | None
    codes: np.ndarray
    bins: np.ndarray
    n: int
    present: np.ndarray  # bool per bin (n + 1): the domains of counted nodes

    def totals(self, per_slot: np.ndarray | None, high: int) -> np.ndarray:
        """Matching pods per domain bin (n + 1 entries; the last one stays 0 when keys are
        required, so a code of -1 reads 0)."""
        if per_slot is None:
            return np.zeros(self.n + 1, dtype=np.int64)
        weights = per_slot[:high] if self.slots is None else per_slot[self.slots]
        return np.bincount(self.codes, weights=weights, minlength=self.n + 1).astype(np.int64)


def _policy_signature(pod: Pod, c: SpreadConstraint) -> tuple:
    spec = pod.spec
    affinity = ((tuple(sorted(spec.node_selector.items())), spec.affinity.required_node)
                if c.honor_affinity else None)
    return affinity, spec.tolerations if c.honor_taints else None


def has_all_keys(table: NodeTable, keys: tuple[str, ...]) -> np.ndarray:
    """Live slots in [0, high) that carry every key (memoised until a node changes)."""

    def compute() -> np.ndarray:
        mask = table.live[:table.high].copy()
        for key in keys:
            col = table.codes(key)
            if col is None:
                mask[:] = False
                break
            mask &= col[:table.high] >= 0
        return mask

    return memo_by_version(table, (names.POD_TOPOLOGY_SPREAD, "keys", keys), compute)


def domain_layout(table: NodeTable, pod: Pod, c: SpreadConstraint, keys: tuple[str, ...],
                  *, require_all_keys: bool = True) -> DomainLayout:
    """The counting layout of ``c`` (``matchNodeInclusionPolicies`` after
    ``nodeLabelsMatchSpreadConstraints`` when ``require_all_keys``)."""
    sig = (names.POD_TOPOLOGY_SPREAD, "layout", c.key, keys if require_all_keys else None,
           _policy_signature(pod, c))

    def compute() -> DomainLayout:
        high = table.high
        counted = has_all_keys(table, keys) if require_all_keys else table.live[:high]
        if c.honor_affinity:
            affinity = _required_affinity(table, pod.spec)
            if affinity is not None:
                counted = counted & affinity
        if c.honor_taints:
            ok = taint_lookup(table, pod.spec.tolerations, BLOCKING_EFFECTS)
            counted = counted & ok[table.taint_set_id[:high]]
        n = len(table.label_values.get(c.key, ()))
        col = table.codes(c.key)
        if col is None:
            bins = np.full(high, n, dtype=np.intp)
        else:
            bins = col[:high].astype(np.intp)
            if not require_all_keys:  # keyless nodes read node.labels[key] == ""
                empty = table.code_of(c.key, "")
                bins[bins < 0] = empty if empty >= 0 else n
        if counted.all():
            slots, codes = None, bins
        else:
            slots = np.flatnonzero(counted)
            codes = bins[slots]
        present = np.zeros(n + 1, dtype=bool)
        present[codes] = True
        return DomainLayout(counted, slots, codes, bins, n, present)

    return memo_by_version(table, sig, compute)
