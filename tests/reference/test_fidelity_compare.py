"""The fidelity check's pieces that need no reference process: comparing two evaluations,
the known-deviations file, and docs/fidelity.md's generated table."""

from __future__ import annotations

from pathlib import Path

import pytest

from workloads.fidelity.compare import (
    Decision,
    Difference,
    compare_decision,
    compare_evaluations,
    compare_profiles,
)
from workloads.fidelity.deviations import (
    Deviation,
    load_deviations,
    match,
    render_table,
    replace_table,
)
from workloads.fidelity.errors import DeviationsFileError
from workloads.reference.model import (
    Evaluation,
    Filter,
    PluginScores,
    PostFilter,
    PreFilter,
    ProfileInfo,
    Score,
    Status,
    Victim,
)

ROOT = Path(__file__).resolve().parents[2]


def evaluation(*, feasible=("n1", "n2"), rejected=None, scores=None, best=("n1",),
               outcome="Scheduled", message="", post_filter=None) -> Evaluation:
    scores = scores if scores is not None else {"n1": 80, "n2": 40}
    flt = Filter(tuple(feasible), dict(rejected or {}))
    score = None
    if feasible:
        score = Score((), Status("Success"), frozenset(),
                      (PluginScores("NodeResourcesFit", 1, dict(scores)),),
                      dict(scores), frozenset(best), len(feasible) > 1)
    pre = PreFilter((), Status("Success"), None, frozenset())
    return Evaluation("default", "p", "default-scheduler", ("n1", "n2", "n3"), pre, flt, score,
                      post_filter, outcome, message)


def test_equal_evaluations_have_no_difference():
    assert compare_evaluations(evaluation(), evaluation()) == []


def test_a_score_off_by_one_names_the_plugin_and_node():
    core = evaluation(scores={"n1": 80, "n2": 41})
    diffs = compare_evaluations(core, evaluation())
    assert Difference("Score", "NodeResourcesFit", "n2", "score", "41", "40") in diffs
    assert Difference("Score", "", "n2", "total", "41", "40") in diffs


def test_a_node_feasible_on_one_side_only_names_the_rejecting_plugin():
    reject = Status("Unschedulable", "NodeResourcesFit", ("Insufficient cpu",))
    core = evaluation(feasible=("n1",), rejected={"n2": reject}, scores={"n1": 80})
    diffs = compare_evaluations(core, evaluation())
    feasible = [d for d in diffs if d.field == "feasible"]
    assert feasible == [Difference("Filter", "NodeResourcesFit", "n2", "feasible",
                                   "Unschedulable NodeResourcesFit: Insufficient cpu",
                                   "feasible")]


def test_a_different_rejection_code_is_a_difference():
    core_rej = {"n3": Status("Unschedulable", "NodeResourcesFit", ("Insufficient cpu",))}
    ref_rej = {"n3": Status("UnschedulableAndUnresolvable", "NodeResourcesFit",
                            ("Insufficient cpu",))}
    diffs = compare_evaluations(evaluation(rejected=core_rej), evaluation(rejected=ref_rej))
    assert diffs == [Difference("Filter", "NodeResourcesFit", "n3", "code", "Unschedulable",
                                "UnschedulableAndUnresolvable")]


def test_the_pick_must_be_among_the_best_when_every_node_was_examined():
    ref = evaluation(best=("n1",))
    ok = Decision("n1", True, "", False, "", ())
    assert compare_decision(ok, ref) == []
    wrong = Decision("n2", True, "", False, "", ())
    assert compare_decision(wrong, ref) == [
        Difference("Outcome", "", "n2", "pick", "n2", "n1")]
    sampled = Decision("n2", False, "", False, "", ())  # numFeasibleNodesToFind cut the search
    assert compare_decision(sampled, ref) == []


def test_preemption_victims_and_nominee_are_compared():
    pf = PostFilter(Status("Success"), "n2", (Victim("default", "low", "u", "n2"),), ())
    ref = evaluation(feasible=(), scores={}, best=(), outcome="Unschedulable", message="m",
                     post_filter=pf)
    same = Decision("", False, "m", True, "n2", ("default/low",))
    assert compare_decision(same, ref) == []
    other = Decision("", False, "m", True, "n1", ("default/other",))
    fields = {d.field for d in compare_decision(other, ref)}
    assert fields == {"victims", "nominatedNode"}


def test_profiles_are_compared_per_plugin():
    ref = ProfileInfo("default-scheduler", None,
                      {"Filter": ("NodeName", "DynamicResources"), "Score": ("ImageLocality",)},
                      {"ImageLocality": 1})
    diffs = compare_profiles({"Filter": ["NodeName"], "Score": ["ImageLocality"]},
                             {"ImageLocality": 2}, ref)
    assert diffs == [Difference("Profile", "DynamicResources", "", "Filter", "absent", "enabled"),
                     Difference("Profile", "ImageLocality", "", "weight", "2", "1")]


# ---------------------------------------------------------------------- known deviations
def test_the_shipped_deviations_file_loads_and_each_entry_says_why():
    deviations = load_deviations()
    assert deviations
    for d in deviations:
        assert d.case and d.reason and d.stage


def test_an_entry_documents_only_what_it_names():
    dev = Deviation("x", "Profile", "DynamicResources", "case", "reason")
    assert match([dev], "W/1", Difference("Profile", "DynamicResources", "", "Filter",
                                          "absent", "enabled")) is dev
    assert match([dev], "W/1", Difference("Filter", "DynamicResources", "n1", "code",
                                          "a", "b")) is None


@pytest.mark.parametrize(("text", "expected"), [
    ("deviations:\n  - {id: a, stage: Score, plugin: X, case: c, reason: r, colour: red}\n",
     "deviations[0].colour: unknown field"),
    ("deviations:\n  - {id: a, stage: Scoring, plugin: X, case: c, reason: r}\n",
     "deviations[0].stage: expected one of"),
    ("deviations:\n  - {id: a, stage: Score, plugin: X, case: c}\n",
     "deviations[0].reason: required"),
    ("deviations:\n  - {id: a, stage: Score, plugin: X, case: c, reason: r, core: '('}\n",
     "deviations[0].core: not a regular expression"),
    ("deviations:\n  - {id: a, stage: Score, plugin: X, case: c, reason: r}\n"
     "  - {id: a, stage: Score, plugin: Y, case: c, reason: r}\n",
     "deviations[1].id: 'a' is listed twice"),
    ("deviations: [\n", "not valid YAML"),
    ("other: []\n", "expected a mapping with one key, deviations"),
])
def test_a_malformed_deviations_file_is_named_with_its_field(tmp_path, text, expected):
    path = tmp_path / "dev.yaml"
    path.write_text(text)
    with pytest.raises(DeviationsFileError) as info:
        load_deviations(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_a_binary_deviations_file_is_one_clear_error(tmp_path):
    path = tmp_path / "dev.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(DeviationsFileError, match="not UTF-8"):
        load_deviations(path)


def test_docs_fidelity_carries_the_generated_table():
    """docs/fidelity.md's table of deviations is the file's (regenerate it with
    ``python -m workloads.fidelity.deviations docs/fidelity.md``)."""
    doc = (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    table = render_table(load_deviations())
    assert replace_table(doc, table) == doc, (
        "docs/fidelity.md is out of date: run python -m workloads.fidelity.deviations "
        "docs/fidelity.md")
