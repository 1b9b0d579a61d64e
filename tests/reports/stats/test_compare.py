"""compare_samples: ratio, interval, p-value and the direction-aware, min-effect verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from reports.stats import MIN_EFFECT, Verdict, compare_samples


def lognormal(seed: int, n: int, noise: float, factor: float = 1.0) -> np.ndarray:
    return factor * np.exp(np.random.default_rng(seed).normal(0.0, noise, n))


@dataclass(frozen=True)
class Case:
    id: str
    base: list[float] | np.ndarray
    head: list[float] | np.ndarray
    higher_is_better: bool
    want: Verdict
    mode: str = "time"
    paired: bool = False
    min_effect: float | None = None


CASES = [
    # noisy timings, 10 rounds
    Case("time 10% slower s/pod", lognormal(1, 10, 0.045), lognormal(2, 10, 0.045, 1.10),
         False, Verdict.REGRESSION),
    Case("time 10% slower paired", lognormal(1, 10, 0.045), lognormal(2, 10, 0.045, 1.10),
         False, Verdict.REGRESSION, paired=True),
    Case("time 10% faster s/pod is improvement", lognormal(3, 10, 0.045),
         lognormal(4, 10, 0.045, 0.90), False, Verdict.IMPROVEMENT),
    Case("throughput 10% lower is regression", lognormal(5, 10, 0.045, 100),
         lognormal(6, 10, 0.045, 90), True, Verdict.REGRESSION),
    Case("throughput 10% higher is improvement", lognormal(5, 10, 0.045, 100),
         lognormal(6, 10, 0.045, 110), True, Verdict.IMPROVEMENT),
    Case("A/A is no change", lognormal(7, 10, 0.045), lognormal(8, 10, 0.045), False,
         Verdict.NO_CHANGE),
    Case("1% at 40 rounds, 1% noise: significant but below 3%", lognormal(9, 40, 0.01),
         lognormal(10, 40, 0.01, 1.01), False, Verdict.NO_CHANGE),
    Case("+5.8% not significant with 5 rounds", [1.00, 1.08, 0.94, 1.03, 0.97],
         [1.06, 1.00, 1.12, 1.02, 1.09], False, Verdict.INCONCLUSIVE),
    Case("+2.2% significant, CI crosses 3%", lognormal(1, 30, 0.03),
         np.exp(np.random.default_rng(1).normal(0, 0.03, 60)[30:]) * 1.025, False,
         Verdict.INCONCLUSIVE),
    Case("3 vs 3 can never be significant", [1.0, 1.1, 0.95], [1.2, 1.1, 1.3], False,
         Verdict.INCONCLUSIVE),
    # near-deterministic instruction counts
    Case("instructions +1% identical runs", [1e9, 1e9], [1.01e9, 1.01e9], False,
         Verdict.REGRESSION, mode="instructions"),
    Case("instructions +1% one run each", [1e9], [1.01e9], False, Verdict.REGRESSION,
         mode="instructions"),
    Case("instructions +0.5% is no change", [1e9, 1e9], [1.005e9, 1.005e9], False,
         Verdict.NO_CHANGE, mode="instructions"),
    Case("instructions -1% is improvement", [1e9, 1e9], [1e9 / 1.01] * 2, False,
         Verdict.IMPROVEMENT, mode="instructions"),
    Case("instructions +1.2% with 1e-6 jitter", [1e9 * (1 + 1e-6), 1e9],
         [1.012e9, 1.012e9 * (1 - 1e-6)], False, Verdict.REGRESSION, mode="instructions"),
    Case("instructions +0.5% with 1e-6 jitter, paired", [1e9 * (1 + 1e-6), 1e9, 1e9],
         [1.005e9, 1.005e9 * (1 - 1e-6), 1.005e9], False, Verdict.NO_CHANGE,
         mode="instructions", paired=True),
    Case("instructions +2% with 0.2% noise: every pairwise ratio past 1%",
         [1e9, 1.002e9, 0.999e9], [1.02e9, 1.021e9, 1.018e9], False, Verdict.REGRESSION,
         mode="instructions"),
    Case("instructions ~+1.2% with 0.5% noise: ratios straddle 1%, 3 runs cannot test",
         [1e9, 1.003e9, 0.998e9], [1.012e9, 1.015e9, 1.003e9], False, Verdict.INCONCLUSIVE,
         mode="instructions"),
    Case("instructions +1% with a 2% min effect", [1e9], [1.01e9], False, Verdict.NO_CHANGE,
         mode="instructions", min_effect=0.02),
    # zero variance timings: the ratio decides
    Case("identical timings, no change", [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], False,
         Verdict.NO_CHANGE),
    Case("identical timings, 10% lower throughput", [100.0, 100.0], [90.0, 90.0], True,
         Verdict.REGRESSION),
    Case("one time round each: no variance, inconclusive", [1.0], [1.2], False,
         Verdict.INCONCLUSIVE),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_verdicts(case: Case) -> None:
    c = compare_samples(case.base, case.head, higher_is_better=case.higher_is_better,
                        mode=case.mode, paired=case.paired,  # type: ignore[arg-type]
                        min_effect=case.min_effect)
    assert c.verdict is case.want, c.note
    assert c.n_base == len(case.base) and c.n_head == len(case.head)
    if c.verdict is Verdict.INCONCLUSIVE:
        assert c.more_rounds_needed is not None and 0 < c.more_rounds_needed < 1000
        assert "more rounds" in c.note
    else:
        assert c.more_rounds_needed is None
    if not math.isnan(c.ci_low):
        assert c.ci_low <= c.ratio <= c.ci_high


def test_ratio_interval_and_pvalue_of_a_clear_slowdown() -> None:
    c = compare_samples(lognormal(1, 10, 0.045), lognormal(2, 10, 0.045, 1.10),
                        higher_is_better=False)
    assert c.ratio == pytest.approx(1.10, abs=0.04)
    assert c.ci_low > 1.03 and c.ci_high < 1.2
    assert c.p_value < 0.001 and c.p_adjusted == c.p_value
    assert c.method == "mann-whitney" and c.ci_coverage >= 0.95
    assert c.min_effect == MIN_EFFECT["time"] == 0.03
    assert "reaches the 3 % minimum effect" in c.note


def test_deterministic_inputs_have_no_pvalue() -> None:
    c = compare_samples([1e9, 1e9], [1.01e9, 1.01e9], higher_is_better=False,
                        mode="instructions")
    assert math.isnan(c.p_value) and c.method == "ratio"
    assert c.ratio == pytest.approx(1.01) and c.ci_low == c.ci_high == pytest.approx(1.01)
    assert c.min_effect == 0.01
    assert "decided by the ratio" in c.note


def test_noisy_instruction_counts_decided_by_the_range_of_ratios() -> None:
    c = compare_samples([1e9, 1.002e9, 0.999e9], [1.02e9, 1.021e9, 1.018e9],
                        higher_is_better=False, mode="instructions")
    assert c.method == "range" and math.isnan(c.p_value)
    assert c.ci_low == pytest.approx(1.018e9 / 1.002e9)
    assert c.ci_high == pytest.approx(1.021e9 / 0.999e9)
    assert "all pairwise ratios" in c.note
    # the same spread in time mode goes through the rank test (3 vs 3 cannot reach p <= 0.05)
    t = compare_samples([1.0, 1.002, 0.999], [1.05, 1.051, 1.048], higher_is_better=False)
    assert t.method == "mann-whitney" and t.verdict is Verdict.INCONCLUSIVE
    assert "cannot reach p <= 0.05" in t.note


def test_one_time_round_needs_rounds_for_a_test() -> None:
    c = compare_samples([1.0], [1.2], higher_is_better=False)
    assert c.method == "none" and math.isnan(c.ci_low)
    assert c.more_rounds_needed == 3          # the U test needs 4 vs 4 to reach p <= 0.05
    c = compare_samples([1.0], [1.2], higher_is_better=False, paired=True)
    assert c.more_rounds_needed == 5          # Wilcoxon needs 6 pairs


def test_more_rounds_shrinks_as_the_estimate_leaves_the_threshold() -> None:
    base = lognormal(20, 6, 0.06)
    near = compare_samples(base, lognormal(21, 6, 0.06, 1.045), higher_is_better=False)
    far = compare_samples(base, lognormal(21, 6, 0.06, 1.08), higher_is_better=False)
    assert near.verdict is far.verdict is Verdict.INCONCLUSIVE
    assert near.more_rounds_needed > far.more_rounds_needed > 0


def test_pairing_cancels_round_drift() -> None:
    rng = np.random.default_rng(5)
    drift = np.exp(rng.normal(0, 0.08, 10))          # shared by the two runs of a round
    base = drift * np.exp(rng.normal(0, 0.01, 10))
    head = 1.05 * drift * np.exp(rng.normal(0, 0.01, 10))
    unpaired = compare_samples(base, head, higher_is_better=False)
    paired = compare_samples(base, head, higher_is_better=False, paired=True)
    assert unpaired.verdict is not Verdict.REGRESSION
    assert paired.verdict is Verdict.REGRESSION and paired.method == "wilcoxon"
    assert paired.ci_high - paired.ci_low < (unpaired.ci_high - unpaired.ci_low) / 3


def test_bootstrap_interval_is_seeded_and_close_to_the_rank_interval() -> None:
    b, h = lognormal(1, 12, 0.045), lognormal(2, 12, 0.045, 1.06)
    kw = dict(higher_is_better=False, ci_method="bootstrap")
    one = compare_samples(b, h, seed=3, **kw)  # type: ignore[arg-type]
    again = compare_samples(b, h, seed=3, **kw)  # type: ignore[arg-type]
    other = compare_samples(b, h, seed=4, **kw)  # type: ignore[arg-type]
    rank = compare_samples(b, h, higher_is_better=False)
    assert (one.ci_low, one.ci_high) == (again.ci_low, again.ci_high)
    assert (one.ci_low, one.ci_high) != (other.ci_low, other.ci_high)
    assert one.ratio == rank.ratio and one.p_value == rank.p_value
    assert one.ci_low < one.ratio < one.ci_high
    assert abs(math.log(one.ci_low) - math.log(rank.ci_low)) < 0.02
    assert abs(math.log(one.ci_high) - math.log(rank.ci_high)) < 0.02
    p1 = compare_samples(b, h, seed=3, paired=True, **kw)  # type: ignore[arg-type]
    assert p1.ci_low < p1.ratio < p1.ci_high


def test_min_effect_is_log_symmetric() -> None:
    # a 3 % rise in s/pod and the reciprocal drop in pods/s get the same verdict
    up = compare_samples([1.0, 1.0], [1.03, 1.03], higher_is_better=False)
    down = compare_samples([1.0, 1.0], [1 / 1.03, 1 / 1.03], higher_is_better=True)
    assert up.verdict is down.verdict is Verdict.REGRESSION


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(base=[], head=[1.0]), "base: no samples"),
    (dict(base=[1.0], head=[]), "head: no samples"),
    (dict(base=[1.0, math.nan, 2.0], head=[1.0]), r"base: 1 of 3 samples are NaN or inf.*1"),
    (dict(base=[1.0], head=[1.0, math.inf]), "head: 1 of 2 samples are NaN or infinite"),
    (dict(base=[1.0, 0.0], head=[1.0]), "base: samples must be > 0"),
    (dict(base=[1.0], head=[-1.0]), "head: samples must be > 0"),
    (dict(base=[[1.0, 2.0]], head=[1.0]), "base: expected a 1-D sequence"),
    (dict(base=["x"], head=[1.0]), "base: expected a sequence of numbers"),
    (dict(base=[1.0, 2.0], head=[1.0], paired=True), "as many BASE as HEAD rounds"),
    (dict(base=[1.0], head=[1.0], mode="cycles"), "mode must be one of"),
    (dict(base=[1.0], head=[1.0], min_effect=-0.1), "min_effect must be a finite"),
    (dict(base=[1.0], head=[1.0], q=0.0), r"q must be in \(0, 1\)"),
    (dict(base=[1.0], head=[1.0], confidence=1.0), "confidence must be in"),
    (dict(base=[1.0], head=[1.0], ci_method="bca"), "ci_method must be"),
    (dict(base=lognormal(1, 600, 0.05), head=lognormal(2, 600, 0.05), ci_method="bootstrap"),
     "use ci_method='rank'"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_bad_inputs_raise(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        compare_samples(higher_is_better=False, **kwargs)


def test_summary_line() -> None:
    c = compare_samples([1e9, 1e9], [1.02e9, 1.02e9], higher_is_better=False,
                        mode="instructions", name="SchedulingBasic/instructions")
    assert c.summary() == ("SchedulingBasic/instructions: +2.0 % (95% CI +2.0 % to +2.0 %) "
                           "regression")
