"""InterPodAffinity cycle state: per-topology-key domain count arrays and their vector lookups.

A map ``(topologyKey, value) -> count`` (upstream's ``topologyToMatchedTermCount`` and
``scoreMap``) is held as one int64 array per key, indexed by the node table's label code for
that key, with one extra trailing 0: looking up code -1 (node lacks the key) reads that 0, so a
whole candidate set is answered with one fancy-index per key.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.nodetable.pod_index import domain_counts
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins.helper import count
from scheduler_core.plugins.inter_pod_affinity_terms import AffinityTerm, matches_all, pod_terms

__all__ = ["FilterState", "ScoreState", "domain_totals", "node_codes", "values_at"]

DomainCounts = dict[str, np.ndarray]


def _n_values(table: NodeTable, key: str) -> int:
    return len(table.label_values.get(key, ()))


def domain_totals(table: NodeTable, key: str, per_slot: np.ndarray) -> np.ndarray:
    """``per_slot`` summed per value of label ``key`` (live nodes having it), plus a trailing
    0 for "key absent"."""
    _codes, totals = domain_counts(table, key, per_slot)
    out = np.zeros(_n_values(table, key) + 1, dtype=np.int64)
    out[: len(totals)] = totals
    return out


def node_codes(table: NodeTable, key: str, idx: Any) -> np.ndarray:
    """The label codes of ``key`` at ``idx`` (-1 where absent)."""
    col = table.codes(key)
    if col is None:
        return np.full(count(table, idx), -1, dtype=np.int32)
    return col[idx]


def _fit(arr: np.ndarray, table: NodeTable, key: str) -> np.ndarray:
    """``arr`` padded if the key gained values since it was built (codes stay stable)."""
    n = _n_values(table, key)
    if len(arr) > n:
        return arr
    out = np.zeros(n + 1, dtype=arr.dtype)
    out[: len(arr) - 1] = arr[:-1]
    return out


def values_at(arr: np.ndarray, table: NodeTable, key: str, idx: Any) -> np.ndarray:
    """The domain value of every node at ``idx`` (0 where the node lacks ``key``)."""
    return _fit(arr, table, key)[node_codes(table, key, idx)]


def _bump(counts: DomainCounts, table: NodeTable, key: str, slot: int, delta: int) -> None:
    col = table.codes(key)
    code = -1 if col is None else int(col[slot])
    if code < 0:
        return
    arr = counts.get(key)
    arr = np.zeros(_n_values(table, key) + 1, dtype=np.int64) if arr is None else \
        _fit(arr, table, key)
    arr[code] += delta
    counts[key] = arr


class FilterState:
    """PreFilter's output (kube's ``preFilterState``); AddPod/RemovePod update a clone."""

    __slots__ = ("_aff_empty", "affinity", "affinity_terms", "anti", "anti_terms", "existing",
                 "ns_labels", "self_match", "table")

    def __init__(self, table: NodeTable, affinity_terms: tuple[AffinityTerm, ...],
                 anti_terms: tuple[AffinityTerm, ...], affinity: DomainCounts,
                 anti: DomainCounts, existing: DomainCounts, self_match: bool,
                 ns_labels: dict[str, str]) -> None:
        self.table = table
        self.affinity_terms = affinity_terms  # incoming required affinity (namespaces merged)
        self.anti_terms = anti_terms  # incoming required anti-affinity (namespaces merged)
        self.affinity = affinity  # pods matching all affinity terms, per key domain
        self.anti = anti  # pods matching each anti-affinity term, per key domain
        self.existing = existing  # existing pods' anti-affinity terms matching the pod
        self.self_match = self_match  # the pod matches all of its own affinity terms
        self.ns_labels = ns_labels  # the incoming pod's namespace labels (snapshot)
        self._aff_empty: bool | None = None

    def clone(self) -> FilterState:
        out = FilterState(self.table, self.affinity_terms, self.anti_terms,
                          {k: v.copy() for k, v in self.affinity.items()},
                          {k: v.copy() for k, v in self.anti.items()},
                          {k: v.copy() for k, v in self.existing.items()},
                          self.self_match, self.ns_labels)
        out._aff_empty = self._aff_empty
        return out

    @property
    def affinity_empty(self) -> bool:
        """``len(affinityCounts) == 0``: no placed pod matches all the affinity terms."""
        if self._aff_empty is None:
            self._aff_empty = not any(a.any() for a in self.affinity.values())
        return self._aff_empty

    def update(self, pod: Pod, other: Pod, slot: int, delta: int) -> None:
        """kube's ``updateWithPod``: ``other`` (scheduling ``pod``) appears on or leaves
        ``slot``."""
        table = self.table
        for t in pod_terms(other).required_anti:
            if t.matches(pod, self.ns_labels):
                _bump(self.existing, table, t.topology_key, slot, delta)
        if matches_all(self.affinity_terms, other, {}):
            for t in self.affinity_terms:
                _bump(self.affinity, table, t.topology_key, slot, delta)
            self._aff_empty = None
        for t in self.anti_terms:
            if t.matches(other, {}):
                _bump(self.anti, table, t.topology_key, slot, delta)

    # ------------------------------------------------------------------ vector checks
    def fails(self, table: NodeTable, idx: Any
              ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
        """Per node at ``idx``: (fails pod affinity, fails pod anti-affinity, fails existing
        pods' anti-affinity); None where a check cannot fail."""
        aff = anti = existing = None
        if self.affinity_terms:
            missing = None
            pods_exist = None
            for key in dict.fromkeys(t.topology_key for t in self.affinity_terms):
                codes = node_codes(table, key, idx)
                arr = self.affinity.get(key)
                lacks = codes < 0
                missing = lacks if missing is None else missing | lacks
                have = (np.zeros(len(codes), dtype=bool) if arr is None
                        else _fit(arr, table, key)[codes] > 0)
                pods_exist = have if pods_exist is None else pods_exist & have
            assert missing is not None and pods_exist is not None
            if self.affinity_empty and self.self_match:  # the first pod of its kind
                aff = missing
            else:
                aff = missing | ~pods_exist
        if self.anti:
            for key in dict.fromkeys(t.topology_key for t in self.anti_terms):
                arr = self.anti.get(key)
                if arr is not None:
                    hit = values_at(arr, table, key, idx) > 0
                    anti = hit if anti is None else anti | hit
        for key, arr in self.existing.items():
            hit = values_at(arr, table, key, idx) > 0
            existing = hit if existing is None else existing | hit
        return aff, anti, existing


class ScoreState:
    """PreScore's output (kube's ``preScoreState.topologyScore``)."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: DomainCounts) -> None:
        self.topology_score = topology_score

    def score(self, table: NodeTable, idx: Any) -> np.ndarray:
        out = np.zeros(count(table, idx), dtype=np.int64)
        for key, arr in self.topology_score.items():
            out += values_at(arr, table, key, idx)
        return out
