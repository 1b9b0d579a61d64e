"""NodeVolumeLimits (upstream's CSILimits). Extension points: PreFilter, Filter,
EnqueueExtensions.

A node rejects the pod when, for some CSI driver, the distinct volumes its pods use plus the
pod's new ones exceed the driver's attach limit in the node's CSINode (``allocatable.count``).
A volume counts under ``<driver>/<handle>``: a CSI volume as it is, an in-tree AWS EBS, GCE PD,
Azure Disk or Cinder volume (a claim's or inline) translated to its CSI driver, but only on
nodes whose CSINode lists the plugin as migrated; a claim without a volume counts under its
class's provisioner. A new volume already used on the node is not counted again. A node
without a CSINode, or without a limit for the driver, takes any number. VolumeAttachment
objects are not modelled (none exist). Vectorised over the node table with
``plugins.volume_index``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.api.quantity import INT64_MAX
from scheduler_core.framework.interface import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    FilterBase,
    Handle,
    PreFilterResult,
    QueueingHint,
    Status,
)
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import count, no_args
from scheduler_core.plugins.volume_index import VolumeIndex
from scheduler_core.plugins.volume_lookup import (
    CSIVolume,
    claim_not_found,
    csi_volume,
    inline_csi_volume,
    pod_claim_hint,
)

__all__ = ["ERR_REASON", "NAME", "NodeVolumeLimits"]

NAME = names.NODE_VOLUME_LIMITS
ERR_REASON = "node(s) exceed max volume count"
_LIMITED_KEY = "PreFilter" + NAME + "/limited"  # some node limits a driver of the pod


class NodeVolumeLimits(FilterBase):
    name: ClassVar[str] = NAME
    failure: ClassVar[Status] = Status.unschedulable(ERR_REASON, plugin=NAME)
    # its Filter reads the volumes of the node's pods (not node-local)

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)
        self.handle = handle

    def _index(self) -> VolumeIndex:
        assert self.handle is not None, "NodeVolumeLimits needs the scheduler's cluster"
        return VolumeIndex.of(self.handle.cluster)

    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        for v in pod.spec.volumes:
            if v.claim or (v.source is not None and inline_csi_volume(v.source) is not None):
                vols, status = self._new_volumes(pod)
                limits = self._index().limits
                limited = status is not None or any(
                    (col := limits.get(vol.driver)) is not None and bool((col < INT64_MAX).any())
                    for vol in vols)
                state.write(_LIMITED_KEY, limited)
                return None, None
        return None, SKIP

    def blind_in(self, state: CycleState) -> bool:
        """No node has an attach limit for the pod's drivers: every node passes, whatever its
        pods (plugins.node_local)."""
        return state.get(_LIMITED_KEY) is False

    def _new_volumes(self, pod: Pod) -> tuple[list[CSIVolume], Status | None]:
        assert self.handle is not None
        cluster = self.handle.cluster
        out = []
        for v in pod.spec.volumes:
            if v.claim:
                pvc = cluster.pvcs.get(f"{pod.namespace}/{v.claim}")
                if pvc is None:
                    return [], Status.unresolvable(
                        f"looking up PVC {pod.namespace}/{v.claim}: {claim_not_found(v.claim)}",
                        plugin=NAME)
                vol = csi_volume(cluster, pvc)
            elif v.source is not None:
                vol = inline_csi_volume(v.source)
            else:
                vol = None
            if vol is not None:
                out.append(vol)
        return out, None

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        if not pod.spec.volumes:
            return None
        vols, status = self._new_volumes(pod)
        if status is not None:
            return np.zeros(count(table, idx), dtype=bool)
        if not vols:
            return None
        index = self._index()
        n = count(table, idx)
        new_count: dict[str, np.ndarray] = {}
        seen: set[str] = set()
        for vol in vols:
            if vol.unique in seen:
                continue
            seen.add(vol.unique)
            counts = np.ones(n, dtype=np.int64)
            if vol.plugin:  # an in-tree volume counts where its plugin is migrated
                counts &= index.migrated_on(vol.plugin)[idx]
            used = index.volume_slots.get(vol.unique)
            if used:  # already used on the node: not new there
                slots = np.fromiter(used, dtype=np.int64, count=len(used))
                counts[np.isin(np.arange(table.capacity)[idx], slots)] = 0
            total = new_count.get(vol.driver)
            new_count[vol.driver] = counts if total is None else total + counts
        ok = np.ones(n, dtype=bool)
        for driver, wanted in new_count.items():
            limit = index.limit(driver)[idx]
            ok &= index.attached_count(driver)[idx] + wanted <= limit
        return ok

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[Status]]:
        _, status = self._new_volumes(pod)
        return np.zeros(count(table, idx), dtype=np.int64), [status or self.failure]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Pod events cover assigned and unscheduled (nominated) pods alike upstream
        return [
            ClusterEventWithHint(ClusterEvent("CSINode", ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent("CSINode", ActionType.UPDATE),
                                 _after_csi_node_updated),
            ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE), _after_pod_deleted),
            ClusterEventWithHint(ClusterEvent("UnscheduledPod", ActionType.DELETE),
                                 _after_pod_deleted),
            ClusterEventWithHint(ClusterEvent("PersistentVolumeClaim", ActionType.ADD),
                                 pod_claim_hint),
        ]


def _after_pod_deleted(pod: Pod, old: Pod, new: Any) -> QueueingHint:
    """A deleted pod placed or nominated somewhere with a claim or a migratable inline
    volume may free an attach slot (isSchedulableAfterPodDeleted)."""
    if not old.spec.volumes or (not old.node_name and not old.nominated_node_name):
        return QueueingHint.QUEUE_SKIP
    for v in old.spec.volumes:
        if v.claim or (v.source is not None and inline_csi_volume(v.source) is not None):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _after_csi_node_updated(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """Queue when some driver's limit went up (an unset count counts as 0)."""
    before = {d.name: d.count or 0 for d in old.drivers}
    for d in new.drivers:
        if (d.count or 0) > before.get(d.name, 0):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
