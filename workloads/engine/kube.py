"""Run one workload on the real kube-scheduler loop (the reference process's engine mode,
docs/reference-scheduler.md "Engine mode"): the same ops, the same collectors' DataItems, on
the wall clock.

The ops create objects through the Go process's fake clientset (``engine.create``); its
scheduler runs on its own goroutines meanwhile. Waits (createPods, barrier) are
``engine.wait``; a collection window reads the Go process's clock and CPU time when it opens
and closes (``engine.stats``) and, when it closes, when each pod of its namespaces was created
and bound: SchedulingThroughput is then sampled from those bind times with the same
:class:`~workloads.collectors.throughput.ThroughputCollector` rules as scheduler_core's runs,
``scheduler_pod_scheduling_duration_seconds`` is bind time minus creation time, and CPU per pod
is the Go process's CPU time over the window (the scheduler, its informers, the fake
clientset and decoding the objects sent; not this Python process) per pod bound in it.

deletePods and churn run on the Go side (``engine.deletePods``, ``engine.churn``: goroutines on
the engine's clock, in the background until the workload ends when upstream's are);
updateAny with ``updatePerSecond`` is paced here on the wall clock; barriers are
``engine.barrier`` over the scheduler's pod informer (labelSelector, Scheduled / Attempted),
waiting for upstream's ``numPodsScheduledPerNamespace``. Errors of background ops fail the
workload when it ends, as upstream's ``tCtx.Errorf`` does.

Ops the engine cannot run yet make the workload ``unsupported`` with the op and the reason,
before the Go process starts. Thresholds are not applied to this engine (its results carry
no threshold judgement).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workloads.collectors.histograms import histogram_summary
from workloads.collectors.throughput import ThroughputCollector
from workloads.config import ConfigFileError, Op, TestCase, Workload, resolve
from workloads.config.ops import (
    Barrier,
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    DeletePods,
    Sleep,
    StartCollectingMetrics,
    StopCollectingMetrics,
    UpdateAny,
)
from workloads.config.ops_groups import CreatePodGroups
from workloads.engine.manifests import AnyManifests, NameGenerator, NodeManifests, PodManifests
from workloads.engine.manifests import namespace_manifest as ns_manifest
from workloads.ops.create import prepare_create_namespaces
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.ops.manifests import CLUSTER_SCOPED
from workloads.reference import ReferenceClient, ReferenceRequestError, ReferenceSchedulerError
from workloads.reference.build import DEFAULT_RELEASE, V1_37, Release
from workloads.result import (
    ENGINE_KUBE,
    STATUS_FAILED,
    STATUS_OK,
    STATUS_TIMEOUT,
    STATUS_UNSUPPORTED,
    DataItem,
    Placement,
    WorkloadResult,
)
from workloads.runner.metrics import THROUGHPUT_METRIC, fill_labels, throughput_buckets

__all__ = ["BATCH", "KubeEngineOptions", "run_kube_workload", "unsupported_op"]

BATCH = 500  # objects per engine.create request: the scheduler starts on the first ones
WAIT_LIMIT = 600.0  # seconds a wait may take without a --timeout (upstream's 10 minutes)
_POD_METRIC = "scheduler_pod_scheduling_duration_seconds"


@dataclass(frozen=True)
class KubeEngineOptions:
    """How to run the kube-scheduler engine: the reference binary, the Go process's
    GOMAXPROCS, the wall-time limit and the throughput sampling interval."""

    binary: Any  # workloads.reference.ReferenceBinary
    gomaxprocs: int
    timeout: float | None = None
    sample_interval: float = 0.1
    progress: Callable[[str, int], None] | None = None  # (opcode, pods bound)


class _Timeout(Exception):
    pass


UPDATE_SUBRESOURCES = ("resize", "status")  # what engine.update applies


def unsupported_op(op: Op, release: Release = DEFAULT_RELEASE) -> str | None:
    """Why the kube-scheduler engine cannot run ``op`` yet on the build of ``release`` (None:
    it can). createPodSets never reaches it: :func:`~workloads.config.resolve` unrolls it into
    createPods ops."""
    if isinstance(op, CreatePodGroups):
        if release != V1_37:
            return (f"createPodGroups needs the reference built at Kubernetes {V1_37.kubernetes} "
                    f"(PodGroup scheduling.k8s.io/v1beta1), not {release.kubernetes}")
        return None
    if isinstance(op, CreatePods):
        if op.steady_state:
            return "createPods with steadyState is not supported by the kube-scheduler engine yet"
        return None
    if isinstance(op, UpdateAny):
        other = [s for s in op.subresources if s not in UPDATE_SUBRESOURCES]
        if other:
            return (f"updateAny with subresources {', '.join(other)} is not supported by the "
                    "kube-scheduler engine (only resize, status)")
        return None
    if isinstance(op, (Barrier, Churn, CreateAny, CreateNodes, CreateNamespaces, DeletePods,
                       Sleep, StartCollectingMetrics, StopCollectingMetrics)):
        return None
    return f"op {op.opcode} is not supported by the kube-scheduler engine yet"


@dataclass
class _Window:
    name: str
    namespaces: tuple[str, ...]
    t0: float
    cpu0: float
    wall0: float
    selector: Mapping[str, str] = field(default_factory=dict)


@dataclass
class _KubeRun:
    tc: TestCase
    w: Workload
    client: ReferenceClient
    opts: KubeEngineOptions
    deadline: float
    names: NameGenerator = field(default_factory=NameGenerator)
    created: dict[str, int] = field(default_factory=dict)  # namespace -> pods created
    namespaces: set[str] = field(default_factory=set)
    # upstream's numPodsScheduledPerNamespace: namespace -> pods the next barrier waits for
    expected: dict[str, int] = field(default_factory=dict)
    pod_namespaces: dict[str, None] = field(default_factory=dict)  # for the placements
    tasks: list[tuple[int, int]] = field(default_factory=list)  # (op index, engine task id)
    # (namespace, name) -> labels of the pods created, for windows with a labelSelector
    pod_labels: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    window: _Window | None = None
    items: list[DataItem] = field(default_factory=list)
    measured_seconds: float = 0.0
    cpu_seconds: float = 0.0

    def left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _Timeout
        return left

    def waiting(self, op: str, args: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """Send an engine op that waits, with the seconds it may wait: upstream's 10 minutes
        (WAIT_LIMIT), or, with a wall-time limit asked for (--timeout-per-workload), whatever
        is left of that. The reply and that limit; a reply that timed out at the workload's
        deadline is the workload's timeout."""
        limit = self.left()
        if self.opts is None or self.opts.timeout is None:
            limit = min(limit, WAIT_LIMIT)
        self.client.timeout = limit + 60
        reply = self.client.request(op, args={**args, "timeoutSeconds": limit})
        if reply["timedOut"] and time.monotonic() >= self.deadline:
            raise _Timeout
        return reply, limit

    def stats(self, namespaces: tuple[str, ...] = ()) -> dict[str, Any]:
        return self.client.request("engine.stats", args={"namespaces": list(namespaces)})

    def create(self, objects: list[dict[str, Any]]) -> None:
        for i in range(0, len(objects), BATCH):
            self.left()
            self.client.request("engine.create", args={"objects": objects[i:i + BATCH]})

    def ensure_namespace(self, name: str, labels: Mapping[str, str] | None = None) -> None:
        if name in self.namespaces or name in ("default", "kube-system", "kube-public",
                                               "kube-node-lease"):
            return
        self.create([ns_manifest(name, dict(labels or {}))])
        self.namespaces.add(name)

    def register(self, name: str, labels: Mapping[str, str] | None = None) -> None:
        """Upstream createNamespaceIfNotPresent: the namespace exists and barriers know it."""
        self.ensure_namespace(name, labels)
        self.expected.setdefault(name, 0)

    def barrier(self, namespaces: Mapping[str, int], selector: Mapping[str, str],
                stage: str) -> None:
        reply, limit = self.waiting("engine.barrier", {
            "namespaces": dict(namespaces), "labelSelector": dict(selector), "stage": stage})
        if reply["timedOut"]:
            which = (f"at least pod {reply['namespace']}/{reply['pod']} is not "
                     f"{stage.lower()}: " if reply["pod"] else "")
            raise WorkloadError(
                f'error waiting for pods in namespace "{reply["namespace"]}": {which}want '
                f"{reply['want']} pods {stage.lower()}, got {reply['got']} after {limit:g} s")

    def wait_task(self, task: int, what: str) -> dict[str, Any]:
        reply, limit = self.waiting("engine.task", {"id": task})
        if reply["timedOut"]:
            raise WorkloadError(f"{what}: not done after {limit:g} s")
        return reply

    def task_errors(self) -> list[str]:
        """What the background ops could not do (upstream's tCtx.Errorf), by op."""
        out: list[str] = []
        for index, task in self.tasks:
            reply = self.client.request("engine.task", args={"id": task,
                                                             "timeoutSeconds": 1e-3})
            out.extend(f"op {index}: {e}" for e in reply["errors"])
        return out

    def wait(self, namespace: str, want: int) -> None:
        reply, limit = self.waiting("engine.wait", {"namespace": namespace, "count": want})
        if reply["timedOut"]:
            queue = f"; the queue: {reply['queue']}" if reply.get("queue") else ""
            raise WorkloadError(
                f"error in waiting for pods to get scheduled: namespace {namespace}: want "
                f"{want} pods scheduled, got {reply['bound']} after {limit:g} s "
                f"({reply['pending']} pods pending in the scheduling queue{queue})")

    def open_window(self, name: str, namespaces: tuple[str, ...],
                    selector: Mapping[str, str] | None = None) -> None:
        if self.window is not None:
            raise WorkloadError("metrics collection is overlapping. Probably second collector "
                                "was started before stopping a previous one")
        s = self.stats()
        self.window = _Window(f"{self.tc.name}/{self.w.name}/{name}", namespaces,
                              s["seconds"], s["cpuSeconds"], time.perf_counter(),
                              dict(selector or {}))

    def close_window(self) -> None:
        win = self.window
        if win is None:
            raise WorkloadError("stopCollectingMetrics: no metrics collection is open")
        self.window = None
        s = self.stats(win.namespaces)
        seconds, cpu = s["seconds"] - win.t0, s["cpuSeconds"] - win.cpu0
        self.measured_seconds += seconds
        self.cpu_seconds += cpu
        pods = s["pods"]
        if win.selector:  # upstream's labelSelector: the pods whose labels match it
            sel = win.selector.items()
            pods = [p for p in pods if all(
                self.pod_labels.get((p["namespace"], p["name"]), {}).get(k) == v
                for k, v in sel)]
        self.items.extend(window_items(win.name, pods, win.t0, s["seconds"], cpu,
                                       self.opts.sample_interval))


def window_items(name: str, pods: list[dict[str, Any]], t0: float, t1: float, cpu: float,
                 interval: float) -> list[DataItem]:
    """The DataItems of one window from the engine's pod records (seconds on its clock)."""
    binds = sorted(p["bound"] for p in pods if p["bound"] is not None and t0 <= p["bound"] <= t1)
    created = sum(1 for p in pods if t0 <= p["created"] <= t1)
    latencies = [p["bound"] - p["created"] for p in pods
                 if p["bound"] is not None and t0 <= p["bound"] <= t1]
    out: list[DataItem] = []
    if binds:
        out.append(DataItem(throughput(binds, t0, t1, interval), "pods/s",
                            {"Name": name, "Metric": THROUGHPUT_METRIC}))
        data = {k: float(v) for k, v in histogram_summary(_POD_METRIC, latencies).items()}
        out.append(DataItem(data, "ms", {"Name": name, "Metric": _POD_METRIC}))
    out.append(DataItem({"Duration": t1 - t0}, "s",
                        {"Name": name, "Metric": "SchedulingDuration"}))
    out.append(DataItem({"Scheduled": float(len(binds)), "Created": float(created)}, "pods",
                        {"Name": name, "Metric": "schedperf_pods"}))
    cpu_data = {"Total": cpu}
    if binds:
        cpu_data["PerScheduledPodMs"] = cpu / len(binds) * 1000
    out.append(DataItem(cpu_data, "s", {"Name": name, "Metric": "schedperf_cpu_seconds"}))
    out.append(DataItem({"Total": t1 - t0}, "s",
                        {"Name": name, "Metric": "schedperf_wall_seconds"}))
    return out


def throughput(binds: list[float], t0: float, t1: float, interval: float) -> dict[str, float]:
    """SchedulingThroughput buckets from sorted bind times in [t0, t1]: the throughput
    collector's samples taken every ``interval`` on the engine's clock (as scheduler_core's
    windows sample theirs); fewer than MIN_SAMPLES samples: the window's rate."""
    clock = [t0]
    collector = ThroughputCollector(scheduled=lambda: bisect.bisect_right(binds, clock[0]),
                                    now=lambda: clock[0], interval=interval)
    collector.start()
    k = 1
    while t0 + k * interval <= t1:
        clock[0] = t0 + k * interval + 1e-9  # never just before the collector's next sample
        collector.tick()
        k += 1
    clock[0] = t1
    sampled = collector.stop()
    return throughput_buckets(sampled, len(collector.samples), len(binds), t1 - t0)


# --------------------------------------------------------------------------- the ops


def _prepare(run: _KubeRun, ops: list[Op]) -> dict[int, Any]:
    """Per op index: its manifests factory (or namespace labels); UnsupportedWorkload or
    WorkloadError naming the op."""
    prepared: dict[int, Any] = {}
    for i, op in enumerate(ops):
        where = f"op {i} {op.opcode}" + (f" ({op.yaml_path})" if op.yaml_path else "")
        try:
            reason = unsupported_op(op, run.opts.binary.release)
            if reason:
                raise UnsupportedWorkload(reason)
            if isinstance(op, CreateNodes):
                prepared[i] = NodeManifests(op, i, run.names)
            elif isinstance(op, CreatePods):
                prepared[i] = PodManifests(op, run.names)
            elif isinstance(op, CreateNamespaces):
                prepared[i] = prepare_create_namespaces(None, i, op)  # type: ignore[arg-type]
            elif isinstance(op, CreatePodGroups):
                assert op.template_path is not None
                prepared[i] = AnyManifests(op.template_path, op.template_params, op.namespace,
                                           op.count, kinds=("PodGroup",))
            elif isinstance(op, (CreateAny, UpdateAny)):
                assert op.template_path is not None
                params = op.template_params if isinstance(op, CreateAny) else None
                prepared[i] = AnyManifests(op.template_path, params, op.namespace,
                                           op.count or 1)
            elif isinstance(op, Churn):
                assert op.namespace is not None
                prepared[i] = [AnyManifests(path, None, op.namespace, 1)
                               for path in op.template_paths]
                for t in prepared[i]:
                    if t.kind in CLUSTER_SCOPED:  # upstream: the namespace for namespaced kinds
                        t.namespace = ""
        except UnsupportedWorkload as exc:
            raise UnsupportedWorkload(f"{where}: {exc}") from None
        except WorkloadError as exc:
            raise WorkloadError(f"{where}: {exc}") from None
    return prepared


def _run_op(run: _KubeRun, index: int, op: Op, prepared: Any) -> None:
    if isinstance(op, CreateNodes):
        nodes = [prepared.make(i, op.count) for i in range(op.count)]
        run.create(nodes)
        csi_nodes = [m for m in map(prepared.csi_node, nodes) if m is not None]
        if csi_nodes:  # upstream: PrepareDependentObjects, after the nodes
            run.create(csi_nodes)
    elif isinstance(op, CreateNamespaces):
        for i in range(op.count):
            run.register(f"{op.prefix}-{i}", prepared)
    elif isinstance(op, CreatePods):
        _create_pods(run, op, prepared)
    elif isinstance(op, Barrier):
        _barrier(run, op)
    elif isinstance(op, CreateAny):
        _create_any(run, op, prepared)
    elif isinstance(op, CreatePodGroups):
        _create_pod_groups(run, op, prepared)
    elif isinstance(op, UpdateAny):
        _update_any(run, op, prepared)
    elif isinstance(op, DeletePods):
        _delete_pods(run, index, op)
    elif isinstance(op, Churn):
        _churn(run, index, op, prepared)
    elif isinstance(op, Sleep):
        time.sleep(min(op.duration, run.left()))
    elif isinstance(op, StartCollectingMetrics):
        run.open_window(op.name, op.namespaces, op.label_selector)
    elif isinstance(op, StopCollectingMetrics):
        run.close_window()


def _create_pods(run: _KubeRun, op: CreatePods, factory: PodManifests) -> None:
    ns = factory.namespace
    run.register(ns)
    run.created.setdefault(ns, 0)
    run.pod_namespaces[ns] = None
    if op.collect_metrics:
        run.open_window(ns, (ns,))
    for start in range(0, op.count, BATCH):
        end = min(op.count, start + BATCH)
        storage = [m for i in range(start, end) for m in factory.storage(i)]
        if storage:  # each pod's volume and claim exist before it
            run.create(storage)
        batch = [factory.make(i, op.count) for i in range(start, end)]
        for m in batch:
            meta = m["metadata"]
            run.pod_labels[(ns, meta["name"])] = meta["labels"]
        run.create(batch)
        run.created[ns] += len(batch)
    if op.skip_wait_to_completion:
        run.expected[ns] += op.count
    else:
        run.wait(ns, run.created[ns])
    if op.collect_metrics:
        run.close_window()


def _barrier(run: _KubeRun, op: Barrier) -> None:
    """Upstream's barrier: every known namespace (or those named) has the pods created there
    with skipWaitToCompletion since the last Scheduled barrier scheduled (or attempted), among
    the pods matching the labelSelector."""
    for ns in op.namespaces:
        if ns not in run.expected:
            raise WorkloadError(f"unknown namespace {ns}")
    names = op.namespaces or tuple(run.expected)
    run.barrier({ns: run.expected[ns] for ns in names}, op.label_selector,
                op.stage_requirement or "Scheduled")
    if op.stage_requirement != "Attempted":
        for ns in names:
            del run.expected[ns]


def _any_objects(run: _KubeRun, op: CreateAny | UpdateAny, factory: AnyManifests,
                 ) -> list[dict[str, Any]]:
    if op.namespace:
        run.register(op.namespace)
    count = 1 if op.count is None else op.count
    objects = [factory.make(i, count, run.names) for i in range(count)]
    for m in objects:
        if m["kind"] == "Pod":
            meta = m["metadata"]
            run.pod_labels[(meta["namespace"], meta["name"])] = {
                str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
            run.pod_namespaces[meta["namespace"]] = None
    return objects


def _create_any(run: _KubeRun, op: CreateAny, factory: AnyManifests) -> None:
    _create(run, _any_objects(run, op, factory), factory)


def _create_pod_groups(run: _KubeRun, op: CreatePodGroups, factory: AnyManifests) -> None:
    """Upstream's createPodGroups: ``count`` PodGroups from the template in the namespace;
    engine.create returns once the scheduler's PodGroup informer holds them."""
    run.register(op.namespace)
    _create(run, [factory.make(i, op.count, run.names) for i in range(op.count)], factory)


def _create(run: _KubeRun, objects: list[dict[str, Any]], factory: AnyManifests) -> None:
    """engine.create of a template's objects; a refusal other than "unsupported" is bad input
    naming the template."""
    try:
        run.create(objects)
    except ReferenceRequestError as exc:
        if exc.kind == "unsupported":
            raise
        raise WorkloadError(f"{factory.where}: create: {exc}") from None


def _update_any(run: _KubeRun, op: UpdateAny, factory: AnyManifests) -> None:
    """Update (+UpdateStatus) every object, all at once or ``updatePerSecond`` (upstream's
    ticker: the first one period after the op starts); the op blocks until done."""
    objects = _any_objects(run, op, factory)
    subresources = list(op.subresources)
    period = 1.0 / op.update_per_second if op.update_per_second else 0.0
    start = time.monotonic()
    for i in range(0, len(objects), 1 if period else BATCH):
        if period:
            time.sleep(max(0.0, min(start + period * (i + 1) - time.monotonic(), run.left())))
        run.left()
        try:
            run.client.request("engine.update", args={
                "objects": objects[i:i + (1 if period else BATCH)],
                "subresources": subresources})
        except ReferenceRequestError as exc:
            if exc.kind == "unsupported":
                raise
            raise WorkloadError(f"Failed to update object: {exc}") from None


def _delete_pods(run: _KubeRun, index: int, op: DeletePods) -> None:
    """Upstream's deletePods: the pods of the namespace matching the selector, deleted as the
    API server deletes (see engine.deletePods), all at once or paced in the background."""
    reply = run.client.request("engine.deletePods", args={
        "namespace": op.namespace, "labelSelector": dict(op.label_selector),
        "perSecond": op.delete_pods_per_second})
    run.tasks.append((index, reply["id"]))
    if op.delete_pods_per_second and not op.skip_wait_to_completion:
        run.wait_task(reply["id"], f"deletePods in namespace {op.namespace}")


def _churn(run: _KubeRun, index: int, op: Churn, templates: list[AnyManifests]) -> None:
    """Upstream's churn, on the engine's goroutine until the workload ends (or ``number``
    creations in mode create)."""
    assert op.namespace is not None
    run.ensure_namespace(op.namespace)
    objects = [t.make(0, 1, None) for t in templates]
    if any(m["kind"] == "Pod" for m in objects):
        run.pod_namespaces[op.namespace] = None
    reply = run.client.request("engine.churn", args={
        "mode": op.mode, "number": op.number,
        "intervalMilliseconds": op.interval_milliseconds, "objects": objects})
    run.tasks.append((index, reply["id"]))


def _placements(run: _KubeRun) -> list[Placement]:
    """Where every pod created by the ops went (attempts are not recorded by the engine: 0),
    with scheduler_core's words for pods deleted or terminating."""
    pods = run.stats(tuple(run.pod_namespaces))["pods"]
    return [Placement(p["namespace"], p["name"], p.get("node") or None, 0, _why(p))
            for p in pods]


def _why(p: Mapping[str, Any]) -> str | None:
    if p["bound"] is not None:
        return ("deleted after it was bound (a preemption victim, or deleted by an op)"
                if p.get("deleted") else None)
    if p.get("deleted"):
        return "deleted before it was scheduled"
    if p.get("terminating"):
        return "terminating (deletionTimestamp set): not scheduled"
    return "not scheduled when the workload ended"


# --------------------------------------------------------------------------- the workload


def run_kube_workload(test_case: TestCase, workload: Workload,
                      opts: KubeEngineOptions) -> WorkloadResult:
    """Run one workload on the kube-scheduler engine. Never raises for a problem of the
    workload or of the Go process: the result's status says what happened (ok, unsupported,
    failed, timeout)."""
    started = time.perf_counter()
    binary = opts.binary
    result = WorkloadResult(
        test_case=test_case.name, workload=workload.name, topic=test_case.topic,
        params=dict(workload.params), labels=workload.labels,
        feature_gates=dict(workload.feature_gates), clock="real", engine=ENGINE_KUBE,
        engine_gomaxprocs=opts.gomaxprocs, reference_sha256=binary.sha256)

    def finish(status: str, reason: str | None) -> WorkloadResult:
        result.status, result.reason = status, reason
        result.wall_seconds = time.perf_counter() - started
        return result

    reason = _core_reason(test_case, binary.release)
    if reason:
        return finish(STATUS_UNSUPPORTED, reason)
    try:
        ops = list(resolve(test_case, workload))
        config = (test_case.scheduler_config_path.read_text()
                  if test_case.scheduler_config_path is not None else "")
    except ConfigFileError as exc:
        return finish(STATUS_FAILED, str(exc))
    except OSError as exc:
        return finish(STATUS_FAILED, f"{test_case.scheduler_config_path}: cannot read: {exc}")
    deadline = time.monotonic() + (opts.timeout if opts.timeout is not None else 1e9)
    try:
        client = ReferenceClient(binary.path, timeout=120.0,
                                 env={"GOMAXPROCS": str(opts.gomaxprocs)})
    except ReferenceSchedulerError as exc:
        return finish(STATUS_FAILED, f"kube-scheduler engine: {exc}")
    run = _KubeRun(test_case, workload, client, opts, deadline)
    try:
        result.kubernetes_version = client.version.kubernetes
        status, reason = _execute(run, ops, config, result)
    finally:
        client.close()
    return finish(status, reason)


def _core_reason(test_case: TestCase, release: Release) -> str | None:
    """The test case's unsupported reason (ops schedperf does not model), except the ops this
    engine runs although scheduler_core does not (createPodGroups on the v1.37 build)."""
    for op in test_case.workload_template:
        if isinstance(op, CreatePodGroups) and unsupported_op(op, release) is None:
            continue
        inner = getattr(op, "create_pods_op", None) or op
        reason = op.unsupported_reason or inner.unsupported_reason
        if reason:
            return f"op {op.opcode} ({op.yaml_path}): {reason}"
    return None


def _execute(run: _KubeRun, ops: list[Op], config: str,
             result: WorkloadResult) -> tuple[str, str | None]:
    try:
        prepared = _prepare(run, ops)
        run.client.request("engine.start", args={
            "config": config, "featureGates": dict(run.w.feature_gates),
            "gomaxprocs": run.opts.gomaxprocs})
        for i, op in enumerate(ops):
            if run.opts.progress is not None:
                run.opts.progress(op.opcode, int(run.stats()["bound"]))
            try:
                _run_op(run, i, op, prepared.get(i))
            except WorkloadError as exc:
                raise WorkloadError(f"op {i}: {exc}") from None
        if run.window is not None:
            run.close_window()
        result.placements = _placements(run)
        errors = run.task_errors()
        if errors:
            raise WorkloadError("; ".join(errors))
    except UnsupportedWorkload as exc:
        return STATUS_UNSUPPORTED, str(exc)
    except ReferenceRequestError as exc:
        status = STATUS_UNSUPPORTED if exc.kind == "unsupported" else STATUS_FAILED
        return status, f"kube-scheduler engine: {exc}"
    except _Timeout:
        return STATUS_TIMEOUT, f"timed out after {run.opts.timeout:g} s of wall time"
    except (WorkloadError, ReferenceSchedulerError) as exc:
        return STATUS_FAILED, f"kube-scheduler engine: {exc}"
    finally:
        fill_labels(run.items)
        result.data_items = run.items
        result.measured_seconds = run.measured_seconds
        result.cpu_seconds = run.cpu_seconds
    result.scheduled_pods = sum(1 for p in result.placements if p.node)
    result.unschedulable_pods = len(result.placements) - result.scheduled_pods
    return STATUS_OK, None
