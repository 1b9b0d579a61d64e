"""Incremental pod indexes over the node table, for PodTopologySpread and InterPodAffinity.

``SelectorCounts`` keeps, per registered (namespaces, selector) key, an int32 column over node
slots: how many pods on each node match. A key is registered on first use (one pass over the
pods already placed) and then kept current by the table's pod listener on every pod
add/remove — which also covers label changes, since the store re-accounts an updated pod.
Per-domain counts are then one ``np.bincount`` over a topology key's label codes.

``TermIndex`` keeps, per distinct (anti-)affinity term carried by placed pods, an int32 column
of how many pods on each node carry it, so "existing pods' anti-affinity against the incoming
pod" is a handful of vector operations per distinct term, not a pass over pods.

Memory bound: with thousands of distinct selectors, columns would grow without limit and every
pod event would pay for every key. Both indexes are LRU-bounded (``max_keys``); an evicted key
is rebuilt on its next use with one pass over placed pods. Hits, misses and evictions are
counted so a benchmark can see thrashing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.api.selectors import LabelSelector
from scheduler_core.nodetable.table import NodeTable

__all__ = ["NamespaceFilter", "SelectorCounts", "TermIndex", "domain_counts", "selector_counts"]

DEFAULT_MAX_KEYS = 512


@dataclass(frozen=True, slots=True)
class NamespaceFilter:
    """Which namespaces a selector applies to: an explicit set, or a namespace label selector
    (``all_namespaces`` for an empty namespaceSelector ``{}``)."""

    names: frozenset[str] = frozenset()
    selector: LabelSelector | None = None

    def matches(self, namespace: str, labels_of: Callable[[str], dict[str, str]]) -> bool:
        if namespace in self.names:
            return True
        return self.selector is not None and self.selector.matches(labels_of(namespace))

    @property
    def uses_namespace_labels(self) -> bool:
        return self.selector is not None


def _no_labels(namespace: str) -> dict[str, str]:
    return {}


class _LruColumns:
    """Columns registered with the node table, evicted least-recently-used past ``max_keys``."""

    def __init__(self, table: NodeTable, prefix: str, max_keys: int) -> None:
        self.table = table
        self.prefix = prefix
        self.max_keys = max_keys
        self.keys: OrderedDict[Hashable, str] = OrderedDict()
        self.hits = self.misses = self.evictions = 0
        self._seq = 0

    def lookup(self, key: Hashable) -> np.ndarray | None:
        name = self.keys.get(key)
        if name is None:
            self.misses += 1
            return None
        self.hits += 1
        self.keys.move_to_end(key)
        return self.table.column(name)

    def create(self, key: Hashable) -> np.ndarray:
        if len(self.keys) >= self.max_keys:
            _, old = self.keys.popitem(last=False)
            self.table.drop_column(old)
            self.evictions += 1
        self._seq += 1
        name = f"{self.prefix}:{self._seq}"
        self.keys[key] = name
        return self.table.register_column(name, np.int32, 0)

    def items(self) -> list[tuple[Hashable, np.ndarray]]:
        return [(k, self.table.column(n)) for k, n in self.keys.items()]

    def clear(self) -> None:
        for name in self.keys.values():
            self.table.drop_column(name)
        self.keys.clear()


class SelectorCounts:
    """Per (namespace filter, selector, count terminating?) key: matching pods per node slot."""

    def __init__(self, table: NodeTable, *, max_keys: int = DEFAULT_MAX_KEYS,
                 namespace_labels: Callable[[str], dict[str, str]] | None = None) -> None:
        self.table = table
        self.namespace_labels = namespace_labels or _no_labels
        self._cols = _LruColumns(table, "selector-counts", max_keys)
        self._specs: dict[Hashable, tuple[NamespaceFilter, LabelSelector, bool]] = {}
        table.pod_listeners.append(self._on_pod)

    @property
    def stats(self) -> dict[str, int]:
        c = self._cols
        return {"keys": len(c.keys), "hits": c.hits, "misses": c.misses,
                "evictions": c.evictions}

    def counts(self, namespaces: NamespaceFilter, selector: LabelSelector, *,
               include_terminating: bool = True) -> np.ndarray:
        """The per-slot count column (read-only; valid until the next pod event)."""
        key = (namespaces, selector, include_terminating)
        col = self._cols.lookup(key)
        if col is not None:
            return col
        col = self._cols.create(key)
        live = {k for k in self._cols.keys}
        for stale in [k for k in self._specs if k not in live]:
            del self._specs[stale]
        self._specs[key] = (namespaces, selector, include_terminating)
        labels_of = self.namespace_labels
        for slot in np.flatnonzero(self.table.live[: self.table.high]):
            n = 0
            for pod in self.table.pods[slot].values():
                if (include_terminating or pod.deletion_timestamp is None) and \
                        namespaces.matches(pod.namespace, labels_of) and \
                        selector.matches(pod.labels):
                    n += 1
            col[slot] = n
        return col

    def _on_pod(self, pod: Pod, slot: int, delta: int) -> None:
        if not self._specs:
            return
        labels_of = self.namespace_labels
        for key, name in self._cols.keys.items():
            namespaces, selector, include_terminating = self._specs[key]
            if (include_terminating or pod.deletion_timestamp is None) and \
                    namespaces.matches(pod.namespace, labels_of) and \
                    selector.matches(pod.labels):
                self.table.column(name)[slot] += delta

    def invalidate_namespace_selectors(self) -> None:
        """Namespace labels changed: drop keys that depend on them (rebuilt on next use)."""
        for key in [k for k, spec in self._specs.items() if spec[0].uses_namespace_labels]:
            name = self._cols.keys.pop(key, None)
            if name is not None:
                self.table.drop_column(name)
            del self._specs[key]


class TermIndex:
    """Per distinct term carried by placed pods: how many pods on each slot carry it.

    ``terms_of(pod)`` returns the hashable terms a pod carries (e.g. its required
    anti-affinity terms, each already resolved against the pod's own namespace)."""

    def __init__(self, table: NodeTable, terms_of: Callable[[Pod], tuple[Hashable, ...]]) -> None:
        self.table = table
        self.terms_of = terms_of
        self._cols: dict[Hashable, str] = {}
        self._totals: dict[Hashable, int] = {}
        self._seq = 0
        for slot in np.flatnonzero(table.live[: table.high]):
            for pod in table.pods[slot].values():
                self._on_pod(pod, int(slot), 1)
        table.pod_listeners.append(self._on_pod)

    def _on_pod(self, pod: Pod, slot: int, delta: int) -> None:
        for term in self.terms_of(pod):
            name = self._cols.get(term)
            if name is None:
                if delta < 0:
                    continue
                self._seq += 1
                name = self._cols[term] = f"term-index:{id(self)}:{self._seq}"
                self.table.register_column(name, np.int32, 0)
                self._totals[term] = 0
            self.table.column(name)[slot] += delta
            self._totals[term] += delta
            if self._totals[term] == 0:
                self.table.drop_column(name)
                del self._cols[term]
                del self._totals[term]

    def terms(self) -> list[tuple[Hashable, np.ndarray]]:
        """Every term carried by at least one placed pod, with its per-slot carrier counts."""
        return [(t, self.table.column(n)) for t, n in self._cols.items()]

    def __len__(self) -> int:
        return len(self._cols)


def domain_counts(table: NodeTable, key: str, per_slot: np.ndarray,
                  eligible: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sum ``per_slot`` over each value of label ``key``.

    Returns ``(codes, totals)``: ``codes`` is the key's label-code column over slots
    ``[0, high)`` (-1 where absent) and ``totals[code]`` the summed count of that domain over
    live slots that have the key (and are ``eligible`` when given)."""
    high = table.high
    col = table.codes(key)
    n_values = len(table.label_values.get(key, ()))
    if col is None or n_values == 0:
        return np.full(high, -1, dtype=np.int32), np.zeros(0, dtype=np.int64)
    codes = col[:high]
    use = codes >= 0
    if eligible is not None:
        use = use & eligible[:high]
    totals = np.bincount(codes[use], weights=per_slot[:high][use], minlength=n_values)
    return codes, totals.astype(np.int64)




def selector_counts(table: NodeTable,
                    namespace_labels: Callable[[str], dict[str, str]] | None = None
                    ) -> SelectorCounts:
    """The table's shared SelectorCounts index (created on first use)."""
    idx = table.indexes.get("selector-counts")
    if idx is None:
        idx = table.indexes["selector-counts"] = SelectorCounts(
            table, namespace_labels=namespace_labels)
    elif namespace_labels is not None and idx.namespace_labels is _no_labels:
        idx.namespace_labels = namespace_labels
    return idx
