"""Pass 1 of kube's RunFilterPluginsWithNominatedPods, mixed into the Scheduler.

A node that holds pods nominated to it (by earlier preemptions) of priority >= the pod's passes
only if the pod also fits with those pods added. ``nominated_placement`` gathers them once per
cycle; ``_nominated_pass`` checks many nodes at once when the active filters are node-local
(``plugins.node_local``), else one node at a time with a cloned CycleState and the PreFilter
AddPod extensions, as upstream. ``filter_one_node`` runs both passes on one node (the nominated
node of a pod, DefaultPreemption's dry run).
"""

from __future__ import annotations

from contextlib import suppress
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np

from scheduler_core.framework.interface import CycleState, Status
from scheduler_core.nodetable.accounting import SlotPods
from scheduler_core.plugins.node_local import node_local

if TYPE_CHECKING:
    from scheduler_core.api.pod import Pod
    from scheduler_core.cluster.store import Cluster
    from scheduler_core.cycle.diagnose import NominatedRejections
    from scheduler_core.framework.runtime import Framework
    from scheduler_core.queue.scheduling_queue import PriorityQueue

__all__ = ["NominatedPass"]

_FEW_SLOTS = 8  # a nominated pass over at most this many nodes looks up just their pods
_PRIORITY = attrgetter("priority")
_NODE_NAME = attrgetter("node_name")
_UID = attrgetter("uid")
_NO_NOMINATED_PODS = SlotPods([], np.zeros(0, dtype=np.int64), 0)  # no nominated pods to add


class NominatedPass:
    """The nominated pass of the Scheduler (``nominated_placement`` is memoised for the pod of
    the scheduling cycle under way, ``_cycle_pod``; any cluster event drops the memo)."""

    cluster: Cluster
    queue: PriorityQueue
    _cycle_pod: Pod | None
    _nominated_memo: tuple[Pod, SlotPods] | None

    def nominated_placement(self, pod: Pod, slots: np.ndarray | None = None) -> SlotPods:
        """The pods the nominated pass adds while ``pod`` is scheduled, per slot: nominated
        there, of priority >= the pod's, not the pod itself, not bound. Memoised for the
        cycle scheduling ``pod``; a few ``slots`` only (when not memoised yet) are looked up
        on their own."""
        memo = self._nominated_memo
        if memo is not None and memo[0] is pod:
            return memo[1]
        table = self.cluster.table
        few = slots is not None and len(slots) <= _FEW_SLOTS
        if few:
            assert slots is not None
            on = slots.tolist()
            names = [table.node(s).name for s in on]
        else:
            slot_of = table.slot_of
            names = [n for n in self.queue.nominated_node_names() if n in slot_of]
            on = list(map(slot_of.__getitem__, names))
        lists = list(map(self.queue.nominated_pods_for_node, names))
        found = list(chain.from_iterable(lists))
        where = np.repeat(np.asarray(on, dtype=np.int64), list(map(len, lists)))
        n = len(found)
        keep = np.fromiter(map(_PRIORITY, found), dtype=np.int64, count=n) >= pod.priority
        keep &= ~np.fromiter(map(bool, map(_NODE_NAME, found)), dtype=bool, count=n)
        with suppress(ValueError):  # the pod itself, if nominated (at most once)
            keep[list(map(_UID, found)).index(pod.uid)] = False
        if not keep.any():
            placement = _NO_NOMINATED_PODS
        else:
            pods = found if keep.all() else [found[i] for i in np.flatnonzero(keep).tolist()]
            placement = SlotPods(pods, where[keep], table.capacity)
        if not few and pod is self._cycle_pod:
            self._nominated_memo = (pod, placement)
        return placement

    def filter_one_node(self, fwk: Framework, state: CycleState, pod: Pod, slot: int
                        ) -> Status | None:
        """Both passes of RunFilterPluginsWithNominatedPods on one node (None = fits)."""
        bad, _, which, statuses = self._nominated_pass(fwk, state, pod,
                                                       np.asarray([slot], dtype=np.int64))
        if len(bad):
            return statuses[int(which[0])]
        return self._filter_slot(fwk, state, pod, slot)

    def _apply_nominated(
        self, fwk: Framework, state: CycleState, pod: Pod, slots: np.ndarray,
        mask: np.ndarray | None, first_fail: np.ndarray | None, pass1: NominatedRejections,
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Pass 1 of RunFilterPluginsWithNominatedPods for the nodes among ``slots`` that
        passed the plain filter and hold nominated pods of equal or higher priority; such a
        node passes only if both passes pass. The statuses of the nodes pass 1 rejects go into
        ``pass1`` for the diagnosis."""
        on = np.arange(len(slots)) if mask is None else np.flatnonzero(mask)
        if not len(on):
            return mask, first_fail
        bad, ff, which, statuses = self._nominated_pass(fwk, state, pod, slots[on])
        if not len(bad):
            return mask, first_fail
        if mask is None:
            mask = np.ones(len(slots), dtype=bool)
            first_fail = np.full(len(slots), -1, dtype=np.int16)
        assert first_fail is not None
        at = on[bad]
        mask[at] = False
        first_fail[at] = ff
        pass1.record(self.cluster.table, slots[at], which, statuses)
        return mask, first_fail

    def _nominated_pass(self, fwk: Framework, state: CycleState, pod: Pod, slots: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Status]]:
        """Pass 1 of RunFilterPluginsWithNominatedPods on each of ``slots`` (nodes without
        such nominated pods pass it). Returns the positions in ``slots`` it rejects, for each
        the index of the rejecting filter plugin and of its status in the returned list.

        When the active filters are node-local (``plugins.node_local``), every node's
        nominated pods are added at once, as loads on the accounting columns, and one filter
        call checks them all; otherwise one node at a time with a cloned CycleState and the
        PreFilter AddPod extensions, as upstream."""
        placement = self.nominated_placement(pod, slots)
        on = placement.on(slots)
        none = np.zeros(0, dtype=np.int64)
        if not len(on):
            return none, none, none, []
        idx = slots[on]
        table = self.cluster.table
        if node_local(fwk, state):
            with placement.placed(table, idx):
                mask, first_fail = fwk.run_filter(state, pod, table, idx, len(idx))
                if mask is None or mask.all():
                    return none, none, none, []
                assert first_fail is not None
                bad = np.flatnonzero(~mask)
                which, statuses = fwk.explain_filter(state, pod, table, idx[bad],
                                                     first_fail[bad])
            return on[bad], first_fail[bad], which, statuses
        names = fwk.filter_names
        rejected: list[int] = []
        plugins: list[int] = []
        found: list[Status] = []
        for j, s in zip(on.tolist(), idx.tolist(), strict=True):
            status = self._filter_with_others(fwk, state, pod, s, placement.pods_on(s))
            if status is not None:
                rejected.append(j)
                plugins.append(names.index(status.plugin) if status.plugin in names else 0)
                found.append(status)
        n = len(found)
        return (np.asarray(rejected, dtype=np.int64), np.asarray(plugins, dtype=np.int64),
                np.arange(n, dtype=np.int64), found)

    def _filter_with_others(self, fwk: Framework, state: CycleState, pod: Pod, slot: int,
                            others: list[Pod]) -> Status | None:
        """Pass 1 on one node: ``others`` added to the table and, through the PreFilter
        AddPod extensions, to a clone of ``state``."""
        table = self.cluster.table
        state2 = state.clone()
        added = []
        try:
            for other in others:
                table.add_pod(other, slot)
                added.append(other)
                fwk.run_add_pod_extensions(state2, pod, other, slot)
            return self._filter_slot(fwk, state2, pod, slot)
        finally:
            for other in added:
                table.remove_pod(other, slot)

    def _filter_slot(self, fwk: Framework, state: CycleState, pod: Pod, slot: int
                     ) -> Status | None:
        table = self.cluster.table
        idx = np.asarray([slot], dtype=np.int64)
        mask, first_fail = fwk.run_filter(state, pod, table, idx, 1)
        if mask is None or mask[0]:
            return None
        assert first_fail is not None
        rid, statuses = fwk.explain_filter(state, pod, table, idx, first_fail)
        return statuses[int(rid[0])]
