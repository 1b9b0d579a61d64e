"""load_report / parse_report: validation messages name file and field; JSON round trip."""

from __future__ import annotations

import importlib
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from reports.render import (
    ReportFileError,
    find_report,
    load_report,
    parse_report,
    report_to_dict,
    report_to_json,
)
from tests.reports.render.conftest import SCRIPT_NAME, report_dict

TOPO = "TopologySpreading/500Nodes"
DELETE = object()


def _set(data: Any, keys: tuple[str | int, ...], value: Any) -> None:
    for key in keys[:-1]:
        data = data[key]
    if value is DELETE:
        del data[keys[-1]]
    else:
        data[keys[-1]] = value


BAD = [
    (("schema",), 2, "schema", "not supported"),
    (("generated",), "yesterday", "generated", "ISO 8601"),
    (("kind",), "branches", "kind", "'branches' is not one of"),
    (("base",), DELETE, "base", "missing"),
    (("head", "label"), 42, "head.label", "expected a string, got a number"),
    (("base", "environment", "cpu_model"), {"x": 1}, "base.environment.cpu_model",
     "plain value"),
    (("environment_differs",), "yes", "environment_differs", "expected true or false"),
    (("environment_notes", 0), 3, "environment_notes[0]", "expected a string"),
    (("settings", "modes"), [], "settings.modes", "empty"),
    (("settings", "repeat"), 0, "settings.repeat", "below the minimum 1"),
    (("settings", "q"), 1.5, "settings.q", "not a rate"),
    (("settings", "min_effect", "time"), -0.03, "settings.min_effect.time", "not positive"),
    (("verdict",), "worse", "verdict", "'worse' is not one of"),
    (("results",), {}, "results", "expected a list, got an object"),
    (("results", 0, "ratio"), "0.9", "results[0].ratio", "expected a number, got a string"),
    (("results", 0, "ratio"), 0, "results[0].ratio", "not positive"),
    (("results", 1, "ci_low"), 2.0, "results[1].ci_low", "above ci_high"),
    (("results", 2, "mode"), "memory", "results[2].mode", "not in settings.modes"),
    (("results", 3, "verdict"), "better", "results[3].verdict", "is not one of"),
    (("results", 3, "base", "n"), 4, "results[3].base.values", "5 values but n is 4"),
    (("results", 3, "head", "median"), math.inf, "results[3].head.median", "not a finite"),
    (("results", 3, "base", "values", 2), math.nan, "results[3].base.values[2]",
     "NaN is not allowed"),
    (("results", 4, "more_rounds"), 2.5, "results[4].more_rounds", "whole number"),
    (("results", 5, "accepted"), {"source": "x"}, "results[5].accepted.why", "missing"),
    (("results", 0, "attribution", 1, "text"), None, "results[0].attribution[1].text",
     "got null"),
    (("results", 0, "higher_is_better"), DELETE, "results[0].higher_is_better", "missing"),
    (("results", 1), report_dict()["results"][0], "results[1]", "duplicate of results[0]"),
    (("history", TOPO, "change_points", 0, "index"), 99,
     f"history.{TOPO}.change_points[0].index", "past the last point"),
    (("plugin_breakdown", TOPO, "head"), [1], f"plugin_breakdown.{TOPO}.head",
     "expected an object, got a list"),
]


@pytest.mark.parametrize(("keys", "value", "field", "problem"), BAD,
                         ids=[f"{f}:{p}" for _, _, f, p in BAD])
def test_bad_field_is_named_with_the_file(tmp_path: Path, keys: tuple[str | int, ...],
                                          value: Any, field: str, problem: str) -> None:
    data = report_dict()
    _set(data, keys, value)
    file = tmp_path / "report.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ReportFileError) as info:
        load_report(file)
    message = str(info.value)
    assert message.startswith(f"{file}: {field}: "), message
    assert problem in info.value.problem
    assert "\n" not in message


@pytest.mark.parametrize(("content", "problem"), [
    (None, "no such file"),
    ("{\"schema\": 1,", "not valid JSON: line 1 column"),
    ("[1, 2]", "(top level): expected an object, got a list"),
    ("\udcff", "not UTF-8 text"),
], ids=["missing", "truncated", "list", "not-utf8"])
def test_unreadable_file(tmp_path: Path, content: str | None, problem: str) -> None:
    file = tmp_path / "report.json"
    if content == "\udcff":
        file.write_bytes(b"\xff\xfe\x00garbage")
    elif content is not None:
        file.write_text(content, encoding="utf-8")
    with pytest.raises(ReportFileError, match=re.escape(problem)):
        load_report(file)


def test_the_fixture_loads_with_every_field() -> None:
    report = parse_report(report_dict())
    assert report.kind == "refs" and report.verdict == "regression"
    assert report.base.commit == "a" * 40 and report.head.environment["cpu_model"] == "EPYC 7R13"
    assert report.settings.min_effect == {"time": 0.03, "instructions": 0.01}
    first = report.results[0]
    assert (first.workload, first.mode, first.metric) == (TOPO, "time", "SchedulingThroughput")
    assert first.change == pytest.approx(-0.048) and first.open_regression
    assert first.attribution[0].text == "PodTopologySpread Filter +35 %"
    accepted = next(r for r in report.results if r.accepted is not None)
    assert not accepted.open_regression
    assert accepted.accepted.source == ".schedperf/accepted.yaml:3"
    assert report.history[TOPO].change_points[0].index == 12
    assert report.plugin_breakdown[SCRIPT_NAME].head == {SCRIPT_NAME + "/Filter": 2e-5}


def test_optional_fields_may_be_absent() -> None:
    data = report_dict()
    for key in ("plugin_breakdown", "history", "environment_notes"):
        del data[key]
    for key in ("p_value", "q_value", "more_rounds", "accepted", "attribution", "uncommon",
                "unit"):
        del data["results"][0][key]
    del data["results"][0]["base"]["values"]
    del data["settings"]["wall_seconds"]
    report = parse_report(data)
    r = report.results[0]
    assert (r.p_value, r.q_value, r.more_rounds, r.accepted, r.attribution, r.uncommon,
            r.unit, r.base.values) == (None, None, None, None, (), False, "", ())
    assert report.history == {} and report.plugin_breakdown == {}
    assert report.settings.wall_seconds is None


def test_nan_p_value_reads_as_null() -> None:
    """Python's json writes NaN for a deterministic comparison without a p-value."""
    data = report_dict()
    data["results"][1]["p_value"] = math.nan
    text = json.dumps(data)
    assert "NaN" in text
    report = parse_report(json.loads(text))
    assert report.results[1].p_value is None
    assert '"p_value": null' in report_to_json(report)


def test_json_round_trip_is_stable_and_lossless() -> None:
    data = report_dict()
    data["settings"]["producer"] = {"version": "0.2"}  # a writer's own setting
    data["results"][0]["note"] = "paired rounds"
    report = parse_report(data)
    text = report_to_json(report)
    again = parse_report(json.loads(text))
    assert again == report
    assert report_to_json(again) == text
    out = json.loads(text)
    assert out["settings"]["producer"] == {"version": "0.2"}
    assert out["results"][0]["note"] == "paired rounds"
    assert list(out)[:4] == ["schema", "generated", "kind", "base"]
    assert list(out["base"]["environment"]) == sorted(out["base"]["environment"])
    assert [r["workload"] for r in out["results"]] == [r["workload"] for r in data["results"]]
    assert report_to_dict(report)["results"][0]["ratio"] == 0.952


def test_an_unknown_top_level_key_is_refused_not_dropped() -> None:
    """schedperf compare writes no other top-level key: one there is a typo or another
    producer's file, named (not silently kept or dropped)."""
    data = report_dict()
    data["verdcit"] = "no change"
    with pytest.raises(ReportFileError) as info:
        parse_report(data, source="r.json")
    assert info.value.field == "verdcit"
    assert str(info.value).startswith("r.json: verdcit: unknown field (expected only base, ")


def test_find_report_accepts_a_compare_folder(report_file: Path) -> None:
    assert find_report(report_file.parent) == report_file
    assert find_report(report_file) == report_file
    with pytest.raises(ReportFileError, match=r"no report\.json in this folder"):
        find_report(report_file.parent.parent)
    with pytest.raises(ReportFileError, match="no such file or folder"):
        find_report(report_file.parent / "nope")


MODULES = ["reports.render"] + [f"reports.render.{m}" for m in (
    "_json_reader", "model", "sections", "markdown", "html", "plots")]


@pytest.mark.parametrize("module_name", MODULES)
def test_every_name_in_all_is_importable(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert len(module.__all__) == len(set(module.__all__))
    for name in module.__all__:
        assert hasattr(module, name), name
