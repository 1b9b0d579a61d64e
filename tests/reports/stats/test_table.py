"""compare_frames over tidy polars result tables."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from reports.stats import compare_frames


def frame(seed: int, factors: dict[tuple[str, str], float], rounds: int = 10) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(1, rounds + 1):
        for w in ("SchedulingBasic", "TopologySpreading"):
            for metric, unit, level in (("SchedulingThroughput", "pods/s", 300.0),
                                        ("cpu_seconds", "s", 4.0), ("schedperf_pods", "pods",
                                                                    500.0)):
                f = factors.get((w, metric), 1.0)
                noise = 1.0 if unit == "pods" else float(np.exp(rng.normal(0, 0.04)))
                rows.append({"workload": w, "metric": metric, "unit": unit, "round": r,
                             "value": level * f * noise})
    return pl.DataFrame(rows)


def test_one_row_per_group_with_bh_verdicts() -> None:
    base = frame(1, {})
    head = frame(2, {("TopologySpreading", "SchedulingThroughput"): 0.85,
                     ("TopologySpreading", "cpu_seconds"): 1.2})
    out = compare_frames(base, head, paired=True)
    assert out.height == 6
    got = {(r["workload"], r["metric"]): r for r in out.iter_rows(named=True)}
    assert got[("TopologySpreading", "SchedulingThroughput")]["verdict"] == "regression"
    assert got[("TopologySpreading", "cpu_seconds")]["verdict"] == "regression"
    assert got[("SchedulingBasic", "cpu_seconds")]["verdict"] == "no change"
    pods = got[("SchedulingBasic", "schedperf_pods")]
    assert pods["verdict"] is None and "no known direction" in pods["note"]
    tested = out.filter(pl.col("verdict").is_not_null())
    assert (tested["p_adjusted"] >= tested["p_value"]).all()


def test_direction_override_and_missing_side() -> None:
    base = frame(1, {})
    head = frame(2, {}).filter(pl.col("workload") == "SchedulingBasic")
    out = compare_frames(base, head, higher_is_better={"schedperf_pods": True})
    got = {(r["workload"], r["metric"]): r for r in out.iter_rows(named=True)}
    assert got[("SchedulingBasic", "schedperf_pods")]["verdict"] == "no change"
    assert got[("TopologySpreading", "cpu_seconds")]["note"] == "missing in HEAD"


def test_missing_column_raises() -> None:
    with pytest.raises(ValueError, match=r"head: missing column\(s\) \['round'\]"):
        compare_frames(frame(1, {}), frame(2, {}).drop("round"))


def test_paired_needs_one_value_per_round() -> None:
    base = pl.concat([frame(1, {}), frame(3, {})])
    out = compare_frames(base, frame(2, {}), paired=True)
    assert out["verdict"].is_null().all()
    assert "several values for one round" in out["note"][0]
