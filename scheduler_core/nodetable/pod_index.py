"""Incremental pod indexes over the node table, for PodTopologySpread and InterPodAffinity.

``SelectorCounts`` keeps, per registered (namespaces, selector) key, an int32 column over node
slots: how many pods on each node match. A key is registered on first use (one pass over the
pods already placed) and then kept current by the table's pod listener on every pod
add/remove — which also covers label changes, since the store re-accounts an updated pod.
A key may also be a conjunction of (namespaces, selector) pairs (``counts_all``): pods that
match every pair, as InterPodAffinity needs for "pods matching all required affinity terms".
Per-domain counts are then one ``np.bincount`` over a topology key's label codes.

``TermIndex`` keeps, per distinct (anti-)affinity term carried by placed pods, an int32 column
of how many pods on each node carry it, so "existing pods' anti-affinity against the incoming
pod" is a handful of vector operations per distinct term, not a pass over pods.

Both route by label: a selector (or term) is filed under the label value its first ``In``
requirement demands (``selector_guard``), so a pod event checks only the selectors the pod can
match, and ``TermIndex.candidates(labels)`` lists only the terms a pod can match.

``PriorityLoads`` keeps, per distinct pod priority, per-slot columns of how many placed pods of
that priority a node holds and their summed requests, so "what would leave each node if every
pod below priority p were evicted" (DefaultPreemption's first check) is a few vector sums.

Memory bound: with thousands of distinct selectors, columns would grow without limit.
``SelectorCounts`` is LRU-bounded (``max_keys``); an evicted key is rebuilt on its next use with
one pass over placed pods. Hits, misses and evictions are counted so a benchmark can see
thrashing. ``TermIndex`` holds one column per distinct term some placed pod carries, dropped
when its last carrier leaves (so it is bounded by the placed pods' distinct terms).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.api.selectors import LabelSelector
from scheduler_core.nodetable.accounting import load_of
from scheduler_core.nodetable.table import NodeTable

__all__ = [
    "NamespaceFilter",
    "PriorityLoads",
    "SelectorCounts",
    "TermIndex",
    "domain_counts",
    "priority_loads",
    "selector_counts",
    "selector_guard",
]

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
        """Does matching read namespace labels? (An empty selector ``{}`` matches every
        namespace whatever its labels.)"""
        return self.selector is not None and not self.selector.empty


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

    def create(self, key: Hashable,
               on_evict: Callable[[Hashable], None] | None = None) -> np.ndarray:
        if len(self.keys) >= self.max_keys:
            old_key, old = self.keys.popitem(last=False)
            self.table.drop_column(old)
            self.evictions += 1
            if on_evict is not None:
                on_evict(old_key)
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


Pairs = tuple[tuple[NamespaceFilter, LabelSelector], ...]


def _pod_matches(pairs: Pairs, include_terminating: bool, pod: Pod,
                 labels_of: Callable[[str], dict[str, str]]) -> bool:
    if not include_terminating and pod.deletion_timestamp is not None:
        return False
    for namespaces, selector in pairs:
        if not (namespaces.matches(pod.namespace, labels_of) and selector.matches(pod.labels)):
            return False
    return True


Guard = tuple[str, frozenset[str]] | None


def selector_guard(*selectors: LabelSelector) -> Guard:
    """A label every pod matching all ``selectors`` must carry, with one of these values (the
    first ``In`` requirement), or None when there is no ``In`` requirement."""
    for selector in selectors:
        for r in selector.requirements:
            if r.op == "In":
                return r.key, r.values
    return None


class _GuardBuckets:
    """Keys bucketed by the label value a matching pod must carry (see ``selector_guard``):
    ``candidates(labels)`` returns the keys a pod with these labels may match."""

    def __init__(self) -> None:
        self.by_label: dict[str, dict[str, set[Hashable]]] = {}  # label -> value -> keys
        self.unguarded: set[Hashable] = set()

    def add(self, key: Hashable, guard: Guard) -> None:
        if guard is None:
            self.unguarded.add(key)
            return
        by_value = self.by_label.setdefault(guard[0], {})
        for value in guard[1]:
            by_value.setdefault(value, set()).add(key)

    def discard(self, key: Hashable, guard: Guard) -> None:
        if guard is None:
            self.unguarded.discard(key)
            return
        by_value = self.by_label.get(guard[0], {})
        for value in guard[1]:
            keys = by_value.get(value)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del by_value[value]
        if not by_value:
            self.by_label.pop(guard[0], None)

    def candidates(self, labels: dict[str, str]) -> list[Hashable]:
        out: list[Hashable] = list(self.unguarded)
        for label, by_value in self.by_label.items():
            value = labels.get(label)
            if value is not None:
                keys = by_value.get(value)
                if keys:
                    out.extend(keys)
        return out


def _pairs_guard(pairs: Pairs) -> Guard:
    return selector_guard(*(selector for _, selector in pairs))


class SelectorCounts:
    """Per (namespace filter, selector, count terminating?) key: matching pods per node slot.

    ``counts_all`` takes a conjunction of (namespace filter, selector) pairs instead: a pod
    counts when it matches every pair.

    A pod event checks only the keys the pod could match: keys are bucketed by the label
    value their first ``In`` requirement needs (keys without one are always checked), so the
    cost per event follows the candidate keys, not every registered key."""

    def __init__(self, table: NodeTable, *, max_keys: int = DEFAULT_MAX_KEYS,
                 namespace_labels: Callable[[str], dict[str, str]] | None = None) -> None:
        self.table = table
        self.namespace_labels = namespace_labels or _no_labels
        self._cols = _LruColumns(table, "selector-counts", max_keys)
        self._specs: dict[Hashable, tuple[Pairs, bool]] = {}
        self._buckets = _GuardBuckets()
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
        return self._register(key, ((namespaces, selector),), include_terminating)

    def counts_all(self, pairs: Pairs, *, include_terminating: bool = True) -> np.ndarray:
        """Per slot, the pods matching *every* (namespace filter, selector) pair."""
        if not pairs:
            raise ValueError("counts_all needs at least one (namespaces, selector) pair")
        if len(pairs) == 1:
            return self.counts(pairs[0][0], pairs[0][1], include_terminating=include_terminating)
        key = ("all", pairs, include_terminating)
        col = self._cols.lookup(key)
        if col is not None:
            return col
        return self._register(key, pairs, include_terminating)

    def _register(self, key: Hashable, pairs: Pairs, include_terminating: bool) -> np.ndarray:
        col = self._cols.create(key, self._forget)
        self._specs[key] = (pairs, include_terminating)
        self._buckets.add(key, _pairs_guard(pairs))
        labels_of = self.namespace_labels
        table = self.table
        for slot in np.flatnonzero(table.pod_count[: table.high] > 0):  # live slots with pods
            col[slot] = sum(1 for pod in table.pods[slot].values()
                            if _pod_matches(pairs, include_terminating, pod, labels_of))
        return col

    def _forget(self, key: Hashable) -> None:
        """Drop a key's spec and guard entry (its column is already gone)."""
        pairs, _ = self._specs.pop(key)
        self._buckets.discard(key, _pairs_guard(pairs))

    def _on_pod(self, pod: Pod, slot: int, delta: int) -> None:
        if not self._specs:
            return
        candidates = self._buckets.candidates(pod.labels)
        if not candidates:
            return
        labels_of = self.namespace_labels
        names = self._cols.keys
        for key in candidates:
            pairs, include_terminating = self._specs[key]
            if _pod_matches(pairs, include_terminating, pod, labels_of):
                self.table.column(names[key])[slot] += delta

    def invalidate_namespace_selectors(self) -> None:
        """Namespace labels changed: drop keys that depend on them (rebuilt on next use)."""
        for key in [k for k, (pairs, _) in self._specs.items()
                    if any(ns.uses_namespace_labels for ns, _ in pairs)]:
            name = self._cols.keys.pop(key, None)
            if name is not None:
                self.table.drop_column(name)
            self._forget(key)


class TermIndex:
    """Per distinct term carried by placed pods: how many pods on each slot carry it.

    ``terms_of(pod)`` returns the hashable terms a pod carries (e.g. its required
    anti-affinity terms, each already resolved against the pod's own namespace); a term a pod
    carries twice counts twice. ``version`` changes whenever a term appears or disappears, and
    ``cache`` (free for callers, e.g. "which terms match this pod") is then cleared.

    With ``guard_of(term)`` (e.g. ``selector_guard`` of the term's selector), ``candidates``
    narrows the terms that can match a pod by its labels, without a pass over every term."""

    def __init__(self, table: NodeTable, terms_of: Callable[[Pod], tuple[Hashable, ...]],
                 guard_of: Callable[[Hashable], Guard] | None = None) -> None:
        self.table = table
        self.terms_of = terms_of
        self.guard_of = guard_of
        self._buckets = _GuardBuckets()
        self._cols: dict[Hashable, str] = {}
        self._totals: dict[Hashable, int] = {}
        self._seq = 0
        self.version = 0
        self.cache: dict[Hashable, Any] = {}
        for slot in np.flatnonzero(table.pod_count[: table.high] > 0):  # live slots with pods
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
                self._changed()
                name = self._cols[term] = f"term-index:{id(self)}:{self._seq}"
                self.table.register_column(name, np.int32, 0)
                self._totals[term] = 0
                self._buckets.add(term, self._guard(term))
            self.table.column(name)[slot] += delta
            self._totals[term] += delta
            if self._totals[term] == 0:
                self._changed()
                self.table.drop_column(name)
                del self._cols[term]
                del self._totals[term]
                self._buckets.discard(term, self._guard(term))

    def _guard(self, term: Hashable) -> Guard:
        return None if self.guard_of is None else self.guard_of(term)

    def _changed(self) -> None:
        self.version += 1
        if self.cache:
            self.cache.clear()

    def terms(self) -> list[tuple[Hashable, np.ndarray]]:
        """Every term carried by at least one placed pod, with its per-slot carrier counts."""
        return [(t, self.table.column(n)) for t, n in self._cols.items()]

    def term_keys(self) -> list[Hashable]:
        """Every term carried by at least one placed pod."""
        return list(self._cols)

    def candidates(self, labels: dict[str, str]) -> list[Hashable]:
        """The terms a pod with ``labels`` may match (a superset; every term without a
        guard)."""
        return self._buckets.candidates(labels)

    def column(self, term: Hashable) -> np.ndarray:
        """The per-slot carrier counts of one term (KeyError if no placed pod carries it)."""
        return self.table.column(self._cols[term])

    def __len__(self) -> int:
        return len(self._cols)


_PODS = "#pods"  # PriorityLoads' pod-count column (no resource has this name)


class PriorityLoads:
    """Per distinct priority of placed pods: per slot, the number of such pods and their summed
    requests per resource (``NodeTable.add_pod``'s accounting of them). ``below(p, idx)``
    adds up the priorities under ``p``.

    A pod's priority is remembered when it is placed, so its removal takes off what its
    arrival added. Columns of a priority go when its last pod leaves. Past ``max_priorities``
    distinct priorities the index switches itself off (``enabled`` False, columns dropped,
    no more listening): callers then use the pods themselves. One per table (columns are
    named by priority and resource): use ``priority_loads``."""

    def __init__(self, table: NodeTable, *, max_priorities: int = 32) -> None:
        self.table = table
        self.max_priorities = max_priorities
        self.enabled = True
        self._cols: dict[int, dict[str, str]] = {}  # priority -> resource (or _PODS) -> column
        self._count: dict[int, int] = {}  # priority -> placed pods
        self._prio: dict[str, int] = {}  # uid -> priority when placed
        for slot in np.flatnonzero(table.pod_count[: table.high] > 0):  # live slots with pods
            for pod in table.pods[slot].values():
                self._on_pod(pod, int(slot), 1)
            if not self.enabled:
                return
        table.pod_listeners.append(self._on_pod)

    def _column(self, cols: dict[str, str], prio: int, resource: str) -> np.ndarray:
        name = cols.get(resource)
        if name is None:  # named by its key: the same column whenever it comes back
            name = cols[resource] = f"priority-loads:{prio}:{resource}"
            return self.table.register_column(name, np.int64, 0)
        return self.table.column(name)

    def _on_pod(self, pod: Pod, slot: int, delta: int) -> None:
        if delta > 0:
            prio = self._prio[pod.uid] = pod.priority
        else:
            prio = self._prio.pop(pod.uid, pod.priority)
        cols = self._cols.get(prio)
        if cols is None:
            if delta < 0:
                return
            if len(self._cols) >= self.max_priorities:
                self._disable()
                return
            cols = self._cols[prio] = {}
            self._count[prio] = 0
        self._column(cols, prio, _PODS)[slot] += delta
        for r, v in load_of(pod.spec)[0]:
            self._column(cols, prio, r)[slot] += delta * v
        left = self._count[prio] = self._count[prio] + delta
        if left == 0:
            for name in cols.values():
                self.table.drop_column(name)
            del self._cols[prio], self._count[prio]

    def _disable(self) -> None:
        self.enabled = False
        for cols in self._cols.values():
            for name in cols.values():
                self.table.drop_column(name)
        self._cols.clear()
        self._count.clear()
        self._prio.clear()
        if self._on_pod in self.table.pod_listeners:
            self.table.pod_listeners.remove(self._on_pod)

    def any_below(self, priority: int) -> bool:
        """Whether any placed pod has a priority under ``priority``."""
        return any(prio < priority for prio in self._count)

    def below(self, priority: int, idx: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Over the slots ``idx``: how many placed pods have a priority under ``priority``,
        and their summed requests per resource (resources none of them requests are left
        out)."""
        column = self.table.column
        pods: np.ndarray | None = None
        res: dict[str, np.ndarray] = {}
        for prio, cols in self._cols.items():
            if prio >= priority:
                continue
            for r, name in cols.items():
                part = column(name)[idx]
                if r == _PODS:
                    pods = part if pods is None else pods + part
                else:
                    res[r] = part if r not in res else res[r] + part
        if pods is None:
            pods = np.zeros(len(idx), dtype=np.int64)
        return pods, res


def priority_loads(table: NodeTable) -> PriorityLoads | None:
    """The table's shared PriorityLoads index (created on first use), or None once it has
    switched itself off."""
    idx = table.indexes.get("priority-loads")
    if idx is None:
        idx = table.indexes["priority-loads"] = PriorityLoads(table)
    return idx if idx.enabled else None


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
