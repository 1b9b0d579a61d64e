"""Benjamini-Hochberg across all (workload, metric) tests of one comparison.

One comparison runs dozens of tests (every workload times every metric). Judged one by one at
p <= 0.05, 40 null scenarios give 40 chances of a false alarm: about two per clean PR. The
Benjamini-Hochberg step-up procedure controls the false discovery rate instead: among the
changes it reports, the expected share of false ones is at most ``q``, and when nothing changed
at all (every hypothesis null) the chance of reporting anything is at most ``q``. It stays valid
under the positive dependence between metrics of one workload (Benjamini & Yekutieli 2001,
PRDS), and unlike Bonferroni it keeps power when many scenarios move together.

Comparisons without a p-value (near-deterministic ones decided by their ratio, or time
comparisons with one round) are not hypotheses of the family: their p stays NaN, ``m`` counts
only the tested ones, and their verdict is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from reports.stats.compare import DEFAULT_Q, Comparison, judge

__all__ = ["benjamini_hochberg", "decide"]


def benjamini_hochberg(pvalues: Iterable[float] | np.ndarray) -> np.ndarray:
    """BH-adjusted p-values (q-values), in input order; NaN inputs stay NaN.

    For the ``m`` finite p-values sorted ascending, ``adj_(i) = min_{j >= i} m * p_(j) / j``,
    capped at 1. A hypothesis is rejected at FDR level ``q`` iff ``adj <= q``, which is the
    step-up rule "largest ``i`` with ``p_(i) <= i q / m``, reject ``1..i``". The adjusted
    values are monotone in the raw ones.
    """
    p = np.asarray(list(pvalues) if not isinstance(pvalues, np.ndarray) else pvalues,
                   dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues: expected a 1-D sequence, got shape {p.shape}")
    finite = ~np.isnan(p)
    vals = p[finite]
    if np.any((vals < 0) | (vals > 1)):
        raise ValueError("pvalues: every p-value must be in [0, 1] (NaN = not tested)")
    out = np.full(p.shape, np.nan)
    m = vals.size
    if m == 0:
        return out
    order = np.argsort(vals, kind="stable")
    scaled = vals[order] * m / np.arange(1, m + 1)
    adj = np.minimum.accumulate(scaled[::-1])[::-1]
    res = np.empty(m)
    res[order] = np.minimum(adj, 1.0)
    out[finite] = res
    return out


def decide(comparisons: Sequence[Comparison], q: float = DEFAULT_Q) -> list[Comparison]:
    """Re-judge every comparison of one BASE vs HEAD run with BH-adjusted p-values at FDR
    ``q``; returns new :class:`Comparison` objects in input order (``p_adjusted`` filled,
    ``verdict``, ``note`` and ``more_rounds_needed`` recomputed)."""
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    adj = benjamini_hochberg([c.p_value for c in comparisons])
    return [judge(c, float(a), q) for c, a in zip(comparisons, adj, strict=True)]
