"""Metrics collection windows: from collector data to perf-dash DataItems, and thresholds.

A :class:`Window` is one upstream metrics collection (``createPods`` with
``collectMetrics``, or ``startCollectingMetrics`` .. ``stopCollectingMetrics``). While it is
open:

* SchedulingThroughput: a :class:`~workloads.collectors.throughput.ThroughputCollector` on the wall
  clock (``time.perf_counter``), ticked between scheduling attempts; it counts pods whose
  ``nodeName`` went from empty to set in the window's namespaces (and label selector), as
  upstream's informer-based collector does since #127499, so pods deleted later still count.
  Every window that binds a measured pod reports the item, whatever the machine's speed: with
  at least :data:`MIN_SAMPLES` samples its buckets are upstream's (mean and percentiles of the
  samples); a phase too short for that reports measured pods / measured-phase wall seconds in
  every bucket (Average and PercNN alike). Its ``Samples`` key says which: the number of
  upstream samples taken (below MIN_SAMPLES: the phase rate). A window that binds nothing has
  no item, and a threshold on it fails naming why (:meth:`Window.no_throughput_reason`).
* histograms: the run's :class:`RunRecorder` is reset when the window opens (upstream resets the
  metric families) and summarised with
  :func:`~workloads.collectors.histograms.histogram_summary` when it closes, one DataItem per
  label-value combination of the test case's metrics collector config, in ms. The recorder's
  ``NormalizeScore`` plugin timings are reported as upstream's ``ScoreExtensionNormalize``
  extension point. ``scheduler_pod_scheduling_duration_seconds`` (and its ``_sli_`` variant,
  same data) is measured on the run's clock, so it is virtual time in virtual mode.

Besides upstream's items (``SchedulingThroughput``, the histograms and the newest
``SchedulingDuration``), every window adds schedperf items (``Metric`` prefixed
``schedperf_``): attempts per scheduled pod, pods by outcome, process CPU time, wall time split
into scheduler / pod creation / harness, resident memory sampled every 0.5 s (Memory collector,
on by default), and one ``schedperf_unschedulable_pods`` item per distinct failure message
of pods still unscheduled in the window's namespaces when it closes (label ``reason``).

A window with ``wall_clock=False`` (runs for instruction counting) reads no clock at all: no
throughput collector (no SchedulingThroughput item), no memory samples, and its wall and CPU
seconds stay 0, so nothing it does depends on how fast the run went.
"""

from __future__ import annotations

import gc
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler_core.api.pod import Pod
from workloads.collectors.groups import GroupCollector
from workloads.collectors.histograms import histogram_summary
from workloads.collectors.recorder import CollectingRecorder
from workloads.collectors.throughput import PERCENTILES, ThroughputCollector, summarize
from workloads.config import MetricsCollectorConfig, ThresholdMetricSelector
from workloads.result import DataItem

# psutil.Process() of this process, made on first use (False: psutil is missing). Not at
# import: importing psutil and creating the Process read /proc, whose changing numbers would
# make instruction counts of runs that never poll memory vary (bench.measure).
_PROCESS: Any = None

__all__ = [
    "GROUP_ATTEMPT_METRIC",
    "GROUP_LATENCY_METRIC",
    "GROUP_THROUGHPUT_METRIC",
    "MIN_SAMPLES",
    "NOT_APPLICABLE",
    "POINT_ALIASES",
    "THROUGHPUT_METRIC",
    "RunRecorder",
    "Window",
    "apply_threshold",
    "fill_labels",
    "rss_bytes",
    "throughput_buckets",
]

NOT_APPLICABLE = "not applicable"
MIN_SAMPLES = 2  # fewer upstream samples: SchedulingThroughput is the phase rate


def throughput_buckets(sampled: Mapping[str, float], samples: int, bound: int,
                       seconds: float) -> dict[str, float]:
    """SchedulingThroughput's buckets: the collector's summary of its ``samples`` samples, or,
    with fewer than MIN_SAMPLES, the phase rate (``bound`` pods over ``seconds``) in every
    bucket; and the ``Samples`` count saying which."""
    if samples >= MIN_SAMPLES:
        data = dict(sampled)
    else:
        rate = bound / seconds if seconds > 0 else 0.0
        data = {"Average": rate, **{f"Perc{p}": rate for p in PERCENTILES}}
    data["Samples"] = float(samples)
    return data
THROUGHPUT_METRIC = "SchedulingThroughput"
GROUP_THROUGHPUT_METRIC = "schedperf_pod_group_throughput"
GROUP_LATENCY_METRIC = "schedperf_pod_group_scheduling_duration_seconds"
GROUP_ATTEMPT_METRIC = "scheduler_podgroup_scheduling_attempt_duration_seconds"
MEMORY_SAMPLE_INTERVAL = 0.5  # upstream's Memory collector samples every 500 ms
# upstream's default collectors (newest): Throughput, Metrics, Memory, SchedulingDuration
DEFAULT_COLLECTORS = frozenset({"Throughput", "Metrics", "Memory", "SchedulingDuration"})
POINT_ALIASES = {"NormalizeScore": "ScoreExtensionNormalize"}  # recorder name -> upstream label
_POD_SCHEDULING = ("scheduler_pod_scheduling_duration_seconds",
                   "scheduler_pod_scheduling_sli_duration_seconds")


def rss_bytes() -> int:
    """The process's resident set size now (0 when psutil is missing)."""
    global _PROCESS
    if _PROCESS is None:
        try:  # psutil is a declared dependency; degrade to "not measured" without it
            import psutil
        except ImportError:  # pragma: no cover
            _PROCESS = False
        else:
            _PROCESS = psutil.Process()
    return int(_PROCESS.memory_info().rss) if _PROCESS else 0


class RunRecorder(CollectingRecorder):
    """A CollectingRecorder that also keeps per-pod attempt counts for placements."""

    def __init__(self, *, plugin_sample_percent: int = 10) -> None:
        super().__init__(plugin_sample_percent=plugin_sample_percent)
        self.scheduled_attempts: dict[str, int] = {}  # pod key -> attempts when bound
        self.failed_attempts: dict[str, int] = {}  # pod key -> failed attempts

    def pod_scheduled(self, pod: Pod, attempts: int, seconds: float) -> None:
        self.pod_scheduling.append((attempts, seconds))
        self.scheduled_attempts[pod.key] = attempts

    def pod_unschedulable(self, pod: Pod, plugins: frozenset[str], message: str) -> None:
        key = pod.key
        self.unschedulable[key] = (plugins, message)
        self.failed_attempts[key] = self.failed_attempts.get(key, 0) + 1

    def reset_window(self) -> None:
        """Drop the histogram observations (upstream resets the metric families)."""
        self.extension_points.clear()
        self.plugins.clear()
        self.attempts.clear()
        self.pod_scheduling.clear()


@dataclass
class Window:
    """One open metrics collection."""

    name: str  # the DataItem Name label: <test case>/<workload>/<namespace or name>
    namespaces: frozenset[str]
    label_selector: Mapping[str, str]
    op_index: int
    collectors: tuple[str, ...]
    interval: float
    attempts_fn: Callable[[], int]
    bound: int = 0  # pods bound in scope since the window opened
    created: int = 0  # pods created by ops while the window was open
    create_seconds: float = 0.0
    scheduler_seconds: float = 0.0
    progress: list[tuple[float, int, int]] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)
    throughput: ThroughputCollector | None = None
    groups: GroupCollector | None = None  # pod-group metrics (GenericWorkload runs)
    start_wall: float = 0.0
    start_cpu: float = 0.0
    start_attempts: int = 0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    _next_rss: float = 0.0
    enabled: frozenset[str] = DEFAULT_COLLECTORS
    wall_clock: bool = True  # False: no clock reads, no sampling, no memory polling
    # the wall clock of the window: time.perf_counter, or one that stops while the run is
    # paused (a paced run waiting for its turn, see Run's ``pacer``)
    now: Callable[[], float] = time.perf_counter

    def __post_init__(self) -> None:
        self.enabled = frozenset(self.collectors) or DEFAULT_COLLECTORS

    def matches(self, pod: Pod) -> bool:
        if pod.namespace not in self.namespaces:
            return False
        sel = self.label_selector
        if not sel:
            return True
        labels = pod.labels
        return all(labels.get(k) == v for k, v in sel.items())

    def start(self, recorder: RunRecorder) -> None:
        gc.collect()  # upstream runs runtime.GC() before collecting
        recorder.reset_window()
        self.start_attempts = self.attempts_fn()
        if self.groups is not None:
            self.groups.now = self.now
            self.groups.start()
        if not self.wall_clock:
            return
        self.rss.append(rss_bytes())
        self.start_cpu = time.process_time()
        self.start_wall = self.now()
        self._next_rss = self.start_wall + MEMORY_SAMPLE_INTERVAL
        self.throughput = ThroughputCollector(scheduled=self._observe, now=self.now,
                                              interval=self.interval)
        self.throughput.start()

    def _observe(self) -> int:
        """Called by the throughput collector at each sample: also logs progress (and memory)."""
        t = self.now()
        if self.groups is not None:
            self.groups.tick()
        self.progress.append((t - self.start_wall, self.bound,
                              self.attempts_fn() - self.start_attempts))
        if "Memory" in self.enabled and t >= self._next_rss:
            self.rss.append(rss_bytes())
            self._next_rss = t + MEMORY_SAMPLE_INTERVAL
        return self.bound

    def stop(self) -> dict[str, float]:
        if not self.wall_clock:
            return {}
        assert self.throughput is not None
        summary = self.throughput.stop()
        if self.groups is not None:
            self.groups.stop()
        self.wall_seconds = self.now() - self.start_wall
        self.cpu_seconds = time.process_time() - self.start_cpu
        self.rss.append(rss_bytes())
        return summary

    def throughput_data(self, sampled: Mapping[str, float]) -> dict[str, float] | None:
        """The SchedulingThroughput buckets (see the module docstring), None when the window
        bound no measured pod or read no clock."""
        if self.throughput is None or self.bound == 0:
            return None
        return throughput_buckets(sampled, len(self.throughput.samples), self.bound,
                                  self.wall_seconds)

    def no_throughput_reason(self) -> str:
        """Why a window has no SchedulingThroughput (for threshold messages)."""
        if not self.wall_clock:
            return "the run read no clock (instruction counting)"
        if self.bound == 0:
            return (f"no measured pod was scheduled in the measured phase ({self.created} "
                    "created in it)")
        return "the Throughput collector is not enabled"

    @property
    def harness_seconds(self) -> float:
        """Window time spent neither scheduling nor creating pods (ops, collectors, loop)."""
        return max(0.0, self.wall_seconds - self.scheduler_seconds - self.create_seconds)

    # ------------------------------------------------------------------ DataItems
    def items(self, throughput: dict[str, float], recorder: RunRecorder,
              mcc: MetricsCollectorConfig, *, scheduled: int, unschedulable: Mapping[str, int],
              ignored: int) -> list[DataItem]:
        """Upstream items (throughput, histograms, SchedulingDuration) then schedperf's."""
        name = self.name
        want = self.enabled
        out: list[DataItem] = []
        data = self.throughput_data(throughput) if "Throughput" in want else None
        if data is not None:
            out.append(DataItem(data, "pods/s", {"Name": name, "Metric": THROUGHPUT_METRIC}))
        if "Metrics" in want:
            out.extend(histogram_items(name, recorder, mcc))
        if "SchedulingDuration" in want:
            out.append(DataItem({"Duration": self.wall_seconds}, "s",
                                {"Name": name, "Metric": "SchedulingDuration"}))
        attempts = [float(a) for a, _ in recorder.pod_scheduling]
        if attempts:
            stats = summarize(attempts)
            stats["Max"] = max(attempts)
            out.append(DataItem(stats, "attempts",
                                {"Name": name, "Metric": "schedperf_attempts_per_scheduled_pod"}))
        n_attempts = self.attempts_fn() - self.start_attempts
        out.append(DataItem(
            {"Scheduled": float(scheduled), "Attempts": float(n_attempts),
             "Created": float(self.created), "Unschedulable": float(sum(unschedulable.values())),
             "Ignored": float(ignored)},
            "pods", {"Name": name, "Metric": "schedperf_pods"}))
        cpu = {"Total": self.cpu_seconds}
        if scheduled:
            cpu["PerScheduledPodMs"] = self.cpu_seconds / scheduled * 1000
        out.append(DataItem(cpu, "s", {"Name": name, "Metric": "schedperf_cpu_seconds"}))
        out.append(DataItem(
            {"Total": self.wall_seconds, "Scheduler": self.scheduler_seconds,
             "PodCreation": self.create_seconds, "Harness": self.harness_seconds},
            "s", {"Name": name, "Metric": "schedperf_wall_seconds"}))
        if "Memory" in want and self.rss:
            mb = [r / 2**20 for r in self.rss]
            stats = summarize(mb)
            stats["Max"] = max(mb)
            out.append(DataItem(stats, "MB", {"Name": name, "Metric": "schedperf_rss_memory"}))
        if self.groups is not None:
            out.extend(self.group_items())
        for reason, n in sorted(unschedulable.items()):
            out.append(DataItem({"Count": float(n)}, "pods",
                                {"Name": name, "Metric": "schedperf_unschedulable_pods",
                                 "reason": reason}))
        return out

    def group_items(self) -> list[DataItem]:
        """The pod-group items of a window (workloads.collectors.groups): groups/s (sampled as
        SchedulingThroughput is, only when a group was placed), group cycles by result, wasted
        pods, and the first-attempt-to-last-bind histogram in ms (scheduler clock)."""
        g = self.groups
        assert g is not None
        name = self.name
        out: list[DataItem] = []
        placed = g.scheduled()
        if g.throughput is not None and placed:
            data = throughput_buckets(g.summary, len(g.throughput.samples), placed,
                                      self.wall_seconds)
            out.append(DataItem(data, "groups/s",
                                {"Name": name, "Metric": GROUP_THROUGHPUT_METRIC}))
        out.append(DataItem(g.counts(), "groups",
                            {"Name": name, "Metric": "schedperf_pod_groups"}))
        out.append(DataItem({"Count": float(g.wasted_pods())}, "pods",
                            {"Name": name, "Metric": "schedperf_pod_group_wasted_pods"}))
        latencies = g.latencies()
        if latencies:
            summary = histogram_summary(_POD_SCHEDULING[0], latencies)
            data = {k: float(v) for k, v in summary.items()}
            out.append(DataItem(data, "ms", {"Name": name, "Metric": GROUP_LATENCY_METRIC}))
        for result, values in sorted(g.attempt_seconds().items()):
            summary = histogram_summary("scheduler_scheduling_attempt_duration_seconds", values)
            out.append(DataItem({k: float(v) for k, v in summary.items()}, "ms", {
                "Name": name, "Metric": GROUP_ATTEMPT_METRIC, "result": result}))
        return out


def _grouped(recorder: RunRecorder) -> dict[str, dict[tuple[str, ...], list[float]]]:
    """Recorder observations per metric, keyed by their label values."""
    ext: defaultdict[tuple[str, ...], list[float]] = defaultdict(list)
    for (point, _status, _profile), values in recorder.extension_points.items():
        ext[(point,)].extend(values)
    plugins: defaultdict[tuple[str, ...], list[float]] = defaultdict(list)
    for (plugin, point, _status), values in recorder.plugins.items():
        plugins[(plugin, POINT_ALIASES.get(point, point))].extend(values)
    attempts: defaultdict[tuple[str, ...], list[float]] = defaultdict(list)
    for (result, _profile), values in recorder.attempts.items():
        attempts[(result,)].extend(values)
    pod = {(): [s for _, s in recorder.pod_scheduling]}
    return {
        "scheduler_framework_extension_point_duration_seconds": dict(ext),
        "scheduler_plugin_execution_duration_seconds": dict(plugins),
        "scheduler_scheduling_attempt_duration_seconds": dict(attempts),
        _POD_SCHEDULING[0]: pod,
        _POD_SCHEDULING[1]: pod,
    }


# label names of each metric's key tuple in _grouped
_KEY_LABELS = {
    "scheduler_framework_extension_point_duration_seconds": ("extension_point",),
    "scheduler_plugin_execution_duration_seconds": ("plugin", "extension_point"),
    "scheduler_scheduling_attempt_duration_seconds": ("result",),
    _POD_SCHEDULING[0]: (),
    _POD_SCHEDULING[1]: (),
}


def histogram_items(name: str, recorder: RunRecorder,
                    mcc: MetricsCollectorConfig) -> list[DataItem]:
    """Upstream metricsCollector.collect: per metric and label-value combination with samples,
    Perc50/90/95/99 and Average in ms. Metrics schedperf does not produce are skipped, as
    upstream skips metrics it cannot find."""
    grouped = _grouped(recorder)
    out = []
    for metric in mcc.metrics:
        series = grouped.get(metric)
        if series is None:
            continue
        keys = _KEY_LABELS[metric]
        for combo in mcc.label_combinations(metric):
            values: list[float] = []
            for key, obs in series.items():
                labels = dict(zip(keys, key, strict=True))
                if all(labels.get(k) == v for k, v in combo.items()):
                    values.extend(obs)
            if not values:
                continue
            bucket_metric = _POD_SCHEDULING[0] if metric in _POD_SCHEDULING else metric
            data = {k: float(v) for k, v in histogram_summary(bucket_metric, values).items()}
            out.append(DataItem(data, "ms", {"Name": name, "Metric": metric, **combo}))
    return out


def apply_threshold(items: Iterable[DataItem], threshold: float,
                    selector: ThresholdMetricSelector, *, window: str = "",
                    missing_reason: str = "") -> list[str]:
    """Upstream applyThreshold: compare the selected bucket of every matching item; record
    ``<Bucket>Threshold`` in its data. Returns the failure messages (none when threshold is 0);
    no matching item at all is a failure too, naming ``window`` and ``missing_reason``."""
    if threshold == 0:
        return []
    bucket = selector.data_bucket or "Average"
    errors = []
    matched = False
    for item in items:
        labels = item.labels
        if labels.get("Metric") != selector.name:
            continue
        if any(labels.get(k) != v for k, v in selector.labels.items()):
            continue
        matched = True
        item.data[f"{bucket}Threshold"] = threshold
        value = item.data.get(bucket)
        if value is None:
            errors.append(f'{labels.get("Name")}: no data present for "{selector.name}" '
                          f'metric "{bucket}" bucket')
            continue
        ok = value < threshold if selector.expect_lower else value > threshold
        if not ok:
            direction = "lower" if selector.expect_lower else "higher"
            errors.append(f"{labels.get('Name')}: expected {selector.name} {bucket} to be "
                          f"{direction}: got {value:.2f}, want {threshold:g}")
    if not matched:
        why = f": {missing_reason}" if missing_reason else ""
        errors.append(f'{window}: no data present for "{selector.name}" metric{why}')
    return errors


def fill_labels(items: Iterable[DataItem]) -> None:
    """Give every item every label key used by any item ("not applicable" when missing)."""
    items = list(items)
    keys: dict[str, None] = {}
    for item in items:
        keys.update(dict.fromkeys(item.labels))
    for item in items:
        for k in keys:
            item.labels.setdefault(k, NOT_APPLICABLE)
