"""Run one scheduler_perf workload against schedperf's scheduler on a fake in-memory cluster.

    run_workload(test_case, workload, *, seed=0, clock="virtual", record_decisions=False,
                 timeout=None, sample_interval=0.1, progress=None, wall_clock_metrics=True,
                 plugin_sample_percent=10, stop_after="all") -> WorkloadResult

Never raises for a problem of the workload itself: the result's ``status`` is ``ok``,
``unsupported`` (with the precise reason: an op, kind, volume or node strategy schedperf does
not model), ``failed`` (the error text), ``timeout`` (``timeout`` seconds of wall time passed;
checked between scheduling attempts and while creating objects) or ``threshold-missed``
(upstream's message, data kept).

How ops run (upstream's ``runWorkload``, single-threaded): ops execute in order; the scheduler
runs whenever an op waits (createPods waiting for its pods, barrier, sleep, steady state,
rate-limited deletes and updates), interleaved with background timers (churn, asynchronous
deletes) by the rules in :mod:`workloads.runner.clocks`. Object creation by an op happens at once,
before the scheduler resumes. The run ends after the last op, as upstream cancels everything
then (no implicit final barrier).

Feature gates: ``SchedulerQueueingHints`` and ``SchedulerPopFromBackoffQ`` (both on by
default, as in v1.33) are honoured; every other gate is listed in ``ignored_feature_gates``.
``schedulerConfigPath`` is loaded with ``load_config`` + ``build_frameworks``.

Measurement switches (used by ``bench.measure``; the defaults are the normal run):

* ``wall_clock_metrics=False``: nothing in the run reads or depends on wall time (for
  instruction counting under valgrind): no SchedulingThroughput sampling, no resident-memory
  polling, no window wall/CPU time, no progress callbacks, and the scheduler's metrics recorder
  is disabled (no extension point / plugin timing, no histograms). Placements and counts are
  unchanged; the result's timing fields stay 0.
* ``plugin_sample_percent``: share of scheduling cycles whose plugins are timed one by one
  (upstream's 10 by default; 100 times every plugin in every cycle).
* ``stop_after="setup"``: run only the ops before the first op that opens a metrics collection
  (``createPods`` with ``collectMetrics``, ``startCollectingMetrics``), i.e. the cluster set-up
  (``createNodes``, initial pods, ...), then finish as if the workload ended there.
* ``at_setup_end(run)``: called once, with the Run, where ``stop_after="setup"`` would stop:
  before the first op that opens a metrics collection (after the last op when none does).
  Instruction counting forks the process there.
* ``pacer`` (a :class:`Pacer`): called after every scheduling cycle, it may block while
  another process takes its turn (paced time measurements in ``bench.measure.pacing``); the
  windows' wall time and throughput samples then run on ``pacer.now``, a clock that stops
  while the run waits. A paced run has no wall-clock ``timeout`` of its own.

Per measured window the :class:`Run` also keeps ``window_extension_seconds`` (extension point
-> seconds), ``window_plugin_seconds`` ("Plugin/ExtensionPoint" -> seconds, of the sampled
cycles only), ``window_scheduled`` (pods bound in scope) and ``window_attempts``.

Modules: clocks (virtual / real time, timers), the ops package (templates, factories, API facade,
the ops), metrics (collection windows, DataItems, thresholds),
decisions (decision records).
"""

from __future__ import annotations

import time
import traceback
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from scheduler_core.api.pod import Pod
from scheduler_core.cluster.events import ADDED, MODIFIED, WatchEvent
from scheduler_core.cluster.store import Cluster
from scheduler_core.errors import SchedulerCoreError
from scheduler_core.framework.config import SchedulerConfig, build_frameworks, load_config
from scheduler_core.scheduler import Scheduler
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
from workloads.ops.api import FakeApi
from workloads.ops.create import (
    prepare_create_any,
    prepare_create_namespaces,
    prepare_create_nodes,
    prepare_create_pods,
    prepare_update_any,
    run_create_any,
    run_create_namespaces,
    run_create_nodes,
    run_create_pods,
    run_update_any,
)
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.ops.factories import PodFactory
from workloads.ops.flow import (
    SCAN_EVERY,
    prepare_churn,
    run_barrier,
    run_churn,
    run_delete_pods,
    run_sleep,
    run_start_collecting,
    run_stop_collecting,
)
from workloads.result import (
    STATUS_FAILED,
    STATUS_OK,
    STATUS_THRESHOLD_MISSED,
    STATUS_TIMEOUT,
    STATUS_UNSUPPORTED,
    Placement,
    WorkloadResult,
)
from workloads.runner.clocks import ATTEMPT_COST, CLOCK_MODES, POD_CREATE_COST, Timeline
from workloads.runner.decisions import DecisionLog
from workloads.runner.metrics import (
    POINT_ALIASES,
    THROUGHPUT_METRIC,
    RunRecorder,
    Window,
    apply_threshold,
    fill_labels,
    rss_bytes,
)

__all__ = [
    "HONOURED_GATES",
    "POP_FROM_BACKOFF_GATE",
    "QUEUEING_HINTS_GATE",
    "STOP_AFTER",
    "WAIT_LIMIT",
    "ProgressEvent",
    "Run",
    "execute_workload",
    "run_workload",
]

QUEUEING_HINTS_GATE = "SchedulerQueueingHints"
POP_FROM_BACKOFF_GATE = "SchedulerPopFromBackoffQ"
HONOURED_GATES = frozenset({QUEUEING_HINTS_GATE, POP_FROM_BACKOFF_GATE})
WAIT_LIMIT = 600.0  # upstream's 10-minute wait for pods (virtual seconds in virtual mode)
PROGRESS_EVERY = 0.5  # seconds of wall time between progress callbacks
STOP_AFTER = ("all", "setup")  # run_workload(stop_after=...)


class Pacer(Protocol):
    """Takes turns with another process: see the ``pacer`` switch in the module docstring."""

    def __call__(self) -> None: ...

    def now(self) -> float: ...


_PREPARE: dict[type, Callable[..., Any]] = {
    CreateNodes: prepare_create_nodes,
    CreateNamespaces: prepare_create_namespaces,
    CreatePods: prepare_create_pods,
    CreateAny: prepare_create_any,
    UpdateAny: prepare_update_any,
    Churn: prepare_churn,
}
_RUN: dict[type, Callable[..., None]] = {
    CreateNodes: run_create_nodes,
    CreateNamespaces: run_create_namespaces,
    CreatePods: run_create_pods,
    CreateAny: run_create_any,
    UpdateAny: run_update_any,
    DeletePods: run_delete_pods,
    Churn: run_churn,
    Barrier: run_barrier,
    Sleep: run_sleep,
    StartCollectingMetrics: run_start_collecting,
    StopCollectingMetrics: run_stop_collecting,
}


@dataclass(frozen=True)
class ProgressEvent:
    """What ``progress`` is called with: at every op start and about twice a second while
    the scheduler runs."""

    test_case: str
    workload: str
    op_index: int
    op_count: int
    opcode: str
    pods_scheduled: int
    attempts: int
    wall_seconds: float
    virtual_seconds: float


class _Timeout(Exception):
    pass


def _op_label(index: int, op: Op) -> str:
    where = f" ({op.yaml_path})" if op.yaml_path else ""
    return f"op {index} {op.opcode}{where}"


class Run:
    """The state of one workload run: cluster, scheduler, timers, collection windows."""

    def __init__(self, test_case: TestCase, workload: Workload, ops: Sequence[Op], *,
                 seed: int, clock: str, record_decisions: bool, timeout: float | None,
                 sample_interval: float,
                 progress: Callable[[ProgressEvent], None] | None,
                 wall_clock_metrics: bool = True, plugin_sample_percent: int = 10,
                 stop_after: str = "all", pacer: Pacer | None = None,
                 at_setup_end: Callable[[Run], None] | None = None) -> None:
        self.tc = test_case
        self.w = workload
        self.ops = list(ops)
        self.name = f"{test_case.name}/{workload.name}"
        self.sample_interval = sample_interval
        self.wall_clock_metrics = wall_clock_metrics
        self.progress_fn = progress if wall_clock_metrics else None
        self.stop_after = stop_after
        self.pacer = pacer
        self.at_setup_end = at_setup_end
        if pacer is not None:
            timeout = None  # its waits are not its own time; the other side's process ends it
        self.started = time.perf_counter()
        self.wall_deadline = self.started + timeout if timeout is not None else float("inf")
        self.timeline = Timeline(clock)
        n_nodes = sum(op.count for op in self.ops if isinstance(op, CreateNodes))
        self.cluster = Cluster(capacity=max(16, n_nodes + 16), clock=self.timeline.now)
        self.api = FakeApi(self.cluster, self.timeline.now)
        self.recorder = RunRecorder(plugin_sample_percent=plugin_sample_percent)
        if not wall_clock_metrics:
            self.recorder.enabled = False  # the scheduler then never reads the clock
        gates = dict(workload.feature_gates)
        self.queueing_hints = bool(gates.get(QUEUEING_HINTS_GATE, True))
        self.pop_from_backoff = bool(gates.get(POP_FROM_BACKOFF_GATE, True))
        self.ignored_gates = tuple(sorted(g for g in gates if g not in HONOURED_GATES))
        self.decisions = DecisionLog() if record_decisions else None
        cfg = (load_config(test_case.scheduler_config_path)
               if test_case.scheduler_config_path is not None else SchedulerConfig())
        decisions = self.decisions

        def profiles(handle: Any) -> Any:
            frameworks = build_frameworks(cfg, handle)
            return decisions.wrap(frameworks) if decisions is not None else frameworks

        self.scheduler = Scheduler(
            self.cluster, profiles, clock=self.timeline.clock, seed=seed,
            recorder=self.recorder, queueing_hints=self.queueing_hints,
            pop_from_backoff=self.pop_from_backoff,
            pod_initial_backoff=cfg.pod_initial_backoff_seconds,
            pod_max_backoff=cfg.pod_max_backoff_seconds, record_cycles=record_decisions)
        # upstream's numPodsScheduledPerNamespace: namespace -> pods a barrier waits for
        self.known_ns: dict[str, int] = {}
        self.bound: dict[str, int] = {}  # namespace -> pods with a node now
        self.ns_pods: dict[str, dict[str, Pod]] = {}  # namespace -> pods, creation order
        self.placement_keys: dict[str, None] = {}  # pods created without a node
        self.gone: dict[str, Pod] = {}  # deleted pods among those, as last seen
        self.bind_hooks: list[Callable[[Pod], None]] = []
        self.window: Window | None = None
        self.prepared: dict[int, Any] = {}
        self.data_items: list[Any] = []
        self.errors: list[str] = []
        self.threshold_errors: list[str] = []
        self.progress_samples: dict[str, list[tuple[float, int, int]]] = {}
        self.scheduler_seconds = 0.0
        self.measured_seconds = 0.0
        self.cpu_seconds = 0.0
        self.harness_seconds = 0.0
        self.window_scheduler_seconds = 0.0
        self.window_create_seconds = 0.0
        self.window_extension_seconds: dict[str, float] = {}
        self.window_plugin_seconds: dict[str, float] = {}
        self.window_scheduled = 0
        self.window_attempts = 0
        self.stopped_before: int | None = None  # op index where stop_after="setup" stopped
        self.peak_rss = rss_bytes() if wall_clock_metrics else 0
        self.op_index = -1
        self._t0 = self.timeline.now()
        self._last_progress = 0.0
        self.cluster.subscribe(self._on_event)

    # ------------------------------------------------------------------ watch
    def _on_event(self, ev: WatchEvent) -> None:
        if ev.kind != "Pod":
            return
        t = ev.type
        if t is MODIFIED:
            new = ev.new
            old = ev.old
            ns = new.namespace
            if type(old) is Pod:  # an update replaced the object (a bind keeps it)
                self.ns_pods[ns][new.key] = new
            if new.node_name and not old.node_name:
                bound = self.bound
                bound[ns] = bound.get(ns, 0) + 1
                w = self.window
                if w is not None and ns in w.namespaces and (
                        not w.label_selector or w.matches(new)):
                    w.bound += 1
                for hook in self.bind_hooks:
                    hook(new)
        elif t is ADDED:
            new = ev.new
            ns = new.namespace
            pods = self.ns_pods.get(ns)
            if pods is None:
                pods = self.ns_pods[ns] = {}
            key = new.key
            pods[key] = new
            if new.node_name:
                self.bound[ns] = self.bound.get(ns, 0) + 1
            else:
                self.placement_keys[key] = None
        else:
            old = ev.old
            ns = old.namespace
            key = old.key
            self.ns_pods[ns].pop(key, None)
            if old.node_name:
                self.bound[ns] = max(0, self.bound.get(ns, 0) - 1)
            if key in self.placement_keys:
                self.gone[key] = old

    # ------------------------------------------------------------------ helpers for ops
    def register_namespace(self, ns: str) -> None:
        """Upstream createNamespaceIfNotPresent."""
        self.api.ensure_namespace(ns)
        self.known_ns.setdefault(ns, 0)

    def check_timeout(self) -> None:
        if time.perf_counter() > self.wall_deadline:
            raise _Timeout

    def create_pods(self, factory: PodFactory, count: int) -> None:
        """Create ``count`` pods from the factory at once (no virtual time passes)."""
        t0 = time.perf_counter()
        make = factory.make
        create = self.api.create_pod
        try:
            for i in range(count):
                pod, flags = make(i, count)
                create(pod, flags)
                if (i & 1023) == 1023 and time.perf_counter() > self.wall_deadline:
                    raise _Timeout
        except SchedulerCoreError as exc:
            raise WorkloadError(f"creating pod: {exc}") from None
        w = self.window
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
        w = self.window
        due = [tl.now()]

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
            if (i & 1023) == 1023 and perf() > self.wall_deadline:
                raise _Timeout
            if i + 1 >= count:
                return None
            due[0] += POD_CREATE_COST
            return due[0]

        tl.call_at(due[0], tick)
        tl.fire_due()  # the first pod exists when the op returns control to the scheduler
        return lambda: created[0] >= count

    def throttled(self, check: Callable[[], bool]) -> Callable[[], bool]:
        """A predicate evaluated only every SCAN_EVERY attempts (and when asked while idle)."""
        sched = self.scheduler
        last = [-SCAN_EVERY]

        def done(force: bool = False) -> bool:
            n = sched.attempts_total
            if not force and n - last[0] < SCAN_EVERY:
                return False
            last[0] = n
            return check()

        done.force = lambda: done(True)  # type: ignore[attr-defined]
        return done

    def wait_scheduled(self, index: int, ns: str, want: int) -> None:
        """Upstream waitUntilPodsScheduledInNamespace: ``want`` pods with a node in ``ns``."""
        bound = self.bound

        def describe() -> str:
            got = bound.get(ns, 0)
            pod = next((p for p in self.ns_pods.get(ns, {}).values() if not p.node_name), None)
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

    def run_rate_limited(self, index: int, count: int, per_second: int,
                         fn: Callable[[int], None], *, wait: bool, what: str) -> None:
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

    # ------------------------------------------------------------------ the scheduling loop
    def run_until(self, done: Callable[[], bool] | None, *, until: float | None = None,
                  what: str = "", describe: Callable[[], str] | None = None,
                  limited: bool = False) -> None:
        """Schedule (and fire timers) until ``done()`` or the clock reaches ``until``.

        Raises WorkloadError when nothing can make progress any more, or (``limited``) when
        the wait exceeds WAIT_LIMIT seconds on the run's clock, like upstream's 10-minute
        poll timeout; _Timeout when the wall-clock budget is spent.
        """
        tl = self.timeline
        now = tl.now
        heap = tl.heap
        sched = self.scheduler
        queue = sched.queue
        schedule_one = sched.schedule_one
        tick = queue.tick
        advance = tl.clock.advance if tl.virtual else None  # type: ignore[union-attr]
        perf = time.perf_counter
        deadline = self.wall_deadline
        post = self.decisions.collect if self.decisions is not None else None
        give_up = now() + WAIT_LIMIT if limited else None
        force = getattr(done, "force", done)
        w = self.window  # windows open and close only between ops
        sample = w.throughput.tick if w is not None and w.throughput is not None else None
        pace = self.pacer
        busy = 0.0  # seconds inside schedule_one
        n = 0
        try:
            while True:
                if heap and heap[0][0] <= now():
                    tl.fire_due()
                if until is not None and now() >= until:
                    return
                if done is not None and done():
                    return
                t0 = perf()
                if t0 > deadline:
                    raise _Timeout
                did = schedule_one()
                t1 = perf()
                if did:
                    busy += t1 - t0
                    if post is not None:
                        post(sched)
                    if advance is not None:
                        advance(ATTEMPT_COST)
                    tick()
                    if sample is not None:
                        sample()
                    if pace is not None:
                        pace()
                    n += 1
                    if not n & 1023:
                        self._maybe_progress(t1)
                    continue
                # activeQ is empty
                tick()
                if queue.active_count():
                    continue
                if force is not None and force():
                    return
                t_now = now()
                candidates = [t for t in (tl.next_due(), sched.next_wakeup(),
                                          queue.next_event_time(), until) if t is not None]
                if not candidates:
                    raise WorkloadError(self._stuck(what, describe, "nothing is left that "
                                                    "could change it (no queued pod, timer or "
                                                    "event)"))
                nxt = min(candidates)
                if give_up is not None and nxt > give_up:
                    limit = f"{WAIT_LIMIT:g} s of {'virtual' if tl.virtual else 'wall'} time"
                    raise WorkloadError(self._stuck(what, describe, f"timed out after {limit}"))
                if tl.virtual and nxt <= t_now:
                    nxt = t_now + ATTEMPT_COST
                tl.advance_to(nxt)
                if self.progress_fn is not None:
                    self._maybe_progress(perf())
        finally:
            self.scheduler_seconds += busy
            if w is not None:
                w.scheduler_seconds += busy

    def _stuck(self, what: str, describe: Callable[[], str] | None, why: str) -> str:
        detail = describe() if describe is not None else "waiting"
        return f"{what}: {detail}: {why}" if what else f"{detail}: {why}"

    def _maybe_progress(self, t: float, *, force: bool = False) -> None:
        fn = self.progress_fn
        if fn is None or (not force and t - self._last_progress < PROGRESS_EVERY):
            return
        self._last_progress = t
        op = self.ops[self.op_index] if 0 <= self.op_index < len(self.ops) else None
        fn(ProgressEvent(self.tc.name, self.w.name, self.op_index, len(self.ops),
                         op.opcode if op is not None else "", self.cluster.bind_count,
                         self.scheduler.attempts_total, t - self.started,
                         self.timeline.now() - self._t0))

    # ------------------------------------------------------------------ metrics windows
    def open_window(self, index: int, name: str, namespaces: Sequence[str],
                    selector: Mapping[str, str], collectors: Sequence[str]) -> None:
        if self.window is not None:
            raise WorkloadError("metrics collection is overlapping. Probably second collector "
                                "was started before stopping a previous one")
        sched = self.scheduler
        self.window = Window(
            name=f"{self.name}/{name}", namespaces=frozenset(namespaces),
            label_selector=dict(selector), op_index=index, collectors=tuple(collectors),
            interval=self.sample_interval, attempts_fn=lambda: sched.attempts_total,
            wall_clock=self.wall_clock_metrics,
            now=self.pacer.now if self.pacer is not None else time.perf_counter)
        self.window.start(self.recorder)

    def close_window(self, index: int, *, check_threshold: bool = True) -> None:
        w = self.window
        assert w is not None
        summary = w.stop()
        self.window = None
        reasons: Counter[str] = Counter()
        failures = self.scheduler.failures
        for ns in sorted(w.namespaces):
            for pod in self.ns_pods.get(ns, {}).values():
                if not pod.node_name and w.matches(pod) and pod.key in failures:
                    reasons[failures[pod.key]] += 1
        ignored = sum(1 for p in self.scheduler.ignored.values() if p.namespace in w.namespaces)
        items = w.items(summary, self.recorder, self.tc.effective_metrics_collector_config,
                        scheduled=w.bound, unschedulable=reasons, ignored=ignored)
        if check_threshold and self.wall_clock_metrics:  # thresholds are on timed metrics
            threshold = self.w.threshold_for(self.tc.topic)
            selector = self.w.threshold_metric_selector
            why = (w.no_throughput_reason() if selector.name == THROUGHPUT_METRIC
                   else "the metric was not collected in this window")
            self.threshold_errors.extend(apply_threshold(
                items, threshold, selector, window=w.name, missing_reason=why))
        self.data_items.extend(items)
        self.progress_samples[w.name] = w.progress
        self.measured_seconds += w.wall_seconds
        self.cpu_seconds += w.cpu_seconds
        self.harness_seconds += w.harness_seconds
        self.window_scheduler_seconds += w.scheduler_seconds
        self.window_create_seconds += w.create_seconds
        if w.rss:
            self.peak_rss = max(self.peak_rss, *w.rss)
        self.window_scheduled += w.bound
        self.window_attempts += w.attempts_fn() - w.start_attempts
        ext = self.window_extension_seconds
        for (point, _status, _profile), values in self.recorder.extension_points.items():
            ext[point] = ext.get(point, 0.0) + sum(values)
        plugins = self.window_plugin_seconds
        for (plugin, point), seconds in self.recorder.plugin_seconds().items():
            key = f"{plugin}/{POINT_ALIASES.get(point, point)}"
            plugins[key] = plugins.get(key, 0.0) + seconds

    # ------------------------------------------------------------------ the whole workload
    def prepare(self) -> None:
        for i, op in enumerate(self.ops):
            prep = _PREPARE.get(type(op))
            if prep is None:
                continue
            try:
                self.prepared[i] = prep(self, i, op)
            except UnsupportedWorkload as exc:
                raise UnsupportedWorkload(f"{_op_label(i, op)}: {exc}") from None
            except WorkloadError as exc:
                raise WorkloadError(f"{_op_label(i, op)}: {exc}") from None

    def setup_end(self) -> int:
        """Index of the first op that opens a metrics collection (len(ops) if none)."""
        for i, op in enumerate(self.ops):
            if isinstance(op, StartCollectingMetrics) or op.collects_metrics:
                return i
        return len(self.ops)

    def execute(self) -> None:
        self._t0 = self.timeline.now()
        setup_end = self.setup_end()
        stop = setup_end if self.stop_after == "setup" else len(self.ops)
        for i, op in enumerate(self.ops):
            if i == setup_end and self.at_setup_end is not None:
                self.at_setup_end(self)
            if i >= stop:
                self.stopped_before = i
                break
            self.op_index = i
            self._maybe_progress(time.perf_counter(), force=True)
            self.check_timeout()
            fn = _RUN.get(type(op))
            if fn is None:
                raise UnsupportedWorkload(f"{_op_label(i, op)}: "
                                          f"{op.unsupported_reason or 'op not supported'}")
            try:
                fn(self, i, op)
            except _Timeout:
                raise
            except UnsupportedWorkload as exc:
                raise UnsupportedWorkload(f"{_op_label(i, op)}: {exc}") from None
            except WorkloadError as exc:
                raise WorkloadError(f"op {i}: {exc}") from None
            if self.wall_clock_metrics:
                self.peak_rss = max(self.peak_rss, rss_bytes())
        if setup_end == len(self.ops) and self.at_setup_end is not None:
            self.at_setup_end(self)
        self._check_in_flight()

    def _check_in_flight(self) -> None:
        """Upstream checks, with QueueingHints on, that no in-flight event is left after the
        workload (a leak, #126962); every attempt here has finished when the ops end."""
        queue = self.scheduler.queue
        if not self.queueing_hints or self.scheduler.waiting:
            return
        events = queue.in_flight_events()
        if queue.in_flight_count() or events:
            self.errors.append(f"InFlightEvents should be empty, but has {len(events)} items "
                               f"({queue.in_flight_count()} pods in flight)")

    # ------------------------------------------------------------------ result
    def placements(self) -> list[Placement]:
        sched = self.scheduler
        rec = self.recorder
        pods = self.cluster.pods
        out = []
        for key in self.placement_keys:
            pod = pods.get(key)
            deleted = pod is None
            if pod is None:
                pod = self.gone[key]
            node = pod.node_name or None
            if node is not None:
                attempts = rec.scheduled_attempts.get(key, rec.failed_attempts.get(key, 0))
                # bound, then deleted (a preemption victim, deletePods, churn): say so
                gone = ("deleted after it was bound (a preemption victim, or deleted by an op)"
                        if deleted else None)
                out.append(Placement(pod.namespace, pod.name, node, attempts, gone))
                continue
            qpi = None if deleted else sched.queue.get(pod.uid)
            attempts = qpi.attempts if qpi is not None else rec.failed_attempts.get(key, 0)
            out.append(Placement(pod.namespace, pod.name, None, attempts,
                                 self._reason(pod, deleted)))
        return out

    def _reason(self, pod: Pod, deleted: bool) -> str:
        sched = self.scheduler
        key = pod.key
        ignored = sched.ignored.get(key)
        if ignored is not None:
            return (f'no scheduler profile for schedulerName "{ignored.scheduler_name}": the '
                    "pod stays pending")
        failure = sched.failures.get(key)
        if deleted:
            return "deleted before it was scheduled" + (f" (last failure: {failure})"
                                                        if failure else "")
        if pod.deletion_timestamp is not None:
            return "terminating (deletionTimestamp set): not scheduled"
        if failure:
            return failure
        if pod.spec.scheduling_gates:
            fwk = sched.profiles.get(pod.scheduler_name)
            gated = fwk.run_pre_enqueue(pod) if fwk is not None else None
            if gated is not None:
                return gated[1].message or f"gated by {gated[0]}"
        return "not attempted before the workload ended"

    def result(self, base: WorkloadResult) -> WorkloadResult:
        sched = self.scheduler
        fill_labels(self.data_items)
        base.data_items = self.data_items
        base.placements = self.placements()
        base.decisions = self.decisions.rows if self.decisions is not None else None
        base.ignored_feature_gates = self.ignored_gates
        base.measured_seconds = self.measured_seconds
        base.cpu_seconds = self.cpu_seconds
        base.harness_seconds = self.harness_seconds
        base.peak_rss_bytes = (max(self.peak_rss, rss_bytes()) if self.wall_clock_metrics
                               else 0)
        base.scheduled_pods = self.cluster.bind_count
        base.attempts = sched.attempts_total
        base.ignored_pods = len(sched.ignored)
        reasons: Counter[str] = Counter()
        for key, message in sched.failures.items():
            pod = self.cluster.pods.get(key)
            if pod is not None and not pod.node_name and pod.deletion_timestamp is None:
                reasons[message] += 1
        base.unschedulable_pods = sum(reasons.values())
        base.unschedulable_reasons = dict(reasons.most_common())
        base.progress_samples = self.progress_samples
        base.virtual_seconds = self.timeline.now() - self._t0 if self.timeline.virtual else 0.0
        scheduled = base.scheduled_pods
        base.extra = {
            "scheduler_seconds": self.scheduler_seconds,
            "window_scheduler_seconds": self.window_scheduler_seconds,
            "window_pod_creation_seconds": self.window_create_seconds,
            "attempts_per_scheduled_pod": base.attempts / scheduled if scheduled else 0.0,
            "nodes": float(self.cluster.table.num_nodes),
            "pods": float(len(self.cluster.pods)),
        }
        return base


def run_workload(test_case: TestCase, workload: Workload, *, seed: int = 0,
                 clock: str = "virtual", record_decisions: bool = False,
                 timeout: float | None = None, sample_interval: float = 0.1,
                 progress: Callable[[ProgressEvent], None] | None = None,
                 wall_clock_metrics: bool = True, plugin_sample_percent: int = 10,
                 stop_after: str = "all") -> WorkloadResult:
    """Run one workload of one test case; see the module docstring. ``clock`` is
    ``"virtual"`` (deterministic, the default) or ``"real"``."""
    return execute_workload(test_case, workload, seed=seed, clock=clock,
                            record_decisions=record_decisions, timeout=timeout,
                            sample_interval=sample_interval, progress=progress,
                            wall_clock_metrics=wall_clock_metrics,
                            plugin_sample_percent=plugin_sample_percent,
                            stop_after=stop_after)[0]


def execute_workload(test_case: TestCase, workload: Workload, *, seed: int = 0,
                     clock: str = "virtual", record_decisions: bool = False,
                     timeout: float | None = None, sample_interval: float = 0.1,
                     progress: Callable[[ProgressEvent], None] | None = None,
                     wall_clock_metrics: bool = True, plugin_sample_percent: int = 10,
                     stop_after: str = "all", pacer: Pacer | None = None,
                     at_setup_end: Callable[[Run], None] | None = None,
                     ) -> tuple[WorkloadResult, Run | None]:
    """:func:`run_workload`, also returning the finished :class:`Run` (cluster, scheduler)
    for inspection; None when the run could not be set up."""
    if clock not in CLOCK_MODES:
        raise ValueError(f"clock must be one of {', '.join(CLOCK_MODES)}, got {clock!r}")
    if sample_interval <= 0:
        raise ValueError(f"sample_interval must be > 0, got {sample_interval}")
    if stop_after not in STOP_AFTER:
        raise ValueError(f"stop_after must be one of {', '.join(STOP_AFTER)}, got {stop_after!r}")
    if not 0 <= plugin_sample_percent <= 100:
        raise ValueError(f"plugin_sample_percent must be 0-100, got {plugin_sample_percent}")
    started = time.perf_counter()
    result = WorkloadResult(
        test_case=test_case.name, workload=workload.name, topic=test_case.topic,
        params=dict(workload.params), labels=workload.labels,
        feature_gates=dict(workload.feature_gates), seed=seed, clock=clock)

    run: Run | None = None

    def finish(status: str, reason: str | None) -> tuple[WorkloadResult, Run | None]:
        result.status, result.reason = status, reason
        result.wall_seconds = time.perf_counter() - started
        return result, run

    reason = test_case.unsupported_reason
    if reason:
        return finish(STATUS_UNSUPPORTED, reason)
    try:
        ops = resolve(test_case, workload)
    except ConfigFileError as exc:
        return finish(STATUS_FAILED, str(exc))
    try:
        run = Run(test_case, workload, ops, seed=seed, clock=clock,
                  record_decisions=record_decisions, timeout=timeout,
                  sample_interval=sample_interval, progress=progress,
                  wall_clock_metrics=wall_clock_metrics,
                  plugin_sample_percent=plugin_sample_percent, stop_after=stop_after,
                  pacer=pacer, at_setup_end=at_setup_end)
    except UnsupportedWorkload as exc:
        return finish(STATUS_UNSUPPORTED, str(exc))
    except (SchedulerCoreError, WorkloadError) as exc:
        return finish(STATUS_FAILED, str(exc))
    result.ignored_feature_gates = run.ignored_gates
    status, reason = STATUS_OK, None
    run._t0 = run.timeline.now()
    try:
        run.prepare()
        run.execute()
    except UnsupportedWorkload as exc:
        status, reason = STATUS_UNSUPPORTED, str(exc)
    except _Timeout:
        op = run.ops[run.op_index] if 0 <= run.op_index < len(run.ops) else None
        where = f" in {_op_label(run.op_index, op)}" if op is not None else ""
        status, reason = STATUS_TIMEOUT, f"timed out after {timeout:g} s of wall time{where}"
    except (WorkloadError, SchedulerCoreError) as exc:
        status, reason = STATUS_FAILED, str(exc)
    except Exception as exc:  # a bug: report it, never raise for a workload
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        status, reason = STATUS_FAILED, (f"internal error: {type(exc).__name__}: {exc} "
                                         f"({tb.filename}:{tb.lineno})")
    if run.window is not None:  # a window left open by an error or the timeout: keep its data
        run.close_window(run.window.op_index, check_threshold=False)
    run.result(result)
    if status == STATUS_OK and run.errors:
        status, reason = STATUS_FAILED, "; ".join(run.errors)
    if status == STATUS_OK and run.threshold_errors:
        status, reason = STATUS_THRESHOLD_MISSED, "; ".join(run.threshold_errors)
    return finish(status, reason)
