"""Is the step from a version to its previous one real? Judged by the project's own
statistics, as ``schedperf compare`` judges BASE against HEAD: every stored value of the
previous version against every one of this version, :func:`reports.stats.compare_samples`
(time mode: Hodges-Lehmann ratio, rank CI, Mann-Whitney U, 3 % minimum effect; unpaired),
then :func:`reports.stats.decide` (Benjamini-Hochberg) over each family of steps between the
same two commits (what ``schedperf compare PREVIOUS COMMIT`` would test together; ``family``
separates e.g. the metrics of a dashboard).

Only a ``regression`` or ``improvement`` verdict is a *significant* step. A side with a
single value is never judged (``n=1: no spread, not judged``): one value says nothing about
the noise (a SchedulingThroughput percentile of one round comes from one 0.1 s window).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from reports.stats import Comparison, Verdict, compare_samples, decide, metric_direction

__all__ = ["NOT_JUDGED", "ONE_VALUE", "Step", "StepVerdict", "judge_steps"]

NOT_JUDGED = "not judged"
ONE_VALUE = "n=1: no spread, not judged"


@dataclass(frozen=True)
class Step:
    """One version against its previous one: the values of both, and what identifies the
    family (the two versions) and the metric's direction (``metric``, ``unit``)."""

    previous: str
    version: str
    before: Sequence[float]
    after: Sequence[float]
    metric: str
    unit: str
    name: str = ""
    family: str = ""  # steps of one family between the same two versions share BH


@dataclass(frozen=True)
class StepVerdict:
    """``change``: mean after / mean before - 1 (None if a side has no value); ``verdict``:
    regression, improvement, no change, inconclusive, or ``not judged``; ``note`` why (n=1,
    no known direction, ...) or the comparison's own note; ``p``: the BH-adjusted p."""

    change: float | None
    verdict: str
    note: str
    p: float | None = None
    comparison: Comparison | None = None

    @property
    def significant(self) -> bool:
        return self.verdict in (Verdict.REGRESSION.value, Verdict.IMPROVEMENT.value)


def _finite(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def _change(before: list[float], after: list[float]) -> float | None:
    if not before or not after:
        return None
    mb = sum(before) / len(before)
    return (sum(after) / len(after)) / mb - 1 if mb else None


def judge_steps(steps: Sequence[Step]) -> list[StepVerdict]:
    """A verdict per step (module docstring), in input order."""
    out: list[StepVerdict | None] = [None] * len(steps)
    families: dict[tuple[str, str, str], list[tuple[int, Comparison]]] = {}
    for i, s in enumerate(steps):
        before, after = _finite(s.before), _finite(s.after)
        change = _change(before, after)
        if not before or not after:
            out[i] = StepVerdict(change, NOT_JUDGED, "no value on one side")
            continue
        if len(before) < 2 or len(after) < 2:
            out[i] = StepVerdict(change, NOT_JUDGED, ONE_VALUE)
            continue
        try:
            higher = metric_direction(s.metric, s.unit).higher_is_better
        except ValueError:
            out[i] = StepVerdict(change, NOT_JUDGED, f"no known direction for unit {s.unit!r}")
            continue
        try:
            c = compare_samples(before, after, higher_is_better=higher, mode="time",
                                name=s.name)
        except ValueError as exc:
            out[i] = StepVerdict(change, NOT_JUDGED, str(exc))
            continue
        families.setdefault((s.family, s.previous, s.version), []).append((i, c))
    for members in families.values():
        decided = decide([c for _, c in members])
        for (i, _), c in zip(members, decided, strict=True):
            p = c.p_adjusted if math.isfinite(c.p_adjusted) else None
            out[i] = StepVerdict(_change(_finite(steps[i].before), _finite(steps[i].after)),
                                 str(c.verdict), c.note, p, c)
    return [v for v in out if v is not None]
