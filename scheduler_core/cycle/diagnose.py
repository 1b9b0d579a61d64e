"""The diagnosis of a filter search in which no node passed: kube's Diagnosis.NodeToStatus,
which findNodesThatPassFilters fills with each rejected node's status, and the plugins that
rejected the pod.

The search keeps, per examined node, only the index of its first failing Filter plugin: the
statuses are asked for (``Framework.explain_filter``) here, only when no node passed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from scheduler_core.framework.interface import CycleState, Status

if TYPE_CHECKING:
    from scheduler_core.api.pod import Pod
    from scheduler_core.framework.diagnosis import Diagnosis
    from scheduler_core.framework.runtime import Framework

__all__ = ["NominatedRejections", "diagnose"]


def diagnose(fwk: Framework, state: CycleState, pod: Pod, table: Any, diagnosis: Diagnosis,
             failed_parts: list[tuple[np.ndarray, np.ndarray]],
             pass1: NominatedRejections | None) -> None:
    """Fill ``diagnosis`` for a search in which no node passed: ``failed_parts`` are the
    examined slots with, per slot, the index of its first failing Filter plugin (-1: passed);
    a node the nominated pass rejected keeps that pass's status (``pass1``)."""
    examined = np.concatenate([sl for sl, _ in failed_parts])
    ff_all = np.concatenate([ff for _, ff in failed_parts])
    bad = np.flatnonzero(ff_all >= 0)
    slots_failed, ff_failed = examined[bad], ff_all[bad]
    if pass1 is not None and pass1.statuses:
        status_index, statuses = pass1.explain_others(fwk, state, pod, table, slots_failed,
                                                      ff_failed)
    else:
        status_index, statuses = fwk.explain_filter(state, pod, table, slots_failed, ff_failed)
    diagnosis.record_rejections(slots_failed, status_index, statuses)


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
