"""Pod-group metrics of one collection window (GenericWorkload runs): groups scheduled per
second (groups placed for the first time, sampled as SchedulingThroughput is), the time from a
group's first attempt to its last bind (a histogram), the pod-group cycles by result, and the
wasted work: pods the pod-group algorithm assumed, then released because their group did not
fit.

It reads the scheduler's ``GroupStats`` (``scheduler_core.cycle.pod_group``) as differences
from the window's start, so a window sees only its own groups.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workloads.collectors.throughput import ThroughputCollector

__all__ = ["GroupCollector"]


@dataclass
class GroupCollector:
    stats: Any  # scheduler_core.cycle.pod_group.GroupStats
    now: Callable[[], float]
    interval: float
    wall_clock: bool = True
    throughput: ThroughputCollector | None = None
    summary: dict[str, float] = field(default_factory=dict)  # the sampled groups/s, at stop
    _start: dict[str, int] = field(default_factory=dict)

    def start(self) -> None:
        s = self.stats
        self._start = {"scheduled": s.scheduled, "placed": len(s.initially_scheduled),
                       "unschedulable": s.unschedulable, "errors": s.errors,
                       "cycles": s.cycles, "wasted": s.wasted_pods,
                       "latencies": len(s.latencies), "attempts": len(s.attempt_seconds)}
        if self.wall_clock:
            self.throughput = ThroughputCollector(scheduled=self.scheduled, now=self.now,
                                                  interval=self.interval)
            self.throughput.start()

    def scheduled(self) -> int:
        """Groups placed for the first time (PodGroupInitiallyScheduled) since the window
        opened; a basic group whose pods arrive one by one counts once."""
        return len(self.stats.initially_scheduled) - self._start["placed"]

    def tick(self) -> None:
        if self.throughput is not None:
            self.throughput.tick()

    def stop(self) -> None:
        if self.throughput is not None:
            self.summary = self.throughput.stop()

    def counts(self) -> dict[str, float]:
        s, b = self.stats, self._start
        return {"Scheduled": float(s.scheduled - b["scheduled"]),
                "Unschedulable": float(s.unschedulable - b["unschedulable"]),
                "Errors": float(s.errors - b["errors"]),
                "Attempts": float(s.cycles - b["cycles"])}

    def wasted_pods(self) -> int:
        return self.stats.wasted_pods - self._start["wasted"]

    def attempt_seconds(self) -> dict[str, list[float]]:
        """Wall seconds of this window's pod-group cycles, by result."""
        out: dict[str, list[float]] = {}
        for result, seconds in self.stats.attempt_seconds[self._start["attempts"]:]:
            out.setdefault(result, []).append(seconds)
        return out

    def latencies(self) -> list[float]:
        """Seconds (scheduler clock) from first attempt to last bind, groups of this window."""
        return list(self.stats.latencies[self._start["latencies"]:])
