"""Upstream scheduler_perf case shapes built in code (no YAML runner): nodes with round-robin
labels, init pods, measured pods. The measured window covers creating the measured pods and
scheduling every one of them (events, preemption and bind included)."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

from bench.demo import make_nodes
from scheduler_core.api.objects import Namespace
from scheduler_core.api.pod import Pod
from scheduler_core.cluster.store import Cluster
from scheduler_core.framework.config import SchedulerConfig, build_frameworks
from scheduler_core.queue.clock import FakeClock
from scheduler_core.scheduler import Scheduler
from workloads.collectors.recorder import CollectingRecorder
from workloads.ops.defaults import DEFAULT_POD

__all__ = ["SHAPES", "Shape", "ShapeResult", "run_shape"]

ZONE = "topology.kubernetes.io/zone"


def _pod(cpu: str = "100m", *, labels: dict[str, str] | None = None,
         **spec: Any) -> dict[str, Any]:
    m = copy.deepcopy(DEFAULT_POD)
    m["metadata"]["labels"] = dict(labels or {})
    res = m["spec"]["containers"][0]["resources"]
    res["requests"]["cpu"] = res["limits"]["cpu"] = cpu
    m["spec"].update(spec)
    return m


def _term(color: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key,
            "namespaces": ["sched-1", "sched-0"]}


SPREAD_POD = _pod(labels={"color": "blue"}, topologySpreadConstraints=[{
    "maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"color": "blue"}}}])
ANTI_AFFINITY_POD = _pod(labels={"color": "green"}, affinity={"podAntiAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": [_term("green", "kubernetes.io/hostname")]}})
AFFINITY_POD = _pod(labels={"color": "blue"}, affinity={"podAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": [_term("blue", ZONE)]}})
LOW_PRIORITY_POD = _pod("900m", terminationGracePeriodSeconds=0)
HIGH_PRIORITY_POD = _pod("3000m", priority=10)


@dataclass(frozen=True)
class Shape:
    name: str
    nodes: int
    init_pods: int
    measured_pods: int
    init_template: dict[str, Any]
    measured_template: dict[str, Any]
    zones: tuple[str, ...] = ()
    init_namespace: str = "sched-0"
    measured_namespace: str = "sched-1"
    target: float = 0.0  # pods/s, from the issue
    extra: dict[str, Any] = field(default_factory=dict)


SHAPES: dict[str, Shape] = {
    "TopologySpreading": Shape("TopologySpreading", 5000, 5000, 5000, DEFAULT_POD, SPREAD_POD,
                               zones=("moon-1", "moon-2", "moon-3"), target=920),
    "SchedulingPodAntiAffinity": Shape("SchedulingPodAntiAffinity", 5000, 1000, 2000,
                                       ANTI_AFFINITY_POD, ANTI_AFFINITY_POD, target=1000),
    "SchedulingPodAffinity": Shape("SchedulingPodAffinity", 5000, 5000, 5000, AFFINITY_POD,
                                   AFFINITY_POD, zones=("zone1",), target=1000),
    "PreemptionBasic": Shape("PreemptionBasic", 1000, 4000, 1000, LOW_PRIORITY_POD,
                             HIGH_PRIORITY_POD, target=200),
}


@dataclass(frozen=True)
class ShapeResult:
    shape: str
    scheduled: int
    measured: int
    seconds: float
    cpu_seconds: float
    attempts: int

    @property
    def pods_per_second(self) -> float:
        return self.scheduled / self.seconds if self.seconds > 0 else float("inf")


def run_shape(shape: Shape, *, scale: float = 1.0, seed: int = 0) -> ShapeResult:
    """Run one shape; ``scale`` shrinks every count (for smoke tests)."""
    n_nodes = max(1, int(shape.nodes * scale))
    n_init = int(shape.init_pods * scale)
    n_measured = max(1, int(shape.measured_pods * scale))
    clock = FakeClock()
    cluster = Cluster(capacity=n_nodes, clock=clock.now)
    nodes = make_nodes(n_nodes)
    if shape.zones:
        for i, node in enumerate(nodes):
            node.labels[ZONE] = shape.zones[i % len(shape.zones)]
    cluster.add_nodes(nodes)
    for ns in ("sched-0", "sched-1"):
        cluster.add_namespace(Namespace(ns))
    sched = Scheduler(cluster, lambda h: build_frameworks(SchedulerConfig(), h), clock=clock,
                      seed=seed, recorder=CollectingRecorder())
    init = Pod.from_manifest(shape.init_template)
    for i in range(n_init):
        cluster.add_pod(init.clone(f"init-{i}", shape.init_namespace))
    sched.run_until_idle()
    before = sum(1 for p in cluster.pods.values()
                 if p.namespace == shape.measured_namespace and p.node_name)
    attempts = sched.attempts_total
    measured = Pod.from_manifest(shape.measured_template)
    start, cpu_start = time.perf_counter(), time.process_time()
    for i in range(n_measured):
        cluster.add_pod(measured.clone(f"measured-{i}", shape.measured_namespace))
    sched.run_until_idle()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    scheduled = sum(1 for p in cluster.pods.values()
                    if p.namespace == shape.measured_namespace and p.node_name) - before
    return ShapeResult(shape.name, scheduled, n_measured, seconds, cpu,
                       sched.attempts_total - attempts)
