"""E-divisive means change points over per-commit series."""

from __future__ import annotations

import time

import numpy as np
import pytest

from reports.stats import change_points, energy_statistic
from reports.stats.changepoint import _prefix_within


def brute_q(z: np.ndarray, min_size: int) -> np.ndarray:
    out = []
    m = z.size
    for tau in range(min_size, m - min_size + 1):
        x, y = z[:tau], z[tau:]
        a, b = x.size, y.size
        cross = np.abs(x[:, None] - y[None, :]).sum()
        wx = np.abs(x[:, None] - x[None, :]).sum() / 2
        wy = np.abs(y[:, None] - y[None, :]).sum() / 2
        e = 2 * cross / (a * b) - wx / (a * (a - 1) / 2) - wy / (b * (b - 1) / 2)
        out.append(a * b / m * e)
    return np.array(out)


@pytest.mark.parametrize("m", [2, 5, 16, 37, 100], ids=lambda m: f"m={m}")
def test_prefix_within_sums_match_the_distance_matrix(m: int) -> None:
    rng = np.random.default_rng(m)
    sv = np.sort(rng.normal(size=m))
    ranks = np.stack([rng.permutation(m) for _ in range(3)])
    x = sv[ranks]
    want = np.triu(np.abs(x[:, :, None] - x[:, None, :]), 1).sum(axis=1)
    np.testing.assert_allclose(_prefix_within(ranks, sv), want, atol=1e-10)


@pytest.mark.parametrize("series", ["step", "ties"])
def test_energy_statistic_matches_definition(series: str) -> None:
    rng = np.random.default_rng(1)
    z = rng.normal(size=40)
    z[25:] += 1.0
    if series == "ties":
        z = np.round(z, 0)
    np.testing.assert_allclose(energy_statistic(z, min_size=3), brute_q(z, 3), atol=1e-9)
    assert int(np.argmax(energy_statistic(z, min_size=3))) + 3 in range(23, 28)


def _steps(seed: int, sizes: list[int], levels: list[float], noise: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    parts = [rng.normal(lv, noise * lv, n) for n, lv in zip(sizes, levels, strict=True)]
    return np.concatenate(parts)


@pytest.mark.parametrize(("sizes", "levels", "noise", "want"), [
    ([50, 50], [100, 110], 0.02, [50]),
    ([30, 70], [100, 92], 0.02, [30]),
    ([40, 40, 40], [100, 108, 100], 0.02, [40, 80]),
    ([60, 60, 80], [100, 105, 95], 0.015, [60, 120]),
    ([20, 20], [1.0, 1.1], 0.03, [20]),
], ids=["mid+10%", "early-8%", "up-down", "two-steps", "short"])
def test_finds_steps_within_2(sizes: list[int], levels: list[float], noise: float,
                              want: list[int]) -> None:
    z = _steps(sum(sizes), sizes, levels, noise)
    got = change_points(z, seed=0)
    assert len(got) == len(want), got
    for cp, w in zip(got, want, strict=True):
        assert abs(cp.index - w) <= 2
        assert cp.p_value <= 0.01
    # before/after means and magnitude of the first change
    first = got[0]
    assert first.before_mean == pytest.approx(levels[0], rel=0.01)
    assert first.after_mean == pytest.approx(levels[1], rel=0.01)
    assert first.magnitude == pytest.approx(levels[1] / levels[0] - 1, abs=0.02)
    assert first.delta == pytest.approx(first.after_mean - first.before_mean)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4], ids=lambda s: f"seed={s}")
def test_no_change_points_in_pure_noise(seed: int) -> None:
    z = np.random.default_rng(seed).normal(100, 3, 300)
    assert change_points(z, seed=seed) == []


def test_thousand_points_under_a_second() -> None:
    z = _steps(7, [400, 300, 300], [100, 106, 97], 0.02)
    t0 = time.process_time()
    got = change_points(z)
    elapsed = time.process_time() - t0
    assert [abs(c.index - w) <= 2 for c, w in zip(got, [400, 700], strict=True)] == [True] * 2
    assert elapsed < 1.0, f"{elapsed:.2f} s CPU"


def test_seeded_and_deterministic() -> None:
    z = _steps(3, [30, 30], [1.0, 1.04], 0.02)
    assert change_points(z, seed=5) == change_points(z, seed=5)


def test_min_magnitude_and_max_change_points() -> None:
    z = _steps(4, [50, 50, 50], [100, 103, 120], 0.005)
    assert len(change_points(z)) == 2
    big = change_points(z, min_magnitude=0.1)
    assert [c.index for c in big] == [100]
    assert len(change_points(z, max_change_points=1)) == 1


@pytest.mark.parametrize("z", [np.ones(50), np.arange(9.0)], ids=["constant", "too-short"])
def test_degenerate_series_have_none(z: np.ndarray) -> None:
    assert change_points(z) == []


@pytest.mark.parametrize(("kw", "match"), [
    (dict(values=[]), "values: no samples"),
    (dict(values=[1.0, float("nan")] * 10), "NaN or infinite"),
    (dict(values=[1.0] * 20, min_size=1), "min_size must be >= 2"),
    (dict(values=[1.0] * 20, p_value=0.001, permutations=99), "cannot reach p <= 0.001"),
    (dict(values=[1.0] * 20, p_value=1.0), r"p_value must be in \(0, 1\)"),
    (dict(values=[1.0] * 20, min_magnitude=-1), "min_magnitude must be >= 0"),
], ids=["empty", "nan", "min-size", "too-few-perms", "p-value", "magnitude"])
def test_bad_arguments(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        change_points(**kw)
