"""VolumeBinding. Extension points: PreFilter, Filter, Reserve/Unreserve, PreBind,
EnqueueExtensions. (Its Score needs the StorageCapacityScoring gate, off in v1.34: not
modelled.)

PreFilter sorts the pod's claims: a missing claim, a lost one or one being deleted fails as
unresolvable, as does any claim that is unbound and whose class binds immediately ("pod has
unbound immediate PersistentVolumeClaims"); a pod without claims is skipped. Filter, per node
(FindPodVolumes), collects every reason that applies, in upstream's order:

- a bound claim's volume whose node affinity the node's labels do not match: "node(s) didn't
  match PersistentVolume's node affinity"; checking stops at a bound claim whose volume does
  not exist: "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
- claims waiting for their first consumer: one already given another node
  (``volume.kubernetes.io/selected-node``), or, smallest request first, no free volume of the
  class that fits the node (the smallest that does is taken, ties by name) and no way to
  provision one (``kubernetes.io/no-provisioner``, or ``allowedTopologies`` the node misses):
  "node(s) didn't find available persistent volumes to bind"; a CSI driver with
  ``storageCapacity: true`` and no CSIStorageCapacity objects (not modelled, so none):
  "node(s) did not have enough free storage".

Reserve assumes the chosen volumes (other pods' filters see them taken); PreBind writes the
bindings to the cluster as the API calls and scheduler_perf's fake PV controller would (the
volume's ``claimRef``, then the claim's ``volumeName`` and bind-completed annotation). Dynamic
provisioning needs an external provisioner, which no benchmark cluster here has: PreBind
fails for such a claim with an error that says so (upstream waits ``bindTimeoutSeconds`` and
fails). Vectorised: volume node affinity over the node table's label codes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.api.selectors import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from scheduler_core.api.storage import (
    ANN_BIND_COMPLETED,
    PersistentVolume,
    PersistentVolumeClaim,
    claim_class,
)
from scheduler_core.cluster.events import WatchEvent
from scheduler_core.cluster.store import Cluster
from scheduler_core.errors import ConfigError
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
from scheduler_core.nodetable.matching import match_node_selector
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import count, memo_by_version
from scheduler_core.plugins.volume_lookup import claim_not_found, pod_claim_hint

__all__ = ["ERR_BIND_CONFLICT", "ERR_NODE_CONFLICT", "ERR_NOT_ENOUGH_SPACE",
           "ERR_PV_NOT_EXIST", "NAME", "VolumeBinding"]

NAME = names.VOLUME_BINDING
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
_STATE_KEY = "VolumeBinding"
# reason bits, in the order upstream appends the reasons
_NODE, _BIND, _SPACE, _NOPV = 1, 2, 4, 8
_REASONS = ((_NODE, ERR_NODE_CONFLICT), (_BIND, ERR_BIND_CONFLICT),
            (_SPACE, ERR_NOT_ENOUGH_SPACE), (_NOPV, ERR_PV_NOT_EXIST))


@dataclass(slots=True)
class _State:
    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    delayed: list[PersistentVolumeClaim] = field(default_factory=list)

    def clone(self) -> _State:
        return self


@dataclass(slots=True)
class _Plan:
    """What binding the pod on one node takes: (volume, claim) pairs and claims to
    provision."""

    static: list[tuple[PersistentVolume, PersistentVolumeClaim]]
    provision: list[PersistentVolumeClaim]


def _affinity_selector(pv: PersistentVolume) -> NodeSelector | None:
    """The volume's required node affinity as CheckNodeAffinity evaluates it: against the
    node's labels only, so a ``metadata.name`` field requirement sees an empty name."""
    sel = pv.node_affinity
    if sel is None or not any(t.fields for t in sel.terms):
        return sel
    terms = []
    for t in sel.terms:
        if any(r.op == "In" and "" not in r.values for r in t.fields):
            continue  # never matches an empty name
        terms.append(NodeSelectorTerm(t.expressions, ()))
    return NodeSelector(tuple(terms))


def _affinity_mask(table: NodeTable, sel: NodeSelector, idx: Any) -> np.ndarray:
    """Per node of ``idx``: it matches a volume's (CheckNodeAffinity-adjusted) selector; the
    mask over every slot is memoised per selector until the nodes change."""
    def every() -> np.ndarray:
        if not sel.terms:
            return np.zeros(table.capacity, dtype=bool)
        return match_node_selector(table, sel, slice(0, table.capacity))
    return memo_by_version(table, ("VolumeBinding/affinity", sel), every)[idx]


class _ClassVolumes:
    """The volumes of one storage class, best first (smallest, then by name), as arrays:
    capacity, free (Available, no claimRef, not assumed), block mode, the affinity group (an
    index into ``selectors``, -1 for none), and the volume pre-bound to each claim."""

    def __init__(self, pvs: list[PersistentVolume], assumed: dict[str, str]) -> None:
        pvs = sorted(pvs, key=lambda pv: (pv.capacity, pv.name))
        self.pvs = pvs
        n = len(pvs)
        self.pos = {pv.name: i for i, pv in enumerate(pvs)}
        self.capacity = np.fromiter((pv.capacity for pv in pvs), dtype=np.int64, count=n)
        self.block = np.fromiter((pv.volume_mode == "Block" for pv in pvs), dtype=bool, count=n)
        self.bound_to: dict[str, int] = {}
        self.free = np.zeros(n, dtype=bool)
        for i, pv in enumerate(pvs):
            self._set_claim(i, pv, assumed)
        self.selectors: list[NodeSelector | None] = []
        where: dict[NodeSelector | None, int] = {}
        groups = np.full(n, -1, dtype=np.int32)
        for i, pv in enumerate(pvs):
            if pv.node_affinity is None:
                continue
            sel = _affinity_selector(pv)
            g = where.get(sel)
            if g is None:
                g = where[sel] = len(self.selectors)
                self.selectors.append(sel)
            groups[i] = g
        self.group = groups
        self._modes: dict[tuple[str, ...], np.ndarray] = {}

    def _set_claim(self, i: int, pv: PersistentVolume, assumed: dict[str, str]) -> None:
        ref = assumed.get(pv.name)
        if ref is None and pv.claim_ref is not None:
            ref = f"{pv.claim_ref[0]}/{pv.claim_ref[1]}"
        if ref is not None:
            self.bound_to.setdefault(ref, i)
        self.free[i] = ref is None and pv.phase == "Available"

    def refresh(self, pv: PersistentVolume, assumed: dict[str, str]) -> bool:
        """Take a volume's new claim, phase or assumption; False when it is not one of these
        volumes or changed more than that (the caller rebuilds)."""
        i = self.pos.get(pv.name)
        if i is None:
            return False
        old = self.pvs[i]
        if (old.capacity, old.volume_mode, old.access_modes, old.node_affinity, old.labels,
                old.storage_class) != (pv.capacity, pv.volume_mode, pv.access_modes,
                                       pv.node_affinity, pv.labels, pv.storage_class):
            return False
        self.bound_to = {k: j for k, j in self.bound_to.items() if j != i}
        self.pvs[i] = pv
        self._set_claim(i, pv, assumed)
        return True

    def modes_ok(self, wanted: tuple[str, ...]) -> np.ndarray:
        """Per volume: it offers every access mode of ``wanted`` (CheckAccessModes)."""
        hit = self._modes.get(wanted)
        if hit is None:
            need = set(wanted)
            hit = self._modes[wanted] = np.fromiter(
                (need <= set(pv.access_modes) for pv in self.pvs), dtype=bool,
                count=len(self.pvs))
        return hit


class VolumeBinding:
    name: ClassVar[str] = NAME
    # its Filter reads only node labels and volumes (plugins.node_local)
    node_local: ClassVar[bool] = True
    pod_blind: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        for key, value in (args or {}).items():
            if key == "bindTimeoutSeconds":
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ConfigError("expected a non-negative integer",
                                      field=f"{args_path}.{key}")
            elif key == "shape":  # scoring shape, used only with StorageCapacityScoring
                if not isinstance(value, list):
                    raise ConfigError("expected a list of {utilization, score} points",
                                      field=f"{args_path}.{key}")
            else:
                raise ConfigError("unknown field", field=f"{args_path}.{key}")
        self.handle = handle
        # Reserve's assumptions until PreBind: volume -> claim key
        self.assumed_pvs: dict[str, str] = {}
        # per storage class, its volumes as arrays, kept current by the volume events
        self._volumes: dict[str, _ClassVolumes] = {}
        self._subscribed: Cluster | None = None

    @property
    def _cluster(self) -> Cluster:
        assert self.handle is not None, "VolumeBinding needs the scheduler's cluster"
        return self.handle.cluster

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        claims = [v.claim for v in pod.spec.volumes if v.claim]
        if not claims:
            state.write(_STATE_KEY, _State())
            return None, SKIP
        cluster = self._cluster
        found = []
        for name in claims:
            pvc = cluster.pvcs.get(f"{pod.namespace}/{name}")
            if pvc is None:
                return None, Status.unresolvable(claim_not_found(name), plugin=NAME)
            if pvc.phase == "Lost":
                return None, Status.unresolvable(
                    f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                    f'"{pvc.volume_name}"', plugin=NAME)
            if pvc.deleting:
                return None, Status.unresolvable(
                    f'persistentvolumeclaim "{name}" is being deleted', plugin=NAME)
            found.append(pvc)
        s = _State()
        for pvc in found:
            if pvc.fully_bound:
                s.bound.append(pvc)
                continue
            sc = cluster.storage_classes.get(claim_class(pvc))
            if sc is not None and sc.wait_for_first_consumer and not pvc.volume_name:
                s.delayed.append(pvc)
            else:
                return None, Status.unresolvable(
                    "pod has unbound immediate PersistentVolumeClaims", plugin=NAME)
        state.write(_STATE_KEY, s)
        return None, None

    # ------------------------------------------------------------------ Filter
    def _reasons(self, s: _State, table: NodeTable, idx: Any) -> np.ndarray:
        """Per node of ``idx``: the reason bits of FindPodVolumes (0: the pod fits)."""
        n = count(table, idx)
        bits = np.zeros(n, dtype=np.int8)
        cluster = self._cluster
        if s.bound:
            ok = np.ones(n, dtype=bool)
            missing = False
            for pvc in s.bound:
                pv = cluster.pvs.get(pvc.volume_name)
                if pv is None:
                    missing = True
                    break
                sel = _affinity_selector(pv)
                if sel is not None:
                    ok &= _affinity_mask(table, sel, idx)
            bits[~ok] |= _NODE
            if missing:
                bits[ok] |= _NOPV
        if s.delayed:
            bits |= self._delayed_reasons(s.delayed, table, idx, n)
        return bits

    def _selected_elsewhere(self, pvc: PersistentVolumeClaim, table: NodeTable, idx: Any,
                            n: int) -> np.ndarray | None:
        node = pvc.annotations.get("volume.kubernetes.io/selected-node")
        if node is None:
            return None
        slot = table.slot_of.get(node, -1)
        return np.arange(table.capacity)[idx] != slot if slot >= 0 else np.ones(n, dtype=bool)

    def _class_volumes(self, name: str) -> _ClassVolumes:
        """The volumes of class ``name`` as arrays."""
        cluster = self._cluster
        if self._subscribed is not cluster:
            self._volumes.clear()
            cluster.subscribe(self._on_event)
            self._subscribed = cluster
        cv = self._volumes.get(name)
        if cv is None:
            pvs = [pv for pv in cluster.pvs.values() if pv.storage_class == name]
            cv = self._volumes[name] = _ClassVolumes(pvs, self.assumed_pvs)
        return cv

    def _on_event(self, ev: WatchEvent) -> None:
        if ev.kind == "PersistentVolume":
            self._refresh(ev.old, ev.new)

    def _refresh(self, old: PersistentVolume | None, new: PersistentVolume | None) -> None:
        """A volume changed (or its assumption did): patch its class's arrays, or drop them
        to be rebuilt."""
        if old is not None and new is not None and old.storage_class == new.storage_class:
            cv = self._volumes.get(new.storage_class)
            if cv is None or cv.refresh(new, self.assumed_pvs):
                return
        for pv in (old, new):
            if pv is not None:
                self._volumes.pop(pv.storage_class, None)

    def _assume(self, pv: PersistentVolume, claim: str | None) -> None:
        if claim is None:
            self.assumed_pvs.pop(pv.name, None)
        else:
            self.assumed_pvs[pv.name] = claim
        self._refresh(pv, self._cluster.pvs.get(pv.name, pv))

    def _candidates(self, pvc: PersistentVolumeClaim) -> tuple[_ClassVolumes, np.ndarray]:
        """FindMatchingVolume's node-independent checks: the positions (best first) of the
        volumes of the claim's class that are free, big enough, of its volume mode, with its
        access modes and matching its selector; a volume pre-bound to the claim alone."""
        cv = self._class_volumes(claim_class(pvc))
        pre = cv.bound_to.get(pvc.key)
        if pre is not None:
            ok = cv.capacity[pre] >= pvc.request and cv.block[pre] == (pvc.volume_mode == "Block")
            return cv, np.asarray([pre] if ok else [], dtype=np.int64)
        mask = cv.free & (cv.capacity >= pvc.request) & (cv.block == (pvc.volume_mode == "Block"))
        mask &= cv.modes_ok(pvc.access_modes)
        if pvc.selector is not None:
            sel = pvc.selector
            mask &= np.fromiter((sel.matches(pv.labels) for pv in cv.pvs), dtype=bool,
                                count=len(cv.pvs))
        return cv, np.flatnonzero(mask)

    def _group_mask(self, cv: _ClassVolumes, g: int, table: NodeTable, idx: Any, n: int
                    ) -> np.ndarray:
        if g < 0:
            return np.ones(n, dtype=bool)
        sel = cv.selectors[g]
        assert sel is not None  # grouped volumes have a node affinity
        return _affinity_mask(table, sel, idx)

    def _delayed_reasons(self, claims: list[PersistentVolumeClaim], table: NodeTable,
                         idx: Any, n: int) -> np.ndarray:
        bits = np.zeros(n, dtype=np.int8)
        stop, provision = self._match(claims, table, idx, n)
        bits[stop] |= _BIND
        live = ~stop
        decided = np.zeros(n, dtype=bool)  # checkVolumeProvisions returned on this node
        for pvc, needs in provision:
            needs = needs & live & ~decided
            if not needs.any():
                continue
            sc = self._cluster.storage_classes.get(claim_class(pvc))
            assert sc is not None  # a delayed claim's class exists (PreFilter)
            if sc.provisioner == NO_PROVISIONER:
                bits[needs] |= _BIND
                decided |= needs
                continue
            if sc.allowed_topologies:
                allowed = self._allowed(sc, table, idx)
                bits[needs & ~allowed] |= _BIND
                decided |= needs & ~allowed
                needs = needs & allowed
            driver = self._cluster.csi_drivers.get(sc.provisioner)
            if driver is not None and driver.storage_capacity:
                bits[needs] |= _SPACE  # no CSIStorageCapacity objects: never enough
                decided |= needs
        return bits

    @staticmethod
    def _allowed(sc: Any, table: NodeTable, idx: Any) -> np.ndarray:
        terms = []
        for term in sc.allowed_topologies:
            terms.append(NodeSelectorTerm(tuple(
                NodeSelectorRequirement(k, "In", tuple(sorted(vs))) for k, vs in term)))
        return match_node_selector(table, NodeSelector(tuple(terms)), idx)

    def _match(self, claims: list[PersistentVolumeClaim], table: NodeTable, idx: Any, n: int
               ) -> tuple[np.ndarray, list[tuple[PersistentVolumeClaim, np.ndarray]]]:
        """Per node: whether a claim selected for another node stops the search, and for each
        claim to provision (selected here, or unmatched), the nodes where it needs it."""
        stop = np.zeros(n, dtype=bool)
        provision: list[tuple[PersistentVolumeClaim, np.ndarray]] = []
        to_match = []
        for pvc in claims:
            elsewhere = self._selected_elsewhere(pvc, table, idx, n)
            if elsewhere is None:
                to_match.append(pvc)
            else:
                stop |= elsewhere
                provision.append((pvc, ~elsewhere))
        to_match.sort(key=lambda c: c.request)  # byPVCSize (stable, as for a few claims)
        if len(to_match) == 1:  # nothing to share: any fitting volume's affinity will do
            cv, cand = self._candidates(to_match[0])
            found = np.zeros(n, dtype=bool)
            for g in np.unique(cv.group[cand]).tolist():
                found |= self._group_mask(cv, g, table, idx, n)
            provision.append((to_match[0], ~found))
            return stop, provision
        taken: dict[str, np.ndarray] = {}  # volume -> nodes where an earlier claim took it
        for pvc in to_match:
            cv, cand = self._candidates(pvc)
            found = np.zeros(n, dtype=bool)
            for i in cand.tolist():
                if found.all():
                    break
                fits = ~found & self._group_mask(cv, int(cv.group[i]), table, idx, n)
                name = cv.pvs[i].name
                prior = taken.get(name)
                if prior is not None:
                    fits &= ~prior
                if fits.any():
                    taken[name] = fits if prior is None else prior | fits
                    found |= fits
            provision.append((pvc, ~found))
        return stop, provision

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        s: _State | None = state.get(_STATE_KEY)
        if s is None or (not s.bound and not s.delayed):
            return None
        return self._reasons(s, table, idx) == 0

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[Status]]:
        s: _State = state.get(_STATE_KEY)
        bits = self._reasons(s, table, idx)
        combos, rows = np.unique(bits, return_inverse=True)
        statuses = [Status.unresolvable(*[text for bit, text in _REASONS if int(b) & bit],
                                        plugin=NAME) for b in combos.tolist()]
        return rows.reshape(-1).astype(np.int64), statuses

    # ------------------------------------------------------------------ Reserve / PreBind
    def _plan(self, s: _State, node_name: str) -> _Plan:
        table = self._cluster.table
        slot = table.slot_of[node_name]
        idx = np.asarray([slot], dtype=np.int64)
        plan = _Plan([], [])
        if not s.delayed:
            return plan
        _, provision = self._match(s.delayed, table, idx, 1)
        needs = {id(pvc) for pvc, m in provision if m[0]}
        chosen: set[str] = set()
        for pvc in sorted((c for c in s.delayed if id(c) not in needs),
                          key=lambda c: c.request):
            cv, cand = self._candidates(pvc)
            for i in cand.tolist():
                pv = cv.pvs[i]
                if pv.name not in chosen and self._group_mask(cv, int(cv.group[i]), table,
                                                             idx, 1)[0]:
                    plan.static.append((pv, pvc))
                    chosen.add(pv.name)
                    break
        for pv, pvc in plan.static:
            self._assume(pv, pvc.key)
        plan.provision = [pvc for pvc in s.delayed if id(pvc) in needs]
        return plan

    @staticmethod
    def reserves_nothing(pod: Pod) -> bool:
        """Reserve and PreBind do nothing for a pod without claims (cycle.placement_batch)."""
        return not any(v.claim for v in pod.spec.volumes)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s: _State | None = state.get(_STATE_KEY)
        if s is None or not s.delayed:
            return None
        state.write(_STATE_KEY + "/plan", self._plan(s, node_name))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        plan: _Plan | None = state.get(_STATE_KEY + "/plan")
        if plan is not None:
            for pv, _ in plan.static:
                self._assume(pv, None)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        plan: _Plan | None = state.get(_STATE_KEY + "/plan")
        if plan is None or (not plan.static and not plan.provision):
            return None
        cluster = self._cluster
        for pv, pvc in plan.static:
            self._assume(pv, None)
            m = copy.deepcopy(pv.manifest)
            m["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                                     "namespace": pvc.namespace, "name": pvc.name}
            m.setdefault("metadata", {}).setdefault("annotations", {})[
                "pv.kubernetes.io/bound-by-controller"] = "yes"
            cluster.put_storage(PersistentVolume.from_manifest(m), update=True)
            c = copy.deepcopy(pvc.manifest)
            c["spec"]["volumeName"] = pv.name
            c.setdefault("metadata", {}).setdefault("annotations", {})[ANN_BIND_COMPLETED] = "yes"
            cluster.put_storage(PersistentVolumeClaim.from_manifest(c), update=True)
        if plan.provision:
            keys = ", ".join(p.key for p in plan.provision)
            return Status.error(f"binding volumes: claims {keys} need dynamic provisioning, "
                                "which scheduler_core does not model (no external "
                                "provisioner)", plugin=NAME)
        return None

    # ------------------------------------------------------------------ events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent("StorageClass", ActionType.ADD | ActionType.UPDATE),
                                 _after_class_changed),
            ClusterEventWithHint(ClusterEvent("PersistentVolumeClaim",
                                              ActionType.ADD | ActionType.UPDATE),
                                 pod_claim_hint),
            ClusterEventWithHint(ClusterEvent("PersistentVolume",
                                              ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD
                                              | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent("CSINode", ActionType.ADD | ActionType.UPDATE),
                                 _after_csi_node_changed),
            ClusterEventWithHint(ClusterEvent("CSIDriver", ActionType.UPDATE),
                                 _after_csi_driver_changed),
        ]


def _after_class_changed(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if old is None or old.allowed_topologies != new.allowed_topologies:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _after_csi_node_changed(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if old is None or old.migrated_plugins != new.migrated_plugins:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _after_csi_driver_changed(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """isSchedulableAfterCSIDriverChange: storageCapacity turned off for the driver of an
    inline CSI volume of the pod."""
    for v in pod.spec.volumes:
        if v.source is not None and v.source.kind == "csi" and v.source.driver == new.name \
                and old.storage_capacity and not new.storage_capacity:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
