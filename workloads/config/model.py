"""What a parsed config holds: test cases and their sized workloads.

A :class:`TestCase` is one entry of a ``performance-config.yaml`` (its workload template and
workloads); a :class:`Workload` is one sized instance of it (a Go sub-benchmark).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workloads.config.decode import FrozenDict
from workloads.config.metrics import (
    DEFAULT_METRICS_COLLECTOR_CONFIG,
    MetricsCollectorConfig,
    ThresholdMetricSelector,
)
from workloads.config.ops import CreatePodSets, Op

__all__ = ["TestCase", "Workload"]


# --------------------------------------------------------------------------- test cases


@dataclass(frozen=True)
class Workload:
    """One sized instance of a test case (a Go sub-benchmark)."""

    name: str
    test_case: str
    params: FrozenDict[str, Any]
    labels: tuple[str, ...]  # the test case's labels, then the workload's own
    threshold: float | FrozenDict[str, float] | None
    threshold_metric_selector: ThresholdMetricSelector
    feature_gates: FrozenDict[str, bool]  # test case gates overridden by the workload's
    line: int | None = field(default=None, compare=False, repr=False)
    params_line: int | None = field(default=None, compare=False, repr=False)
    yaml_path: str = field(default="", compare=False, repr=False)

    @property
    def full_name(self) -> str:
        """``<test case>/<workload>``, what ``--name`` is matched against."""
        return f"{self.test_case}/{self.name}"

    def threshold_for(self, topic: str) -> float:
        """Upstream thresholds.Get: the topic's value, else the plain number; 0 = no check."""
        if self.threshold is None:
            return 0.0
        if isinstance(self.threshold, Mapping):
            return float(self.threshold.get(topic, 0.0))
        return float(self.threshold)


@dataclass(frozen=True)
class TestCase:
    """One entry of a performance-config.yaml."""

    __test__ = False  # not a pytest test class

    name: str
    feature_gates: FrozenDict[str, bool]
    workload_template: tuple[Op, ...]
    workloads: tuple[Workload, ...]
    scheduler_config_path: Path | None
    default_pod_template_path: Path | None
    labels: tuple[str, ...]
    default_threshold_metric_selector: ThresholdMetricSelector | None
    metrics_collector_config: MetricsCollectorConfig | None  # None: the upstream default
    source: Path
    topic: str
    line: int | None = field(default=None, compare=False, repr=False)

    @property
    def effective_metrics_collector_config(self) -> MetricsCollectorConfig:
        return self.metrics_collector_config or DEFAULT_METRICS_COLLECTOR_CONFIG

    @property
    def unsupported_reason(self) -> str | None:
        """Why schedperf cannot run this test case's workloads (an op it does not model)."""
        for op in self.workload_template:
            inner = op.create_pods_op if isinstance(op, CreatePodSets) else op
            reason = op.unsupported_reason or inner.unsupported_reason
            if reason:
                return f"op {op.opcode} ({op.yaml_path}): {reason}"
        return None

    def workload(self, name: str) -> Workload:
        for w in self.workloads:
            if w.name == name:
                return w
        raise KeyError(f"{self.name} has no workload {name!r}")
