"""Every placement of a pod group tried at once, when that gives what trying them one after the
other would (``cycle.placement``'s loop, upstream's podGroupSchedulingPlacementAlgorithm).

Upstream tries each placement on its own: each member is filtered and scored over the
placement's nodes, assumed on the best one, and the placement is reverted before the next. A
topology with 50 racks and a group of 1,000 pods is then 50,000 evaluations of 100 nodes each;
most of their cost is per call, not per node. Here member ``j`` is evaluated once for every
placement still in the running, over all their nodes together, and the best node of each
placement comes from one grouped reduction. The member is then added to its node in each
placement through the accounting columns only (``PodLoads``), and taken off again at the end.

That is the same result as one placement at a time when (checked for each group, and for each
member after its PreFilter and PreScore; otherwise ``evaluate_together`` returns None before
anything is decided and the loop runs as before):

- the placements are disjoint (TopologyPlacementGenerator's domains are), so a member added in
  one changes no node of another;
- every active Filter and Score plugin is node-local (``plugins.node_local``): a node's verdict
  and score read only its own columns, and pods only through the accounting columns, which is
  all ``PodLoads`` changes; NormalizeScore runs per placement (``Framework.run_score``'s
  ``segments``);
- every node of a placement is examined (``num_feasible_nodes_to_find`` of its size is its
  size; otherwise the search order would matter), and no pod is nominated anywhere (no
  nominated pass, no nominated-node shortcut);
- PreFilter neither rejects nor narrows the nodes, and there are no Reserve plugins (Reserve
  could change state that later members read);
- the decisions log is off and no attempt observer is set (both follow one evaluation per
  member and placement: the decisions log records them, ``schedperf fidelity`` compares them);
- there are no HTTP extenders (called per member and placement, as upstream does).

What can differ is only which of equally good nodes is taken: ties are broken by the run's
seeded generator in both, drawing in a different order (upstream draws at random too).
``next_start_node_index`` ends where the loop would leave it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from scheduler_core.cycle.diagnose import diagnose
from scheduler_core.cycle.pod_group import GROUP_UNSCHEDULABLE, MemberResult
from scheduler_core.cycle.schedule_pod import num_feasible_nodes_to_find
from scheduler_core.framework.diagnosis import Diagnosis, FitError
from scheduler_core.framework.interface import (
    PODS_TO_ACTIVATE,
    Code,
    CycleState,
    FilterError,
    Status,
)
from scheduler_core.nodetable.accounting import add_load
from scheduler_core.plugins.node_local import node_local, scores_node_local

if TYPE_CHECKING:
    from scheduler_core.api.podgroup import PodGroup
    from scheduler_core.framework.placement import Placement
    from scheduler_core.framework.runtime import Framework

__all__ = ["PlacementOutcome", "evaluate_together"]


@dataclass(slots=True)
class PlacementOutcome:
    """What the group algorithm did in one placement: each tried member's result (in order),
    the group's status there (None: schedulable) and the decisions log's records of it."""

    placement: Placement
    results: list[MemberResult]
    status: Status | None
    records: list[Any] = field(default_factory=list)


def _reserves(fwk: Framework, live: list[Any]) -> bool:
    """Some Reserve plugin may do something for a member (one that says it reserves nothing
    for a pod, ``reserves_nothing(pod)``, as VolumeBinding for a pod without claims, does
    not count)."""
    for p in fwk.points["Reserve"]:
        nothing = getattr(p, "reserves_nothing", None)
        if not callable(nothing) or not all(nothing(q.pod) for q in live):
            return True
    return False


class _Bail(Exception):
    """A condition for trying the placements together does not hold (after something was
    added: ``_Together.revert`` takes it off)."""


def evaluate_together(sched: Any, fwk: Framework, pg: PodGroup, live: list[Any],
                      placements: list[Placement]) -> list[PlacementOutcome] | None:
    """Every placement's outcome, as the one-at-a-time loop would give it, with nothing left
    assumed; None when the conditions of the module docstring do not hold (nothing has been
    changed then, apart from random numbers drawn)."""
    if (len(placements) < 2 or sched.record_cycles or sched.observer is not None
            or not fwk.has_score_plugins or sched.extenders
            or _reserves(fwk, live) or sched.queue.has_nominated_pods()
            or any(q.pod.nominated_node_name for q in live)):
        return None
    pct = fwk.percentage_of_nodes_to_score
    sizes = [len(p) for p in placements]
    if any(num_feasible_nodes_to_find(pct, m) < m for m in set(sizes)):
        return None
    every = np.concatenate([p.slots for p in placements])
    seen = np.zeros(sched.cluster.table.high, dtype=bool)
    seen[every] = True
    if np.count_nonzero(seen) != len(every):  # a node in two placements
        return None
    scheduled = sched.cluster.group_scheduled.get(pg.key, 0)
    status = fwk.placement_feasible(pg, scheduled, len(live))
    if status is not None and status.code != Code.WAIT:
        return None  # no member is tried: the loop is as cheap
    trial = _Together(sched, fwk, pg, live, placements, scheduled, status)
    try:
        trial.run()
    except _Bail:
        return None
    finally:
        trial.revert()
    for m in sizes:  # every evaluation moved the search start by its placement's size
        sched.next_start_node_index %= m
    return trial.outcomes()


class _Together:
    """The members' loop over all placements at once (see the module docstring)."""

    def __init__(self, sched: Any, fwk: Framework, pg: PodGroup, live: list[Any],
                 placements: list[Placement], scheduled: int, status: Status | None) -> None:
        self.sched, self.fwk, self.pg, self.live = sched, fwk, pg, live
        self.placements = placements
        self.table = sched.cluster.table
        n = len(placements)
        self.scheduled0 = scheduled
        self.scheduled = np.full(n, scheduled, dtype=np.int64)
        self.tried = np.zeros(n, dtype=np.int64)  # members tried in each placement
        self.alive = np.ones(n, dtype=bool)
        self.statuses: list[Status | None] = [status]  # distinct statuses so far
        self.status_of = np.zeros(n, dtype=np.int64)  # per placement: index into statuses
        # per member tried: its cycle state, per placement its slot (-1: none), and the
        # (status, diagnosis) of the placements where it found no node
        self.states: list[CycleState] = []
        self.slots: list[np.ndarray] = []
        self.failures: list[dict[int, tuple[Status, Diagnosis]]] = []
        self.added: list[tuple[Any, np.ndarray]] = []  # (PodSpec, slots): to take off again
        self._union: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------------ the loop
    def run(self) -> None:
        for j, q in enumerate(self.live):
            act = np.flatnonzero(self.alive)
            if not len(act):
                return
            slots = self._member(q, act)
            self.tried[act] += 1
            placed = act[slots[act] >= 0]
            self.scheduled[placed] += 1
            self._feasible(act, len(self.live) - j - 1)

    def _union_of(self, act: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The slots of the placements ``act`` in order, each slot's placement, and where
        each placement's run starts (memoised until a placement drops out)."""
        u = self._union
        if u is None or len(u[2]) != len(act):
            parts = [self.placements[i].slots for i in act.tolist()]
            lens = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
            starts = np.zeros(len(parts), dtype=np.int64)
            np.cumsum(lens[:-1], out=starts[1:])
            u = self._union = (np.concatenate(parts), np.repeat(act, lens), starts)
        return u

    def _member(self, q: Any, act: np.ndarray) -> np.ndarray:
        """One member in every placement of ``act``: per placement its slot (added to that
        node's accounting columns; -1: none, and ``failures`` says why)."""
        fwk, table, pod = self.fwk, self.table, q.pod
        state = CycleState()
        state.write(PODS_TO_ACTIVATE, {})
        pre, status, _ = fwk.run_pre_filter(state, pod, table)
        if status is not None or (pre is not None and pre.node_names is not None) \
                or not node_local(fwk, state):
            raise _Bail
        idx, owner, starts = self._union_of(act)
        n = len(idx)
        try:
            mask, first_fail = fwk.run_filter(state, pod, table, idx, n)
        except FilterError:
            raise _Bail from None
        pos = np.arange(n, dtype=np.int64) if mask is None else np.flatnonzero(mask)
        chosen = np.full(len(self.placements), -1, dtype=np.int64)
        if len(pos):
            feasible, fowner = idx[pos], owner[pos]
            best = self._best(state, pod, feasible, fowner)
            chosen[fowner[best]] = feasible[best]
        failures: dict[int, tuple[Status, Diagnosis]] = {}
        for k in np.flatnonzero(chosen[act] < 0).tolist():  # no node in these placements
            assert first_fail is not None
            i = int(act[k])
            a = int(starts[k])
            b = a + len(self.placements[i])
            d = Diagnosis(b - a)
            diagnose(fwk, state, pod, table, d, [(idx[a:b], first_fail[a:b])], None)
            failures[i] = (Status(Code.UNSCHEDULABLE, (FitError(pod.key, d).message,)), d)
        placed = chosen[act][chosen[act] >= 0]
        if len(placed):
            add_load(table, pod.spec, placed, 1)
            self.added.append((pod.spec, placed))
        self.states.append(state)
        self.slots.append(chosen)
        self.failures.append(failures)
        return chosen

    def _best(self, state: CycleState, pod: Any, feasible: np.ndarray, owner: np.ndarray
              ) -> np.ndarray:
        """Per placement with feasible nodes (ascending), the position in ``feasible`` of its
        best node (selectHost: the highest total, ties broken at random)."""
        fwk, table = self.fwk, self.table
        n = len(feasible)
        status = fwk.run_pre_score(state, pod, table, feasible)
        if status is not None or not scores_node_local(fwk, state):
            raise _Bail
        starts = np.flatnonzero(np.diff(owner)) + 1
        starts = np.concatenate((np.zeros(1, dtype=np.int64), starts))
        total, status = fwk.run_score(state, pod, table, feasible, n, segments=starts)
        if status is not None:
            raise _Bail
        top = total == np.repeat(np.maximum.reduceat(total, starts),
                                 np.diff(np.append(starts, n)))
        top_pos = np.flatnonzero(top)
        ties = np.add.reduceat(top.astype(np.int64), starts)
        first = np.zeros(len(ties), dtype=np.int64)
        np.cumsum(ties[:-1], out=first[1:])
        many = np.flatnonzero(ties > 1)
        if len(many):
            first[many] += self.sched.rng.integers(ties[many])
        return top_pos[first]

    def _feasible(self, act: np.ndarray, remaining: int) -> None:
        """PlacementFeasible for each placement of ``act`` after a member; the ones it calls
        Unschedulable drop out (the loop's ``break``). An error is left to the loop."""
        counts = self.scheduled[act]
        if counts.min() == counts.max():  # the common case: one value
            values, inverse = counts[:1], np.zeros(len(act), dtype=np.int64)
        else:
            values, inverse = np.unique(counts, return_inverse=True)
        ids, out = [], []
        for count in values.tolist():
            status = self.fwk.placement_feasible(self.pg, count, remaining)
            if status is not None and status.code not in (Code.WAIT, Code.UNSCHEDULABLE):
                raise _Bail
            ids.append(len(self.statuses))
            self.statuses.append(status)
            out.append(status is not None and status.code == Code.UNSCHEDULABLE)
        inverse = inverse.reshape(-1)
        self.status_of[act] = np.asarray(ids, dtype=np.int64)[inverse]
        self.alive[act[np.asarray(out, dtype=bool)[inverse]]] = False

    # ------------------------------------------------------------------ the end
    def revert(self) -> None:
        """Take every member off the nodes it was added to, last first."""
        table = self.table
        while self.added:
            spec, placed = self.added.pop()
            add_load(table, spec, placed, -1)

    def outcomes(self) -> list[PlacementOutcome]:
        """Each placement's results and status as the group algorithm returns them (a
        placement the group does not fit in counts its placed pods as wasted)."""
        nodes = self.table.nodes
        stats = self.sched.group_stats
        live, states = self.live, self.states
        slots = [s.tolist() for s in self.slots]
        tried = self.tried.tolist()
        scheduled = self.scheduled.tolist()
        status_of = self.status_of.tolist()
        out = []
        for i, placement in enumerate(self.placements):
            status = self.statuses[status_of[i]]
            if status is not None and status.code == Code.WAIT:
                status = Status(Code.UNSCHEDULABLE, status.reasons, status.plugin)
            placed = scheduled[i] - self.scheduled0
            if status is None and not placed:
                status = Status(Code.UNSCHEDULABLE, (GROUP_UNSCHEDULABLE,))
            results = []
            for j in range(tried[i]):
                slot = slots[j][i]
                if slot >= 0:
                    node = nodes[slot]
                    assert node is not None
                    results.append(MemberResult(live[j], node.name, state=states[j]))
                else:
                    st, d = self.failures[j][i]
                    results.append(MemberResult(live[j], "", st, d))
            if status is not None:
                stats.wasted_pods += placed
            out.append(PlacementOutcome(placement, results, status))
        return out
