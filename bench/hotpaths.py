"""Shared setup for the hot-path benchmarks (asv ``time_`` benchmarks in ``bench/asv_bench`` and
the pytest-benchmark suite in ``bench/micro``).

Everything expensive (nodes, bound init pods, the default profile, PreFilter/PreScore state)
is built once per process and memoised, so a benchmark's ``setup`` can be called before every
timed call at almost no cost (asv_runner >= 0.3 re-runs ``setup`` between timed calls). The
objects each case times:

- :class:`FilterCase`: one default plugin's vectorised ``filter`` over every node (one slice,
  as the scheduler passes the first chunk), after that plugin's own PreFilter ran in setup.
- :class:`ScoreCase`: one default plugin's ``score`` over every node, then its ``normalize``
  (what ``Framework.run_score`` does per plugin), after its PreFilter/PreScore ran in setup.
- :class:`PodUpdateCase` / :class:`NodeAddCase`: the node table snapshot update for one pod
  (``NodeTable.add_pod`` / ``remove_pod``, index listeners included) and one node
  (``NodeTable.add_node``). ``reset_*`` put the table back in the state the next call expects.
- :class:`RequeueCase`: ``PriorityQueue.move_all_to_active_or_backoff`` for a Node/Add event
  over a pool of unschedulable pods (queueing hints of the default profile consulted per pod);
  ``reset`` rebuilds the pool.

The cluster (see :func:`build_cluster`): ``n`` default scheduler_perf nodes (4 CPU, 32Gi,
110 pods) in 3 zones; 1 % unschedulable, 10 % tainted ``dedicated=infra:NoSchedule``, 10 %
``PreferNoSchedule``; half the nodes hold the pause image and 8 % a large image. Bound pods:
an ``app=web`` pod on 6 nodes in 7, an ``app=db`` pod on every other node (host port 8080 on
every 4th node, 1.5 CPU / 4Gi on every 6th), about 1.4 pods per node.
Each plugin gets a pod that makes it do its real work (a default pod would let most plugins
return "all pass" at once): see :data:`PLUGIN_PODS`.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scheduler_core.api.manifest import parse_object
from scheduler_core.api.node import Node
from scheduler_core.api.objects import Namespace
from scheduler_core.api.pod import Pod
from scheduler_core.api.storage import CSINode
from scheduler_core.cluster.store import Cluster
from scheduler_core.framework.config import SchedulerConfig, build_frameworks
from scheduler_core.framework.interface import ActionType, ClusterEvent, Code, CycleState
from scheduler_core.framework.runtime import Framework
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.queue.clock import FakeClock
from scheduler_core.queue.scheduling_queue import PriorityQueue
from scheduler_core.scheduler import Scheduler
from workloads.ops.defaults import DEFAULT_NODE, DEFAULT_POD

__all__ = [
    "DEFAULT_NODE_COUNTS",
    "FILTER_PLUGINS",
    "FULL_ENV",
    "FULL_NODE_COUNTS",
    "PLUGIN_PODS",
    "QUEUE_SIZES",
    "SCORE_PLUGINS",
    "FilterCase",
    "HotCluster",
    "NodeAddCase",
    "PodUpdateCase",
    "RequeueCase",
    "ScoreCase",
    "build_cluster",
    "filter_case",
    "full_mode",
    "hot_cluster",
    "node_add_case",
    "node_counts",
    "pod_update_case",
    "requeue_case",
    "score_case",
]

# SCHEDPERF_ASV_FULL=1 adds the 15000-node params (and the `performance` workloads in asv)
FULL_ENV = "SCHEDPERF_ASV_FULL"
DEFAULT_NODE_COUNTS: tuple[int, ...] = (500, 5000)
FULL_NODE_COUNTS: tuple[int, ...] = (500, 5000, 15000)
QUEUE_SIZES: tuple[int, ...] = (1000, 10000)  # unschedulable pods in the pool

# The default profile's plugins with a vectorised Filter / Score. tests/bench/test_asv.py
# checks these against DEFAULT_MULTIPOINT so that a new default plugin is not forgotten.
FILTER_PLUGINS: tuple[str, ...] = (
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
    "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
    "VolumeZone", "PodTopologySpread", "InterPodAffinity",
)
SCORE_PLUGINS: tuple[str, ...] = (
    "TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread",
    "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality",
)

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
ZONES = ("zone-a", "zone-b", "zone-c")
PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1"
LARGE_IMAGE = "registry.example/analytics:2.1"
HOST_PORT = 8080
NAMESPACE = "bench"


def full_mode() -> bool:
    return os.environ.get(FULL_ENV, "") == "1"


def node_counts() -> tuple[int, ...]:
    """Node counts of the hot-path params: 15000 only in full mode."""
    return FULL_NODE_COUNTS if full_mode() else DEFAULT_NODE_COUNTS


# --------------------------------------------------------------------------- manifests
def _node_manifest(*, taint: str | None = None, unschedulable: bool = False,
                   images: tuple[tuple[str, int], ...] = ()) -> dict[str, Any]:
    m = copy.deepcopy(DEFAULT_NODE)
    m["metadata"] = {"name": "template"}
    if taint is not None:
        m["spec"]["taints"] = [{"key": "dedicated", "value": "infra", "effect": taint}]
    if unschedulable:
        m["spec"]["unschedulable"] = True
    if images:
        m["status"]["images"] = [{"names": [name], "sizeBytes": size} for name, size in images]
    return m


def _pod_manifest(app: str, **spec: Any) -> dict[str, Any]:
    m = copy.deepcopy(DEFAULT_POD)
    m["metadata"] = {"name": f"{app}-template", "namespace": NAMESPACE,
                     "labels": {"app": app}}
    m["spec"].update(spec)
    return m


def _selector(app: str) -> dict[str, Any]:
    return {"matchLabels": {"app": app}}


_PAUSE = (PAUSE_IMAGE, 700_000)
_LARGE = (LARGE_IMAGE, 800_000_000)
_WEB_POD = _pod_manifest("web")
_DB_POD = _pod_manifest("db")
_DB_POD_PORT = copy.deepcopy(_DB_POD)
_DB_POD_PORT["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": HOST_PORT}]
_DB_POD_BIG = copy.deepcopy(_DB_POD)
_DB_POD_BIG["spec"]["containers"][0]["resources"] = {
    "requests": {"cpu": "1500m", "memory": "4Gi"}, "limits": {"cpu": "1500m", "memory": "4Gi"}}

CSI_DRIVER = "ebs.csi.aws.com"
SHARED_DISK = "vol-shared"  # an inline AWS EBS disk used on every tenth node


def _claim_volume(claim: str) -> list[dict[str, Any]]:
    return [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]


def _storage_manifests() -> list[dict[str, Any]]:
    """The bench pods' claims and volumes: ``zonal`` bound to a volume with node affinity to
    two zones, ``labelled`` bound to a volume labelled with one zone, ``fresh`` bound to a CSI
    volume no placed pod uses."""
    out: list[dict[str, Any]] = []
    volumes = {
        "zonal": ({}, {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": ZONE, "operator": "In", "values": ["zone-a", "zone-b"]}]}]}}),
        "labelled": ({ZONE: "zone-a"}, None),
        "fresh": ({}, None),
    }
    for claim, (labels, affinity) in volumes.items():
        spec: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                "csi": {"driver": CSI_DRIVER, "volumeHandle": f"h-{claim}"},
                                "claimRef": {"namespace": NAMESPACE, "name": claim}}
        if affinity is not None:
            spec["nodeAffinity"] = affinity
        out.append({"apiVersion": "v1", "kind": "PersistentVolume",
                    "metadata": {"name": f"pv-{claim}", "labels": labels}, "spec": spec,
                    "status": {"phase": "Bound"}})
        out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": claim, "namespace": NAMESPACE,
                                 "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                    "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": f"pv-{claim}",
                             "resources": {"requests": {"storage": "1Gi"}}},
                    "status": {"phase": "Bound"}})
    return out


# One pod per plugin, shaped so that the plugin computes over every node.
PLUGIN_PODS: dict[str, dict[str, Any]] = {
    # a pod without tolerations for node.kubernetes.io/unschedulable (1 % of nodes are)
    "NodeUnschedulable": _pod_manifest("web"),
    # spec.nodeName set: the vector comparison runs (without it the plugin returns at once)
    "NodeName": _pod_manifest("web", nodeName="node-7"),
    # tolerates nothing: the NoSchedule nodes fail, PreferNoSchedule nodes score lower
    "TaintToleration": _pod_manifest("web"),
    "NodeAffinity": _pod_manifest("web", affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE, "operator": "In",
                                   "values": ["zone-a", "zone-b"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": ZONE, "operator": "In", "values": ["zone-a"]}]}},
            {"weight": 5, "preference": {"matchExpressions": [
                {"key": "node-class", "operator": "NotIn", "values": ["small"]}]}}]}}),
    "NodePorts": _pod_manifest("db", containers=_DB_POD_PORT["spec"]["containers"]),
    "NodeResourcesFit": _pod_manifest("web"),
    # an inline disk that every tenth node's pod also uses (conflicts there)
    "VolumeRestrictions": _pod_manifest("web", volumes=[
        {"name": "disk", "awsElasticBlockStore": {"volumeID": SHARED_DISK}}]),
    # a CSI volume new to every node: counted against each node's attach limit
    "NodeVolumeLimits": _pod_manifest("web", volumes=_claim_volume("fresh")),
    # a bound volume with node affinity to two zones
    "VolumeBinding": _pod_manifest("web", volumes=_claim_volume("zonal")),
    # a bound volume labelled with one zone
    "VolumeZone": _pod_manifest("web", volumes=_claim_volume("labelled")),
    "PodTopologySpread": _pod_manifest("web", topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": _selector("web")},
        {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": _selector("web")}]),
    "InterPodAffinity": _pod_manifest("web", affinity={
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": _selector("db"), "topologyKey": HOSTNAME}],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {"labelSelector": _selector("web"),
                                                   "topologyKey": HOSTNAME}}]},
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 20, "podAffinityTerm": {"labelSelector": _selector("web"),
                                                   "topologyKey": ZONE}}]}}),
    "NodeResourcesBalancedAllocation": _pod_manifest("web"),
    "ImageLocality": _pod_manifest("web", containers=[
        {"name": "app", "image": LARGE_IMAGE,
         "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}},
        {"name": "sidecar", "image": PAUSE_IMAGE,
         "resources": {"requests": {"cpu": "10m", "memory": "50Mi"}}}]),
}


# --------------------------------------------------------------------------- the cluster
@dataclass
class HotCluster:
    """A populated cluster with the default profile (no pending pods)."""

    n_nodes: int
    cluster: Cluster
    scheduler: Scheduler
    framework: Framework
    cases: dict[tuple[str, ...], Any] = field(default_factory=dict)

    @property
    def table(self) -> NodeTable:
        return self.cluster.table

    def plugin(self, name: str) -> Any:
        for p in self.framework.all_plugins():
            if p.name == name:
                return p
        raise KeyError(f"plugin {name!r} is not in the default profile")

    def pod(self, plugin: str, name: str = "bench-pod") -> Pod:
        return Pod.from_manifest(PLUGIN_PODS[plugin]).clone(name, NAMESPACE)


def _node_templates() -> list[Node]:
    """Per node index modulo 100: which template (1 unschedulable, 10 NoSchedule, 10
    PreferNoSchedule, the rest plain); images vary by parity and index."""
    return [Node.from_manifest(_node_manifest(unschedulable=True, images=(_PAUSE,))),
            Node.from_manifest(_node_manifest(taint="NoSchedule", images=(_PAUSE,))),
            Node.from_manifest(_node_manifest(taint="PreferNoSchedule")),
            Node.from_manifest(_node_manifest(images=(_PAUSE, _LARGE))),
            Node.from_manifest(_node_manifest(images=(_PAUSE,))),
            Node.from_manifest(_node_manifest())]


def make_nodes(n_nodes: int) -> list[Node]:
    unsched, no_sched, prefer, large, pause, plain = _node_templates()
    out = []
    for i in range(n_nodes):
        k = i % 100
        if k == 0:
            base = unsched
        elif k <= 10:
            base = no_sched
        elif k <= 20:
            base = prefer
        elif k % 10 == 5:
            base = large
        elif i % 2:
            base = pause
        else:
            base = plain
        name = f"node-{i}"
        labels = {HOSTNAME: name, ZONE: ZONES[i % len(ZONES)],
                  "node-class": "small" if i % 4 == 0 else "large"}
        out.append(base.with_name(name, labels=labels))
    return out


def build_cluster(n_nodes: int, *, seed: int = 0) -> HotCluster:
    """``n_nodes`` nodes, their bound pods (module docstring) and the default profile. The
    PreFilter of each plugin pod has run once, so the incremental pod indexes exist (as in
    steady state)."""
    clock = FakeClock()
    cluster = Cluster(capacity=2 * n_nodes + 16, clock=clock.now)
    cluster.add_namespace(Namespace(NAMESPACE))
    nodes = make_nodes(n_nodes)
    cluster.add_nodes(nodes)
    for node in nodes:  # every node attaches up to 39 volumes of the CSI driver
        cluster.put_storage(CSINode.from_manifest({
            "apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": node.name}, "spec": {"drivers": [
                {"name": CSI_DRIVER, "nodeID": node.name, "allocatable": {"count": 39}}]}}))
    for m in _storage_manifests():
        cluster.add(parse_object(m))
    sched = Scheduler(cluster, lambda h: build_frameworks(SchedulerConfig(), h), clock=clock,
                      seed=seed)
    web, db, db_port, db_big = (Pod.from_manifest(m)
                                for m in (_WEB_POD, _DB_POD, _DB_POD_PORT, _DB_POD_BIG))
    disk = Pod.from_manifest(PLUGIN_PODS["VolumeRestrictions"])
    for i in range(n_nodes):
        placed = []
        if i % 7 != 3:
            placed.append((f"web-{i}", web))
        if i % 2 == 0:
            placed.append((f"db-{i}", db_port if i % 4 == 0 else db_big if i % 3 == 0 else db))
        if i % 10 == 9:
            placed.append((f"disk-{i}", disk))
        for name, template in placed:
            pod = template.clone(name, NAMESPACE)
            pod.node_name = f"node-{i}"
            cluster.add_pod(pod)
    fwk = sched.profiles["default-scheduler"]
    hc = HotCluster(n_nodes, cluster, sched, fwk)
    for plugin in PLUGIN_PODS:
        fwk.run_pre_filter(CycleState(), hc.pod(plugin, "warm-up"), cluster.table)
    return hc


_CACHE: dict[int, HotCluster] = {}


def hot_cluster(n_nodes: int) -> HotCluster:
    """:func:`build_cluster`, memoised for the last node count asked for (one at a time: a
    15000-node cluster is a few hundred MB)."""
    hc = _CACHE.get(n_nodes)
    if hc is None:
        _CACHE.clear()
        hc = _CACHE[n_nodes] = build_cluster(n_nodes)
    return hc


def _cached(hc: HotCluster, key: tuple[str, ...], make: Any) -> Any:
    case = hc.cases.get(key)
    if case is None:
        case = hc.cases[key] = make()
    return case


# --------------------------------------------------------------------------- filter / score
class _PluginCase:
    def __init__(self, hc: HotCluster, plugin: str) -> None:
        self.hc = hc
        self.table = hc.table
        self.plugin = hc.plugin(plugin)
        self.pod = hc.pod(plugin)
        self.state = CycleState()
        pre_filter = getattr(self.plugin, "pre_filter", None)
        if pre_filter is not None:
            _, status = pre_filter(self.state, self.pod, self.table)
            if status is not None and status.code != Code.SUCCESS:
                raise RuntimeError(f"{plugin} PreFilter returned {status!r} for its bench pod")


class FilterCase(_PluginCase):
    """``plugin.filter`` over all nodes (``slice(0, high)``, as the scheduler's first chunk)."""

    def __init__(self, hc: HotCluster, plugin: str) -> None:
        super().__init__(hc, plugin)
        self.idx = slice(0, self.table.high)

    def run(self) -> np.ndarray | None:
        return self.plugin.filter(self.state, self.pod, self.table, self.idx)


class ScoreCase(_PluginCase):
    """``plugin.score`` then ``normalize`` over all nodes (an int64 slot array, as the
    scheduler passes the feasible nodes)."""

    def __init__(self, hc: HotCluster, plugin: str) -> None:
        super().__init__(hc, plugin)
        self.idx = np.ascontiguousarray(self.table.order(), dtype=np.int64)
        pre_score = getattr(self.plugin, "pre_score", None)
        if pre_score is not None:
            status = pre_score(self.state, self.pod, self.table, self.idx)
            if status is not None and status.code != Code.SUCCESS:
                raise RuntimeError(f"{plugin} PreScore returned {status!r} for its bench pod")
        self.normalize = getattr(self.plugin, "normalize", None)

    def run(self) -> np.ndarray:
        scores = self.plugin.score(self.state, self.pod, self.table, self.idx)
        if self.normalize is not None:
            scores = self.normalize(self.state, self.pod, scores)
        return scores


def filter_case(plugin: str, n_nodes: int) -> FilterCase:
    hc = hot_cluster(n_nodes)
    return _cached(hc, ("filter", plugin), lambda: FilterCase(hc, plugin))


def score_case(plugin: str, n_nodes: int) -> ScoreCase:
    hc = hot_cluster(n_nodes)
    return _cached(hc, ("score", plugin), lambda: ScoreCase(hc, plugin))


# --------------------------------------------------------------------------- snapshot update
class PodUpdateCase:
    """Account / unaccount one ``app=web`` pod with a spread constraint and anti-affinity on a
    node in the middle of the table (the index listeners of the table run too)."""

    def __init__(self, hc: HotCluster) -> None:
        self.table = hc.table
        self.slot = self.table.slot_of[f"node-{hc.n_nodes // 2 + 1}"]
        pod = Pod.from_manifest(PLUGIN_PODS["InterPodAffinity"]).clone("bench-update", NAMESPACE)
        pod.node_name = self.table.node(self.slot).name
        self.pod = pod

    def present(self) -> bool:
        return self.pod.uid in self.table.pods[self.slot]

    def reset_absent(self) -> None:
        if self.present():
            self.table.remove_pod(self.pod, self.slot)

    def reset_present(self) -> None:
        if not self.present():
            self.table.add_pod(self.pod, self.slot)

    def add(self) -> None:
        self.table.add_pod(self.pod, self.slot)

    def remove(self) -> None:
        self.table.remove_pod(self.pod, self.slot)


class NodeAddCase:
    """Add one node (labels, image, taint-free) to the table; ``reset_absent`` removes it again
    (its slot is reused by the next add, so the table does not grow)."""

    def __init__(self, hc: HotCluster) -> None:
        self.table = hc.table
        template = Node.from_manifest(_node_manifest(images=(_PAUSE,)))
        name = "bench-added-node"
        self.node = template.with_name(name, labels={HOSTNAME: name, ZONE: ZONES[0],
                                                      "node-class": "large"})

    def reset_absent(self) -> None:
        if self.node.name in self.table.slot_of:
            self.table.remove_node(self.node.name)

    def add(self) -> int:
        return self.table.add_node(self.node)


def pod_update_case(n_nodes: int) -> PodUpdateCase:
    hc = hot_cluster(n_nodes)
    return _cached(hc, ("pod-update",), lambda: PodUpdateCase(hc))


def node_add_case(n_nodes: int) -> NodeAddCase:
    hc = hot_cluster(n_nodes)
    return _cached(hc, ("node-add",), lambda: NodeAddCase(hc))


# --------------------------------------------------------------------------- queue requeue
class RequeueCase:
    """A queue whose unschedulable pool holds ``n_pods`` pods: 4 in 5 rejected by
    NodeResourcesFit (the Node/Add hint says Queue: they move), 1 in 5 by NodeAffinity with a
    required zone the new node is not in (the hint says QueueSkip: they stay)."""

    def __init__(self, n_pods: int) -> None:
        self.n_pods = n_pods
        self.clock = FakeClock()
        # the default profile's queueing hints and queue sort (an empty cluster is enough)
        sched = Scheduler(Cluster(clock=self.clock.now),
                          lambda h: build_frameworks(SchedulerConfig(), h), clock=self.clock)
        fwk = sched.profiles["default-scheduler"]
        self.hints = fwk.events_to_register()
        self.sort_key = fwk.queue_sort.sort_key
        fit = Pod.from_manifest(_WEB_POD)
        affinity = Pod.from_manifest(_pod_manifest("web", affinity={"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": ZONE, "operator": "In",
                                       "values": ["zone-b"]}]}]}}}))
        self.pods: list[tuple[Pod, str]] = []
        for i in range(n_pods):
            if i % 5 == 4:
                self.pods.append((affinity.clone(f"pending-{i}", NAMESPACE), "NodeAffinity"))
            else:
                self.pods.append((fit.clone(f"pending-{i}", NAMESPACE), "NodeResourcesFit"))
        self.node = Node.from_manifest(_node_manifest()).with_name(
            "new-node", labels={HOSTNAME: "new-node", ZONE: "zone-a"})
        self.event = ClusterEvent("Node", ActionType.ADD)
        self.queue = self._fill()

    def _fill(self) -> PriorityQueue:
        q = PriorityQueue(clock=self.clock, hints=self.hints, sort_key=self.sort_key)
        for pod, _ in self.pods:
            q.add(pod)
        rejector = dict((pod.uid, plugin) for pod, plugin in self.pods)
        while (qpi := q.pop()) is not None:
            qpi.unschedulable_plugins.add(rejector[qpi.pod.uid])
            q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
        return q

    def reset(self) -> None:
        """Every pod back in the unschedulable pool (a fresh queue)."""
        if self.queue.unschedulable_count() != self.n_pods:
            self.queue = self._fill()

    def run(self) -> int:
        return self.queue.move_all_to_active_or_backoff(self.event, None, self.node)


_REQUEUE: dict[int, RequeueCase] = {}


def requeue_case(n_pods: int) -> RequeueCase:
    case = _REQUEUE.get(n_pods)
    if case is None:
        _REQUEUE.clear()
        case = _REQUEUE[n_pods] = RequeueCase(n_pods)
    return case
