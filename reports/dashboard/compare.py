"""HEAD vs the previous release from stored values: per workload, the headline metric's
values at BASE (every round of every run of that commit) against those at HEAD, through
:func:`reports.stats.compare_samples` (time mode, unpaired: rounds of different runs are not
pairs) and :func:`reports.stats.decide` (Benjamini-Hochberg over all the workloads compared).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reports.dashboard.model import Point, Workload
from reports.dashboard.release import Selection
from reports.stats import Comparison, compare_samples, decide, metric_direction

__all__ = ["CompareRow", "Comparisons", "compare_release"]


@dataclass(frozen=True)
class CompareRow:
    workload: Workload
    base: Point
    head: Point
    comparison: Comparison | None  # None: not comparable (note says why)
    note: str = ""


@dataclass(frozen=True)
class Comparisons:
    selection: Selection
    rows: tuple[CompareRow, ...] = ()
    missing: tuple[Workload, ...] = field(default=())  # not measured at both commits


def _point_at(workload: Workload, commit: str) -> Point | None:
    return next((p for p in workload.headline.points if p.commit == commit), None)


def compare_release(workloads: Sequence[Workload], selection: Selection) -> Comparisons:
    """Compare every workload measured at both ``selection.base`` and ``selection.head``."""
    if selection.head is None or selection.base is None:
        return Comparisons(selection)
    rows: list[CompareRow] = []
    missing: list[Workload] = []
    tested: list[tuple[int, Comparison]] = []
    for w in workloads:
        base, head = _point_at(w, selection.base.commit), _point_at(w, selection.head)
        if base is None or head is None or not base.values or not head.values:
            if base is not None or head is not None:
                missing.append(w)
            continue
        h = w.headline
        try:
            higher = metric_direction(h.metric, h.unit).higher_is_better
        except ValueError:
            rows.append(CompareRow(w, base, head, None,
                                   f"no known direction for unit {h.unit!r}"))
            continue
        try:
            c = compare_samples(base.values, head.values, higher_is_better=higher,
                                mode="time", name=f"{w.name} {h.metric}")
        except ValueError as exc:
            rows.append(CompareRow(w, base, head, None, str(exc)))
            continue
        tested.append((len(rows), c))
        rows.append(CompareRow(w, base, head, c))
    decided = decide([c for _, c in tested]) if tested else []
    for (i, _), c in zip(tested, decided, strict=True):
        rows[i] = CompareRow(rows[i].workload, rows[i].base, rows[i].head, c)
    return Comparisons(selection, tuple(rows), tuple(missing))
