"""The decision rule under simulated run-to-run noise (seeded Monte-Carlo)."""

from __future__ import annotations

import pytest

from reports.stats.simulation import simulate


def test_aa_false_alarm_rate_after_bh_is_at_most_1_percent() -> None:
    # 300 A/A draws of 10 vs 10 lognormal rounds, 4.5 % noise, 10 comparison runs of 30 tests
    r = simulate(effect=0.0, noise=0.045, rounds=10, draws=300, family=30, seed=0)
    assert r.false_alarm_rate <= 0.01
    assert sum(r.verdicts_null.values()) == 300
    assert r.verdicts_null.get("no change", 0) > 200


@pytest.mark.parametrize(("family", "affected", "paired"), [
    (1, 1, False), (1, 1, True), (30, 30, False),
], ids=["lone", "lone-paired", "all-30-affected-BH"])
def test_10_percent_slowdown_is_found_with_90_percent_power(family: int, affected: int,
                                                             paired: bool) -> None:
    r = simulate(effect=0.10, noise=0.045, rounds=10, draws=300, family=family,
                 affected=affected, paired=paired, seed=1)
    assert r.power >= 0.90, r


def test_isolated_regression_among_30_needs_more_rounds() -> None:
    # BH at 1 of 30 asks for p <= 0.05/30: 10 rounds are short, 20 are plenty
    r10 = simulate(effect=0.10, rounds=10, draws=150, family=30, affected=1, seed=2)
    r20 = simulate(effect=0.10, rounds=20, draws=150, family=30, affected=1, seed=2)
    assert r10.power < r20.power
    assert r20.power >= 0.9


def test_interleaved_pairing_removes_round_drift() -> None:
    kw = dict(effect=0.06, noise=0.01, drift=0.05, rounds=10, draws=120, family=1,
              affected=1, seed=3)
    unpaired = simulate(paired=False, **kw)  # type: ignore[arg-type]
    paired = simulate(paired=True, **kw)  # type: ignore[arg-type]
    assert paired.power >= 0.9 > unpaired.power


def test_simulation_is_seeded() -> None:
    a = simulate(rounds=5, draws=60, family=30, seed=9)
    b = simulate(rounds=5, draws=60, family=30, seed=9)
    assert a == b


def test_bad_family_split_raises() -> None:
    with pytest.raises(ValueError, match="multiple of family"):
        simulate(draws=50, family=30)
