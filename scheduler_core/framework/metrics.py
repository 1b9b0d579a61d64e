"""The metrics hook: how the harness observes the core without patching it.

The scheduler calls a ``MetricsRecorder``; the default ``NoopRecorder`` has ``enabled = False``,
in which case the framework does not even read the clock. Names follow kube-scheduler's metrics:
``scheduler_framework_extension_point_duration_seconds`` (extension point, status, profile),
``scheduler_plugin_execution_duration_seconds`` (plugin, extension point, status),
``scheduler_scheduling_attempt_duration_seconds`` (result, profile) and
``scheduler_pod_scheduling_duration_seconds`` (attempts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from scheduler_core.api.pod import Pod

__all__ = [
    "RESULT_ERROR",
    "RESULT_SCHEDULED",
    "RESULT_UNSCHEDULABLE",
    "MetricsRecorder",
    "NoopRecorder",
]

RESULT_SCHEDULED = "scheduled"
RESULT_UNSCHEDULABLE = "unschedulable"
RESULT_ERROR = "error"


class MetricsRecorder(Protocol):
    """``plugin_sample_percent``: share of scheduling cycles whose plugins are timed one by one
    (kube-scheduler's pluginMetricsSamplePercent is 10). Sampling is deterministic: every
    (100 / percent)-th cycle, so it never draws from the scheduler's random generator."""

    enabled: bool
    plugin_sample_percent: int

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None: ...

    def plugin(self, plugin: str, point: str, status: str, seconds: float) -> None: ...

    def attempt(self, result: str, profile: str, seconds: float) -> None: ...

    def pod_scheduled(self, pod: Pod, attempts: int, seconds: float) -> None: ...

    def pod_unschedulable(self, pod: Pod, plugins: frozenset[str], message: str) -> None: ...


class NoopRecorder:
    """Records nothing, costs nothing."""

    enabled = False
    plugin_sample_percent = 0

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        pass

    def plugin(self, plugin: str, point: str, status: str, seconds: float) -> None:
        pass

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        pass

    def pod_scheduled(self, pod: Pod, attempts: int, seconds: float) -> None:
        pass

    def pod_unschedulable(self, pod: Pod, plugins: frozenset[str], message: str) -> None:
        pass
