"""VolumeZone. Extension points: PreFilter, Filter, EnqueueExtensions.

The zone and region labels of the pod's bound volumes (``topology.kubernetes.io/zone`` and
``region``, and their ``failure-domain.beta`` forms; a value may list several zones joined by
``__``) must be matched by the node's labels (the beta key falls back to the GA one on the
node). A node without any of the four labels is not checked. PreFilter resolves the claims:
a missing claim, volume or class, or an unbound claim whose class binds immediately, fails as
unresolvable; a claim waiting for its first consumer is passed over. Vectorised over the
node table's label codes.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.api.storage import PersistentVolume, claim_class
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
from scheduler_core.plugins.volume_lookup import (
    claim_not_found,
    pod_claim_hint,
    pv_not_found,
    storage_class_not_found,
)

__all__ = ["ERR_REASON", "NAME", "TOPOLOGY_LABELS", "VolumeZone"]

NAME = names.VOLUME_ZONE
ERR_REASON = "node(s) had no available volume zone"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
TOPOLOGY_LABELS = (_BETA_ZONE, _BETA_REGION, "topology.kubernetes.io/zone",
                   "topology.kubernetes.io/region")
_GA = {_BETA_ZONE: "topology.kubernetes.io/zone", _BETA_REGION: "topology.kubernetes.io/region"}
_STATE_KEY = "PreFilter" + NAME

Topology = tuple[str, frozenset[str]]  # (label key, allowed values)


def pv_topologies(pv: PersistentVolume) -> list[Topology]:
    """The volume's topology labels (a value that lists an empty zone is ignored, as
    LabelZonesToSet's error is)."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = value.split("__")
        if any(not z for z in zones):
            continue
        out.append((key, frozenset(zones)))
    return out


class VolumeZone(FilterBase):
    name: ClassVar[str] = NAME
    failure: ClassVar[Status] = Status.unresolvable(ERR_REASON, plugin=NAME)
    # its Filter reads only the node's labels (plugins.node_local)
    node_local: ClassVar[bool] = True
    pod_blind: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)
        self.handle = handle

    def _topologies(self, pod: Pod) -> tuple[list[Topology], Status | None]:
        """getPVbyPod: the topologies of every bound volume of the pod's claims."""
        claims = [v.claim for v in pod.spec.volumes if v.claim]
        if not claims:
            return [], None
        assert self.handle is not None, "VolumeZone needs the scheduler's cluster"
        cluster = self.handle.cluster
        out: list[Topology] = []
        for name in claims:
            pvc = cluster.pvcs.get(f"{pod.namespace}/{name}")
            if pvc is None:
                return [], Status.unresolvable(claim_not_found(name), plugin=NAME)
            if not pvc.volume_name:
                sc_name = claim_class(pvc)
                if not sc_name:
                    return [], Status.unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name",
                        plugin=NAME)
                sc = cluster.storage_classes.get(sc_name)
                if sc is None:
                    return [], Status.unresolvable(storage_class_not_found(sc_name),
                                                   plugin=NAME)
                if sc.wait_for_first_consumer:
                    continue
                return [], Status.unresolvable("PersistentVolume had no name", plugin=NAME)
            pv = cluster.pvs.get(pvc.volume_name)
            if pv is None:
                return [], Status.unresolvable(pv_not_found(pvc.volume_name), plugin=NAME)
            out.extend(pv_topologies(pv))
        return out, None

    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        topologies, status = self._topologies(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, SKIP
        state.write(_STATE_KEY, topologies)
        return None, None

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        if not pod.spec.volumes:
            return None
        topologies = state.get(_STATE_KEY)
        if topologies is None:
            topologies, status = self._topologies(pod)
            if status is not None:
                return np.zeros(count(table, idx), dtype=bool)
        if not topologies:
            return None
        n = count(table, idx)
        constrained = np.zeros(n, dtype=bool)  # the node has one of the topology labels
        for key in TOPOLOGY_LABELS:
            col = table.codes(key)
            if col is not None:
                constrained |= col[idx] >= 0
        ok = np.ones(n, dtype=bool)
        for key, values in topologies:
            ok &= self._matches(table, key, values, idx, n)
        return ok | ~constrained

    @staticmethod
    def _matches(table: NodeTable, key: str, values: frozenset[str], idx: Any, n: int
                 ) -> np.ndarray:
        """The node's value of ``key`` (or, absent, of its GA form) is one of ``values``."""
        hit = np.zeros(n, dtype=bool)
        present = np.zeros(n, dtype=bool)
        for k in (key, _GA.get(key)):
            if k is None:
                continue
            col = table.codes(k)
            if col is None:
                continue
            codes = col[idx]
            wanted = [c for v in values if (c := table.code_of(k, v)) >= 0]
            here = ~present & (codes >= 0)
            if wanted:
                hit |= here & np.isin(codes, np.asarray(wanted, dtype=codes.dtype))
            present |= codes >= 0
        return hit

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[Status]]:
        status = None
        if state.get(_STATE_KEY) is None:
            _, status = self._topologies(pod)
        return np.zeros(count(table, idx), dtype=np.int64), [status or self.failure]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent("StorageClass", ActionType.ADD),
                                 _after_class_added),
            ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD
                                              | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent("PersistentVolumeClaim",
                                              ActionType.ADD | ActionType.UPDATE),
                                 pod_claim_hint),
            ClusterEventWithHint(ClusterEvent("PersistentVolume",
                                              ActionType.ADD | ActionType.UPDATE),
                                 _after_volume_changed),
        ]


def _after_class_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A WaitForFirstConsumer class was added (isSchedulableAfterStorageClassAdded)."""
    return QueueingHint.QUEUE if new.wait_for_first_consumer else QueueingHint.QUEUE_SKIP


def _after_volume_changed(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A volume was added or its topology labels changed (isSchedulableAfterPersistent
    VolumeChange)."""
    if old is None or pv_topologies(old) != pv_topologies(new):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
