"""The time-mode study's resampling and summaries (bench/study/time_draws.py) on synthetic pools.

The pools are built with numpy: an A/A pool of 40 paced rounds of three workloads (BASE and
HEAD differ by 1 % noise per round, on top of a 20 % drift between rounds that pacing cancels)
and, per size, a slowdown pool of 30 rounds of the target alone whose HEAD costs that much
more. Plugin timings let one chosen plugin absorb the extra cost.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import polars as pl
import pytest

import bench.study.time_draws as st
from bench.study.settings import PLUGIN_KEY
from bench.study.time_draws import achieved, draw_decisions, round_noise, summarize
from bench.study.time_pools import POOL_SCHEMA

TARGET = "Spread/Big"
WORKLOADS = (TARGET, "Plain/One", "Plain/Two")
OTHER_PLUGIN = "NodeResourcesFit/Score"
AA_ROUNDS, SLOW_ROUNDS = 40, 30
SIZES = {"0.01": 0.01, "0.1": 0.10}
DRAWS = 30


def _rows(rng: np.random.Generator, pool: str, target: str | None, workload: str,
          rounds: int, slowdown: float, grown: str) -> pl.DataFrame:
    """Both sides' judged metrics and two plugin timings of ``rounds`` paced rounds."""
    rnd = np.arange(1, rounds + 1)
    drift = np.exp(rng.normal(0.0, 0.2, rounds))  # the machine, shared by both sides
    base_cpu = 1e-3 * drift
    head_cpu = base_cpu * np.exp(rng.normal(0.0, 0.01, rounds)) * (1 + slowdown)
    values: dict[tuple[str, str, str], np.ndarray] = {
        ("base", "cpu_per_pod", "s/pod"): base_cpu,
        ("head", "cpu_per_pod", "s/pod"): head_cpu,
        ("base", "SchedulingThroughput", "pods/s"):
            np.exp(rng.normal(0.0, 0.005, rounds)) / base_cpu,
        ("head", "SchedulingThroughput", "pods/s"):
            np.exp(rng.normal(0.0, 0.005, rounds)) / head_cpu,
    }
    for plugin in (PLUGIN_KEY, OTHER_PLUGIN):
        base_p = 1e-4 * drift * np.exp(rng.normal(0.0, 0.01, rounds))
        head_p = base_p * np.exp(rng.normal(0.0, 0.01, rounds))
        if plugin == grown:
            head_p = head_p + slowdown * base_cpu  # the extra work lands in this plugin
        values[("base", f"plugin:{plugin}", "s/pod")] = base_p
        values[("head", f"plugin:{plugin}", "s/pod")] = head_p
    parts = [pl.DataFrame({"pool": pool, "target": target, "side": side, "workload": workload,
                           "metric": metric, "unit": unit, "round": rnd, "value": v},
                          schema=POOL_SCHEMA)
             for (side, metric, unit), v in values.items()]
    return pl.concat(parts)


def pools(grown: str = PLUGIN_KEY, seed: int = 7) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    parts = [_rows(rng, "aa", None, w, AA_ROUNDS, 0.0, grown) for w in WORKLOADS]
    parts += [_rows(rng, key, TARGET, TARGET, SLOW_ROUNDS, f, grown)
              for key, f in SIZES.items()]
    return pl.concat(parts)


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rows = pools()
    # every round's values are unique, so a value identifies its round
    assert rows["value"].n_unique() == len(rows)
    return rows


@pytest.fixture(scope="module")
def judged_frames(frame: pl.DataFrame) -> Iterator[list[tuple[int, pl.DataFrame]]]:
    """Run the draws once, keeping every (n, BASE+HEAD frame) handed to compare_frames."""
    seen: list[tuple[int, pl.DataFrame]] = []
    real = st.compare_frames
    n_now = [0]

    def spy(base: pl.DataFrame, head: pl.DataFrame, **kw: Any) -> pl.DataFrame:
        seen.append((n_now[0], pl.concat([base, head])))
        return real(base, head, **kw)

    mp = pytest.MonkeyPatch()
    mp.setattr(st, "compare_frames", spy)
    try:
        for n in (3, 10):
            n_now[0] = n
            draw_decisions(frame, WORKLOADS, [TARGET], list(SIZES), [n], 5,
                           np.random.default_rng(n))
        yield seen
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def decided(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    return draw_decisions(frame, WORKLOADS, [TARGET], list(SIZES), [10, 35, 45], DRAWS,
                          np.random.default_rng(0))


@pytest.fixture(scope="module")
def summary(decided: tuple[pl.DataFrame, list[dict[str, Any]]]) -> dict[str, Any]:
    decisions, attributions = decided
    return summarize(decisions, attributions, list(SIZES), [TARGET], [10, 35, 45])


def test_a_draw_never_reuses_a_round(frame: pl.DataFrame,
                                     judged_frames: list[tuple[int, pl.DataFrame]]) -> None:
    round_of = dict(zip(frame["value"].to_list(), frame["round"].to_list(), strict=True))
    assert len(judged_frames) == 2 * 5 * (1 + len(SIZES))  # (aa + sizes) x draws x 2 n
    for n, sample in judged_frames:
        for (w, m, side), g in sample.group_by(["workload", "metric", "side"]):
            rounds = [round_of[v] for v in g["value"].to_list()]
            assert len(rounds) == n and len(set(rounds)) == n, (n, w, m, side)
        # BASE and HEAD of a workload come from the same n rounds (pairs stay pairs)
        per_side = sample.group_by(["workload", "side"]).agg(pl.col("round").unique().sort())
        for _, g in per_side.group_by("workload"):
            assert g["round"][0].to_list() == g["round"][1].to_list()


def test_decision_rows_cover_every_workload_of_every_draw(
        decided: tuple[pl.DataFrame, list[dict[str, Any]]]) -> None:
    decisions, _ = decided
    at10 = decisions.filter(pl.col("n") == 10)
    counts = at10.group_by("cell").agg(pl.len().alias("rows"), pl.col("draw").n_unique())
    assert sorted(counts.rows()) == [("0.01", DRAWS * 3, DRAWS), ("0.1", DRAWS * 3, DRAWS),
                                     ("aa", DRAWS * 3, DRAWS)]
    # the affected flag marks the target in the slowdown cells only
    assert at10.filter(pl.col("affected"))["workload"].unique().to_list() == [TARGET]
    assert at10.filter(pl.col("cell") == "aa")["affected"].sum() == 0


@pytest.mark.parametrize(("size", "low", "high"), [
    pytest.param("0.1", 0.95, 1.0, id="10%-flagged-in-every-draw"),
    pytest.param("0.01", 0.0, 0.05, id="1%-below-the-3%-min-effect"),
])
def test_power_of_the_target_at_10_rounds(summary: dict[str, Any], size: str, low: float,
                                          high: float) -> None:
    assert low <= summary["power"]["10"][size][TARGET] <= high


def test_controls_and_aa_almost_never_alarm(summary: dict[str, Any]) -> None:
    aa = summary["aa"]["10"]
    assert aa["draws"] == DRAWS
    assert set(aa["per_workload"]) == set(WORKLOADS)
    assert all(rate <= 0.05 for rate in aa["per_workload"].values())
    assert aa["any_alarm_per_draw"] <= 0.1
    for size in SIZES:
        assert summary["controls"]["10"][size] <= 0.05


@pytest.mark.parametrize(("n", "has_aa", "smallest"), [
    pytest.param("10", True, "0.1", id="10-rounds-detects-10%"),
    pytest.param("35", True, None, id="35-rounds-more-than-the-slowdown-pool"),
    pytest.param("45", False, None, id="45-rounds-more-than-the-aa-pool"),
])
def test_smallest_detected_and_pool_limits(summary: dict[str, Any], n: str, has_aa: bool,
                                           smallest: str | None) -> None:
    assert (n in summary["aa"]) is has_aa
    assert summary["smallest_detected"].get(n) == smallest
    if n == "35":
        assert summary["power"]["35"] == {}  # no slowdown cell drawn: 30 rounds < 35


@pytest.mark.parametrize(("grown", "share"), [
    pytest.param(PLUGIN_KEY, 1.0, id="injected-plugin-grew"),
    pytest.param(OTHER_PLUGIN, 0.0, id="another-plugin-grew"),
])
def test_attribution_names_the_plugin_that_grew(grown: str, share: float) -> None:
    rows = pools(grown=grown)
    decisions, attributions = draw_decisions(rows, WORKLOADS, [TARGET], ["0.1"], [10], 10,
                                             np.random.default_rng(1))
    assert attributions and all(a["target"] == TARGET for a in attributions)
    assert {a["top"] for a in attributions} == {grown}
    out = summarize(decisions, attributions, ["0.1"], [TARGET], [10])
    assert out["attribution"]["10"] == {"flagged": len(attributions), "names_plugin": share}


@pytest.mark.parametrize(("size", "nominal"), [
    pytest.param("0.01", 0.01, id="1%"),
    pytest.param("0.1", 0.10, id="10%"),
])
def test_achieved_is_the_injected_slowdown(frame: pl.DataFrame, size: str,
                                           nominal: float) -> None:
    got = achieved(frame, list(SIZES), [TARGET])[size][TARGET]
    assert got is not None and abs(got - nominal) < 0.005


def test_achieved_is_none_without_a_pool(frame: pl.DataFrame) -> None:
    assert achieved(frame, ["0.05"], [TARGET]) == {"0.05": {TARGET: None}}


@pytest.mark.parametrize(("metric", "ratio_sd", "base_sd"), [
    pytest.param("cpu_per_pod", (0.007, 0.014), (0.14, 0.27), id="cpu_per_pod"),
    pytest.param("SchedulingThroughput", (0.008, 0.017), (0.14, 0.27), id="throughput"),
])
def test_round_noise_separates_pacing_noise_from_drift(
        frame: pl.DataFrame, metric: str, ratio_sd: tuple[float, float],
        base_sd: tuple[float, float]) -> None:
    noise = round_noise(frame)
    assert set(noise) == set(WORKLOADS)  # the A/A pool only
    for w in WORKLOADS:
        cell = noise[w][metric]
        assert cell["rounds"] == AA_ROUNDS
        assert ratio_sd[0] < cell["sd_log_ratio"] < ratio_sd[1], (w, cell)
        assert base_sd[0] < cell["sd_log_base"] < base_sd[1], (w, cell)
