"""BASE vs HEAD for one (workload, metric): ratio, confidence interval, p-value and verdict.

The statistics, and why
-----------------------
* **Ratio HEAD/BASE** = ``exp`` of the Hodges-Lehmann shift of the log samples (median of all
  pairwise log differences; paired: median of the Walsh averages of per-round log ratios).
  Timings are multiplicative and skewed; on the log scale a slowdown is a shift, and the HL
  estimator is robust to the odd slow round while using every sample (more efficient than the
  ratio of medians).
* **Confidence interval**: by default the exact rank interval (the shifts the Mann-Whitney /
  Wilcoxon test does not reject; :mod:`reports.stats.ranks`), which keeps its coverage at
  10 rounds where bootstrap percentile intervals run short. ``ci_method="bootstrap"`` gives a
  seeded percentile bootstrap of the same estimator instead.
* **p-value**: two-sided Mann-Whitney U (unpaired) or Wilcoxon signed-rank on the per-round log
  ratios (``paired=True``: interleaved A B B A rounds, where pairing cancels slow drifts of the
  machine). Exact when small and tie-free, normal approximation otherwise (scipy).
* **Minimum effect** ``min_effect`` (defaults in :data:`MIN_EFFECT`): a change smaller than this
  is never reported, however significant. It is symmetric on the log scale: a rise to
  ``1 + e`` and a drop to ``1 / (1 + e)`` count the same, so a 3 % slowdown in s/pod and the
  matching 2.9 % drop in pods/s get the same verdict.

Verdicts (``p`` is the Benjamini-Hochberg adjusted p-value once :func:`reports.stats.decide`
ran over the whole comparison; for a lone comparison it is the raw p-value; "big" means
``|log ratio| >= log(1 + min_effect)``)
-------------------------------------------------------------------------------------------
=============  ====================================================================
regression /   ``p <= q`` and big, in the bad / good direction of the metric
improvement    (``higher_is_better``)
no change      the whole CI lies inside ``(-min_effect, +min_effect)`` (even when
               significant: real but too small to matter), or ``p > q`` and not big
               (no evidence of a change and the best estimate is below the min effect)
inconclusive   the CI straddles the min-effect boundary and the two criteria disagree:
               big but ``p > q`` (looks like it matters, not yet shown), or ``p <= q``
               but not big with the CI reaching past the boundary (a real change that
               may or may not matter)
=============  ====================================================================

For ``inconclusive``, ``more_rounds_needed`` estimates the extra rounds after which the CI
half-width (``z * SE``, SE from the observed variance, shrinking as ``1/sqrt(rounds)``) would be
smaller than the distance between the estimate and the boundary that decides it, assuming the
estimate stays where it is: zero (i.e. significance, at the BH-adjusted level) when the
estimate already reaches the min effect, the min-effect threshold when a significant estimate
is below it. At least the rounds that let the rank test reach ``p <= q`` at all.

Degenerate inputs, decided explicitly
-------------------------------------
* **Near-deterministic** (instruction counts; also identical timings): when the spread (max -
  min) of the log samples within each side (paired: of the per-round log ratios) is at most
  ``DETERMINISTIC_SPREAD[mode] * min_effect`` (instructions 1/4, time 1/10 of it), the
  verdict is the ratio against the min effect: ``|ratio - 1| >= min_effect`` (log-symmetric)
  is a regression/improvement, else no change. No p-value (NaN, left out of the BH family):
  with 1 to 3 runs no rank test can reach significance, and none is needed when the noise is a
  small fraction of the effect being judged. The CI reported is the range of all pairwise
  ratios.
* **Instruction counts with some noise** (spread at most the min effect): when all pairwise
  ratios (the range interval) lie beyond the min effect, or all within it, that decides
  (``method="range"``, no p-value): with 2-3 runs the rank tests cannot reach significance,
  and for a near-deterministic instrument the chance that every pair lands past the
  threshold without a change is negligible. Otherwise the rank test runs as for timings.
  Not used for timings, whose decisions all go through the test and BH.
* **n = 1** per side: in ``instructions`` mode the instrument is deterministic, so the ratio
  decides as above. In ``time`` mode a single run says nothing about noise: the verdict is
  ``inconclusive`` and ``more_rounds_needed`` is the count that makes the rank test possible.
* Too few rounds for the test to ever reach ``p <= q`` (U test 3 vs 3, Wilcoxon with 5 pairs):
  never a regression; ``inconclusive`` when the estimate reaches the min effect (the note says
  the test cannot reach significance), else ``no change``.
* Empty input, NaN/inf or values <= 0: ``ValueError`` naming the side and the index.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from statistics import NormalDist
from types import MappingProxyType
from typing import Literal

import numpy as np

from reports.stats._validate import as_positive_samples
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

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_Q",
    "DETERMINISTIC_SPREAD",
    "MAX_MORE_ROUNDS",
    "MIN_EFFECT",
    "Comparison",
    "Mode",
    "Verdict",
    "compare_samples",
    "judge",
]

Mode = Literal["time", "instructions"]
CIMethod = Literal["rank", "bootstrap"]

#: Default minimum effect per measurement mode (fraction, log-symmetric). ``time``: 3 %, above
#: the +-2.5-3 % shifts seen between builds of identical code and about what 10 interleaved
#: rounds at 4-5 % run-to-run noise resolve (docs/statistics.md has the simulation).
#: ``instructions``: 1 %, counts are reproducible to far better than that.
MIN_EFFECT: Mapping[str, float] = MappingProxyType({"time": 0.03, "instructions": 0.01})
DEFAULT_Q = 0.05            # Benjamini-Hochberg false discovery rate / lone test level
DEFAULT_CONFIDENCE = 0.95   # confidence level of the reported intervals
#: Spread (fraction of the min effect) up to which the ratio alone decides: instruction counts
#: are deterministic by assumption, the spread is a sanity check; timings need to show it.
DETERMINISTIC_SPREAD: Mapping[str, float] = MappingProxyType({"time": 0.1, "instructions": 0.25})
MAX_MORE_ROUNDS = 1000      # cap of the more-rounds estimate (estimate on the threshold)
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_MAX_PAIRS = 250_000  # n*m (paired: n(n+1)/2) above which the bootstrap is refused
_BOOT_CHUNK_ELEMENTS = 2_000_000


class Verdict(StrEnum):
    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NO_CHANGE = "no change"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Comparison:
    """The outcome of one BASE vs HEAD comparison (see the module docstring).

    ``ratio``, ``ci_low`` and ``ci_high`` are HEAD/BASE (1.10 = HEAD 10 % higher);
    ``p_value`` is the raw two-sided p (NaN when no test was run: near-deterministic input or
    one time round); ``p_adjusted`` the Benjamini-Hochberg value used for the verdict.
    ``method`` says how the verdict was reached: ``mann-whitney``, ``wilcoxon``, ``ratio``
    (near-deterministic, decided by the ratio), ``range`` (instruction counts whose pairwise
    ratios all fall on one side of the min effect) or ``none`` (no variance information).
    ``log_se`` is the standard error of ``log(ratio)`` from the observed variance (NaN when
    unknown); ``test_min_p`` the smallest p the test can reach with these sample sizes.
    """

    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    n_base: int
    n_head: int
    verdict: Verdict
    more_rounds_needed: int | None
    note: str
    name: str = ""
    p_adjusted: float = math.nan
    higher_is_better: bool = False
    mode: str = "time"
    min_effect: float = MIN_EFFECT["time"]
    paired: bool = False
    confidence: float = DEFAULT_CONFIDENCE
    q: float = DEFAULT_Q
    method: str = ""
    ci_method: str = "rank"
    ci_coverage: float = math.nan
    log_se: float = math.nan
    test_min_p: float = math.nan
    spread: float = math.nan

    @property
    def change(self) -> float:
        """Relative change HEAD vs BASE (``ratio - 1``)."""
        return self.ratio - 1.0

    @property
    def rounds(self) -> int:
        return min(self.n_base, self.n_head)

    @property
    def is_regression(self) -> bool:
        return self.verdict is Verdict.REGRESSION

    def summary(self) -> str:
        """One line: ``name: +10.2 % (95 % CI +6.0 % to +14.6 %) regression``."""
        ci = "" if math.isnan(self.ci_low) else (
            f" ({self.confidence:.0%} CI {_pct(self.ci_low - 1)} to {_pct(self.ci_high - 1)})")
        more = f", ~{self.more_rounds_needed} more rounds" if self.more_rounds_needed else ""
        head = f"{self.name}: " if self.name else ""
        return f"{head}{_pct(self.change)}{ci} {self.verdict.value}{more}"


def _pct(x: float) -> str:
    v = 100.0 * x
    return f"{v:+.1f} %" if abs(v) < 100 else f"{v:+.0f} %"


# ---------------------------------------------------------------------------- judging

def _tol(t: float) -> float:
    return 1e-9 * t + 1e-15


def judge(c: Comparison, p_adjusted: float, q: float) -> Comparison:
    """``c`` with the verdict, ``more_rounds_needed`` and note for significance level ``q``
    and the (possibly multiplicity-adjusted) ``p_adjusted``. Pure; used by
    :func:`compare_samples` (``p_adjusted = p_value``) and :func:`reports.stats.decide`."""
    t = math.log1p(c.min_effect)
    est = math.log(c.ratio)
    tol = _tol(t)
    big = est != 0.0 and abs(est) >= t - tol
    bad_rise = not c.higher_is_better
    kind = Verdict.REGRESSION if (est > 0) == bad_rise else Verdict.IMPROVEMENT
    me = f"{c.min_effect * 100:g} %"
    more: int | None = None
    if c.method == "ratio":
        verdict = kind if big else Verdict.NO_CHANGE
        rel = "reaches" if big else "is within"
        note = (f"near-deterministic (spread {c.spread * 100:.3g} %): decided by the ratio, "
                f"{_pct(c.change)} {rel} the {me} minimum effect; no test")
    elif c.method == "range":
        lo, hi = math.log(c.ci_low), math.log(c.ci_high)
        beyond = lo >= t - tol or hi <= -t + tol
        verdict = kind if beyond else Verdict.NO_CHANGE
        rel = "reach" if beyond else "are within"
        note = (f"instruction counts (spread {c.spread * 100:.3g} %): all pairwise ratios "
                f"({_pct(c.ci_low - 1)} to {_pct(c.ci_high - 1)}) {rel} the {me} minimum "
                "effect; no test")
    elif c.method == "none":
        verdict = Verdict.INCONCLUSIVE
        more = _more_rounds(c, est, t, q)
        note = (f"one {c.mode} round per side: no variance estimate, no test; "
                f"~{more} more rounds make the rank test possible")
    else:
        lo, hi = math.log(c.ci_low), math.log(c.ci_high)
        sig = p_adjusted <= q
        inside = lo > -t + tol and hi < t - tol
        test = "Wilcoxon signed-rank" if c.method == "wilcoxon" else "Mann-Whitney U"
        ptxt = f"{test} p={c.p_value:.2g}"
        if p_adjusted != c.p_value:
            ptxt += f", BH-adjusted {p_adjusted:.2g}"
        ci = f"{c.confidence:.0%} CI {_pct(c.ci_low - 1)} to {_pct(c.ci_high - 1)}"
        if sig and big:
            verdict = kind
            note = f"{_pct(c.change)} reaches the {me} minimum effect; {ptxt}; {ci}"
        elif inside:
            verdict = Verdict.NO_CHANGE
            why = "significant but smaller than" if sig else "within"
            note = f"{ci} lies {why} the +-{me} minimum effect; {ptxt}"
        elif not sig and not big:
            verdict = Verdict.NO_CHANGE
            note = (f"no significant change ({ptxt}); {_pct(c.change)} is below the {me} "
                    f"minimum effect; the {ci} does not rule out a {me} change")
        else:
            verdict = Verdict.INCONCLUSIVE
            more = _more_rounds(c, est, t, q, p_adjusted)
            capped = " (capped: the estimate sits on the threshold)" \
                if more >= MAX_MORE_ROUNDS else ""
            why = (f"reaches the {me} minimum effect but is not significant" if big else
                   f"is significant but below the {me} minimum effect")
            unreachable = (f"; with {c.n_base} vs {c.n_head} samples the test cannot reach "
                           f"p <= {q:g} (min {c.test_min_p:.2g})" if c.test_min_p > q else "")
            note = (f"{_pct(c.change)} {why} ({ptxt}{unreachable}); the {ci} straddles the "
                    f"threshold; ~{more} more rounds would decide{capped}")
    return replace(c, verdict=verdict, more_rounds_needed=more, note=note,
                   p_adjusted=p_adjusted, q=q)


def _more_rounds(c: Comparison, est: float, t: float, q: float,
                 p_adjusted: float = math.nan) -> int:
    """Extra rounds until the CI half-width ``z * SE`` (``SE ~ 1/sqrt(rounds)``) is below the
    distance from the estimate to the boundary that decides it, the estimate staying put.

    * estimate beyond the min effect, not significant: the boundary is 0 (significance); ``z``
      is taken at the raw level that passes BH here (``q * p / p_adjusted``).
    * significant but below the min effect: the boundary is the min effect (the CI must fit
      inside it for "no change"); ``z`` at the confidence level.
    At least the rounds that let the rank test reach ``p <= q`` at all; at most
    ``MAX_MORE_ROUNDS`` (an estimate sitting on the threshold never decides).
    """
    rounds = max(c.rounds, 1)
    need = max(rounds_for_test(q, paired=c.paired), rounds + 1)
    if math.isfinite(c.log_se) and c.log_se > 0:
        if abs(est) >= t - _tol(t):
            dist = abs(est)
            level = q
            if math.isfinite(p_adjusted) and p_adjusted > 0 and math.isfinite(c.p_value):
                level = q * min(1.0, c.p_value / p_adjusted)
            z = NormalDist().inv_cdf(1.0 - level / 2.0)
        else:
            dist = t - abs(est)
            z = NormalDist().inv_cdf(0.5 + c.confidence / 2.0)
        if dist <= 0:
            return MAX_MORE_ROUNDS
        total = rounds * (z * c.log_se / dist) ** 2
        if total >= rounds + MAX_MORE_ROUNDS:
            return MAX_MORE_ROUNDS
        need = max(need, math.ceil(total))
    return min(need - rounds, MAX_MORE_ROUNDS)


# ---------------------------------------------------------------------------- estimating

def _p_value(lb: np.ndarray, lh: np.ndarray, paired: bool) -> tuple[float, float]:
    """Two-sided p-value and the smallest p the test can reach with these sizes."""
    if paired:
        d = lh - lb
        return wilcoxon_pvalue(d), wilcoxon_min_p(int(np.count_nonzero(d)))
    return mwu_pvalue(lb, lh), mwu_min_p(lb.size, lh.size)


def _bootstrap(lb: np.ndarray, lh: np.ndarray, paired: bool, confidence: float,
               n_boot: int, seed: int) -> tuple[float, float]:
    """Percentile bootstrap interval of the HL estimator (seeded, vectorised in chunks)."""
    rng = np.random.default_rng(seed)
    stats: list[np.ndarray] = []
    if paired:
        d = lh - lb
        n = d.size
        i, j = np.triu_indices(n)
        chunk = max(1, _BOOT_CHUNK_ELEMENTS // i.size)
        for start in range(0, n_boot, chunk):
            s = d[rng.integers(0, n, size=(min(chunk, n_boot - start), n))]
            stats.append(np.median((s[:, i] + s[:, j]) / 2.0, axis=1))
    else:
        n, m = lb.size, lh.size
        chunk = max(1, _BOOT_CHUNK_ELEMENTS // (n * m))
        for start in range(0, n_boot, chunk):
            k = min(chunk, n_boot - start)
            sb = lb[rng.integers(0, n, size=(k, n))]
            sh = lh[rng.integers(0, m, size=(k, m))]
            stats.append(np.median((sh[:, None, :] - sb[:, :, None]).reshape(k, -1), axis=1))
    alpha = 1.0 - confidence
    lo, hi = np.quantile(np.concatenate(stats), [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lo), float(hi)


def _log_se(lb: np.ndarray, lh: np.ndarray, paired: bool) -> float:
    """Standard error of the log-ratio estimate from the observed variance (NaN: unknown)."""
    if paired:
        d = lh - lb
        return float(np.std(d, ddof=1) / math.sqrt(d.size)) if d.size >= 2 else math.nan
    var = [float(np.var(x, ddof=1)) for x in (lb, lh) if x.size >= 2]
    if not var:
        return math.nan
    vb = float(np.var(lb, ddof=1)) if lb.size >= 2 else float(np.mean(var))
    vh = float(np.var(lh, ddof=1)) if lh.size >= 2 else float(np.mean(var))
    return math.sqrt(vb / lb.size + vh / lh.size)


def _check_args(mode: str, min_effect: float | None, confidence: float, q: float,
                ci_method: str, n_boot: int) -> float:
    if mode not in MIN_EFFECT:
        raise ValueError(f"mode must be one of {sorted(MIN_EFFECT)}, got {mode!r}")
    me = MIN_EFFECT[mode] if min_effect is None else float(min_effect)
    if not (math.isfinite(me) and me >= 0):
        raise ValueError(f"min_effect must be a finite fraction >= 0 (0.03 = 3 %), got {me!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    if ci_method not in ("rank", "bootstrap"):
        raise ValueError(f"ci_method must be 'rank' or 'bootstrap', got {ci_method!r}")
    if n_boot < 100:
        raise ValueError(f"n_boot must be >= 100, got {n_boot!r}")
    return me


def compare_samples(base: Iterable[float] | np.ndarray, head: Iterable[float] | np.ndarray, *,
                    higher_is_better: bool, mode: Mode = "time",
                    min_effect: float | None = None, paired: bool = False,
                    confidence: float = DEFAULT_CONFIDENCE, q: float = DEFAULT_Q,
                    ci_method: CIMethod = "rank", n_boot: int = BOOTSTRAP_RESAMPLES,
                    seed: int = 0, name: str = "") -> Comparison:
    """Compare BASE and HEAD samples (one value per round) of one metric.

    Parameters
    ----------
    base, head : samples, all finite and > 0 (one per round; ``paired`` needs equal lengths,
        element ``i`` of both coming from round ``i``).
    higher_is_better : direction of the metric (:func:`reports.stats.metric_direction`).
    mode : ``"time"`` or ``"instructions"``; picks the default ``min_effect`` and how n = 1
        is treated (module docstring).
    min_effect : smallest relative change that matters (0.03 = 3 %); default per mode.
    paired : pair samples by round index (Wilcoxon signed-rank on per-round log ratios).
    confidence : level of the interval. ``q``: significance level of a lone comparison;
        :func:`reports.stats.decide` re-judges a whole family at its BH level.
    ci_method : ``"rank"`` (exact HL interval) or ``"bootstrap"`` (percentile, ``n_boot``
        resamples, ``seed``).
    name : label carried along (e.g. ``"workload/metric"``).

    Returns
    -------
    Comparison
    """
    me = _check_args(mode, min_effect, confidence, q, ci_method, n_boot)
    b = as_positive_samples("base", base)
    h = as_positive_samples("head", head)
    if paired and b.size != h.size:
        raise ValueError(f"paired comparison needs as many BASE as HEAD rounds "
                         f"(got {b.size} and {h.size})")
    lb, lh = np.log(b), np.log(h)
    t = math.log1p(me)
    if paired:
        spread = float(np.ptp(lh - lb))
        observed = b.size >= 2
    else:
        spread = float(max(np.ptp(lb), np.ptp(lh)))
        observed = max(b.size, h.size) >= 2
    log_se = _log_se(lb, lh, paired)

    def make(ratio: float, lo: float, hi: float, p: float, method: str, ci_method: str,
             coverage: float, min_p: float) -> Comparison:
        return Comparison(
            ratio=ratio, ci_low=lo, ci_high=hi, p_value=p, n_base=int(b.size),
            n_head=int(h.size), verdict=Verdict.INCONCLUSIVE, more_rounds_needed=None, note="",
            name=name, higher_is_better=bool(higher_is_better), mode=mode, min_effect=me,
            paired=paired, confidence=confidence, q=q, method=method, ci_method=ci_method,
            ci_coverage=coverage, log_se=log_se, test_min_p=min_p, spread=math.expm1(spread))

    # range of all pairwise log ratios (paired: of the per-round ones)
    if paired:
        lo, hi = float(np.min(lh - lb)), float(np.max(lh - lb))
    else:
        lo, hi = float(lh.min() - lb.max()), float(lh.max() - lb.min())
    tol = _tol(t)
    one_side = lo >= t - tol or hi <= -t + tol or (lo > -t + tol and hi < t - tol)
    decided_by = ""
    if spread <= DETERMINISTIC_SPREAD[mode] * t + tol and (mode == "instructions" or observed):
        decided_by = "ratio"    # zero / tiny variance: the ratio against the min effect
    elif mode == "instructions" and spread <= t and one_side:
        decided_by = "range"    # every pairwise ratio on one side of the min effect
    if decided_by:
        est = hodges_lehmann_paired(lh - lb) if paired else hodges_lehmann(lb, lh)
        c = make(math.exp(est), math.exp(lo), math.exp(hi), math.nan, decided_by, "range", 1.0,
                 math.nan)
        return judge(c, math.nan, q)
    if not observed:  # time mode, one round per side: nothing known about the noise
        est = float(np.mean(lh) - np.mean(lb))
        c = make(math.exp(est), math.nan, math.nan, math.nan, "none", "none", math.nan, 1.0)
        return judge(c, math.nan, q)
    ri = (paired_interval(lh - lb, confidence) if paired
          else unpaired_interval(lb, lh, confidence))
    lo, hi, cov = ri.low, ri.high, ri.coverage
    if ci_method == "bootstrap":
        pairs = b.size * (b.size + 1) // 2 if paired else b.size * h.size
        if pairs > BOOTSTRAP_MAX_PAIRS:
            raise ValueError(f"ci_method='bootstrap' recomputes the HL estimator over {pairs} "
                             f"pairs per resample (limit {BOOTSTRAP_MAX_PAIRS}); with this many "
                             "rounds use ci_method='rank'")
        lo, hi = _bootstrap(lb, lh, paired, confidence, n_boot, seed)
        cov = confidence
    p, min_p = _p_value(lb, lh, paired)
    c = make(math.exp(ri.estimate), math.exp(lo), math.exp(hi), p,
             "wilcoxon" if paired else "mann-whitney", ci_method, cov, min_p)
    return judge(c, p, q)
