"""Per-node volume state of the pods placed on the node table, kept current by the table's
pod listener and the cluster's storage events, for the vectorised volume filters:

- NodeVolumeLimits: per CSI driver, the attach limit of each node (its CSINode's
  ``allocatable.count``; no limit where there is none) and the number of distinct volumes the
  node's pods use (``attached``), and for each volume the nodes that already use it (counted
  once per node, as upstream's unique volume names);
- VolumeRestrictions: how many placed pods use each claim (the snapshot's PVC reference
  counts, IsPVCUsedByPods) and the inline disks (AWS EBS, GCE PD, RBD, iSCSI) per node.

A pod's volumes are resolved (claim -> volume -> driver, migration on its node's CSINode) when
it is placed and remembered, so taking it off undoes exactly what placing it did; a change of
a claim or volume resolves the placed pods that use it again (a class, or anything while a
placed pod's claim is missing, resolves all of them; a CSINode, its node's pods).
Preemption's dry runs go through ``table.add_pod``/``remove_pod`` and so keep the state exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.api.quantity import INT64_MAX
from scheduler_core.api.storage import CSINode, VolumeSource
from scheduler_core.cluster.events import ADDED, WatchEvent
from scheduler_core.cluster.store import Cluster
from scheduler_core.plugins.volume_lookup import (
    CSIVolume,
    csi_volume,
    inline_csi_volume,
    migration_on,
)

__all__ = ["CONFLICT_SOURCES", "VolumeIndex"]

CONFLICT_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
_STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode")
_KEY = "volumes"


class VolumeIndex:
    """See the module docstring. One per cluster: :meth:`of`."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        table = cluster.table
        self.table = table
        self.limits: dict[str, np.ndarray] = {}  # driver -> per-slot limit (INT64_MAX: none)
        self.migrated: dict[str, np.ndarray] = {}  # in-tree plugin -> per-slot bool
        self.attached: dict[str, np.ndarray] = {}  # driver -> per-slot distinct volumes
        self.volume_slots: dict[str, dict[int, int]] = {}  # unique name -> slot -> pods
        self.claim_refs: dict[str, int] = {}  # "ns/claim" -> placed pods using it
        # (kind, ident) -> slot -> inline sources of the node's pods
        self.inline: dict[tuple[str, str], dict[int, list[VolumeSource]]] = {}
        # (pod uid, slot) -> the pod, its volumes as counted there, whether a claim was missing
        self._placed: dict[tuple[str, int], tuple[Pod, list[CSIVolume], bool]] = {}
        self._unresolved = 0  # placed pods with a claim that was not found
        # placed pods (uid, slot) per claim key they use, and claim keys per volume name
        self._by_claim: dict[str, set[tuple[str, int]]] = {}
        self._claims_of_pv: dict[str, set[str]] = {}
        self._csi_slot: dict[int, CSINode] = {}
        self._columns = (self.limits, self.migrated, self.attached)
        for name, csi in cluster.csi_nodes.items():
            slot = table.slot_of.get(name)
            if slot is not None:
                self._set_csi_node(slot, csi)
        for slot, pods in enumerate(table.pods):
            for pod in (pods or {}).values():
                self._on_pod(pod, slot, 1)
        table.pod_listeners.append(self._on_pod)
        table.node_listeners.append(self._on_node)
        cluster.subscribe(self._on_event)

    @classmethod
    def of(cls, cluster: Cluster) -> VolumeIndex:
        index = cluster.table.indexes.get(_KEY)
        if index is None or index.cluster is not cluster:
            index = cls(cluster)
            cluster.table.indexes[_KEY] = index
        return index

    # ------------------------------------------------------------------ columns
    def _column(self, store: dict[str, np.ndarray], key: str, fill: Any) -> np.ndarray:
        col = store.get(key)
        cap = self.table.capacity
        if col is None:
            col = np.full(cap, fill, dtype=type(fill) if isinstance(fill, bool) else np.int64)
            store[key] = col
        elif len(col) < cap:
            grown = np.full(cap, fill, dtype=col.dtype)
            grown[:len(col)] = col
            store[key] = col = grown
        return col

    def limit(self, driver: str) -> np.ndarray:
        return self._column(self.limits, driver, INT64_MAX)

    def migrated_on(self, plugin: str) -> np.ndarray:
        return self._column(self.migrated, plugin, False)

    def attached_count(self, driver: str) -> np.ndarray:
        return self._column(self.attached, driver, 0)

    # ------------------------------------------------------------------ CSINodes
    def csi_node(self, slot: int) -> CSINode | None:
        return self._csi_slot.get(slot)

    def _set_csi_node(self, slot: int, csi: CSINode | None) -> None:
        old = self._csi_slot.pop(slot, None)
        if old is not None:
            for d in old.limits():
                self.limit(d)[slot] = INT64_MAX
            for p in old.migrated_plugins:
                self.migrated_on(p)[slot] = False
        if csi is None:
            return
        self._csi_slot[slot] = csi
        for d, count in csi.limits().items():
            self.limit(d)[slot] = count
        for p in csi.migrated_plugins:
            self.migrated_on(p)[slot] = True

    def _on_node(self, slot: int, old: Any, new: Any) -> None:
        if new is None:  # removed (the table took its pods off first)
            self._set_csi_node(slot, None)
        elif old is None:
            self._set_csi_node(slot, self.cluster.csi_nodes.get(new.name))

    # ------------------------------------------------------------------ pods
    def _resolve(self, pod: Pod, slot: int) -> tuple[list[CSIVolume], bool]:
        """The pod's volumes as counted on ``slot`` (and whether a claim was missing)."""
        out: list[CSIVolume] = []
        missing = False
        csi = self._csi_slot.get(slot)
        pvcs = self.cluster.pvcs
        for v in pod.spec.volumes:
            if v.claim:
                pvc = pvcs.get(f"{pod.namespace}/{v.claim}")
                if pvc is None:
                    missing = True
                    continue
                if pvc.volume_name:
                    self._claims_of_pv.setdefault(pvc.volume_name, set()).add(pvc.key)
                vol = csi_volume(self.cluster, pvc)
            else:
                assert v.source is not None
                vol = inline_csi_volume(v.source)
            if vol is not None and (not vol.plugin or migration_on(csi, vol.plugin)):
                out.append(vol)
        return out, missing

    def _on_pod(self, pod: Pod, slot: int, sign: int) -> None:
        if not pod.spec.volumes:
            return
        key = (pod.uid, slot)
        if sign > 0:
            vols, missing = self._resolve(pod, slot)
            self._placed[key] = (pod, vols, missing)
            self._unresolved += missing
        else:
            entry = self._placed.pop(key, None)
            if entry is None:
                return
            _, vols, missing = entry
            self._unresolved -= missing
        for vol in vols:
            slots = self.volume_slots.setdefault(vol.unique, {})
            n = slots.get(slot, 0) + sign
            if n > 0:
                slots[slot] = n
            else:
                slots.pop(slot, None)
                if not slots:
                    del self.volume_slots[vol.unique]
            if (sign > 0 and n == 1) or (sign < 0 and n == 0):
                self.attached_count(vol.driver)[slot] += sign
        for v in pod.spec.volumes:
            if v.claim:
                ck = f"{pod.namespace}/{v.claim}"
                c = self.claim_refs.get(ck, 0) + sign
                users = self._by_claim.setdefault(ck, set())
                if sign > 0:
                    users.add(key)
                else:
                    users.discard(key)
                    if not users:
                        del self._by_claim[ck]
                if c > 0:
                    self.claim_refs[ck] = c
                else:
                    self.claim_refs.pop(ck, None)
            elif v.source is not None and v.source.kind in CONFLICT_SOURCES:
                per_slot = self.inline.setdefault((v.source.kind, v.source.ident), {})
                sources = per_slot.setdefault(slot, [])
                if sign > 0:
                    sources.append(v.source)
                else:
                    sources.remove(v.source)
                    if not sources:
                        del per_slot[slot]

    def _reresolve(self, keys: set[tuple[str, int]] | None = None) -> None:
        """Resolve the placed pods ``keys`` (default: all) again."""
        placed = [(self._placed[k][0], k[1]) for k in (self._placed if keys is None else keys)
                  if k in self._placed]
        for pod, slot in placed:
            self._on_pod(pod, slot, -1)
        for pod, slot in placed:
            self._on_pod(pod, slot, 1)

    # ------------------------------------------------------------------ storage events
    def _on_event(self, ev: WatchEvent) -> None:
        kind = ev.kind
        if kind not in _STORAGE_KINDS:
            return
        if kind == "CSINode":
            name = (ev.new or ev.old).name
            slot = self.table.slot_of.get(name)
            if slot is None:
                return
            on_slot = [(entry[0], s) for (_, s), entry in self._placed.items() if s == slot]
            for pod, s in on_slot:
                self._on_pod(pod, s, -1)
            self._set_csi_node(slot, ev.new)
            for pod, s in on_slot:
                self._on_pod(pod, s, 1)
            return
        if ev.type is ADDED and not self._unresolved:
            return  # nothing placed could have depended on an object that did not exist
        if not self._placed:
            return
        if self._unresolved or kind == "StorageClass":
            self._reresolve()
            return
        claims: set[str] = set()
        for obj in (ev.old, ev.new):
            if obj is None:
                continue
            if kind == "PersistentVolumeClaim":
                claims.add(obj.key)
            else:
                claims |= self._claims_of_pv.get(obj.name, set())
                if obj.claim_ref is not None:
                    claims.add(f"{obj.claim_ref[0]}/{obj.claim_ref[1]}")
        keys = set().union(*(self._by_claim.get(c, ()) for c in claims))
        if keys:
            self._reresolve(keys)
