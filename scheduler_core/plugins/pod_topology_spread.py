"""PodTopologySpread. Extension points: PreFilter (+AddPod/RemovePod extensions),
Filter, PreScore, Score (+NormalizeScore), EnqueueExtensions.

Args (``PodTopologySpreadArgs``): ``defaultingType`` System (default) | List and
``defaultConstraints`` (List only); see ``pod_topology_spread_args``.

Vectorised layout
-----------------
Matching pods per node come from the shared ``SelectorCounts`` index (one int column per
(namespace, selector), kept current on every pod add/remove). A domain is a label *code* of the
constraint's topology key. Which nodes count (keys present, inclusion policies) and their
codes depend on nodes only, so that layout is memoised on the table until a node changes
(``domain_layout``); per-domain totals are then one ``np.bincount`` per constraint and cycle.
Filter is one lookup per node into a per-domain pass/fail table, Score one gather into
per-domain partial scores (per-node counts for the hostname key). PreFilter and PreScore cost
O(nodes) numpy work per constraint; Filter and Score O(len(idx)).

Global minimum
--------------
Upstream tracks the two smallest domain counts ("critical paths") and updates them on
AddPod/RemovePod. Every caller changes pods of a single node on a cloned state (nominated pods,
preemption victims), and with one domain changing the tracked minimum equals the true minimum,
which is what this state keeps (recomputed over the present domains after each change).

See docs/scheduling-model.md, "PodTopologySpread".
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import (
    MAX_NODE_SCORE,
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    PreFilterResult,
    QueueingHint,
    Status,
)
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import count
from scheduler_core.plugins.pod_topology_spread_args import (
    DO_NOT_SCHEDULE,
    HOSTNAME_LABEL,
    SCHEDULE_ANYWAY,
    PodTopologySpreadArgs,
)
from scheduler_core.plugins.pod_topology_spread_common import (
    SpreadConstraint,
    build_constraints,
    default_selector,
    domain_layout,
    has_all_keys,
    pod_counts,
    with_default_selector,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
]

NAME = names.POD_TOPOLOGY_SPREAD
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_MAX_INT32 = 2**31 - 1
_INT64_MAX = 2**63 - 1
_STATUSES = (Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH, plugin=NAME),
             Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH, plugin=NAME),
             Status(Code.SUCCESS, (), NAME))


class _FilterState:
    """PreFilter output. Per DoNotSchedule constraint: matching pods per domain code (with a
    trailing 0 that absent keys, code -1, read), which domains are eligible, and the minimum."""

    __slots__ = ("_passes", "constraints", "eligible", "minimum", "present", "self_match",
                 "table", "totals")

    def __init__(self, table: NodeTable, constraints: tuple[SpreadConstraint, ...],
                 self_match: tuple[int, ...], eligible: list[np.ndarray],
                 totals: list[np.ndarray], present: list[np.ndarray]) -> None:
        self.table = table
        self.constraints = constraints
        self.self_match = self_match
        self.eligible = eligible  # shared between clones: never written
        self.totals = totals
        self.present = present
        self.minimum = [_minimum(t, p) for t, p in zip(totals, present, strict=True)]
        self._passes: list[np.ndarray | None] = [None] * len(constraints)

    def clone(self) -> _FilterState:
        out = object.__new__(_FilterState)
        out.table = self.table
        out.constraints = self.constraints
        out.self_match = self.self_match
        out.eligible = self.eligible
        out.totals = [t.copy() for t in self.totals]
        out.present = [p.copy() for p in self.present]
        out.minimum = list(self.minimum)
        out._passes = list(self._passes)  # read-only arrays, replaced (not written) on update
        return out

    def passes(self, i: int) -> np.ndarray:
        """Per domain code of constraint ``i`` (plus the trailing "key missing" entry): does a
        node there pass the skew check? Cached until the next AddPod/RemovePod."""
        ok = self._passes[i]
        if ok is None:
            c = self.constraints[i]
            ok = self.totals[i] <= c.max_skew - self.self_match[i] + self.global_min(i)
            ok[-1] = False
            self._passes[i] = ok
        return ok

    def global_min(self, i: int) -> int:
        """The minimum for skew, 0 while fewer domains than minDomains are eligible."""
        if int(self.present[i].sum()) < self.constraints[i].min_domains:
            return 0
        return self.minimum[i]

    def update(self, pod: Pod, other: Pod, slot: int, delta: int) -> None:
        """kube's ``updateWithPod``: ``other`` was added to / removed from ``slot``."""
        if other.namespace != pod.namespace:
            return
        table = self.table
        codes = [table.codes(c.key) for c in self.constraints]
        if any(col is None or slot >= len(col) or col[slot] < 0 for col in codes):
            return
        for i, c in enumerate(self.constraints):
            elig = self.eligible[i]
            if not c.matches(other.labels) or slot >= len(elig) or not elig[slot]:
                continue
            code = int(codes[i][slot])  # type: ignore[index]
            if code >= len(self.present[i]) - 1:
                continue  # a label value newer than this state: not one of its domains
            self.totals[i][code] += delta
            self.present[i][code] = True
            self.minimum[i] = _minimum(self.totals[i], self.present[i])
            self._passes[i] = None


def _minimum(totals: np.ndarray, present: np.ndarray) -> int:
    vals = totals[present]
    return int(vals.min()) if len(vals) else _MAX_INT32


class _ScoreState:
    """PreScore output; upstream shares it between clones, and so does ``clone``.

    Per constraint either per-domain-bin partial scores (``by_bin[bins[slot]]``, computed once
    per domain with upstream's float expression) or, for the hostname key, the per-slot
    matching pod counts (``per_slot``, None when the selector counts nothing)."""

    __slots__ = ("all_keys", "bins", "by_bin", "constraints", "ignored", "per_slot",
                 "require_all", "weights")

    def __init__(self, constraints: tuple[SpreadConstraint, ...], require_all: bool) -> None:
        self.constraints = constraints
        self.require_all = require_all
        self.all_keys = True  # every live node carries every key
        self.weights: list[float] = []
        self.by_bin: list[np.ndarray | None] = []
        self.bins: list[np.ndarray | None] = []
        self.per_slot: list[np.ndarray | None] = []
        self.ignored: np.ndarray | None = None  # over the last scored idx (None: none ignored)

    def add_hostname(self, weight: float, per_slot: np.ndarray | None) -> None:
        self.weights.append(weight)
        self.by_bin.append(None)
        self.bins.append(None)
        self.per_slot.append(per_slot)

    def add_domains(self, weight: float, max_skew: int, totals: np.ndarray,
                    bins: np.ndarray) -> None:
        self.weights.append(weight)
        self.by_bin.append(totals.astype(np.float64) * weight + float(max_skew - 1))
        self.bins.append(bins)
        self.per_slot.append(None)

    def clone(self) -> _ScoreState:
        return self


def _slots(table: NodeTable, idx: Any) -> np.ndarray:
    if isinstance(idx, slice):
        return np.arange(*idx.indices(table.high), dtype=np.int64)
    return np.asarray(idx, dtype=np.int64)


def _go_round(x: np.ndarray) -> np.ndarray:
    """Go's math.Round for x >= 0 (halves away from zero), exactly."""
    whole = np.trunc(x)
    return (whole + (x - whole >= 0.5)).astype(np.int64)


class PodTopologySpread:
    name: ClassVar[str] = NAME
    # upstream's Filter reads what its PreFilter stored: a profile that runs the Filter without
    # the PreFilter fails with this error (docs/fidelity.md, "Filter without its PreFilter")
    filter_needs_pre_filter: ClassVar[str] = (
        "reading \"PreFilterPodTopologySpread\" from cycleState: not found")
    # and its Score what its PreScore stored (docs/fidelity.md, "Filter without its PreFilter")
    score_needs_pre_score: ClassVar[str] = (
        "error reading \"PreScorePodTopologySpread\" from cycleState: not found")
    score_in_range: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        self.args = PodTopologySpreadArgs.parse(args, args_path)
        self.system_defaulted = self.args.system_defaulted
        self.default_constraints = self.args.effective_defaults
        self._handle = handle
        # the defaults filtered by whenUnsatisfiable, per value: they depend on the pod only
        # through matchLabelKeys, so they are built once when no default constraint has any
        self._defaults_by_when: dict[str, tuple[SpreadConstraint, ...]] | None = (
            None if any(c.match_label_keys for c in self.default_constraints) else {})

    # ------------------------------------------------------------------ constraints
    def constraints(self, pod: Pod, when: str) -> tuple[SpreadConstraint, ...]:
        """The pod's constraints with ``when``; without any of its own, the defaults with the
        selector deduced from the Services that select it."""
        own = pod.spec.topology_spread_constraints
        if own:
            return build_constraints(own, pod.labels, when)
        if not self.default_constraints:
            return ()
        cache = self._defaults_by_when
        defaults = None if cache is None else cache.get(when)
        if defaults is None:
            defaults = build_constraints(self.default_constraints, pod.labels, when)
            if cache is not None:
                cache[when] = defaults
        if not defaults:
            return ()
        list_services = getattr(self._handle, "list_services", None)
        services = list_services(pod.namespace) if list_services is not None else ()
        return with_default_selector(defaults, default_selector(pod, services))

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, SKIP
        keys = tuple(dict.fromkeys(c.key for c in constraints))
        eligible, totals, present = [], [], []
        for c in constraints:
            layout = domain_layout(table, pod, c, keys)
            eligible.append(layout.counted)
            totals.append(layout.totals(pod_counts(table, pod.namespace, c), table.high))
            present.append(layout.present.copy())  # zero-count domains included
        self_match = tuple(int(c.matches(pod.labels)) for c in constraints)
        state.write(_PRE_FILTER_KEY,
                    _FilterState(table, constraints, self_match, eligible, totals, present))
        return None, None

    def add_pod(self, state: CycleState, pod: Pod, other: Pod, slot: int) -> None:
        s = state.get(_PRE_FILTER_KEY)
        if s is not None:
            s.update(pod, other, slot, 1)

    def remove_pod(self, state: CycleState, pod: Pod, other: Pod, slot: int) -> None:
        s = state.get(_PRE_FILTER_KEY)
        if s is not None:
            s.update(pod, other, slot, -1)

    # ------------------------------------------------------------------ Filter
    def _checks(self, s: _FilterState, table: NodeTable, idx: Any
                ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per constraint, over ``idx``: (key missing, skew too large)."""
        n = count(table, idx)
        out = []
        for i, c in enumerate(s.constraints):
            col = table.codes(c.key)
            if col is None:
                out.append((np.ones(n, dtype=bool), np.zeros(n, dtype=bool)))
                continue
            codes = col[idx]
            missing = codes < 0
            out.append((missing, ~s.passes(i)[codes] & ~missing))
        return out

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        s: _FilterState = state.read(_PRE_FILTER_KEY)
        mask = None
        for i, c in enumerate(s.constraints):
            col = table.codes(c.key)
            if col is None:
                return np.zeros(count(table, idx), dtype=bool)
            ok = s.passes(i)[col[idx]]  # one lookup per node: code -1 reads the False tail
            mask = ok if mask is None else mask & ok
        if mask is None or mask.all():
            return None
        return mask

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[Status]]:
        """The first failing constraint decides: 0 missing label (unresolvable), 1 skew."""
        s: _FilterState = state.read(_PRE_FILTER_KEY)
        which = np.full(count(table, idx), 2, dtype=np.int64)
        open_ = np.ones(len(which), dtype=bool)
        for missing, skewed in self._checks(s, table, idx):
            which[open_ & missing] = 0
            which[open_ & ~missing & skewed] = 1
            open_ &= ~(missing | skewed)
        return which, list(_STATUSES)

    # ------------------------------------------------------------------ PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> Status | None:
        if table.num_nodes == 0:
            return SKIP
        constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIP
        require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        keys = tuple(dict.fromkeys(c.key for c in constraints))
        s = _ScoreState(constraints, require_all)
        cand = _slots(table, idx)
        with_keys = has_all_keys(table, keys)
        s.all_keys = bool(with_keys.all())
        keep = cand[with_keys[cand]] if require_all and not s.all_keys else cand  # not ignored
        for c in constraints:
            per_slot = pod_counts(table, pod.namespace, c)
            if c.key == HOSTNAME_LABEL:  # per-node counts, read at Score
                s.add_hostname(math.log(len(keep) + 2), per_slot)
                continue
            layout = domain_layout(table, pod, c, keys, require_all_keys=require_all)
            initialised = np.zeros(layout.n + 1, dtype=bool)
            initialised[layout.bins[keep]] = True  # domains of (non-ignored) candidates
            w = math.log(int(initialised.sum()) + 2)
            # counted over all nodes; only initialised domains are ever read back
            s.add_domains(w, c.max_skew, layout.totals(per_slot, table.high), layout.bins)
        state.write(_PRE_SCORE_KEY, s)
        return None

    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        s: _ScoreState = state.read(_PRE_SCORE_KEY)
        n = count(table, idx)
        raw = np.zeros(n, dtype=np.float64)
        has_all = None
        for i, c in enumerate(s.constraints):
            by_bin, bins = s.by_bin[i], s.bins[i]
            if by_bin is None or bins is None:  # hostname key: this node's own count
                per_slot = s.per_slot[i]
                cnt = np.zeros(n) if per_slot is None else per_slot[idx].astype(np.float64)
                part = cnt * s.weights[i] + float(c.max_skew - 1)
            else:
                part = by_bin[bins[idx]]
            if not s.all_keys:
                col = table.codes(c.key)
                has = np.zeros(n, dtype=bool) if col is None else col[idx] >= 0
                part = np.where(has, part, 0.0)
                has_all = has if has_all is None else has_all & has
            raw += part
        out = _go_round(raw)
        if s.require_all and has_all is not None and not has_all.all():
            s.ignored = ~has_all
            out[s.ignored] = 0
        else:
            s.ignored = None
        return out

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        s: _ScoreState | None = state.get(_PRE_SCORE_KEY)
        ignored = s.ignored if s is not None else None
        if ignored is not None and len(ignored) != len(scores):
            ignored = None
        valid = scores if ignored is None else scores[~ignored]
        lo = int(valid.min()) if len(valid) else _INT64_MAX
        hi = max(int(valid.max()), 0) if len(valid) else 0
        if hi == 0:
            out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
        else:
            out = MAX_NODE_SCORE * (hi + lo - scores) // hi
        if ignored is not None:
            out[ignored] = 0
        return out

    # ------------------------------------------------------------------ events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL
                             | ActionType.DELETE), self._after_pod_change),
            # with queueing hints, a new toleration can help when a constraint honours taints
            ClusterEventWithHint(ClusterEvent("UnscheduledPod", ActionType.UPDATE_POD_TOLERATION),
                                 self._after_pod_change),
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.DELETE
                             | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
                self._after_node_change),
        ]

    def _after_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if (new is not None and not _involved(new, pod)) or \
                (old is not None and not _involved(old, pod)):
            return QueueingHint.QUEUE_SKIP
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if new is not None and old is not None:
            if (new.uid == pod.uid and old.spec.tolerations != new.spec.tolerations
                    and any(c.honor_taints for c in constraints)):
                return QueueingHint.QUEUE
            if old.labels == new.labels:
                return QueueingHint.QUEUE_SKIP
            if any(c.matches(old.labels) != c.matches(new.labels) for c in constraints):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        changed = new if new is not None else old
        if any(c.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _after_node_change(self, pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        keys = [c.key for c in constraints]
        old_ok = old is not None and all(k in old.labels for k in keys)
        new_ok = new is not None and all(k in new.labels for k in keys)
        if old is not None and new is not None:
            if old_ok != new_ok:
                return QueueingHint.QUEUE
            if new_ok and (any(old.labels.get(k) != new.labels.get(k) for k in keys)
                           or old.taints != new.taints):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_ok else QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if old_ok else QueueingHint.QUEUE_SKIP


def _involved(changed: Any, pod: Pod) -> bool:
    """kube's ``involvedInTopologySpreading``: the pod itself, or an assigned pod of its
    namespace."""
    return changed.uid == pod.uid or (bool(changed.node_name)
                                      and changed.namespace == pod.namespace)
