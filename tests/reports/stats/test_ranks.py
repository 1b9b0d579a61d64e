"""Exact rank distributions, p-values and Hodges-Lehmann intervals against scipy / definitions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from reports.stats.ranks import (
    hodges_lehmann,
    hodges_lehmann_paired,
    mwu_min_p,
    mwu_pvalue,
    paired_interval,
    rounds_for_test,
    unpaired_interval,
    wilcoxon_min_p,
    wilcoxon_pvalue,
)


@pytest.mark.parametrize(("n", "m"), [(2, 2), (3, 5), (6, 6), (10, 10), (8, 20), (40, 45)],
                         ids=lambda v: str(v))
def test_mwu_pvalue_equals_scipy_exact(n: int, m: int) -> None:
    rng = np.random.default_rng(n * 100 + m)
    for shift in (0.0, 0.5, 1.5):
        a, b = rng.normal(size=n), rng.normal(size=m) + shift
        want = stats.mannwhitneyu(b, a, alternative="two-sided", method="exact").pvalue
        assert mwu_pvalue(a, b) == pytest.approx(want, rel=1e-9)


def test_mwu_pvalue_with_ties_uses_scipy_asymptotic() -> None:
    a, b = np.array([1.0, 2.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0, 4.0])
    want = stats.mannwhitneyu(b, a, alternative="two-sided", method="asymptotic").pvalue
    assert mwu_pvalue(a, b) == pytest.approx(want)


@pytest.mark.parametrize("n", [3, 6, 10, 25], ids=lambda n: f"n={n}")
def test_wilcoxon_pvalue_equals_scipy_exact(n: int) -> None:
    rng = np.random.default_rng(n)
    for shift in (0.0, 0.4, 1.0):
        d = rng.normal(size=n) + shift
        want = stats.wilcoxon(d, alternative="two-sided", method="exact").pvalue
        assert wilcoxon_pvalue(d) == pytest.approx(want, rel=1e-9)


def test_wilcoxon_pvalue_all_zero_is_one_and_zeros_go_to_scipy() -> None:
    assert wilcoxon_pvalue(np.zeros(6)) == 1.0
    d = np.array([0.0, 0.1, 0.2, -0.05, 0.3, 0.15, 0.25])
    assert wilcoxon_pvalue(d) == pytest.approx(stats.wilcoxon(d).pvalue)


def test_hodges_lehmann_definitions() -> None:
    b, h = np.array([0.0, 1.0]), np.array([2.0, 4.0])
    assert hodges_lehmann(b, h) == pytest.approx(np.median([2, 4, 1, 3]))  # 2.5
    d = np.array([1.0, 2.0, 6.0])
    # Walsh averages: 1, 2, 6, 1.5, 3.5, 4
    assert hodges_lehmann_paired(d) == pytest.approx(np.median([1, 2, 6, 1.5, 3.5, 4]))


def test_unpaired_interval_is_the_set_of_shifts_the_test_accepts() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=9), rng.normal(size=11) + 0.7
    ri = unpaired_interval(a, b, 0.95)
    assert ri.low < ri.estimate < ri.high
    assert ri.coverage >= 0.95
    eps = 1e-9
    # just inside the interval the shifted samples are not rejected at 5 %, just outside they are
    assert mwu_pvalue(a + ri.low + eps, b) > 0.05
    assert mwu_pvalue(a + ri.high - eps, b) > 0.05
    assert mwu_pvalue(a + ri.low - 1e-6, b) <= 0.05
    assert mwu_pvalue(a + ri.high + 1e-6, b) <= 0.05


def test_rank_intervals_cover_the_true_shift() -> None:
    rng = np.random.default_rng(7)
    draws = 400
    base = rng.normal(0, 0.045, (draws, 10))
    head = rng.normal(0.05, 0.045, (draws, 10))
    unp = [unpaired_interval(base[i], head[i], 0.95) for i in range(draws)]
    par = [paired_interval(head[i] - base[i], 0.95) for i in range(draws)]
    for ris in (unp, par):
        covered = np.mean([r.low <= 0.05 <= r.high for r in ris])
        assert covered >= 0.92   # exact intervals: >= 95 % in expectation


@pytest.mark.parametrize(("n", "coverage"), [(2, 0.5), (5, 1 - 2 / 32)], ids=["n=2", "n=5"])
def test_unreachable_level_reports_range_and_true_coverage(n: int, coverage: float) -> None:
    d = np.linspace(0.01, 0.05, n)
    ri = paired_interval(d, 0.95)
    assert (ri.low, ri.high) == (pytest.approx(0.01), pytest.approx(0.05))
    assert ri.coverage == pytest.approx(coverage)


def test_min_p_and_rounds_for_test() -> None:
    assert mwu_min_p(3, 3) == pytest.approx(0.1)
    assert mwu_min_p(4, 4) == pytest.approx(2 / 70)
    assert wilcoxon_min_p(5) == pytest.approx(1 / 16)
    assert rounds_for_test(0.05, paired=False) == 4
    assert rounds_for_test(0.05, paired=True) == 6
    assert rounds_for_test(0.05 / 30, paired=True) == 11
