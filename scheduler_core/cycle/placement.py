"""The placement step of the pod-group cycle under the TopologyAwareWorkloadScheduling gate
(kube v1.37.2's podGroupSchedulingPlacementAlgorithm), mixed into the Scheduler::

    _placement_algorithm      PlacementGenerate plugins -> candidate placements
    ├── evaluate_together     every placement at once, when that is exact
    │                         (``cycle.placement_batch``); else
    ├── _one_at_a_time        per placement: the default group algorithm with the node
    │   └── _group_algorithm  candidates restricted to the placement's mask; reverted
    ├── _best_placement       findBestPodGroupPlacement: PlacementScore plugins, ties broken
    │                         by a random number (the run's seeded generator)
    └── _assume_again         the chosen placement's pods assumed and reserved again

Only the candidates of the filter search are restricted (``SchedulePod._placement``); Filter
and Score plugins still see the whole node table, as upstream's plugins see the whole
snapshot. The loop is over placements; inside one, each member runs through the vectorised
``schedule_pod`` over the placement's slots. When the conditions of ``cycle.placement_batch``
hold, the placements are instead tried together: one evaluation per member for all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler_core.cycle.placement_batch import PlacementOutcome, evaluate_together
from scheduler_core.cycle.pod_group import MemberResult
from scheduler_core.framework.diagnosis import Diagnosis
from scheduler_core.framework.interface import Code, Status
from scheduler_core.framework.placement import Placement, whole_table

if TYPE_CHECKING:
    from scheduler_core.api.podgroup import PodGroup
    from scheduler_core.framework.runtime import Framework

__all__ = ["PlacementCycle", "PlacementStats"]

_RAND_BOUND = 2**62


class PlacementStats:
    """What the placement loops did (read by tests and the workload layer)."""

    __slots__ = ("evaluated", "feasible", "generated", "together")

    def __init__(self) -> None:
        self.generated = 0  # placements generated, over every group cycle
        self.evaluated = 0  # placements the group algorithm ran in
        self.feasible = 0  # of those, the ones where the group was schedulable
        self.together = 0  # group cycles whose placements were tried together



class PlacementCycle:
    """podGroupSchedulingPlacementAlgorithm, as methods of the Scheduler."""

    placement_stats: PlacementStats
    _placement: Placement | None

    def _placement_algorithm(self: Any, fwk: Framework, pg: PodGroup, live: list[Any]
                             ) -> tuple[list[MemberResult], Status | None]:
        """Same contract as ``_group_algorithm``: on success the chosen placement's pods are
        left assumed and reserved."""
        cluster = self.cluster
        table = cluster.table
        stats = self.placement_stats
        placements, status = fwk.run_placement_generate(pg, whole_table(table))
        if status is not None:
            return [], status
        stats.generated += len(placements)
        outcomes = evaluate_together(self, fwk, pg, live, placements)
        if outcomes is not None:
            stats.evaluated += len(outcomes)
            stats.together += 1
        else:
            outcomes, error = self._one_at_a_time(fwk, pg, live, placements)
            if error is not None:
                return error
        first: PlacementOutcome | None = None
        feasible: list[PlacementOutcome] = []
        for outcome in outcomes:
            if outcome.status is None:
                feasible.append(outcome)
            elif first is None:
                first = outcome
        stats.feasible += len(feasible)
        if not feasible:
            assert first is not None and first.status is not None
            self.cycles.extend(first.records)
            return first.results, Status(Code.UNSCHEDULABLE, (
                f"0/{len(placements)} placements are available, first placement status: "
                f"{first.status.message}",), first.status.plugin)
        best, status = self._best_placement(fwk, pg, feasible)
        if status is not None:
            return [], status
        self.cycles.extend(feasible[best].records)
        return self._assume_again(fwk, feasible[best].results), None

    def _one_at_a_time(self: Any, fwk: Framework, pg: PodGroup, live: list[Any],
                       placements: list[Placement]
                       ) -> tuple[list[PlacementOutcome],
                                  tuple[list[MemberResult], Status] | None]:
        """Upstream's loop: the group algorithm in each placement in turn, each reverted
        before the next. An error (not a rejection) ends it: then the second item is the
        algorithm's result."""
        cycles = self.cycles
        mark = len(cycles)
        n_all = len(self.cluster.table.slot_of)
        outcomes = []
        for placement in placements:
            # a placement of every node is no restriction (AssumePlacement forgets it)
            self._placement = placement if len(placement) != n_all else None
            try:
                results, status = self._group_algorithm(fwk, pg, live)
            finally:
                self._placement = None
            self.placement_stats.evaluated += 1
            records = cycles[mark:]
            del cycles[mark:]
            if status is None:  # revert: every placement is evaluated from the same state
                for res in reversed(results):
                    if res.status is None:
                        assert res.state is not None
                        self._release(fwk, res.state, res.qpi.pod, res.node)
            elif not status.is_rejected:  # an error ends the algorithm
                cycles.extend(records)
                return outcomes, (results, status)
            outcomes.append(PlacementOutcome(placement, results, status, records))
        return outcomes, None

    def _best_placement(self: Any, fwk: Framework, pg: PodGroup,
                        feasible: list[PlacementOutcome]) -> tuple[int, Status | None]:
        """findBestPodGroupPlacement: the index of the highest total PlacementScore; ties go to
        the higher random number drawn per placement (upstream: rand.Int(); here the run's
        seeded generator)."""
        if len(feasible) == 1:
            return 0, None
        assignments = [(o.placement, [(r.qpi.pod, r.node) for r in o.results
                                      if r.status is None]) for o in feasible]
        totals, status = fwk.run_placement_score(pg, assignments)
        if status is not None:
            return 0, status
        rands = self.rng.integers(0, _RAND_BOUND, size=len(totals))
        return max(range(len(totals)), key=lambda i: (totals[i], rands[i])), None

    def _assume_again(self: Any, fwk: Framework, results: list[MemberResult]
                      ) -> list[MemberResult]:
        """The chosen placement's pods assumed and reserved again on their nodes (upstream
        does so in prepareForBindingCycle); a pod whose Reserve fails now fails alone."""
        out = []
        for res in results:
            if res.status is None:
                assert res.state is not None
                status = self._assume_and_reserve(fwk, res.state, res.qpi.pod, res.node)
                if status is not None:
                    res = MemberResult(res.qpi, "", status, Diagnosis.rejected_by(status))
            out.append(res)
        return out
