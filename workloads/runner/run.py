"""One workload run: the cluster, the scheduler and the harness's state around them, set up
from the test case and :class:`~workloads.runner.options.RunOptions`, and the context the ops
run in (:class:`~workloads.ops.context.OpContext`).

A :class:`Run` prepares every op (templates parsed, unmodelled kinds found) and then executes
them in order; the scheduling loop is :mod:`workloads.runner.loop`, the pod bookkeeping
:mod:`workloads.runner.pods`, the collection windows :mod:`workloads.runner.windows` and the
result :mod:`workloads.runner.outcome`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scheduler_core.cluster.store import Cluster
from scheduler_core.errors import SchedulerCoreError, UnsupportedConfigError
from scheduler_core.framework.config import SchedulerConfig, build_frameworks, load_config
from scheduler_core.scheduler import Scheduler
from workloads.config import Op, TestCase, Workload
from workloads.config.ops import CreateNodes, StartCollectingMetrics
from workloads.ops.api import FakeApi
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.ops.factories import PodFactory
from workloads.ops.registry import PREPARE, RUN
from workloads.result import WorkloadResult
from workloads.runner.clocks import POD_CREATE_COST, RunTimeout, Timeline, WallBudget
from workloads.runner.decisions import DecisionLog
from workloads.runner.gates import FeatureGates
from workloads.runner.loop import run_until, throttled
from workloads.runner.metrics import RunRecorder
from workloads.runner.options import ProgressEvent, RunOptions
from workloads.runner.outcome import fill_result
from workloads.runner.pods import PodBook
from workloads.runner.windows import Windows

__all__ = ["PROGRESS_EVERY", "Run", "op_label"]

PROGRESS_EVERY = 0.5  # seconds of wall time between progress callbacks


def op_label(index: int, op: Op) -> str:
    where = f" ({op.yaml_path})" if op.yaml_path else ""
    return f"op {index} {op.opcode}{where}"


class Run:
    """The state of one workload run, grouped: what runs (``tc``, ``w``, ``ops``,
    ``options``), the simulated world (``timeline``, ``cluster``, ``api``, ``scheduler``,
    ``recorder``, ``decisions``), the harness's view of it (``pods``, ``windows``) and where
    the run is (``wall``, ``op_index``, ``stopped_before``, ``errors``)."""

    def __init__(self, test_case: TestCase, workload: Workload, ops: Sequence[Op],
                 options: RunOptions) -> None:
        self.tc = test_case
        self.w = workload
        self.ops = list(ops)
        self.name = f"{test_case.name}/{workload.name}"
        self.options = options
        self.progress_fn = options.progress if options.wall_clock_metrics else None
        # a paced run's waits are not its own time; the other side's process ends it
        self.wall = WallBudget(options.timeout if options.pacer is None else None)
        self.timeline = Timeline(options.clock)
        self.now = self.timeline.now
        self.call_at = self.timeline.call_at
        n_nodes = sum(op.count for op in self.ops if isinstance(op, CreateNodes))
        self.cluster = Cluster(capacity=max(16, n_nodes + 16), clock=self.timeline.now)
        self.api = FakeApi(self.cluster, self.timeline.now)
        self.recorder = RunRecorder(plugin_sample_percent=options.plugin_sample_percent)
        if not options.wall_clock_metrics:
            self.recorder.enabled = False  # the scheduler then never reads the clock
        self.gates = FeatureGates.of(workload)
        self.api.pod_groups = self.gates.generic_workload
        self.api.topology_aware = self.gates.topology_aware
        self.decisions = DecisionLog() if options.record_decisions else None
        self.extenders: Any = None  # workloads.runner.extenders.RunExtenders
        try:
            self.scheduler = self._build_scheduler()
        except UnsupportedConfigError as exc:
            self.close()
            raise UnsupportedWorkload(f"scheduler config: {exc}") from None
        except BaseException:
            self.close()
            raise
        self.pods = PodBook()
        self.windows = Windows(test_case, workload, options, recorder=self.recorder,
                               scheduler=self.scheduler, pods=self.pods)
        self._prepared: dict[int, Any] = {}
        self.errors: list[str] = []
        self.op_index = -1
        self.stopped_before: int | None = None  # op index where stop_after="setup" stopped
        self.scheduler_seconds = 0.0
        self.virtual_start = self.timeline.now()
        self._last_progress = 0.0
        self.cluster.subscribe(self.pods.on_event)

    def _build_scheduler(self) -> Scheduler:
        path = self.tc.scheduler_config_path
        cfg = load_config(path) if path is not None else SchedulerConfig()
        decisions = self.decisions

        generic_workload = self.gates.generic_workload
        topology_aware = self.gates.topology_aware
        if cfg.extenders:  # imported here: runs without extenders never load the server
            from workloads.runner.extenders import RunExtenders

            self.extenders = RunExtenders(cfg.extenders, self.cluster)

        def profiles(handle: Any) -> Any:
            frameworks = build_frameworks(cfg, handle, generic_workload=generic_workload,
                                          topology_aware=topology_aware)
            return decisions.wrap(frameworks) if decisions is not None else frameworks

        return Scheduler(
            self.cluster, profiles, clock=self.timeline.clock, seed=self.options.seed,
            recorder=self.recorder, queueing_hints=self.gates.queueing_hints,
            pop_from_backoff=self.gates.pop_from_backoff,
            async_preemption=self.gates.async_preemption,
            pod_initial_backoff=cfg.pod_initial_backoff_seconds,
            pod_max_backoff=cfg.pod_max_backoff_seconds,
            record_cycles=self.options.record_decisions, generic_workload=generic_workload,
            topology_aware=topology_aware,
            extenders=self.extenders.extenders if self.extenders is not None else None)

    def close(self) -> None:
        """Stop what the run started beside the scheduler (built-in extender servers)."""
        if self.extenders is not None:
            self.extenders.close()

    # ------------------------------------------------------------------ what bench.measure reads
    @property
    def window_scheduled(self) -> int:
        """Pods bound in the scope of the collection windows."""
        return self.windows.scheduled

    @property
    def window_attempts(self) -> int:
        return self.windows.attempts

    @property
    def window_extension_seconds(self) -> dict[str, float]:
        """Extension point -> seconds inside the windows."""
        return self.windows.extension_seconds

    @property
    def window_plugin_seconds(self) -> dict[str, float]:
        """"Plugin/ExtensionPoint" -> seconds inside the windows (sampled cycles only)."""
        return self.windows.plugin_seconds

    # ------------------------------------------------------------------ the ops' context
    @property
    def failures(self) -> Mapping[str, str]:
        return self.scheduler.failures

    @property
    def window_open(self) -> bool:
        return self.windows.current is not None

    def prepared(self, index: int) -> Any:
        return self._prepared.get(index)

    def check_timeout(self) -> None:
        self.wall.check()

    def report_error(self, message: str) -> None:
        self.errors.append(message)

    def register_namespace(self, ns: str, labels: Mapping[str, str] | None = None) -> None:
        """Upstream createNamespaceIfNotPresent."""
        self.api.ensure_namespace(ns, labels)
        self.pods.register(ns)

    def create_pods(self, factory: PodFactory, count: int) -> None:
        """Create ``count`` pods from the factory at once (no virtual time passes)."""
        t0 = time.perf_counter()
        make = factory.make
        create = self.api.create_pod
        try:
            for i in range(count):
                pod, flags = make(i, count)
                create(pod, flags)
                if (i & 1023) == 1023 and time.perf_counter() > self.wall.deadline:
                    raise RunTimeout
        except SchedulerCoreError as exc:
            raise WorkloadError(f"creating pod: {exc}") from None
        w = self.windows.current
        if w is not None:
            w.create_seconds += time.perf_counter() - t0
            w.created += count

    def start_creating_pods(self, factory: PodFactory, count: int) -> Callable[[], bool]:
        """Create ``count`` pods interleaved with scheduling (virtual mode): one pod every
        :data:`~workloads.runner.clocks.POD_CREATE_COST` seconds of virtual time, from a timer,
        so the scheduler works on the first pods while the last are still being created, as
        kube-apiserver and kube-scheduler do. The first pod is created at once. Returns a
        predicate that is true once every pod exists (at once in real mode)."""
        created = [0]
        if count <= 0:
            return lambda: True
        tl = self.timeline
        if not tl.virtual:  # real mode: all at once (see workloads.runner.clocks)
            self.create_pods(factory, count)
            return lambda: True
        make = factory.make
        create = self.api.create_pod
        perf = time.perf_counter
        w = self.windows.current
        due = [tl.now()]
        deadline = self.wall.deadline

        def tick() -> float | None:
            i = created[0]
            t0 = perf()
            try:
                pod, flags = make(i, count)
                create(pod, flags)
            except SchedulerCoreError as exc:
                raise WorkloadError(f"creating pod: {exc}") from None
            created[0] = i + 1
            if w is not None:
                w.create_seconds += perf() - t0
                w.created += 1
            if (i & 1023) == 1023 and perf() > deadline:
                raise RunTimeout
            if i + 1 >= count:
                return None
            due[0] += POD_CREATE_COST
            return due[0]

        tl.call_at(due[0], tick)
        tl.fire_due()  # the first pod exists when the op returns control to the scheduler
        return lambda: created[0] >= count

    def run_until(self, done: Callable[[], bool] | None, *, until: float | None = None,
                  what: str = "", describe: Callable[[], str] | None = None,
                  limited: bool = False) -> None:
        """See :func:`workloads.runner.loop.run_until`."""
        run_until(self, done, until=until, what=what, describe=describe, limited=limited)

    def throttled(self, check: Callable[[], bool]) -> Callable[[], bool]:
        return throttled(self, check)

    def wait_scheduled(self, ns: str, want: int) -> None:
        """Upstream waitUntilPodsScheduledInNamespace: ``want`` pods with a node in ``ns``."""
        bound = self.pods.bound

        def describe() -> str:
            got = bound.get(ns, 0)
            pod = next((p for p in self.pods.in_namespace(ns).values() if not p.node_name),
                       None)
            which = ""
            if pod is not None:
                last = self.scheduler.failures.get(pod.key)
                which = f"at least pod {pod.key} is not scheduled"
                which += f" (last failure: {last})" if last else " (never attempted)"
                which += ": "
            return (f"error in waiting for pods to get scheduled: {which}namespace {ns}: want "
                    f"{want} pods scheduled, got {got}")

        self.run_until(lambda: bound.get(ns, 0) >= want, what="",
                       describe=describe, limited=True)

    def run_rate_limited(self, count: int, per_second: int, fn: Callable[[int], None], *,
                         wait: bool, what: str) -> None:
        """Call ``fn(0..count-1)``, one per tick of a ticker at ``per_second``; wait for the
        last one (the scheduler keeps running) unless ``wait`` is False."""
        if count == 0:
            return
        tl = self.timeline
        period = 1.0 / per_second
        start = tl.now()
        state = {"i": 0}

        def tick() -> float | None:
            i = state["i"]
            fn(i)
            state["i"] = i + 1
            return None if i + 1 >= count else start + period * (i + 2)

        tl.call_at(start + period, tick)
        if wait:
            self.run_until(lambda: state["i"] >= count, what=what)

    def open_window(self, index: int, name: str, namespaces: Sequence[str],
                    selector: Mapping[str, str], collectors: Sequence[str]) -> None:
        self.windows.open(index, name, namespaces, selector, collectors)

    def close_window(self, index: int, *, check_threshold: bool = True) -> None:
        self.windows.close(index, check_threshold=check_threshold)

    # ------------------------------------------------------------------ the whole workload
    def prepare(self) -> None:
        if self.extenders is not None:
            self.extenders.start()
        for i, op in enumerate(self.ops):
            prep = PREPARE.get(type(op))
            if prep is None:
                continue
            try:
                self._prepared[i] = prep(self, i, op)
            except UnsupportedWorkload as exc:
                raise UnsupportedWorkload(f"{op_label(i, op)}: {exc}") from None
            except WorkloadError as exc:
                raise WorkloadError(f"{op_label(i, op)}: {exc}") from None
        if self.gates.unsupported:
            raise UnsupportedWorkload(self.gates.unsupported)

    def setup_end(self) -> int:
        """Index of the first op that opens a metrics collection (len(ops) if none)."""
        for i, op in enumerate(self.ops):
            if isinstance(op, StartCollectingMetrics) or op.collects_metrics:
                return i
        return len(self.ops)

    def execute(self) -> None:
        self.virtual_start = self.timeline.now()
        at_setup_end = self.options.at_setup_end
        setup_end = self.setup_end()
        stop = setup_end if self.options.stop_after == "setup" else len(self.ops)
        for i, op in enumerate(self.ops):
            if i == setup_end and at_setup_end is not None:
                at_setup_end(self)
            if i >= stop:
                self.stopped_before = i
                break
            self.op_index = i
            self.report_progress(time.perf_counter(), force=True)
            self.check_timeout()
            fn = RUN.get(type(op))
            if fn is None:
                raise UnsupportedWorkload(f"{op_label(i, op)}: "
                                          f"{op.unsupported_reason or 'op not supported'}")
            try:
                fn(self, i, op)
            except UnsupportedWorkload as exc:
                raise UnsupportedWorkload(f"{op_label(i, op)}: {exc}") from None
            except WorkloadError as exc:
                raise WorkloadError(f"op {i}: {exc}") from None
            self.windows.note_rss()
        if setup_end == len(self.ops) and at_setup_end is not None:
            at_setup_end(self)
        self._check_in_flight()

    def _check_in_flight(self) -> None:
        """Upstream checks, with QueueingHints on, that no in-flight event is left after the
        workload (a leak, #126962); every attempt here has finished when the ops end."""
        queue = self.scheduler.queue
        if not self.gates.queueing_hints or self.scheduler.waiting:
            return
        events = queue.in_flight_events()
        if queue.in_flight_count() or events:
            self.errors.append(f"InFlightEvents should be empty, but has {len(events)} items "
                               f"({queue.in_flight_count()} pods in flight)")

    def report_progress(self, t: float, *, force: bool = False) -> None:
        """Call ``options.progress`` (at most every PROGRESS_EVERY seconds unless forced)."""
        fn = self.progress_fn
        if fn is None or (not force and t - self._last_progress < PROGRESS_EVERY):
            return
        self._last_progress = t
        op = self.ops[self.op_index] if 0 <= self.op_index < len(self.ops) else None
        fn(ProgressEvent(self.tc.name, self.w.name, self.op_index, len(self.ops),
                         op.opcode if op is not None else "", self.cluster.bind_count,
                         self.scheduler.attempts_total, t - self.wall.started,
                         self.timeline.now() - self.virtual_start))

    def result(self, base: WorkloadResult) -> WorkloadResult:
        """``base`` filled with what the run placed and measured."""
        fill_result(self, base)
        if self.extenders is not None:
            self.extenders.fill(base)
        return base
