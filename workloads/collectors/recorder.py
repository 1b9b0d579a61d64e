"""A ``MetricsRecorder`` that keeps every observation, cheaply (list appends), for later
aggregation into upstream-style histograms and per-plugin time."""

from __future__ import annotations

from collections import defaultdict

from scheduler_core.api.pod import Pod

__all__ = ["CollectingRecorder"]


class CollectingRecorder:
    """Keeps raw durations per metric label set; aggregation happens after the run."""

    enabled = True

    def __init__(self, *, plugin_sample_percent: int = 10) -> None:
        if not 0 <= plugin_sample_percent <= 100:
            raise ValueError(f"plugin_sample_percent must be 0-100, got {plugin_sample_percent}")
        self.plugin_sample_percent = plugin_sample_percent
        self.extension_points: defaultdict[tuple[str, str, str], list[float]] = defaultdict(list)
        self.plugins: defaultdict[tuple[str, str, str], list[float]] = defaultdict(list)
        self.attempts: defaultdict[tuple[str, str], list[float]] = defaultdict(list)
        self.pod_scheduling: list[tuple[int, float]] = []
        self.unschedulable: dict[str, tuple[frozenset[str], str]] = {}

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        self.extension_points[(point, status, profile)].append(seconds)

    def plugin(self, plugin: str, point: str, status: str, seconds: float) -> None:
        self.plugins[(plugin, point, status)].append(seconds)

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        self.attempts[(result, profile)].append(seconds)

    def pod_scheduled(self, pod: Pod, attempts: int, seconds: float) -> None:
        self.pod_scheduling.append((attempts, seconds))

    def pod_unschedulable(self, pod: Pod, plugins: frozenset[str], message: str) -> None:
        self.unschedulable[pod.key] = (plugins, message)

    def attempt_count(self, result: str | None = None) -> int:
        return sum(len(v) for (r, _), v in self.attempts.items() if result in (None, r))

    def plugin_seconds(self) -> dict[tuple[str, str], float]:
        """Total seconds per (plugin, extension point)."""
        out: defaultdict[tuple[str, str], float] = defaultdict(float)
        for (plugin, point, _), values in self.plugins.items():
            out[(plugin, point)] += sum(values)
        return dict(out)
