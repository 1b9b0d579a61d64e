"""What the dashboard shows, as plain data: workloads (one series per source, name and
machine), their metrics over versions (commits), and the change points found in them.

A *version* is a commit, or ``run <run_id>`` for rows without one (DataItems files, runs
outside a git checkout); the points of a metric are its versions in time order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from reports.stats import ChangePoint

__all__ = ["MetricHistory", "Point", "Workload"]


@dataclass(frozen=True)
class Point:
    """One version of one metric: the summary of its stored values (rounds of every run);
    ``values`` themselves are kept for the headline metric only (the release comparison
    needs them)."""

    version: str
    commit: str | None
    branch: str | None
    timestamp: datetime | None  # the earliest row of the version
    runs: int
    n: int  # finite measured values
    mean: float | None
    min: float | None
    max: float | None
    values: tuple[float, ...] = ()
    problems: str = ""  # statuses other than ok, comma-joined

    @property
    def label(self) -> str:
        """Short name for tables and axes: the commit's first 10 characters, else the day."""
        if self.commit:
            return self.commit[:10]
        return f"{self.timestamp:%Y-%m-%d %H:%M}" if self.timestamp else self.version


@dataclass(frozen=True)
class MetricHistory:
    """A metric of a workload over its versions, oldest first.

    ``change_points`` index ``points`` (the first point of the new level); they are found
    over the points with a value (``finite_points``), for the headline metric only.
    """

    metric: str
    bucket: str
    unit: str
    points: tuple[Point, ...]
    change_points: tuple[ChangePoint, ...] = ()
    items_per_round: int = 1  # > 1: several DataItems per round (per plugin, ...)

    @property
    def finite_points(self) -> list[tuple[int, Point]]:
        return [(i, p) for i, p in enumerate(self.points) if p.n and p.mean is not None]

    @property
    def latest(self) -> Point | None:
        finite = self.finite_points
        return finite[-1][1] if finite else None

    @property
    def change_vs_previous(self) -> float | None:
        """Mean of the latest version with a value vs the one before, as a ratio."""
        finite = self.finite_points
        if len(finite) < 2:
            return None
        before, last = finite[-2][1].mean, finite[-1][1].mean
        if before is None or last is None or before == 0:
            return None
        return last / before

    @property
    def change_point_indices(self) -> set[int]:
        return {cp.index for cp in self.change_points}


@dataclass(frozen=True)
class Workload:
    """One series of the dashboard: a workload measured by one source on one machine."""

    source: str
    name: str
    machine: str
    topic: str | None
    labels: tuple[str, ...]
    uncommon: bool
    page: str  # file name under workloads/
    headline: MetricHistory
    others: tuple[MetricHistory, ...] = ()
    not_shown: tuple[str, ...] = field(default=())  # metrics with several items per round

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.name, self.machine)

    @property
    def versions(self) -> int:
        return len(self.headline.points)
