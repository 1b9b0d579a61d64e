"""The report's change-aware selection: read and written back exactly, refused when broken
(naming the field), and rendered first -- blind spots with file:line ranges, then the
workloads added and the lines that made each be added -- when there are blind spots; after the
settings otherwise. Names from diffs and configs are escaped."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reports.render import (
    MAX_BYTES,
    ReportFileError,
    parse_report,
    render_html,
    render_markdown,
    report_to_json,
)
from tests.reports.render.conftest import SCRIPT_NAME, report_dict

QUEUE = "scheduler_core/queue/scheduling_queue.py"
HOSTILE = "scheduler_core/odd |name*$`x`.py"
ADDED = "TopologySpreading/500Nodes"  # has results in the fixture report


def _span(file: str, first: int, last: int) -> dict[str, Any]:
    return {"file": file, "first": first, "last": last}


def selection(**changes: Any) -> dict[str, Any]:
    data = {
        "state": "applied", "base": "a" * 40, "head": "b" * 40,
        "packages": ["scheduler_core"], "label": "integration-test",
        "fail_on_blind_spot": False, "error": None, "seconds": 42.0,
        "map": {"commit": "b" * 40, "source": "computed", "scope": "files-0123",
                "workloads": 72, "seconds": 40.5, "processes": 2, "store": ".schedperf/store",
                "files": [QUEUE, HOSTILE]},
        "changed_lines": 9, "measured_lines": 3, "import_time_lines": 1,
        "files": [{"file": QUEUE, "lines": 8}, {"file": HOSTILE, "lines": 1}],
        "deleted": [], "skipped": {"scheduler_core/x.yaml": "not a Python file"},
        "measured_cover": [_span(QUEUE, 10, 14)],
        "added": [{"workload": ADDED, "cost": 1.5, "lines": [_span(QUEUE, 120, 122)],
                   "line_count": 2, "modes": ["time", "instructions"]}],
        "blind_spots": [
            {**_span(QUEUE, 300, 304), "lines": [300, 304], "scope": "function _requeue",
             "suggestions": [{"workload": SCRIPT_NAME, "line": 296, "distance": 4}]},
            {**_span(HOSTILE, 1, 1), "lines": [1], "scope": "none", "suggestions": []}],
        "import_time": [_span(QUEUE, 3, 3)],
    }
    data.update(changes)
    return data


def with_selection(**changes: Any) -> dict[str, Any]:
    data = report_dict()
    data["selection"] = selection(**changes)
    return data


def test_selection_round_trips() -> None:
    report = parse_report(with_selection())
    sel = report.selection
    assert sel is not None and sel.state == "applied" and sel.gate_fails is False
    assert [str(b.where) for b in sel.blind_spots] == [f"{QUEUE}:300-304", f"{HOSTILE}:1"]
    assert sel.added[0].modes == ("time", "instructions") and str(sel.added[0].lines[0]) == (
        f"{QUEUE}:120-122")
    text = report_to_json(report)
    assert parse_report(json.loads(text)) == report
    assert json.loads(text)["selection"]["blind_spots"][1]["file"] == HOSTILE
    assert report_to_json(parse_report(json.loads(text))) == text


def test_reports_without_a_selection_stay_without_one() -> None:
    data = report_dict()
    report = parse_report(data)
    assert report.selection is None
    assert "selection" not in json.loads(report_to_json(report))


@pytest.mark.parametrize(("changes", "field", "problem"), [
    ({"state": "maybe"}, "selection.state", "is not one of"),
    ({"state": "error", "error": None}, "selection.error", "needs the error text"),
    ({"import_time": [_span(QUEUE, 9, 3)]}, "selection.import_time[0].first", "is after last"),
    ({"blind_spots": [{**_span(QUEUE, 0, 1), "lines": [1], "scope": "file"}]},
     "selection.blind_spots[0].first", "below the minimum 1"),
    ({"added": [{"workload": "x", "lines": [], "line_count": 0, "modes": ["memory"]}]},
     "selection.added[0].modes[0]", "not in settings.modes"),
])
def test_a_broken_selection_is_refused(changes: dict[str, Any], field: str,
                                       problem: str) -> None:
    with pytest.raises(ReportFileError) as info:
        parse_report(with_selection(**changes), source="r.json")
    assert info.value.field == field and problem in info.value.problem


def test_a_failure_under_coverage_is_heads() -> None:
    data = with_selection()
    data["verdict"] = "error"
    data["failures"] = [{"side": "head", "mode": "coverage", "status": "failed",
                         "workloads": ["Probe/2Nodes"], "rounds": [],
                         "error": "under coverage: RuntimeError: probe failure"}]
    md = render_markdown(parse_report(data))
    assert "#### HEAD failed: 1 workload, under coverage (failed)" in md
    # the failure comes first, then the blind spots
    assert md.index("#### HEAD failed") < md.index("#### Blind spots")


def test_markdown_opens_with_the_blind_spots() -> None:
    md = render_markdown(parse_report(with_selection()))
    head, first, second, *rest = md.split("\n#### ")
    assert head.startswith("### schedperf: ") and head.rstrip().endswith(
        "; 2 blind spots (3 changed lines no workload runs)")
    assert first.startswith("Blind spots: 2 blind spots")
    assert "- **scheduler\\_core/queue/scheduling\\_queue.py:300-304** (2 statements): nearest " \
           "lines run in function \\_requeue: **&lt;script&gt;alert(1)&lt;/script&gt;** " \
           "(line 296)" in first
    # a hostile file name is text: escaped, never markup
    assert "scheduler\\_core/odd \\|name\\*\\$\\`x\\`.py:1" in first
    assert "no workload runs any line of this file" in first
    assert "They do not fail the gate (`--fail-on-blind-spot` would)." in first
    assert second.startswith("Workloads added by change-aware selection (1)")
    assert ("HEAD changes 9 statement lines in 2 files of scheduler\\_core: 3 run by the "
            "compared workloads; 2 by the 1 workload below, added to the instructions and "
            "time sets; 1 only at import time; 3 by none (blind spots).") in second
    row = next(x for x in second.splitlines() if x.startswith("| **TopologySpreading"))
    assert "scheduler\\_core/queue/scheduling\\_queue.py:120-122 (2 lines)" in row
    assert "time: **regression** -4.8 %" in row and "instructions: **regression** +6.0 %" in row
    assert "Import-time only" in second and "scheduling\\_queue.py:3" in second
    assert "computed in 40 s by 2 processes (72 workloads, 2 files)" in second
    assert "x.yaml (not a Python file)" in second
    assert rest[0].startswith("Regressions and improvements")
    assert md.index("#### Workloads added") < md.index("BASE **")  # before the settings


def test_the_gate_and_the_quiet_cases() -> None:
    md = render_markdown(parse_report(with_selection(fail_on_blind_spot=True)))
    assert md.splitlines()[0].endswith("no workload runs), failing the gate")
    assert "They **fail the gate** (`--fail-on-blind-spot`)." in md
    # no blind spot: the added workloads follow the settings line
    md = render_markdown(parse_report(with_selection(blind_spots=[])))
    assert "Blind spots" not in md
    assert md.index("BASE **") < md.index("#### Workloads added") < md.index(
        "#### Regressions and improvements")
    for state, text in (("off", "Change-aware selection: off (`--no-select-changed`)."),
                        ("no changes", "HEAD changes no statement line of scheduler\\_core: "
                                       "nothing to add."),
                        ("error", "**Change-aware selection failed**: boom.")):
        md = render_markdown(parse_report(with_selection(
            state=state, error="boom" if state == "error" else None, added=[],
            blind_spots=[])))
        assert text in md, state


def test_many_blind_spots_stay_under_the_size_bound() -> None:
    spots = [{**_span(f"scheduler_core/m{i}.py", 1, 9), "lines": list(range(1, 10)),
              "scope": "file", "suggestions": [{"workload": "W/" + "x" * 100, "line": 20,
                                                "distance": 11}] * 3} for i in range(2000)]
    md = render_markdown(parse_report(with_selection(blind_spots=spots)))
    assert len(md.encode()) <= MAX_BYTES
    assert "more not shown here" in md
    assert "#### Regressions and improvements" in md  # the rest still fits


def test_html_shows_the_blind_spots_before_the_sides() -> None:
    html = render_html(parse_report(with_selection()))
    box = html[html.index('<h2>Blind spots'):
               html.index("<h2>Compared</h2>")]
    assert f"{QUEUE}:300-304" in box and "&lt;script&gt;alert(1)&lt;/script&gt;" in box
    assert "scheduler_core/odd |name*$`x`.py:1" in box
    assert "Workloads added by change-aware selection (1)" in box
    assert "<script>" not in html


def test_a_generated_scenario_that_runs_a_blind_spot_is_named_with_its_command() -> None:
    command = "schedperf generate --seed 7 --count 3 --out generated/"
    spot = {**_span(QUEUE, 300, 304), "lines": [300, 304], "scope": "file", "suggestions": [],
            "command": command, "covers_all": True, "generated_scope": "covered",
            "tags": ["gates"], "generated": [{"workload": "Generated_7_2/w", "command": command,
                                             "line": 300, "distance": 0,
                                             "covered": [300, 304]}]}
    report = parse_report(with_selection(blind_spots=[spot]))
    (b,) = report.selection.blind_spots
    assert (b.command, b.covers_all, b.generated[0].covered) == (command, True, (300, 304))
    text = report_to_json(report)
    assert parse_report(json.loads(text)) == report
    md = render_markdown(report)
    assert ("a generated scenario runs all of it: schedperf generate --seed 7 --count 3 "
            "--out generated/") in md
    assert command in render_html(report)
