"""Throughput sampling rules and histogram summaries, with injected time."""

from __future__ import annotations

import math

import pytest

from workloads.collectors.histograms import histogram_summary
from workloads.collectors.throughput import ThroughputCollector, summarize


class Scripted:
    """A wall clock and a scheduled-pod counter advanced by the test."""

    def __init__(self) -> None:
        self.t = 0.0
        self.count = 0


def run_ticks(steps: list[tuple[float, int]], interval: float = 1.0) -> ThroughputCollector:
    s = Scripted()
    c = ThroughputCollector(scheduled=lambda: s.count, now=lambda: s.t, interval=interval)
    c.start()
    for t, count in steps:
        s.t, s.count = t, count
        c.tick()
    return c


def test_first_nonzero_sample_is_only_a_baseline():
    c = run_ticks([(1, 0), (2, 100), (3, 250), (4, 450)])
    assert c.samples == [150.0, 200.0]


def test_idle_intervals_are_merged_not_zero():
    c = run_ticks([(1, 10), (2, 110), (3, 110), (4, 110), (5, 410)])
    # two idle ticks, then 300 pods over 3 s: 100 pods/s appended 3 times
    assert c.samples == [100.0, 100.0, 100.0, 100.0]


def test_ticks_between_intervals_do_not_sample():
    c = run_ticks([(0.5, 5), (1.0, 10), (1.4, 50), (2.0, 60), (3.0, 160)])
    assert c.samples == [50.0, 100.0]


def test_summary_nearest_rank():
    s = summarize([float(v) for v in range(1, 11)])
    assert s == {"Average": 5.5, "Perc50": 5.0, "Perc90": 9.0, "Perc95": 10.0, "Perc99": 10.0}
    assert summarize([]) == {}


def test_histogram_bucket_interpolation_matches_prometheus():
    # attempt-duration buckets start 1 ms, 2 ms, 4 ms...; 4 samples in (1, 2] ms
    out = histogram_summary("scheduler_scheduling_attempt_duration_seconds",
                            [0.0015, 0.0015, 0.0015, 0.0015])
    assert out["Perc50"] == pytest.approx(1.5)  # halfway through the (1, 2] ms bucket
    assert out["Average"] == pytest.approx(1.5)
    exact = histogram_summary("scheduler_scheduling_attempt_duration_seconds",
                              [0.001, 0.002, 0.003], exact=True)
    assert exact["Perc50"] == pytest.approx(2.0)


def test_histogram_overflow_bucket_reports_highest_bound():
    out = histogram_summary("scheduler_framework_extension_point_duration_seconds", [100.0])
    assert out["Perc99"] == pytest.approx(0.0001 * 2**11 * 1000)
    assert histogram_summary("x", []) == {}
    assert not math.isnan(out["Average"])
