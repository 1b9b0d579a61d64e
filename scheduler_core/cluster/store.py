"""The in-memory API store: a KWOK-style fake cluster for the scheduler.

Nodes are Ready as soon as they exist (no kubelet); a bound pod counts as running. The store
owns the node table (the scheduler's cache) and is the only writer of it.

Pod state machine (kube's backend/cache/interface.go)::

      add (no nodeName)             assume(pod, node)            bind(pod)
    ─────────────────▶ Pending ─────────────────────▶ Assumed ────────────▶ Bound
                          ▲                              │ forget(pod)
                          └──────────────────────────────┘
      add (with nodeName) ───────────────────────────────────────────────▶ Bound
      delete: from any state; a Bound or Assumed pod leaves the node table.

Every change is delivered synchronously, in order, to the subscribers as a ``WatchEvent``
(the informer equivalent). Assume and forget are cache operations: they emit nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from scheduler_core.api.node import Node
from scheduler_core.api.objects import Namespace, PodDisruptionBudget, PriorityClass, Service
from scheduler_core.api.pod import Pod
from scheduler_core.api.podgroup import PodGroup
from scheduler_core.api.storage import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from scheduler_core.cluster.events import ADDED, DELETED, MODIFIED, EventType, WatchEvent
from scheduler_core.errors import AlreadyExistsError, ClusterError, NotFoundError
from scheduler_core.nodetable.table import NodeTable

__all__ = ["Cluster"]

Subscriber = Callable[[WatchEvent], None]
StorageObject = PersistentVolume | PersistentVolumeClaim | StorageClass | CSINode | CSIDriver
STORAGE_TYPES = (PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver)


class Cluster:
    """Nodes, pods, namespaces, priority classes, PDBs, services and PodGroups, with watch
    events."""

    def __init__(self, *, capacity: int = 1024, clock: Callable[[], float] | None = None) -> None:
        self.table = NodeTable(capacity)
        self.pods: dict[str, Pod] = {}  # by "namespace/name"
        self.namespaces: dict[str, Namespace] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.services: dict[str, Service] = {}
        # storage kinds, by name (claims by "namespace/name")
        self.pvs: dict[str, PersistentVolume] = {}
        self.pvcs: dict[str, PersistentVolumeClaim] = {}
        self.storage_classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.assumed: set[str] = set()  # pod keys assumed but not yet bound
        # PodGroups by "namespace/name"; the pods naming each group key (whether the group
        # exists or not), and how many of them are assumed or bound (upstream's
        # PodGroupState AllPodsCount / ScheduledPodsCount)
        self.pod_groups: dict[str, PodGroup] = {}
        self.group_pods: dict[str, dict[str, Pod]] = {}
        self.group_scheduled: dict[str, int] = {}
        self._orphans: dict[str, dict[str, Pod]] = {}  # node name -> bound pods awaiting the node
        self._subscribers: list[Subscriber] = []
        self._clock = clock or (lambda: 0.0)
        self.bind_count = 0
        self.generation = 0  # bumped on every change delivered to subscribers
        # admission checks run before a pod is stored (e.g. reject an unknown schedulerName)
        self.admission_hooks: list[Callable[[Pod], None]] = []

    # ------------------------------------------------------------------ watch
    def subscribe(self, fn: Subscriber) -> None:
        self._subscribers.append(fn)

    def _emit(self, kind: str, type_: EventType, old: object, new: object) -> None:
        self.generation += 1
        if self._subscribers:
            ev = WatchEvent(kind, type_, old, new)
            for fn in self._subscribers:
                fn(ev)

    # ------------------------------------------------------------------ nodes
    def node(self, name: str) -> Node:
        slot = self.table.slot_of.get(name)
        if slot is None:
            raise NotFoundError(f"node {name} not found")
        return self.table.node(slot)

    def has_node(self, name: str) -> bool:
        return name in self.table.slot_of

    def add_node(self, node: Node) -> None:
        if node.name in self.table.slot_of:
            raise AlreadyExistsError(f"node {node.name} already exists")
        slot = self.table.add_node(node)
        for pod in self._orphans.pop(node.name, {}).values():
            self.table.add_pod(pod, slot)
        self._emit("Node", ADDED, None, node)

    def add_nodes(self, nodes: Iterable[Node]) -> None:
        for n in nodes:
            self.add_node(n)

    def update_node(self, node: Node) -> None:
        old = self.node(node.name)
        self.table.update_node(node)
        self._emit("Node", MODIFIED, old, node)

    def delete_node(self, name: str) -> None:
        old = self.node(name)
        slot = self.table.slot_of[name]
        # pods stay bound to the missing node (as in kube, until garbage collected)
        stranded = dict(self.table.pods[slot])
        self.table.remove_node(name)
        if stranded:
            self._orphans[name] = stranded
        self._emit("Node", DELETED, old, None)

    # ------------------------------------------------------------------ pods
    def get_pod(self, namespace: str, name: str) -> Pod:
        pod = self.pods.get(f"{namespace}/{name}")
        if pod is None:
            raise NotFoundError(f"pod {namespace}/{name} not found")
        return pod

    def resolve_priority(self, pod: Pod) -> None:
        """Admission: ``spec.priority`` from priorityClassName or the global default class."""
        spec = pod.spec
        if spec.priority_class_name:
            pc = self.priority_classes.get(spec.priority_class_name)
            if pc is None:
                if spec.priority is not None:
                    pod.priority = spec.priority
                    return
                raise ClusterError(
                    f"pod {pod.key}: spec.priorityClassName: no PriorityClass with name "
                    f"{spec.priority_class_name} was found"
                )
            pod.priority = pc.value
        elif spec.priority is not None:
            pod.priority = spec.priority
        else:
            default = next((pc for pc in self.priority_classes.values() if pc.global_default),
                           None)
            pod.priority = default.value if default else 0

    def add_pod(self, pod: Pod) -> None:
        key = pod.key
        if key in self.pods:
            raise AlreadyExistsError(f"pod {key} already exists")
        for hook in self.admission_hooks:
            hook(pod)
        self.resolve_priority(pod)
        if pod.start_time is None and pod.node_name:
            pod.start_time = self._clock()
        self.pods[key] = pod
        if pod.spec.pod_group:
            self._join_group(pod)
        if pod.node_name:
            self._account(pod)
        self._emit("Pod", ADDED, None, pod)

    def _join_group(self, pod: Pod) -> None:
        self.group_pods.setdefault(pod.group_key, {})[pod.key] = pod

    def _leave_group(self, pod: Pod) -> None:
        gk = pod.group_key
        members = self.group_pods.get(gk)
        if members is not None and members.get(pod.key) is pod:
            del members[pod.key]
            if not members:
                del self.group_pods[gk]

    def _group_count(self, pod: Pod, delta: int) -> None:
        """A pod of a group gained (+1) or lost (-1) its node (assumed or bound)."""
        gk = pod.group_key
        n = self.group_scheduled.get(gk, 0) + delta
        if n:
            self.group_scheduled[gk] = n
        else:
            self.group_scheduled.pop(gk, None)

    def _account(self, pod: Pod) -> None:
        if pod.spec.pod_group:
            self._group_count(pod, 1)
        slot = self.table.slot_of.get(pod.node_name)
        if slot is None:
            self._orphans.setdefault(pod.node_name, {})[pod.uid] = pod
        else:
            self.table.add_pod(pod, slot)

    def _unaccount(self, pod: Pod) -> None:
        if pod.spec.pod_group:
            self._group_count(pod, -1)
        slot = self.table.slot_of.get(pod.node_name)
        if slot is not None and pod.uid in self.table.pods[slot]:
            self.table.remove_pod(pod, slot)
        else:
            self._orphans.get(pod.node_name, {}).pop(pod.uid, None)

    def update_pod(self, new: Pod) -> None:
        """Replace a pod object (labels, gates, status...). A bound pod cannot change node."""
        key = new.key
        old = self.pods.get(key)
        if old is None:
            raise NotFoundError(f"pod {key} not found")
        if old.node_name and new.node_name != old.node_name:
            raise ClusterError(f"pod {key}: spec.nodeName cannot change once bound")
        new.uid = old.uid
        new.priority = old.priority if new.spec.priority is None else new.priority
        if old.node_name:
            self._unaccount(old)
        if old.spec.pod_group:
            self._leave_group(old)
        self.pods[key] = new
        if new.spec.pod_group:
            self._join_group(new)
        if new.node_name:
            if new.start_time is None:
                new.start_time = old.start_time
            self._account(new)
        self._emit("Pod", MODIFIED, old, new)

    def delete_pod(self, namespace: str, name: str) -> Pod:
        key = f"{namespace}/{name}"
        pod = self.pods.pop(key, None)
        if pod is None:
            raise NotFoundError(f"pod {key} not found")
        if pod.node_name:
            self._unaccount(pod)
        if pod.spec.pod_group:
            self._leave_group(pod)
        self.assumed.discard(key)
        self._emit("Pod", DELETED, pod, None)
        return pod

    # scheduler cache operations (no events)
    def assume(self, pod: Pod, node_name: str) -> None:
        if pod.node_name:
            raise ClusterError(f"pod {pod.key} is already assumed or bound to {pod.node_name}")
        slot = self.table.slot_of.get(node_name)
        if slot is None:
            raise NotFoundError(f"node {node_name} not found")
        pod.node_name = node_name
        self.assumed.add(pod.key)
        self.table.add_pod(pod, slot)
        if pod.spec.pod_group:
            self._group_count(pod, 1)

    def forget(self, pod: Pod) -> None:
        if pod.key not in self.assumed:
            raise ClusterError(f"pod {pod.key} is not assumed")
        self.assumed.discard(pod.key)
        self._unaccount(pod)
        pod.node_name = ""

    def bind(self, pod: Pod, node_name: str) -> None:
        """The Binding subresource: an assumed pod becomes bound (a MODIFIED event)."""
        key = pod.key
        if self.pods.get(key) is not pod:
            raise NotFoundError(f"pod {key} not found")
        if key in self.assumed:
            if pod.node_name != node_name:
                raise ClusterError(f"pod {key} is assumed on {pod.node_name}, not {node_name}")
            self.assumed.discard(key)
        elif pod.node_name:
            raise ClusterError(f"pod {key} is already bound to {pod.node_name}")
        else:
            pod.node_name = node_name
            self._account(pod)
        pod.start_time = self._clock()
        self.bind_count += 1
        # the informer sees the unscheduled pod turn into an assigned one
        self._emit("Pod", MODIFIED, _Unbound(pod), pod)

    def pods_on_node(self, node_name: str) -> list[Pod]:
        slot = self.table.slot_of.get(node_name)
        return [] if slot is None else list(self.table.pods[slot].values())

    # ------------------------------------------------------------------ other kinds
    def add_namespace(self, ns: Namespace) -> None:
        self._put(self.namespaces, ns.name, ns, "Namespace", update=False)

    def update_namespace(self, ns: Namespace) -> None:
        self._put(self.namespaces, ns.name, ns, "Namespace", update=True)

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        ns = self.namespaces.get(namespace)
        return ns.labels if ns else {}

    def add_pod_group(self, pg: PodGroup) -> None:
        self._put(self.pod_groups, pg.key, pg, "PodGroup", update=False)

    def update_pod_group(self, pg: PodGroup) -> None:
        self._put(self.pod_groups, pg.key, pg, "PodGroup", update=True)

    def add_priority_class(self, pc: PriorityClass) -> None:
        self._put(self.priority_classes, pc.name, pc, "PriorityClass", update=False)

    def add_pdb(self, pdb: PodDisruptionBudget) -> None:
        self._put(self.pdbs, f"{pdb.namespace}/{pdb.name}", pdb, "PodDisruptionBudget",
                  update=False)

    def update_pdb(self, pdb: PodDisruptionBudget) -> None:
        self._put(self.pdbs, f"{pdb.namespace}/{pdb.name}", pdb, "PodDisruptionBudget",
                  update=True)

    def add_service(self, svc: Service) -> None:
        self._put(self.services, f"{svc.namespace}/{svc.name}", svc, "Service", update=False)

    def update_service(self, svc: Service) -> None:
        self._put(self.services, f"{svc.namespace}/{svc.name}", svc, "Service", update=True)

    # storage kinds: PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver
    def put_storage(self, obj: StorageObject, *, update: bool = False) -> None:
        """Create (or, ``update``, replace) a storage object."""
        key = obj.key if isinstance(obj, PersistentVolumeClaim) else obj.name
        self._put(self._store(obj.kind), key, obj, obj.kind, update=update)

    def add(self, obj: Node | Pod | Namespace | PriorityClass | PodDisruptionBudget | Service
            | PodGroup | StorageObject) -> None:
        """Add any object the cluster models (the ``add_*`` method of its kind)."""
        if isinstance(obj, STORAGE_TYPES):
            self.put_storage(obj)
        elif isinstance(obj, Pod):
            self.add_pod(obj)
        elif isinstance(obj, Node):
            self.add_node(obj)
        elif isinstance(obj, Namespace):
            self.add_namespace(obj)
        elif isinstance(obj, PriorityClass):
            self.add_priority_class(obj)
        elif isinstance(obj, PodDisruptionBudget):
            self.add_pdb(obj)
        elif isinstance(obj, Service):
            self.add_service(obj)
        elif isinstance(obj, PodGroup):
            self.add_pod_group(obj)
        else:
            raise ClusterError(f"the cluster does not model {type(obj).__name__} objects")

    def delete(self, kind: str, key: str) -> None:
        """Delete a Namespace, PriorityClass, PodDisruptionBudget, Service, PodGroup or storage
        object by key."""
        store = self._store(kind)
        old = store.pop(key, None)
        if old is None:
            raise NotFoundError(f"{kind} {key} not found")
        self._emit(kind, DELETED, old, None)

    def _store(self, kind: str) -> dict:
        stores = {"Namespace": self.namespaces, "PriorityClass": self.priority_classes,
                  "PodDisruptionBudget": self.pdbs, "Service": self.services,
                  "PodGroup": self.pod_groups, "PersistentVolume": self.pvs,
                  "PersistentVolumeClaim": self.pvcs, "StorageClass": self.storage_classes,
                  "CSINode": self.csi_nodes, "CSIDriver": self.csi_drivers}
        if kind not in stores:
            raise ClusterError(f"unknown kind {kind}")
        return stores[kind]

    def _put(self, store: dict, key: str, obj: object, kind: str, *, update: bool) -> None:
        old = store.get(key)
        if update and old is None:
            raise NotFoundError(f"{kind} {key} not found")
        if not update and old is not None:
            raise AlreadyExistsError(f"{kind} {key} already exists")
        store[key] = obj
        self._emit(kind, MODIFIED if update else ADDED, old, obj)

    def list_services(self, namespace: str) -> list[Service]:
        return [s for s in self.services.values() if s.namespace == namespace]

    def list_pdbs(self) -> list[PodDisruptionBudget]:
        return list(self.pdbs.values())


class _Unbound:
    """A cheap stand-in for the pod's previous (unscheduled) state in a bind event."""

    __slots__ = ("pod",)
    node_name = ""

    def __init__(self, pod: Pod) -> None:
        self.pod = pod

    def __getattr__(self, item: str) -> object:
        return getattr(self.pod, item)
