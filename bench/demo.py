"""The SchedulingBasic shape built in code: N default nodes, init pods, measured pods.

This is the core's own throughput benchmark (no YAML runner involved): the measured window
covers creating the measured pods and scheduling every one of them, events and bind included.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.cluster.store import Cluster
from scheduler_core.framework.config import SchedulerConfig, build_frameworks
from scheduler_core.queue.clock import FakeClock
from scheduler_core.scheduler import Scheduler
from workloads.collectors.recorder import CollectingRecorder
from workloads.ops.defaults import DEFAULT_NODE, DEFAULT_POD

__all__ = ["BasicResult", "run_scheduling_basic"]


@dataclass(frozen=True)
class BasicResult:
    nodes: int
    init_pods: int
    measured_pods: int
    scheduled: int
    seconds: float
    attempts: int
    cpu_seconds: float = 0.0  # process CPU time over the measured window

    @property
    def pods_per_second(self) -> float:
        return self.scheduled / self.seconds if self.seconds > 0 else float("inf")


def make_nodes(count: int) -> list[Node]:
    base = Node.from_manifest(DEFAULT_NODE)
    return [base.with_name(f"scheduler-perf-{i}",
                           labels={"kubernetes.io/hostname": f"scheduler-perf-{i}"})
            for i in range(count)]


def run_scheduling_basic(
    nodes: int = 5000,
    init_pods: int = 1000,
    measured_pods: int = 10000,
    *,
    seed: int = 0,
    metrics: bool = True,
    progress: Callable[[int], None] | None = None,
) -> BasicResult:
    clock = FakeClock()
    cluster = Cluster(capacity=nodes, clock=clock.now)
    cluster.add_nodes(make_nodes(nodes))
    recorder = CollectingRecorder() if metrics else None
    sched = Scheduler(cluster, lambda h: build_frameworks(SchedulerConfig(), h), clock=clock,
                      seed=seed, recorder=recorder)
    template = Pod.from_manifest(DEFAULT_POD)
    for i in range(init_pods):
        cluster.add_pod(template.clone(f"init-pod-{i}", "namespace-1"))
    sched.run_until_idle()
    bound_before = cluster.bind_count
    attempts_before = sched.attempts_total
    start = time.perf_counter()
    cpu_start = time.process_time()
    step = max(1, measured_pods // 100)
    for i in range(measured_pods):
        cluster.add_pod(template.clone(f"pod-{i}", "namespace-2"))
    done = 0
    while sched.schedule_one():
        done += 1
        if progress is not None and done % step == 0:
            progress(done)
    sched.run_until_idle()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    return BasicResult(nodes, init_pods, measured_pods, cluster.bind_count - bound_before,
                       elapsed, sched.attempts_total - attempts_before, cpu)
