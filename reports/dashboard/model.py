"""What the dashboard shows, as plain data: workloads (one series per source, name and
machine), their metrics over versions (commits), and the change points found in them.

A *version* is a commit, or ``run <run_id>`` for rows without one (DataItems files, runs
outside a git checkout); the points of a metric are its versions in git order
(:mod:`reports.store.order`: oldest first, versions of unknown order last).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from reports.stats import ChangePoint
from reports.store import ORDER_UNKNOWN, StepVerdict

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
    commit_date: datetime | None = None  # committer date, when known
    order: str = ORDER_UNKNOWN  # how the version was placed (reports.store.order)
    previous: int | None = None  # index of the point it is compared with ("vs previous")
    mainline: bool = False  # on the first-parent line of the newest version
    step: StepVerdict | None = None  # the change from ``previous``, judged

    @property
    def ordered(self) -> bool:
        return self.order != ORDER_UNKNOWN

    @property
    def label(self) -> str:
        """Short name for tables and axes: the commit's first 10 characters, else the day."""
        if self.commit:
            return self.commit[:10]
        return f"{self.timestamp:%Y-%m-%d %H:%M}" if self.timestamp else self.version


@dataclass(frozen=True)
class MetricHistory:
    """A metric of a workload over its versions in git order, oldest first (versions of
    unknown order last).

    ``change_points`` index ``points`` (the first point of the new level); they are found
    over the points with a value on the mainline (``mainline_points``), for the headline
    metric only.
    """

    metric: str
    bucket: str
    unit: str
    points: tuple[Point, ...]
    change_points: tuple[ChangePoint, ...] = ()
    items_per_round: int = 1  # > 1: several DataItems per round (per plugin, ...)

    @property
    def finite_points(self) -> list[tuple[int, Point]]:
        """The points with a value whose order is known (plotted, in git order)."""
        return [(i, p) for i, p in enumerate(self.points)
                if p.n and p.mean is not None and p.ordered]

    @property
    def mainline_points(self) -> list[tuple[int, Point]]:
        """``finite_points`` on the first-parent line of the newest version."""
        return [(i, p) for i, p in self.finite_points if p.mainline]

    @property
    def unordered(self) -> list[Point]:
        """Points of unknown order (listed, never compared)."""
        return [p for p in self.points if not p.ordered]

    @property
    def single_valued(self) -> bool:
        """Every version with a value has just one (n=1: no spread, steps not judged)."""
        finite = self.finite_points
        return bool(finite) and all(p.n <= 1 for _, p in finite)

    @property
    def latest(self) -> Point | None:
        """The newest version with a value in git order."""
        finite = self.finite_points
        return finite[-1][1] if finite else None

    def previous_of(self, point: Point) -> Point | None:
        return self.points[point.previous] if point.previous is not None else None

    @property
    def change_vs_previous(self) -> float | None:
        """Mean of the latest version vs the version it is compared with, as a ratio."""
        last = self.latest
        before = self.previous_of(last) if last is not None else None
        if before is None or last is None or before.mean is None or last.mean is None \
                or before.mean == 0:
            return None
        return last.mean / before.mean

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
