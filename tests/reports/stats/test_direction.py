"""metric_direction: which way is better, from metric name and unit."""

from __future__ import annotations

import pytest

from reports.stats import Direction, metric_direction


@pytest.mark.parametrize(("metric", "unit", "want"), [
    ("SchedulingThroughput", "pods/s", Direction.HIGHER_IS_BETTER),
    ("ops", "ops/s", Direction.HIGHER_IS_BETTER),
    ("cpu_seconds", "s", Direction.LOWER_IS_BETTER),
    ("scheduling_attempt_duration_seconds", "ms", Direction.LOWER_IS_BETTER),
    ("cpu_per_pod", "s/pod", Direction.LOWER_IS_BETTER),
    ("instructions_per_pod", "instructions/pod", Direction.LOWER_IS_BETTER),
    ("instructions", "instructions", Direction.LOWER_IS_BETTER),
    ("peak_rss_bytes", "bytes", Direction.LOWER_IS_BETTER),
    ("schedperf_rss_memory", "MB", Direction.LOWER_IS_BETTER),
    ("attempts_per_scheduled_pod", "attempts/pod", Direction.LOWER_IS_BETTER),
    ("schedperf_attempts_per_scheduled_pod", "attempts", Direction.LOWER_IS_BETTER),
    ("unschedulable_pods", "pods", Direction.LOWER_IS_BETTER),
], ids=lambda v: str(v))
def test_known_directions(metric: str, unit: str, want: Direction) -> None:
    got = metric_direction(metric, unit)
    assert got is want
    assert got.higher_is_better is (want is Direction.HIGHER_IS_BETTER)


@pytest.mark.parametrize(("metric", "unit"), [("schedperf_pods", "pods"), ("x", ""),
                                              ("ratio", "%")], ids=["pods", "empty", "percent"])
def test_unknown_direction_raises(metric: str, unit: str) -> None:
    with pytest.raises(ValueError, match=r"no known direction.*higher_is_better explicitly"):
        metric_direction(metric, unit)
