"""bench.compare.judge with outcomes: failures become verdict ``error`` with their cause, never
"inconclusive"; what was never run on one side, or is unsupported on both, is not compared."""

from __future__ import annotations

from typing import Any

import pytest

from bench.compare.judge import build_report, group_failures
from bench.compare.samples import outcome_row, outcomes_frame, time_rows, to_frame
from reports.render import parse_report

ROUNDS = (1, 2, 3, 4, 5, 6)


def _samples(*workloads: str, sides: tuple[str, ...] = ("base", "head"),
             rounds: tuple[int, ...] = ROUNDS, metrics: tuple[str, ...] = (
                 "SchedulingThroughput", "cpu_per_pod")) -> list[dict[str, Any]]:
    units = {"SchedulingThroughput": "pods/s", "cpu_per_pod": "s/pod"}
    values = {"SchedulingThroughput": 1000.0, "cpu_per_pod": 1e-4}
    return [{"side": s, "mode": "time", "workload": w, "metric": m, "unit": units[m],
             "round": r, "value": values[m] * (1 + r / 1000)}
            for s in sides for w in workloads for m in metrics for r in rounds]


def _ok(side: str, *workloads: str, rounds: tuple[int, ...] = ROUNDS) -> list[dict[str, Any]]:
    return [outcome_row(side, "time", w, r, "ok", None) for w in workloads for r in rounds]


def _report(rows: list[dict[str, Any]], outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    report = build_report(
        to_frame(rows), kind="results", base={"label": "a"}, head={"label": "b"},
        modes=["time"], repeat=len(ROUNDS), q=0.05, min_effect={"time": 0.03}, seed=None,
        label=None, uncommon=lambda w: False, outcomes=outcomes_frame(outcomes))
    parse_report(report)  # always a valid report.json
    return report


def _verdicts(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(r["workload"], r["metric"]): r["verdict"] for r in report["results"]}


def test_a_workload_failing_in_one_round_is_an_error_and_the_others_are_judged():
    rows = [r for r in _samples("T/a", "T/b")
            if not (r["side"] == "head" and r["workload"] == "T/b" and r["round"] == 4)]
    outcomes = _ok("base", "T/a", "T/b") + _ok("head", "T/a") + _ok(
        "head", "T/b", rounds=(1, 2, 3, 5, 6)) + [
        outcome_row("head", "time", "T/b", 4, "timeout", "timed out after 60 s in op 3")]
    report = _report(rows, outcomes)
    assert report["verdict"] == "error"
    assert report["failures"] == [{"side": "head", "mode": "time", "status": "timeout",
                                   "workloads": ["T/b"], "rounds": [4],
                                   "error": "timed out after 60 s in op 3"}]
    assert _verdicts(report) == {("T/a", "SchedulingThroughput"): "no change",
                                 ("T/a", "cpu_per_pod"): "no change",
                                 ("T/b", "SchedulingThroughput"): "error",
                                 ("T/b", "cpu_per_pod"): "error"}
    # T/a is still paired round by round (the lost round is T/b's, not everyone's): its
    # identical per-round ratios decide without a test (unpaired, its spread would need one)
    assert next(r for r in report["results"] if r["workload"] == "T/a")["p_value"] is None


def test_a_metric_missing_on_a_side_that_ran_the_workload_is_an_error():
    rows = [r for r in _samples("T/a") if not (r["side"] == "head"
                                               and r["metric"] == "SchedulingThroughput")]
    report = _report(rows, _ok("base", "T/a") + _ok("head", "T/a"))
    assert report["verdict"] == "error"
    (f,) = report["failures"]
    assert (f["side"], f["status"], f["workloads"]) == ("head", "no data", ["T/a"])
    assert f["error"] == "HEAD recorded no SchedulingThroughput value for this workload (BASE did)"
    assert _verdicts(report) == {("T/a", "SchedulingThroughput"): "error",
                                 ("T/a", "cpu_per_pod"): "no change"}


def test_unsupported_on_both_sides_is_not_compared_and_on_one_side_is_an_error():
    reason = "DynamicResourceAllocation (DRA) is not modelled"
    outcomes = [outcome_row(s, "time", "T/dra", r, "unsupported", reason)
                for s in ("base", "head") for r in ROUNDS]
    report = _report([], outcomes)
    assert report["failures"] == [] and report["verdict"] == "no change"
    assert report["settings"]["not_compared"] == [f"T/dra (time): unsupported on both sides: "
                                                  f"{reason}"]
    outcomes = _ok("base", "T/dra") + [outcome_row("head", "time", "T/dra", r, "unsupported",
                                                   reason) for r in ROUNDS]
    report = _report(_samples("T/dra", sides=("base",)), outcomes)
    assert report["verdict"] == "error"
    assert [(f["side"], f["status"]) for f in report["failures"]] == [("head", "unsupported")]


def test_a_workload_recorded_on_one_side_only_is_not_compared():
    report = _report(_samples("T/a") + _samples("T/only-base", sides=("base",)), [])
    assert report["verdict"] == "no change" and report["failures"] == []
    assert {r["workload"] for r in report["results"]} == {"T/a"}
    assert report["settings"]["not_compared"] == ["T/only-base (time): measured only in BASE"]


def test_failures_are_grouped_by_side_and_error():
    rows = [outcome_row("head", "time", w, r, "error", "worker exited with status 1")
            for r in (1, 2) for w in ("T/a", "T/b")]
    rows += [outcome_row("base", "time", "T/c", 2, "failed", "boom")]
    assert group_failures(rows) == [
        {"side": "base", "mode": "time", "status": "failed", "workloads": ["T/c"],
         "rounds": [2], "error": "boom"},
        {"side": "head", "mode": "time", "status": "error", "workloads": ["T/a", "T/b"],
         "rounds": [1, 2], "error": "worker exited with status 1"}]


def test_an_error_keeps_the_end_of_a_long_log():
    log = "\n".join(f"line {i}" for i in range(100)) + "\nSyntaxError: invalid syntax"
    row = outcome_row("head", "time", "T/a", 1, "error", log)
    assert row["error"].endswith("SyntaxError: invalid syntax")
    assert "line 0\n" not in row["error"] and len(row["error"].splitlines()) == 15


@pytest.mark.parametrize(("status", "measured"), [
    ("ok", True), ("threshold-missed", True), ("failed", False), ("timeout", False)])
def test_a_missed_threshold_still_counts_as_measured(status, measured):
    m = {"name": "T/a", "status": status, "throughput_avg": 900.0, "cpu_per_pod": 1e-4,
         "measured_pods": 10}
    assert bool(time_rows("head", 1, m)) == measured


def test_the_plugin_breakdown_lists_plugins_in_name_order_whatever_the_row_order():
    """report.json must not change from run to run: the per-side breakdown of plugin time is
    keyed in name order, not in the order a hash-based group-by happens to produce."""
    import polars as pl

    from bench.compare.judge import _attribution

    names = [f"plugin:P{i:02d}/Filter" for i in range(12)]
    rows = [{"side": side, "workload": "W", "metric": m, "round": r, "value": 1.0 + i}
            for side in ("base", "head") for r in (1, 2) for i, m in enumerate(names)]
    for order in (rows, rows[::-1]):
        _, breakdown = _attribution(pl.DataFrame(order), "W", paired=True)
        assert list(breakdown["base"]) == sorted(breakdown["base"]) == \
            [n.removeprefix("plugin:") for n in names]
        assert list(breakdown["head"]) == [n.removeprefix("plugin:") for n in names]
