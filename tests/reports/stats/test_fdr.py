"""Benjamini-Hochberg adjustment and decide() re-judging a family of comparisons."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from reports.stats import Verdict, benjamini_hochberg, compare_samples, decide


@pytest.mark.parametrize(("p", "want"), [
    # sorted 0.005 0.01 0.03 0.04 -> m p / i = 0.02 0.02 0.04 0.04 (already monotone)
    ([0.01, 0.04, 0.03, 0.005], [0.02, 0.04, 0.04, 0.02]),
    # step-up: the largest p passes at q = 0.05 and carries the smaller ones with it
    ([0.04, 0.045, 0.046], [0.046, 0.046, 0.046]),
    # 3 * 0.5 capped at 1; NaN (untested) is left out of m
    ([0.5, math.nan, 0.001, 0.6], [0.6, math.nan, 0.003, 0.6]),
    ([], []),
    ([math.nan], [math.nan]),
], ids=["hand-4", "step-up", "nan-and-cap", "empty", "only-nan"])
def test_hand_computed(p: list[float], want: list[float]) -> None:
    got = benjamini_hochberg(p)
    np.testing.assert_allclose(got, want, equal_nan=True)


def test_matches_scipy_and_is_monotone() -> None:
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.uniform(size=35), rng.uniform(0, 0.002, size=5)])
    adj = benjamini_hochberg(p)
    np.testing.assert_allclose(adj, false_discovery_control(p))
    order = np.argsort(p)
    assert np.all(np.diff(adj[order]) >= 0)      # monotone in the raw p-values
    assert np.all(adj >= p)
    # the rejections at q are exactly the step-up set
    q = 0.05
    ps = np.sort(p)
    k = max([i + 1 for i in range(p.size) if ps[i] <= (i + 1) * q / p.size], default=0)
    assert int((adj <= q).sum()) == k


@pytest.mark.parametrize("bad", [[1.2], [-0.1]], ids=["above-1", "negative"])
def test_rejects_invalid_pvalues(bad: list[float]) -> None:
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        benjamini_hochberg(bad)


def _lognormal(seed: int, n: int, factor: float = 1.0) -> np.ndarray:
    return factor * np.exp(np.random.default_rng(seed).normal(0.0, 0.045, n))


def test_decide_turns_a_marginal_lone_regression_into_inconclusive() -> None:
    marginal = compare_samples(_lognormal(2, 10), _lognormal(102, 10, 1.06),
                               higher_is_better=False)
    assert marginal.verdict is Verdict.REGRESSION and 0.002 < marginal.p_value < 0.05
    nulls = [compare_samples(_lognormal(100 + i, 10), _lognormal(200 + i, 10),
                             higher_is_better=False) for i in range(39)]
    judged = decide([marginal, *nulls])
    assert judged[0].p_adjusted > 0.05
    assert judged[0].verdict is Verdict.INCONCLUSIVE
    assert judged[0].more_rounds_needed is not None and judged[0].more_rounds_needed > 0
    assert "BH-adjusted" in judged[0].note
    assert not any(c.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) for c in judged)


def test_decide_keeps_strong_regressions_and_ratio_decided_ones() -> None:
    strong = compare_samples(_lognormal(2, 10), _lognormal(3, 10, 1.15), higher_is_better=False)
    counted = compare_samples([1e9], [1.02e9], higher_is_better=False, mode="instructions")
    nulls = [compare_samples(_lognormal(100 + i, 10), _lognormal(200 + i, 10),
                             higher_is_better=False) for i in range(20)]
    judged = decide([strong, counted, *nulls], q=0.05)
    assert judged[0].verdict is Verdict.REGRESSION and judged[0].p_adjusted <= 0.05
    assert judged[1].verdict is Verdict.REGRESSION and math.isnan(judged[1].p_adjusted)
    # 21 tested hypotheses (the ratio-decided one is not in the family)
    assert judged[0].p_adjusted == pytest.approx(min(1.0, strong.p_value * 21), rel=1e-9)
    assert all(c.q == 0.05 for c in judged)
    assert [c.name for c in judged] == [c.name for c in [strong, counted, *nulls]]


def test_decide_rejects_bad_q() -> None:
    with pytest.raises(ValueError, match="q must be in"):
        decide([], q=1.5)
