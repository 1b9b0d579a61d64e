"""Which way is better for a metric: the sign that turns a change into a regression."""

from __future__ import annotations

import re
from enum import StrEnum

__all__ = ["Direction", "metric_direction"]


class Direction(StrEnum):
    HIGHER_IS_BETTER = "higher_is_better"   # rates: pods/s; a drop is a regression
    LOWER_IS_BETTER = "lower_is_better"     # costs: s, ms, instructions, bytes, attempts

    @property
    def higher_is_better(self) -> bool:
        return self is Direction.HIGHER_IS_BETTER


# Cost units (lower is better), matched on the unit's numerator (before any "/").
_COST_UNITS = frozenset({
    "s", "sec", "secs", "second", "seconds", "ms", "us", "µs", "μs", "ns", "min", "h",
    "instructions", "instruction", "ir", "insn", "cycles", "cycle",
    "b", "byte", "bytes", "kb", "kib", "mb", "mib", "gb", "gib",
    "attempts", "attempt", "retries",
})
# Rate denominators (higher is better): "<something>/s".
_TIME_DENOMS = frozenset({"s", "sec", "second", "min", "h", "ms"})
# Metric names whose "pods" count is a failure count (lower is better).
_BAD_COUNT = re.compile(r"unschedulable|ignored|failed|failure|error|evict|preempt", re.I)


def metric_direction(metric: str, unit: str) -> Direction:
    """Whether a higher value of ``metric`` (measured in ``unit``) is better.

    * ``<x>/s`` (``pods/s``, ``ops/s``): a rate, higher is better; a drop is a regression.
    * seconds and fractions of it (``s``, ``ms``, ``us``, ``ns``), ``instructions``/``cycles``,
      bytes (``bytes``, ``MB``, ...), ``attempts``, also per pod (``s/pod``,
      ``instructions/pod``, ``attempts/pod``): a cost, lower is better; a rise is a regression.
    * ``pods`` counts are lower-is-better only when the metric name says they are failures
      (``unschedulable``, ``ignored``, ...); a plain pod count has no direction.

    Anything else raises ``ValueError``: guessing a direction would silently swap regressions
    and improvements, so the caller must pass ``higher_is_better`` explicitly.
    """
    u = unit.strip().lower().replace(" ", "")
    num, _, den = u.partition("/")
    if den in _TIME_DENOMS and num not in _COST_UNITS:
        return Direction.HIGHER_IS_BETTER
    if num in _COST_UNITS:
        return Direction.LOWER_IS_BETTER
    if num in {"pod", "pods"} and not den and _BAD_COUNT.search(metric):
        return Direction.LOWER_IS_BETTER
    raise ValueError(f"metric {metric!r}: no known direction for unit {unit!r}; pass "
                     "higher_is_better explicitly (rates '<x>/s' are higher-is-better; s, ms, "
                     "instructions, bytes, attempts are lower-is-better)")
