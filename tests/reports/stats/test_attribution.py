"""attribute(): which plugin / extension point explains the change."""

from __future__ import annotations

import numpy as np
import pytest

from reports.stats import Verdict, attribute

BASE_S_PER_POD = {
    ("NodeResourcesFit", "Filter"): 20e-6,
    ("PodTopologySpread", "Filter"): 30e-6,
    ("InterPodAffinity", "Filter"): 50e-6,
    ("PodTopologySpread", "Score"): 10e-6,
    ("TaintToleration", "Filter"): 3e-6,
}


def rounds(seed: int, n: int, scale: dict | None = None,
           noise: float = 0.04) -> list[dict[tuple[str, str], float]]:
    rng = np.random.default_rng(seed)
    scale = scale or {}
    return [{k: v * scale.get(k, 1.0) * float(np.exp(rng.normal(0, noise)))
             for k, v in BASE_S_PER_POD.items()} for _ in range(n)]


@pytest.mark.parametrize(("injected", "factor", "start"), [
    (("PodTopologySpread", "Filter"), 1.35, "PodTopologySpread Filter +3"),
    (("NodeResourcesFit", "Filter"), 1.6, "NodeResourcesFit Filter +6"),
    (("InterPodAffinity", "Filter"), 0.7, "InterPodAffinity Filter -3"),
], ids=["PTS-Filter-+35%", "Fit-+60%", "IPA--30%"])
def test_injected_plugin_ranks_first(injected: tuple[str, str], factor: float,
                                     start: str) -> None:
    out = attribute(rounds(1, 10), rounds(2, 10, {injected: factor}))
    top = out[0]
    assert top.key == injected
    assert top.sentence.startswith(start), top.sentence
    assert top.rel_change == pytest.approx(factor - 1, abs=0.05)
    assert top.comparison is not None
    want = Verdict.REGRESSION if factor > 1 else Verdict.IMPROVEMENT
    assert top.comparison.verdict is want
    assert top.share > 0.5
    assert len(out) == len(BASE_S_PER_POD)
    assert [abs(a.abs_change) for a in out] == sorted((abs(a.abs_change) for a in out),
                                                      reverse=True)


def test_paired_rounds_and_top() -> None:
    out = attribute(rounds(1, 8), rounds(2, 8, {("PodTopologySpread", "Score"): 2.0}),
                    paired=True, top=2)
    assert len(out) == 2
    assert out[0].label == "PodTopologySpread Score"
    assert out[0].comparison is not None and out[0].comparison.paired


def test_exact_sentence_for_single_rounds() -> None:
    base = {("PodTopologySpread", "Filter"): 40e-6, ("NodeResourcesFit", "Filter"): 10e-6}
    head = {("PodTopologySpread", "Filter"): 54e-6, ("NodeResourcesFit", "Filter"): 10e-6,
            ("MyPlugin", "PreFilter"): 1e-6}
    out = attribute(base, head)
    assert [a.label for a in out] == ["PodTopologySpread Filter", "MyPlugin PreFilter",
                                      "NodeResourcesFit Filter"]
    assert out[0].sentence == ("PodTopologySpread Filter +35 % (+14 us/pod, 93 % of the total "
                               "change; inconclusive)")
    assert out[1].sentence.startswith("MyPlugin PreFilter new (+1 us/pod, 7 % of the total")
    assert out[1].comparison is None and out[1].rel_change == float("inf")
    assert out[2].rel_change == 0.0


def test_instruction_counts_per_plugin_are_decided_by_ratio() -> None:
    base = [{("Fit", "Filter"): 1000.0, ("Spread", "Filter"): 4000.0}] * 2
    head = [{("Fit", "Filter"): 1000.0, ("Spread", "Filter"): 4400.0}] * 2
    out = attribute(base, head, mode="instructions")
    assert out[0].label == "Spread Filter" and out[0].comparison is not None
    assert out[0].comparison.verdict is Verdict.REGRESSION
    assert out[1].comparison is not None and out[1].comparison.verdict is Verdict.NO_CHANGE


@pytest.mark.parametrize(("base", "head", "kw", "match"), [
    ([], [{"a": 1.0}], {}, "base_rounds: no rounds"),
    ([{"a": 1.0}], [{"a": float("nan")}], {}, "head_rounds: round 0, a: seconds per pod"),
    ([{"a": -1.0}], [{"a": 1.0}], {}, "must be a finite number >= 0"),
    ([{"a": 1.0}], [{"a": 1.0}, {"a": 1.0}], {"paired": True}, "as many BASE as HEAD"),
    ([{}], [{}], {}, "no plugin timings"),
    ([[1.0]], [{"a": 1.0}], {}, "round 0 is list"),
], ids=["empty", "nan", "negative", "paired-mismatch", "no-keys", "not-a-mapping"])
def test_bad_inputs(base: list, head: list, kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        attribute(base, head, **kw)
