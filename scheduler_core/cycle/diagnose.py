"""The diagnosis of a filter search that found no node: kube's Diagnosis.NodeToStatus, which
findNodesThatPassFilters fills with each rejected node's status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from scheduler_core.framework.interface import CycleState, Status

if TYPE_CHECKING:
    from scheduler_core.api.pod import Pod
    from scheduler_core.framework.runtime import Framework

__all__ = ["NominatedRejections"]


class NominatedRejections:
    """Statuses of the nodes the nominated pass rejected: per slot an index into
    ``statuses`` (-1: none), for the diagnosis."""

    def __init__(self) -> None:
        self.index: np.ndarray | None = None
        self.statuses: list[Status] = []

    def record(self, table: Any, slots: np.ndarray, which: np.ndarray,
               statuses: list[Status]) -> None:
        if self.index is None:
            self.index = np.full(table.high, -1, dtype=np.int64)
        self.index[slots] = which + len(self.statuses)
        self.statuses.extend(statuses)

    def explain_others(self, fwk: Framework, state: CycleState, pod: Pod, table: Any,
                       slots: np.ndarray, first_fail: np.ndarray
                       ) -> tuple[np.ndarray, list[Status]]:
        """``explain_filter`` over the rejected ``slots``, except that a node this pass
        rejected gets its status from here (each distinct status listed once)."""
        assert self.index is not None
        mine = self.index[slots]
        others = np.flatnonzero(mine < 0)
        status_index = np.empty(len(slots), dtype=np.int64)
        statuses: list[Status] = []
        if len(others):
            sub, statuses = fwk.explain_filter(state, pod, table, slots[others],
                                               first_fail[others])
            status_index[others] = sub
        hit = np.flatnonzero(mine >= 0)
        if len(hit):
            known = {st: i for i, st in enumerate(statuses)}
            remap = np.empty(len(self.statuses), dtype=np.int64)
            for k, st in enumerate(self.statuses):
                i = known.get(st)
                if i is None:
                    i = known[st] = len(statuses)
                    statuses.append(st)
                remap[k] = i
            status_index[hit] = remap[mine[hit]]
        return status_index, statuses
