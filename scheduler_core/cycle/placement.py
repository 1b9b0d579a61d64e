"""The placement step of the pod-group cycle under the TopologyAwareWorkloadScheduling gate
(kube v1.37.2's podGroupSchedulingPlacementAlgorithm), mixed into the Scheduler::

    _placement_algorithm      PlacementGenerate plugins -> candidate placements
    ├── _group_algorithm      per placement: the default group algorithm with the node
    │                         candidates restricted to the placement's mask; reverted
    ├── _best_placement       findBestPodGroupPlacement: PlacementScore plugins, ties broken
    │                         by a random number (the run's seeded generator)
    └── _assume_again         the chosen placement's pods assumed and reserved again

Only the candidates of the filter search are restricted (``SchedulePod._placement``); Filter
and Score plugins still see the whole node table, as upstream's plugins see the whole
snapshot. The loop is over placements; inside one, each member runs through the vectorised
``schedule_pod`` over the placement's slots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

    __slots__ = ("evaluated", "feasible", "generated")

    def __init__(self) -> None:
        self.generated = 0  # placements generated, over every group cycle
        self.evaluated = 0  # placements the group algorithm ran in
        self.feasible = 0  # of those, the ones where the group was schedulable


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
        n_all = len(table.slot_of)
        cycles = self.cycles
        mark = len(cycles)
        first: tuple[list[MemberResult], Status, list[Any]] | None = None
        feasible: list[tuple[Placement, list[MemberResult], list[Any]]] = []
        for placement in placements:
            # a placement of every node is no restriction (AssumePlacement forgets it)
            self._placement = placement if len(placement) != n_all else None
            try:
                results, status = self._group_algorithm(fwk, pg, live)
            finally:
                self._placement = None
            stats.evaluated += 1
            records = cycles[mark:]
            del cycles[mark:]
            if status is None:  # revert: every placement is evaluated from the same state
                for res in reversed(results):
                    if res.status is None:
                        assert res.state is not None
                        self._release(fwk, res.state, res.qpi.pod, res.node)
                feasible.append((placement, results, records))
                continue
            if not status.is_rejected:  # an error ends the algorithm
                cycles.extend(records)
                return results, status
            if first is None:
                first = (results, status, records)
        stats.feasible += len(feasible)
        if not feasible:
            assert first is not None
            results, status, records = first
            cycles.extend(records)
            return results, Status(Code.UNSCHEDULABLE, (
                f"0/{len(placements)} placements are available, first placement status: "
                f"{status.message}",), status.plugin)
        best, status = self._best_placement(fwk, pg, feasible)
        if status is not None:
            return [], status
        _, results, records = feasible[best]
        cycles.extend(records)
        return self._assume_again(fwk, results), None

    def _best_placement(self: Any, fwk: Framework, pg: PodGroup,
                        feasible: list[tuple[Placement, list[MemberResult], list[Any]]]
                        ) -> tuple[int, Status | None]:
        """findBestPodGroupPlacement: the index of the highest total PlacementScore; ties go to
        the higher random number drawn per placement (upstream: rand.Int(); here the run's
        seeded generator)."""
        if len(feasible) == 1:
            return 0, None
        assignments = [(p, [(r.qpi.pod, r.node) for r in results if r.status is None])
                       for p, results, _ in feasible]
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
