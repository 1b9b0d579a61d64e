"""Rank statistics on log-scale samples: Hodges-Lehmann shift estimates and the confidence
intervals obtained by inverting the Mann-Whitney U / Wilcoxon signed-rank tests.

Why these: run-to-run noise of timings is skewed and has outliers, so a statistic based on
ranks (no normality assumption) is safer than a t-test; on the log scale a multiplicative
slowdown is a shift, which is exactly what the Hodges-Lehmann estimator measures.

* unpaired: the estimate is the median of all ``n*m`` differences ``log h_j - log b_i``; the
  ``1 - alpha`` interval runs from the ``k``-th smallest to the ``k``-th largest difference,
  where ``k`` comes from the exact null distribution of ``U`` (Moses/Bauer). It is the set of
  shifts the two-sided U test at level ``alpha`` does not reject.
* paired (interleaved rounds): the estimate is the median of the Walsh averages
  ``(d_i + d_j)/2, i <= j`` of the per-round log ratios ``d``; the interval uses the exact null
  distribution of the signed-rank statistic ``T+`` the same way.

Exact distributions are used up to ``EXACT_MAX_PAIRS`` pairs / ``EXACT_MAX_N`` rounds; above that
the normal approximation (with continuity correction) is accurate and cheaper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.stats import mannwhitneyu, norm, wilcoxon

__all__ = [
    "RankInterval",
    "hodges_lehmann",
    "hodges_lehmann_paired",
    "mwu_min_p",
    "mwu_pvalue",
    "paired_interval",
    "rounds_for_test",
    "unpaired_interval",
    "wilcoxon_min_p",
    "wilcoxon_pvalue",
]

EXACT_MAX_PAIRS = 10_000   # n*m up to which the exact U distribution is used
EXACT_MAX_N = 300          # pairs up to which the exact T+ distribution is used


@dataclass(frozen=True)
class RankInterval:
    """A Hodges-Lehmann estimate with its rank-test confidence interval (log scale).

    ``coverage`` is the interval's actual confidence; it is below the requested one only when
    there are too few samples to reach it (then the interval is the full range of the
    differences / Walsh averages and ``coverage`` says how much that range guarantees).
    """

    estimate: float
    low: float
    high: float
    coverage: float


@lru_cache(maxsize=256)
def _u_cdf(n: int, m: int) -> np.ndarray:
    """P(U <= u) for u = 0..n*m under H0, no ties (coefficients of the Gaussian binomial)."""
    n, m = min(n, m), max(n, m)
    size = n * m + 1
    c = np.zeros(size)
    c[0] = 1.0
    # [n+m choose n]_q = prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i), computed mod q^size;
    # every step is causal (coefficient u depends only on coefficients <= u), so the lower
    # tail we read is exact up to float rounding of small integers.
    for i in range(1, n + 1):
        a = m + i
        if a < size:
            c[a:] -= c[:size - a].copy()
        for r in range(i):
            c[r::i] = np.cumsum(c[r::i])
    c /= math.comb(n + m, n)
    return np.cumsum(c)


@lru_cache(maxsize=256)
def _t_cdf(n: int) -> np.ndarray:
    """P(T+ <= t) for t = 0..n(n+1)/2 under H0 (coefficients of prod (1 + q^i))."""
    size = n * (n + 1) // 2 + 1
    c = np.zeros(size)
    c[0] = 1.0
    for i in range(1, n + 1):
        c[i:] += c[:size - i].copy()
    c /= 2.0 ** n
    return np.cumsum(c)


def _k_exact(cdf: np.ndarray, alpha: float) -> int:
    """Largest k with P(stat <= k-1) <= alpha/2 (0 when even the extreme is too likely)."""
    return int(np.searchsorted(cdf, alpha / 2.0 * (1 + 1e-12), side="right"))


def _k_normal(mean: float, sd: float, alpha: float) -> int:
    return max(0, math.floor(mean + 0.5 - norm.ppf(1 - alpha / 2.0) * sd))


def _interval(values: np.ndarray, k: int, coverage_of_k: float) -> RankInterval:
    """Estimate = median of ``values``; interval = k-th smallest .. k-th largest (1-based)."""
    total = values.size
    est = float(np.median(values))
    if k < 1:   # the requested level is unreachable: report the full range
        lo, hi = np.min(values), np.max(values)
        return RankInterval(est, float(lo), float(hi), coverage_of_k)
    part = np.partition(values, (k - 1, total - k))
    return RankInterval(est, float(part[k - 1]), float(part[total - k]), coverage_of_k)


def hodges_lehmann(log_base: np.ndarray, log_head: np.ndarray) -> float:
    """Two-sample HL shift: median of all differences ``log_head[j] - log_base[i]``."""
    return float(np.median((log_head[None, :] - log_base[:, None]).ravel()))


def hodges_lehmann_paired(log_ratios: np.ndarray) -> float:
    """One-sample HL estimate: median of the Walsh averages ``(d_i + d_j) / 2, i <= j``."""
    i, j = np.triu_indices(log_ratios.size)
    return float(np.median((log_ratios[i] + log_ratios[j]) / 2.0))


def unpaired_interval(log_base: np.ndarray, log_head: np.ndarray,
                      confidence: float) -> RankInterval:
    """Hodges-Lehmann shift ``log head - log base`` with its Mann-Whitney interval."""
    n, m = log_base.size, log_head.size
    diffs = (log_head[None, :] - log_base[:, None]).ravel()
    alpha = 1.0 - confidence
    if n * m <= EXACT_MAX_PAIRS:
        cdf = _u_cdf(n, m)
        k = _k_exact(cdf, alpha)
        cov = 1.0 - 2.0 * float(cdf[k - 1]) if k >= 1 else 1.0 - 2.0 * float(cdf[0])
    else:
        k = _k_normal(n * m / 2.0, math.sqrt(n * m * (n + m + 1) / 12.0), alpha)
        cov = confidence
    return _interval(diffs, k, max(cov, 0.0))


def paired_interval(log_ratios: np.ndarray, confidence: float) -> RankInterval:
    """Hodges-Lehmann one-sample estimate of per-round log ratios with its Wilcoxon interval."""
    n = log_ratios.size
    i, j = np.triu_indices(n)
    walsh = (log_ratios[i] + log_ratios[j]) / 2.0
    alpha = 1.0 - confidence
    if n <= EXACT_MAX_N:
        cdf = _t_cdf(n)
        k = _k_exact(cdf, alpha)
        cov = 1.0 - 2.0 * float(cdf[k - 1]) if k >= 1 else 1.0 - 2.0 * float(cdf[0])
    else:
        k = _k_normal(n * (n + 1) / 4.0, math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0), alpha)
        cov = confidence
    return _interval(walsh, k, max(cov, 0.0))


def mwu_min_p(n: int, m: int) -> float:
    """Smallest two-sided p-value the U test can give with n vs m samples (no ties)."""
    return min(1.0, 2.0 / math.comb(n + m, n))


def wilcoxon_min_p(n: int) -> float:
    """Smallest two-sided p-value the signed-rank test can give with n non-zero pairs."""
    return min(1.0, 2.0 / 2.0 ** n)


def rounds_for_test(level: float, *, paired: bool) -> int:
    """Fewest rounds (equal per side) for which the rank test can reach ``p <= level``."""
    r = 1
    while (wilcoxon_min_p(r) if paired else mwu_min_p(r, r)) > level:
        r += 1
    return r


def mwu_pvalue(log_base: np.ndarray, log_head: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p-value.

    Without ties and up to ``EXACT_MAX_PAIRS`` pairs: exact, from the cached null distribution
    (the same one the interval uses, so the two agree; equal to scipy's ``method="exact"``).
    Otherwise ``scipy.stats.mannwhitneyu`` with the tie-corrected normal approximation.
    """
    n, m = log_base.size, log_head.size
    ties = np.unique(np.concatenate([log_base, log_head])).size < n + m
    if ties or n * m > EXACT_MAX_PAIRS:
        return float(mannwhitneyu(log_head, log_base, alternative="two-sided",
                                  method="asymptotic").pvalue)
    u = int(np.count_nonzero(log_head[None, :] > log_base[:, None]))
    cdf = _u_cdf(n, m)
    low = min(u, n * m - u)   # P(U >= u) = P(U <= nm - u) by symmetry
    return min(1.0, 2.0 * float(cdf[low]))


def wilcoxon_pvalue(log_ratios: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of the per-round log ratios.

    Without zeros or tied magnitudes and up to ``EXACT_MAX_N`` pairs: exact, from the cached
    null distribution of ``T+``. Otherwise ``scipy.stats.wilcoxon`` (zeros dropped, tie-corrected
    normal approximation where exact is impossible). All-zero ratios give 1.
    """
    d = log_ratios
    nonzero = d[d != 0]
    if nonzero.size == 0:
        return 1.0
    mags = np.abs(nonzero)
    if nonzero.size < d.size or np.unique(mags).size < mags.size or d.size > EXACT_MAX_N:
        return float(wilcoxon(d, alternative="two-sided").pvalue)
    ranks = np.empty(mags.size)
    ranks[np.argsort(mags)] = np.arange(1, mags.size + 1)
    t_plus = int(ranks[nonzero > 0].sum())
    total = mags.size * (mags.size + 1) // 2
    return min(1.0, 2.0 * float(_t_cdf(mags.size)[min(t_plus, total - t_plus)]))
