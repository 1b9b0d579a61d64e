"""The run's metrics collection windows: the one open now, and what the closed ones measured
summed over the run (what ``bench.measure`` reads of a finished run), plus the run's peak
resident memory.

A window opens with ``createPods`` + ``collectMetrics`` or ``startCollectingMetrics`` and
closes with the op's end or ``stopCollectingMetrics``; closing turns it into DataItems
(:mod:`workloads.runner.metrics`) and checks the workload's threshold.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence

from scheduler_core.scheduler import Scheduler
from workloads.collectors.groups import GroupCollector
from workloads.config import TestCase, Workload
from workloads.ops.errors import WorkloadError
from workloads.result import DataItem
from workloads.runner.metrics import (
    POINT_ALIASES,
    THROUGHPUT_METRIC,
    RunRecorder,
    Window,
    apply_threshold,
    rss_bytes,
)
from workloads.runner.options import RunOptions
from workloads.runner.pods import PodBook

__all__ = ["Windows"]


class Windows:
    """The open window (``current``) and the sums over closed ones."""

    def __init__(self, test_case: TestCase, workload: Workload, options: RunOptions, *,
                 recorder: RunRecorder, scheduler: Scheduler, pods: PodBook) -> None:
        self.tc = test_case
        self.w = workload
        self.name = f"{test_case.name}/{workload.name}"
        self.options = options
        self.recorder = recorder
        self.scheduler = scheduler
        self.pods = pods
        self.current: Window | None = None
        self.data_items: list[DataItem] = []
        self.threshold_errors: list[str] = []
        # per window (its Name label): (seconds, pods bound in scope, attempts) samples
        self.progress_samples: dict[str, list[tuple[float, int, int]]] = {}
        self.measured_seconds = 0.0
        self.cpu_seconds = 0.0
        self.harness_seconds = 0.0
        self.scheduler_seconds = 0.0
        self.create_seconds = 0.0
        self.extension_seconds: dict[str, float] = {}  # extension point -> seconds
        self.plugin_seconds: dict[str, float] = {}  # "Plugin/ExtensionPoint" -> seconds
        self.scheduled = 0  # pods bound in scope
        self.attempts = 0
        self.peak_rss = rss_bytes() if options.wall_clock_metrics else 0

    def note_rss(self) -> None:
        """Sample resident memory into the peak (runs with wall-clock metrics only)."""
        if self.options.wall_clock_metrics:
            self.peak_rss = max(self.peak_rss, rss_bytes())

    def final_peak_rss(self) -> int:
        """The run's peak resident memory, sampled once more now (0 without wall-clock
        metrics)."""
        return max(self.peak_rss, rss_bytes()) if self.options.wall_clock_metrics else 0

    def open(self, index: int, name: str, namespaces: Sequence[str],
             selector: Mapping[str, str], collectors: Sequence[str]) -> None:
        if self.current is not None:
            raise WorkloadError("metrics collection is overlapping. Probably second collector "
                                "was started before stopping a previous one")
        sched = self.scheduler
        pacer = self.options.pacer
        w = Window(
            name=f"{self.name}/{name}", namespaces=frozenset(namespaces),
            label_selector=dict(selector), op_index=index, collectors=tuple(collectors),
            interval=self.options.sample_interval, attempts_fn=lambda: sched.attempts_total,
            wall_clock=self.options.wall_clock_metrics,
            now=pacer.now if pacer is not None else time.perf_counter)
        if getattr(sched, "generic_workload", False):
            w.groups = GroupCollector(sched.group_stats, time.perf_counter,
                                      self.options.sample_interval,
                                      wall_clock=self.options.wall_clock_metrics)
        self.current = self.pods.window = w
        w.start(self.recorder)

    def close(self, index: int, *, check_threshold: bool = True) -> None:
        w = self.current
        assert w is not None
        summary = w.stop()
        self.current = self.pods.window = None
        reasons: Counter[str] = Counter()
        failures = self.scheduler.failures
        for ns in sorted(w.namespaces):
            for pod in self.pods.in_namespace(ns).values():
                if not pod.node_name and w.matches(pod) and pod.key in failures:
                    reasons[failures[pod.key]] += 1
        ignored = sum(1 for p in self.scheduler.ignored.values() if p.namespace in w.namespaces)
        items = w.items(summary, self.recorder, self.tc.effective_metrics_collector_config,
                        scheduled=w.bound, unschedulable=reasons, ignored=ignored)
        if check_threshold and self.options.wall_clock_metrics:  # thresholds: timed metrics
            threshold = self.w.threshold_for(self.tc.topic)
            selector = self.w.threshold_metric_selector
            why = (w.no_throughput_reason() if selector.name == THROUGHPUT_METRIC
                   else "the metric was not collected in this window")
            self.threshold_errors.extend(apply_threshold(
                items, threshold, selector, window=w.name, missing_reason=why))
        self.data_items.extend(items)
        self.progress_samples[w.name] = w.progress
        self._add_totals(w)

    def _add_totals(self, w: Window) -> None:
        self.measured_seconds += w.wall_seconds
        self.cpu_seconds += w.cpu_seconds
        self.harness_seconds += w.harness_seconds
        self.scheduler_seconds += w.scheduler_seconds
        self.create_seconds += w.create_seconds
        if w.rss:
            self.peak_rss = max(self.peak_rss, *w.rss)
        self.scheduled += w.bound
        self.attempts += w.attempts_fn() - w.start_attempts
        ext = self.extension_seconds
        for (point, _status, _profile), values in self.recorder.extension_points.items():
            ext[point] = ext.get(point, 0.0) + sum(values)
        plugins = self.plugin_seconds
        for (plugin, point), seconds in self.recorder.plugin_seconds().items():
            key = f"{plugin}/{POINT_ALIASES.get(point, point)}"
            plugins[key] = plugins.get(key, 0.0) + seconds

