"""VolumeRestrictions. Extension points: PreFilter (with AddPod/RemovePod), Filter,
EnqueueExtensions.

Two rules. An inline disk of the pod conflicts with the same disk used by a pod on the node
(GCE PD by name and iSCSI by IQN unless both are read-only; AWS EBS by volume ID always; RBD
by pool and image with a monitor in common unless both are read-only): "node(s) had no
available disk". And a claim with access mode ReadWriteOncePod that some placed pod already
uses rejects every node; PreFilter counts those uses over the whole cluster, and the
AddPod/RemovePod extensions adjust the count for preemption's what-ifs. A claim that does not
exist fails PreFilter as unresolvable. Vectorised: the inline disks in use per node come from
``plugins.volume_index``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.api.storage import VolumeSource
from scheduler_core.framework.interface import (
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
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import count, no_args
from scheduler_core.plugins.volume_index import CONFLICT_SOURCES, VolumeIndex
from scheduler_core.plugins.volume_lookup import claim_not_found, pod_claim_hint

__all__ = ["ERR_REASON_DISK_CONFLICT", "ERR_REASON_RWOP_CONFLICT", "NAME", "VolumeRestrictions"]

NAME = names.VOLUME_RESTRICTIONS
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with "
                            "ReadWriteOncePod access mode already in-use by another pod")
_STATE_KEY = "PreFilter" + NAME
_DISK = Status.unschedulable(ERR_REASON_DISK_CONFLICT, plugin=NAME)
_RWOP = Status.unschedulable(ERR_REASON_RWOP_CONFLICT, plugin=NAME)


@dataclass(slots=True)
class _State:
    rwop_claims: frozenset[str]  # claim names (the pod's namespace) with ReadWriteOncePod
    conflicts: int  # uses of those claims by placed pods

    def clone(self) -> _State:
        return _State(self.rwop_claims, self.conflicts)

    def uses(self, pod: Pod, namespace: str) -> int:
        if pod.namespace != namespace:
            return 0
        return sum(1 for v in pod.spec.volumes if v.claim in self.rwop_claims)


def _conflict(new: VolumeSource, old: VolumeSource) -> bool:
    """isVolumeConflict for two disks of the same kind and identity."""
    if new.kind == "awsElasticBlockStore":
        return True
    if new.kind == "rbd" and (new.pool != old.pool
                              or not set(new.monitors) & set(old.monitors)):
        return False
    return not (new.read_only and old.read_only)


class VolumeRestrictions:
    name: ClassVar[str] = NAME
    # its Filter reads the disks of the node's pods (not node-local)

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)
        self.handle = handle

    def _index(self) -> VolumeIndex:
        assert self.handle is not None, "VolumeRestrictions needs the scheduler's cluster"
        return VolumeIndex.of(self.handle.cluster)

    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        needs_check = any(v.source is not None and v.source.kind in CONFLICT_SOURCES
                          for v in pod.spec.volumes)
        rwop: set[str] = set()
        if any(v.claim for v in pod.spec.volumes):
            assert self.handle is not None
            pvcs = self.handle.cluster.pvcs
            for v in pod.spec.volumes:
                if not v.claim:
                    continue
                pvc = pvcs.get(f"{pod.namespace}/{v.claim}")
                if pvc is None:
                    return None, Status.unresolvable(claim_not_found(v.claim), plugin=NAME)
                if "ReadWriteOncePod" in pvc.access_modes:
                    rwop.add(pvc.name)
        conflicts = 0
        if rwop:
            refs = self._index().claim_refs
            conflicts = sum(1 for c in rwop if refs.get(f"{pod.namespace}/{c}", 0) > 0)
        if not needs_check and conflicts == 0:
            return None, SKIP
        state.write(_STATE_KEY, _State(frozenset(rwop), conflicts))
        return None, None

    def add_pod(self, state: CycleState, pod: Pod, other: Pod, slot: int) -> None:
        s: _State | None = state.get(_STATE_KEY)
        if s is not None:
            s.conflicts += s.uses(other, pod.namespace)

    def remove_pod(self, state: CycleState, pod: Pod, other: Pod, slot: int) -> None:
        s: _State | None = state.get(_STATE_KEY)
        if s is not None:
            s.conflicts -= s.uses(other, pod.namespace)

    def _disk_conflicts(self, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        """Per node of ``idx``: an inline disk of the pod conflicts with one in use there."""
        bad: np.ndarray | None = None
        index = None
        for v in pod.spec.volumes:
            src = v.source
            if src is None or src.kind not in CONFLICT_SOURCES:
                continue
            index = index or self._index()
            per_slot = index.inline.get((src.kind, src.ident))
            if not per_slot:
                continue
            slots = [s for s, used in per_slot.items() if any(_conflict(src, u) for u in used)]
            if not slots:
                continue
            if bad is None:
                bad = np.zeros(table.capacity, dtype=bool)
            bad[slots] = True
        return None if bad is None else bad[idx]

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        s: _State | None = state.get(_STATE_KEY)
        if s is not None and s.conflicts > 0:
            return np.zeros(count(table, idx), dtype=bool)
        bad = self._disk_conflicts(pod, table, idx)
        return None if bad is None else ~bad

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[Status]]:
        bad = self._disk_conflicts(pod, table, idx)
        n = count(table, idx)
        if bad is None:
            return np.zeros(n, dtype=np.int64), [_RWOP]
        return np.where(bad, 0, 1).astype(np.int64), [_DISK, _RWOP]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE), _after_pod_deleted),
            ClusterEventWithHint(ClusterEvent("UnscheduledPod", ActionType.DELETE),
                                 _after_pod_deleted),
            ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent("PersistentVolumeClaim", ActionType.ADD),
                                 pod_claim_hint),
        ]


def _after_pod_deleted(pod: Pod, old: Pod, new: Any) -> QueueingHint:
    """A deleted pod of the same namespace that used a conflicting inline disk or any of
    the pod's claims (isSchedulableAfterPodDeleted)."""
    if old.namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    for v in pod.spec.volumes:
        src = v.source
        if src is None or src.kind not in CONFLICT_SOURCES:
            continue
        for u in old.spec.volumes:
            o = u.source
            if (o is not None and o.kind == src.kind and o.ident == src.ident
                    and _conflict(src, o)):
                return QueueingHint.QUEUE
    mine = {v.claim for v in pod.spec.volumes if v.claim}
    if any(v.claim in mine for v in old.spec.volumes if v.claim):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
