"""InterPodAffinity. Extension points: PreFilter (+AddPod/RemovePod), Filter,
PreScore, Score (+NormalizeScore), EnqueueExtensions.

Args (``InterPodAffinityArgs``): ``hardPodAffinityWeight`` (0..100, default 1) and
``ignorePreferredTermsOfExistingPods`` (default false).

Per-cycle cost follows the number of nodes and of *distinct* terms, never the number of pods:

- the incoming pod's terms read per-slot count columns of ``SelectorCounts`` (one column per
  selector; "matches all required affinity terms" is one conjunction column);
- the terms placed pods carry live in ``TermIndex``es (required anti-affinity; and, for
  scoring, required affinity plus weighted preferred (anti-)affinity), one carrier-count column
  per distinct term; each distinct term is matched against the incoming pod once (memoised
  per pod labels and namespace labels until the term set changes);
- per-domain totals are ``np.bincount`` over the topology key's label codes, and Filter/Score
  look domains up by code over the whole candidate set.

Namespace labels are read when a term is matched, so label changes need no index rebuild;
namespace selectors of the incoming pod's terms are unrolled into namespace names each cycle.

See docs/scheduling-model.md, "InterPodAffinity".
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import (
    MAX_NODE_SCORE,
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    Handle,
    PreFilterResult,
    QueueingHint,
    Status,
)
from scheduler_core.nodetable.pod_index import (
    SelectorCounts,
    TermIndex,
    selector_counts,
    selector_guard,
)
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import check_keys, count, require_int, require_mapping
from scheduler_core.plugins.inter_pod_affinity_state import (
    FilterState,
    ScoreState,
    domain_totals,
)
from scheduler_core.plugins.inter_pod_affinity_terms import (
    PREFERRED_ANTI,
    REQUIRED,
    AffinityTerm,
    ScoreTerm,
    matches_all,
    merge_namespaces,
    pod_terms,
)

__all__ = [
    "ERR_REASON_AFFINITY",
    "ERR_REASON_ANTI_AFFINITY",
    "ERR_REASON_EXISTING_ANTI_AFFINITY",
    "NAME",
    "InterPodAffinity",
    "InterPodAffinityArgs",
]

NAME = names.INTER_POD_AFFINITY
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_ANTI_INDEX = NAME + "/required-anti-affinity"
_SCORE_INDEX = NAME + "/scoring-terms"
_STATUSES = (Status.unresolvable(ERR_REASON_AFFINITY, plugin=NAME),
             Status.unschedulable(ERR_REASON_ANTI_AFFINITY, plugin=NAME),
             Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY, plugin=NAME))
_MATCH_CACHE_LIMIT = 256


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1  # 0..100; an existing pod's required affinity term
    # matching the incoming pod adds this to its domain's score (0 turns that off)
    ignore_preferred_terms_of_existing_pods: bool = False  # skip scoring when the incoming
    # pod has no preferred (anti-)affinity terms

    @classmethod
    def parse(cls, args: dict | None, path: str = "") -> InterPodAffinityArgs:
        data = require_mapping(args, path)
        check_keys(data, path, ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"),
                   "InterPodAffinityArgs")
        at = f"{path}." if path else ""
        weight = require_int(data.get("hardPodAffinityWeight"), f"{at}hardPodAffinityWeight",
                             default=1)
        if not 0 <= weight <= 100:
            raise ConfigError(f"not in valid range [0, 100], got {weight}",
                              field=f"{at}hardPodAffinityWeight")
        ignore = data.get("ignorePreferredTermsOfExistingPods", False)
        if ignore is None:
            ignore = False
        if not isinstance(ignore, bool):
            raise ConfigError(f"expected a boolean, got {ignore!r}",
                              field=f"{at}ignorePreferredTermsOfExistingPods")
        return cls(weight, ignore)


def _no_labels(namespace: str) -> dict[str, str]:
    return {}


class InterPodAffinity:
    name: ClassVar[str] = NAME
    # upstream's Filter reads what its PreFilter stored: a profile that runs the Filter without
    # the PreFilter fails with this error (docs/fidelity.md, "Filter without its PreFilter")
    filter_needs_pre_filter: ClassVar[str] = (
        "error reading \"PreFilterInterPodAffinity\" from cycleState: not found")
    # and its Score what its PreScore stored (docs/fidelity.md, "Filter without its PreFilter")
    score_needs_pre_score: ClassVar[str] = (
        "failed to read \"PreScoreInterPodAffinity\" from cycleState: not found")
    score_in_range: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        self.args = InterPodAffinityArgs.parse(args, args_path)
        self.hard_weight = self.args.hard_pod_affinity_weight
        self.ignore_preferred = self.args.ignore_preferred_terms_of_existing_pods
        self.handle = handle
        labels_of = getattr(handle, "namespace_labels", None)
        self._labels_of: Callable[[str], dict[str, str]] = labels_of or _no_labels

    # ------------------------------------------------------------------ cluster access
    def _ns_labels(self, namespace: str) -> dict[str, str]:
        """A snapshot of the namespace's labels ({} when it does not exist)."""
        return dict(self._labels_of(namespace))

    def _namespaces(self) -> list[tuple[str, dict[str, str]]]:
        cluster = getattr(self.handle, "cluster", None)
        if cluster is None:
            return []
        return [(ns.name, ns.labels) for ns in cluster.namespaces.values()]

    def _selector_counts(self, table: NodeTable) -> SelectorCounts:
        return selector_counts(table, self._labels_of)

    @staticmethod
    def _index(table: NodeTable, name: str) -> TermIndex:
        index = table.indexes.get(name)
        if index is None:
            if name == _ANTI_INDEX:
                index = TermIndex(table, _anti_terms, lambda t: selector_guard(t.selector))
            else:
                index = TermIndex(table, _score_terms,
                                  lambda st: selector_guard(st.term.selector))
            table.indexes[name] = index
        return index

    @staticmethod
    def _matching(index: TermIndex, pod: Pod, ns_labels: dict[str, str],
                  term_of: Callable[[Any], AffinityTerm]) -> list[Hashable]:
        """The index's terms that match ``pod``, memoised until the term set changes."""
        key = (pod.namespace, frozenset(pod.labels.items()), frozenset(ns_labels.items()))
        hit = index.cache.get(key)
        if hit is None:
            hit = [t for t in index.candidates(pod.labels)
                   if term_of(t).matches(pod, ns_labels)]
            if len(index.cache) >= _MATCH_CACHE_LIMIT:
                index.cache.clear()
            index.cache[key] = hit
        return hit

    # ------------------------------------------------------------------ PreFilter
    def _existing_anti_counts(self, table: NodeTable, pod: Pod,
                              ns_labels: dict[str, str]) -> dict[str, np.ndarray]:
        """Per topology key, the domains' count of placed pods' required anti-affinity terms
        that match ``pod`` (keys whose total is 0 are left out)."""
        index = self._index(table, _ANTI_INDEX)
        if not len(index):
            return {}
        high = table.high
        per_key: dict[str, np.ndarray] = {}
        for term in self._matching(index, pod, ns_labels, lambda t: t):
            key = term.topology_key
            col = index.column(term)[:high]
            acc = per_key.get(key)
            per_key[key] = col.astype(np.int64) if acc is None else acc + col
        out = {}
        for key, per_slot in per_key.items():
            totals = domain_totals(table, key, per_slot)
            if totals.any():
                out[key] = totals
        return out

    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        terms = pod_terms(pod)
        if not terms.required_affinity and not terms.required_anti and \
                not len(self._index(table, _ANTI_INDEX)):
            return None, SKIP  # no terms of its own, no placed pod's anti-affinity to honour
        ns_labels = self._ns_labels(pod.namespace)
        existing = self._existing_anti_counts(table, pod, ns_labels)
        if not existing and not terms.required_affinity and not terms.required_anti:
            return None, SKIP
        listing = self._namespaces() if _needs_listing(terms.required_affinity
                                                       + terms.required_anti) else []
        aff = tuple(merge_namespaces(t, listing) for t in terms.required_affinity)
        anti = tuple(merge_namespaces(t, listing) for t in terms.required_anti)
        counts = self._selector_counts(table)
        affinity: dict[str, np.ndarray] = {}
        if aff:
            col = counts.counts_all(tuple((t.namespaces, t.selector) for t in aff))
            for t in aff:  # each term adds the matching pods at its own key
                _add(affinity, t.topology_key, domain_totals(table, t.topology_key, col))
        anti_counts: dict[str, np.ndarray] = {}
        for t in anti:
            totals = domain_totals(table, t.topology_key, counts.counts(t.namespaces,
                                                                         t.selector))
            if totals.any():
                _add(anti_counts, t.topology_key, totals)
        state.write(_PRE_FILTER_KEY, FilterState(table, aff, anti, affinity, anti_counts,
                                                 existing, matches_all(aff, pod, {}), ns_labels))
        return None, None

    def add_pod(self, state: CycleState, pod: Pod, other: Pod, slot: int) -> None:
        """``other`` is (to be) placed on ``slot`` while ``pod`` is scheduled."""
        state.read(_PRE_FILTER_KEY).update(pod, other, slot, 1)

    def remove_pod(self, state: CycleState, pod: Pod, other: Pod, slot: int) -> None:
        """``other`` leaves ``slot`` (e.g. a preemption victim) while ``pod`` is scheduled."""
        state.read(_PRE_FILTER_KEY).update(pod, other, slot, -1)

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        s: FilterState = state.read(_PRE_FILTER_KEY)
        bad = None
        for fail in s.fails(table, idx):
            if fail is not None:
                bad = fail if bad is None else bad | fail
        if bad is None or not bad.any():
            return None
        return ~bad

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[Status]]:
        """Index 0: pod affinity (unresolvable); 1: pod anti-affinity; 2: existing pods'
        anti-affinity (the first check a node fails, in upstream's order)."""
        aff, anti, _existing = state.read(_PRE_FILTER_KEY).fails(table, idx)
        out = np.full(count(table, idx), 2, dtype=np.int64)
        if anti is not None:
            out[anti] = 1
        if aff is not None:
            out[aff] = 0
        return out, list(_STATUSES)

    # ------------------------------------------------------------------ PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> Status | None:
        terms = pod_terms(pod)
        has_constraints = bool(terms.preferred_affinity or terms.preferred_anti)
        if self.ignore_preferred and not has_constraints:
            return SKIP
        index = self._index(table, _SCORE_INDEX)
        if not has_constraints and not len(index):  # nothing to weigh: no topology score
            return SKIP
        high = table.high
        weighted: dict[str, np.ndarray] = {}  # per key, per slot: summed signed weights
        hits: dict[str, np.ndarray] = {}  # per key, per slot: matches (did a term apply?)

        def acc(key: str, col: np.ndarray, weight: int) -> None:
            col = col[:high].astype(np.int64)
            if key in weighted:
                weighted[key] += weight * col
                hits[key] += col
            else:
                weighted[key] = weight * col
                hits[key] = col

        if has_constraints:
            pref = terms.preferred_affinity + terms.preferred_anti
            listing = self._namespaces() if _needs_listing(tuple(t for _, t in pref)) else []
            counts = self._selector_counts(table)
            n_aff = len(terms.preferred_affinity)
            for i, (weight, term) in enumerate(pref):
                t = merge_namespaces(term, listing)
                acc(t.topology_key, counts.counts(t.namespaces, t.selector),
                    weight if i < n_aff else -weight)
        if len(index):
            ns_labels = self._ns_labels(pod.namespace)
            for st in self._matching(index, pod, ns_labels, _term_of):
                assert isinstance(st, ScoreTerm)
                if st.kind == REQUIRED:
                    if self.hard_weight <= 0:
                        continue
                    weight = self.hard_weight
                else:
                    weight = -st.weight if st.kind == PREFERRED_ANTI else st.weight
                acc(st.term.topology_key, index.column(st), weight)
        topology_score: dict[str, np.ndarray] = {}
        for key, per_slot in weighted.items():
            if domain_totals(table, key, hits[key]).any():
                topology_score[key] = domain_totals(table, key, per_slot)
        if not topology_score:
            return SKIP
        state.write(_PRE_SCORE_KEY, ScoreState(topology_score))
        return None

    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        return state.read(_PRE_SCORE_KEY).score(table, idx)

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        s = state.get(_PRE_SCORE_KEY)
        if s is None or not s.topology_score or not len(scores):
            return scores
        lo, hi = int(scores.min()), int(scores.max())
        if hi - lo <= 0:
            return np.zeros(len(scores), dtype=np.int64)
        # float64(MaxNodeScore) * (float64(s-min) / float64(max-min)), truncated
        return (float(MAX_NODE_SCORE) * ((scores - lo) / float(hi - lo))).astype(np.int64)

    # ------------------------------------------------------------------ events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL
                             | ActionType.DELETE), _after_pod_change),
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                             | ActionType.UPDATE_NODE_TAINT), _after_node_change),
        ]


# --------------------------------------------------------------------------- helpers
def _anti_terms(pod: Pod) -> tuple[AffinityTerm, ...]:
    """The terms a placed pod files in the required anti-affinity index (run on every pod
    event: most pods have none, which one attribute read tells)."""
    if not pod.spec.affinity.required_pod_anti_affinity:
        return ()
    return pod_terms(pod).required_anti


def _score_terms(pod: Pod) -> tuple[ScoreTerm, ...]:
    """The terms a placed pod files in the scoring index (see ``_anti_terms``)."""
    a = pod.spec.affinity
    if not (a.required_pod_affinity or a.preferred_pod_affinity
            or a.preferred_pod_anti_affinity):
        return ()
    return pod_terms(pod).score_terms


def _term_of(st: Any) -> AffinityTerm:
    return st.term


def _needs_listing(terms: tuple[AffinityTerm, ...]) -> bool:
    return any(t.namespaces.uses_namespace_labels for t in terms)


def _add(counts: dict[str, np.ndarray], key: str, totals: np.ndarray) -> None:
    prev = counts.get(key)
    counts[key] = totals if prev is None else prev + totals


def _after_pod_change(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
    """``isSchedulableAfterPodChange`` (terms matched with no namespace labels, as upstream).

    Only assigned pods count. Added: Queue if it matches all affinity terms. Updated: Queue if
    it starts matching all affinity terms or stops matching all anti-affinity terms. Deleted:
    Queue if it matched all anti-affinity terms (a deleted pod whose *own* anti-affinity
    rejected the pod is not considered, as in v1.30-v1.34)."""
    if (new is not None and not new.node_name) or (old is not None and not old.node_name):
        return QueueingHint.QUEUE_SKIP
    terms = pod_terms(pod)
    if old is not None and new is not None:
        if (not matches_all(terms.required_affinity, old, {})
                and matches_all(terms.required_affinity, new, {})):
            return QueueingHint.QUEUE
        if (matches_all(terms.required_anti, old, {})
                and not matches_all(terms.required_anti, new, {})):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
    if new is not None:
        return (QueueingHint.QUEUE if matches_all(terms.required_affinity, new, {})
                else QueueingHint.QUEUE_SKIP)
    assert old is not None
    return (QueueingHint.QUEUE if matches_all(terms.required_anti, old, {})
            else QueueingHint.QUEUE_SKIP)


def _after_node_change(pod: Pod, old: Node | None, new: Node) -> QueueingHint:
    """Queue when the node has the topology key of any required (anti-)affinity term
    (docs/scheduling-model.md, "InterPodAffinity"; newer upstream also compares the old and
    new key values, which only skips more)."""
    terms = pod_terms(pod)
    labels = new.labels
    for t in terms.required_affinity + terms.required_anti:
        if t.topology_key in labels:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
