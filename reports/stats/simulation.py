"""Monte-Carlo checks of the decision rule: false-alarm rate and power under run-to-run noise.

Model: a round's value is ``exp(N(0, noise))`` (lognormal; ``noise`` ~ coefficient of
variation), HEAD's multiplied by ``1 + effect``. With ``drift > 0`` each round also gets a
common factor ``exp(N(0, drift))`` shared by its BASE and HEAD run (a machine getting slower or
faster between rounds): interleaving + ``paired=True`` cancels it, an unpaired test sees it as
noise. With ``bias > 0`` each comparison's HEAD also gets a constant factor ``exp(N(0, bias))``:
a systematic offset between two builds of the same code (code layout, allocator, page cache)
that more rounds never average away. Comparisons are grouped into families of ``family``
tests (one comparison run of that many (workload, metric) pairs), the first ``affected`` of
each carrying the effect, and every family goes through :func:`reports.stats.decide`.

``python -m reports.stats.simulation`` prints the tables quoted in docs/statistics.md.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from reports.stats.compare import DEFAULT_Q, Comparison, Mode, Verdict, compare_samples
from reports.stats.fdr import decide

__all__ = ["SimulationResult", "simulate"]


@dataclass(frozen=True)
class SimulationResult:
    """Rates over ``affected`` and over unaffected (null) comparisons.

    ``false_alarm_rate``: share of null comparisons called regression or improvement.
    ``family_false_alarm_rate``: share of families with at least one such false alarm.
    ``power``: share of affected comparisons called a regression (effect > 0 on a
    lower-is-better metric). ``verdicts_null`` / ``verdicts_affected``: verdict counts.
    ``median_more_rounds``: median ``more_rounds_needed`` of inconclusive null comparisons.
    """

    false_alarm_rate: float
    family_false_alarm_rate: float
    power: float
    verdicts_null: dict[str, int]
    verdicts_affected: dict[str, int]
    median_more_rounds: float


def simulate(*, effect: float = 0.0, noise: float = 0.045, rounds: int = 10, draws: int = 300,
             family: int = 30, affected: int = 0, drift: float = 0.0, bias: float = 0.0,
             paired: bool = False,
             mode: Mode = "time", min_effect: float | None = None, q: float = DEFAULT_Q,
             seed: int = 0) -> SimulationResult:
    """Run ``draws`` simulated comparisons (module docstring); deterministic in ``seed``."""
    if draws % family:
        raise ValueError(f"draws ({draws}) must be a multiple of family ({family})")
    if not 0 <= affected <= family:
        raise ValueError(f"affected must be in [0, family], got {affected}")
    rng = np.random.default_rng(seed)
    shape = (draws, rounds)
    common = rng.normal(0.0, drift, shape) if drift > 0 else np.zeros(shape)
    base = np.exp(common + rng.normal(0.0, noise, shape))
    head = np.exp(common + rng.normal(0.0, noise, shape))
    if bias > 0:
        head *= np.exp(rng.normal(0.0, bias, (draws, 1)))
    is_affected = (np.arange(draws) % family) < affected
    head[is_affected] *= 1.0 + effect
    judged: list[Comparison] = []
    for start in range(0, draws, family):
        fam = [compare_samples(base[i], head[i], higher_is_better=False, mode=mode,
                               min_effect=min_effect, paired=paired, q=q)
               for i in range(start, start + family)]
        judged.extend(decide(fam, q=q))
    flagged = np.array([c.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) for c in judged])
    regress = np.array([c.verdict is Verdict.REGRESSION for c in judged])
    null = ~is_affected
    fam_alarm = (flagged & null).reshape(-1, family).any(axis=1)
    more = [c.more_rounds_needed for c, n in zip(judged, null, strict=True)
            if n and c.more_rounds_needed is not None]
    return SimulationResult(
        false_alarm_rate=float(flagged[null].mean()) if null.any() else math.nan,
        family_false_alarm_rate=float(fam_alarm.mean()),
        power=float(regress[is_affected].mean()) if is_affected.any() else math.nan,
        verdicts_null=dict(Counter(c.verdict.value for c, n in zip(judged, null, strict=True)
                                   if n)),
        verdicts_affected=dict(Counter(c.verdict.value
                                       for c, a in zip(judged, is_affected, strict=True) if a)),
        median_more_rounds=float(np.median(more)) if more else math.nan,
    )


def _main() -> None:  # pragma: no cover - prints the documentation tables
    print("A/A, noise 4.5 %, families of 30, 3000 draws")
    for rounds in (5, 10, 20):
        for paired in (False, True):
            r = simulate(rounds=rounds, draws=3000, paired=paired, seed=1)
            print(f"  rounds={rounds:2d} paired={paired!s:5}  false alarms "
                  f"{r.false_alarm_rate:.2%}  families with one {r.family_false_alarm_rate:.1%}"
                  f"  verdicts {r.verdicts_null}  median more rounds {r.median_more_rounds}")
    print("A/A with a per-build offset N(0, 1.5 %), noise 4.5 %, families of 30, 1500 draws")
    for rounds in (10, 30):
        cells = [f"{me:.0%}: {simulate(rounds=rounds, draws=1500, bias=0.015, min_effect=me, seed=8).false_alarm_rate:.2%}"  # noqa: E501
                 for me in (0.01, 0.02, 0.03, 0.05)]
        print(f"  rounds={rounds:2d}  false alarms by min_effect  " + "  ".join(cells))
    print("A/A lone comparisons (family of 1), noise 4.5 %, 3000 draws")
    for me in (0.01, 0.02, 0.03, 0.05):
        r = simulate(rounds=10, draws=3000, family=1, min_effect=me, seed=2)
        print(f"  min_effect={me:.0%}  false alarms {r.false_alarm_rate:.2%}")
    print("power, noise 4.5 %, 3000 draws")
    for effect in (0.03, 0.05, 0.07, 0.10, 0.15):
        for rounds in (5, 10, 20):
            row = []
            for fam, aff in ((1, 1), (30, 1), (30, 30)):
                r = simulate(effect=effect, rounds=rounds, draws=3000 if fam > 1 else 1500,
                             family=fam, affected=aff, seed=3)
                row.append(f"{fam}/{aff}: {r.power:.1%}")
            print(f"  effect={effect:.0%} rounds={rounds:2d}  " + "  ".join(row))
    print("power vs min_effect, 10 rounds, lone comparisons")
    for me in (0.01, 0.02, 0.03, 0.05):
        cells = [f"{e:.0%}: {simulate(effect=e, draws=1500, family=1, affected=1, min_effect=me, seed=4).power:.1%}"  # noqa: E501
                 for e in (0.03, 0.05, 0.07, 0.10)]
        print(f"  min_effect={me:.0%}  " + "  ".join(cells))
    print("drift 4 % between rounds + noise 2 %, 10 rounds, 5 % effect, lone comparisons")
    for paired in (False, True):
        r = simulate(effect=0.05, noise=0.02, drift=0.04, draws=1500, family=1, affected=1,
                     paired=paired, seed=5)
        a = simulate(noise=0.02, drift=0.04, draws=1500, family=1, paired=paired, seed=6)
        print(f"  paired={paired!s:5} power {r.power:.1%}  A/A false alarms "
              f"{a.false_alarm_rate:.2%}  A/A verdicts {a.verdicts_null}")
    print("instructions, 3 rounds, families of 30, 600 draws")
    for noise in (0.0005, 0.002):
        for effect in (0.0, 0.005, 0.01, 0.012, 0.02):
            r = simulate(effect=effect, noise=noise, rounds=3, draws=600, family=30,
                         affected=30 if effect else 0, mode="instructions", seed=7)
            print(f"  noise={noise:.2%} effect={effect:.1%}  "
                  f"{r.verdicts_affected or r.verdicts_null}")

if __name__ == "__main__":  # pragma: no cover
    _main()
