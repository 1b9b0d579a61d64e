"""Metric settings of a test case: histogram collection and threshold selection.

* :class:`MetricsCollectorConfig` (``metricsCollectorConfig``): histogram metrics to collect and
  the label values to report them for; ``DEFAULT_METRICS_COLLECTOR_CONFIG`` is upstream's default
  without the QueueingHints metrics (their ``event`` label values are not listed here).
* :class:`ThresholdMetricSelector` (``thresholdMetricSelector``): which DataItem the workload's
  ``threshold`` is compared with; default ``SchedulingThroughput`` / ``Average``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from workloads.config.decode import EMPTY, Fields, FrozenDict, Scope
from workloads.config.yaml_lines import LineDict, LineList

__all__ = [
    "DEFAULT_METRICS_COLLECTOR_CONFIG",
    "DEFAULT_THRESHOLD_METRIC_SELECTOR",
    "EXTENSION_POINTS",
    "PLUGIN_NAMES",
    "LabelValues",
    "MetricsCollectorConfig",
    "ThresholdMetricSelector",
    "check_selector",
    "read_metrics_collector_config",
    "read_selector",
    "read_threshold",
]

# metrics.ExtensionPoints (pkg/scheduler/metrics/metrics.go)
EXTENSION_POINTS = (
    "PreFilter", "Filter", "PreFilterExtensionAddPod", "PreFilterExtensionRemovePod",
    "PostFilter", "PreScore", "Score", "ScoreExtensionNormalize", "PreBind", "Bind",
    "PostBind", "Reserve", "Unreserve", "Permit",
)
# scheduler_perf's PluginNames: plugins whose execution durations are collected by default.
PLUGIN_NAMES = (
    "PrioritySort", "DefaultBinder", "DefaultPreemption", "DynamicResources", "ImageLocality",
    "InterPodAffinity", "NodeAffinity", "NodeName", "NodePorts",
    "NodeResourcesBalancedAllocation", "NodeResourcesFit", "NodeUnschedulable",
    "NodeVolumeLimits", "PodTopologySpread", "SchedulingGates", "TaintToleration",
    "VolumeBinding", "VolumeRestrictions", "VolumeZone",
)


@dataclass(frozen=True)
class LabelValues:
    """One label of a histogram metric and the values to report it for."""

    label: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class MetricsCollectorConfig:
    """Histogram metrics to collect: metric name -> label filters (None: all series summed)."""

    metrics: FrozenDict[str, tuple[LabelValues, ...] | None]

    def label_combinations(self, metric: str) -> list[dict[str, str]]:
        """Upstream uniqueLVCombos: the cartesian product of the metric's label values."""
        filters = self.metrics[metric] or ()
        return [dict(zip([lv.label for lv in filters], combo, strict=True))
                for combo in itertools.product(*(lv.values for lv in filters))]


DEFAULT_METRICS_COLLECTOR_CONFIG = MetricsCollectorConfig(FrozenDict({
    "scheduler_framework_extension_point_duration_seconds": (
        LabelValues("extension_point", EXTENSION_POINTS),),
    "scheduler_scheduling_attempt_duration_seconds": (
        LabelValues("result", ("scheduled", "unschedulable", "error")),),
    "scheduler_pod_scheduling_duration_seconds": None,
    "scheduler_plugin_execution_duration_seconds": (
        LabelValues("plugin", PLUGIN_NAMES), LabelValues("extension_point", EXTENSION_POINTS)),
}))


@dataclass(frozen=True)
class ThresholdMetricSelector:
    """Which DataItem the workload threshold is compared with."""

    name: str
    labels: FrozenDict[str, str] = EMPTY
    data_bucket: str = "Average"
    expect_lower: bool = False


DEFAULT_THRESHOLD_METRIC_SELECTOR = ThresholdMetricSelector("SchedulingThroughput")


def read_selector(f: Fields | None) -> ThresholdMetricSelector | None:
    if f is None:
        return None
    selector = ThresholdMetricSelector(
        name=f.string("name"), labels=f.str_map("labels"), data_bucket=f.string("dataBucket"),
        expect_lower=f.boolean("expectLower"))
    f.finish()
    return selector


def check_selector(f_path: str, scope: Scope, line: int | None,
                    selector: ThresholdMetricSelector, mcc: MetricsCollectorConfig) -> None:
    """Upstream thresholdMetricSelector.isValid."""
    if not selector.data_bucket:
        scope.error(f_path, f"dataBucket should be set for metric {selector.name}", line)
        return
    if selector.name == "SchedulingThroughput":
        return
    if selector.name not in mcc.metrics:
        scope.error(f_path, f"the metric {selector.name} is targeted, but it's not collected "
                    "during the test. Make sure the MetricsCollectorConfig is valid", line)
        return
    for combo in mcc.label_combinations(selector.name):
        if all(combo.get(k) == v for k, v in selector.labels.items()):
            return
    scope.error(f_path, f"no matching labels found for metric {selector.name}", line)


def read_metrics_collector_config(f: Fields | None) -> MetricsCollectorConfig | None:
    if f is None:
        return None
    metrics: dict[str, tuple[LabelValues, ...] | None] = {}
    node = f.mapping("metrics")
    for metric, filters in (node or {}).items():
        path = f"{f.key_of('metrics')}.{metric}"
        if filters is None:
            metrics[metric] = None
            continue
        if not isinstance(filters, LineList):
            f.error(path, "expected a list of {label, values} or null", node.value_lines[metric])
            continue
        out = []
        for i, item in enumerate(filters):
            if not isinstance(item, LineDict):
                f.error(f"{path}[{i}]", "expected a mapping {label, values}",
                        filters.item_lines[i])
                continue
            lf = Fields(f.scope, item, f.path(f"{path}[{i}]"), coerce=True)
            out.append(LabelValues(lf.string("label"), lf.str_list("values")))
            if not out[-1].label:
                lf.error(lf.key_of("label"), "must be set")
            lf.finish()
        metrics[metric] = tuple(out)
    f.finish()
    return MetricsCollectorConfig(FrozenDict(metrics))


def read_threshold(f: Fields) -> float | FrozenDict[str, float] | None:
    present, value = f.raw("threshold")
    if not present:
        return None
    key = f.key_of("threshold")

    def number(v: Any) -> float | None:
        return None if isinstance(v, bool) or not isinstance(v, (int, float)) else float(v)

    if isinstance(value, dict):
        out = {}
        for topic, v in value.items():
            n = number(v)
            if n is None:
                f.error(f"{key}.{topic}", "expected a number", value.value_lines.get(topic))
            elif n < 0:
                f.error(f"{key}.{topic}", f"must not be negative, got {v}",
                        value.value_lines.get(topic))
            else:
                out[topic] = n
        return FrozenDict(out)
    n = number(value)
    if n is None:
        f.error(key, "expected a number or a mapping of topic name to number")
        return None
    if n < 0:
        f.error(key, f"must not be negative, got {value}")
    return n
