"""A report whose side failed: the model refuses an ``error`` without its cause (and a cause
without ``error``), and Markdown and HTML open with which side, which workloads and the end
of the error, escaped and within the comment's size bound."""

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

TRACEBACK = ('worker exited with status 1; the end of its log:\n'
             '  File "scheduler_core/plugins/node_ports.py", line 93\n'
             "    def broken(:\n"
             "               ^\n"
             "SyntaxError: invalid syntax")


def failed_dict(**failure: Any) -> dict[str, Any]:
    """The fixture report with HEAD failing on two workloads in time mode; the first one's
    time result is an error."""
    data = report_dict()
    data["verdict"] = "error"
    data["failures"] = [{"side": "head", "mode": "time", "status": "error",
                         "workloads": ["TopologySpreading/500Nodes", SCRIPT_NAME],
                         "rounds": [1, 2, 3, 4, 5], "error": TRACEBACK, **failure}]
    data["results"][0]["verdict"] = "error"
    return data


def test_failures_round_trip() -> None:
    report = parse_report(failed_dict())
    (f,) = report.failures
    assert (f.side, f.mode, f.status, f.rounds) == ("head", "time", "error", (1, 2, 3, 4, 5))
    assert f.workloads == ("TopologySpreading/500Nodes", SCRIPT_NAME) and f.error == TRACEBACK
    text = report_to_json(report)
    assert parse_report(json.loads(text)) == report
    assert json.loads(text)["failures"][0]["error"] == TRACEBACK


def test_older_reports_have_no_failures() -> None:
    data = report_dict()
    assert "failures" not in data
    assert parse_report(data).failures == ()


def _broken(change: str) -> dict[str, Any]:
    data = failed_dict()
    if change == "verdict-not-error":
        data["verdict"] = "regression"
    elif change == "error-without-failures":
        data["failures"] = []
    elif change == "result-error-without-failures":
        data["failures"], data["verdict"] = [], "regression"
    elif change == "bad-side":
        data["failures"][0]["side"] = "both"
    elif change == "unknown-mode":
        data["failures"][0]["mode"] = "memory"
    elif change == "no-workloads":
        data["failures"][0]["workloads"] = []
    elif change == "round-zero":
        data["failures"][0]["rounds"] = [0]
    elif change == "no-error-text":
        del data["failures"][0]["error"]
    return data


@pytest.mark.parametrize(("change", "field", "problem"), [
    ("verdict-not-error", "verdict", "a report with failures has verdict 'error'"),
    ("error-without-failures", "verdict", "no failure is listed"),
    ("result-error-without-failures", "results[0].verdict", "lists no failures"),
    ("bad-side", "failures[0].side", "'both' is not one of"),
    ("unknown-mode", "failures[0].mode", "not in settings.modes"),
    ("no-workloads", "failures[0].workloads", "empty"),
    ("round-zero", "failures[0].rounds[0]", "below the minimum 1"),
    ("no-error-text", "failures[0].error", "missing"),
])
def test_bad_failures_are_refused(change: str, field: str, problem: str) -> None:
    with pytest.raises(ReportFileError) as info:
        parse_report(_broken(change), source="r.json")
    assert info.value.field == field and problem in info.value.problem


def test_markdown_opens_with_the_failure() -> None:
    md = render_markdown(parse_report(failed_dict()))
    lines = md.splitlines()
    assert lines[0].startswith("### schedperf: ERROR — HEAD failed on 2 workloads; 1 error, ")
    assert lines[2] == "#### HEAD failed: 2 workloads, time mode, rounds 1-5 (error)"
    section = md.split("\n#### ")[1]
    assert "HEAD **pr-42** (bbbbbbbbbbbb) could not be measured on" in section
    assert "**&lt;script&gt;alert(1)&lt;/script&gt;**" in section  # names escaped
    assert f"```text\n{TRACEBACK}\n```" in section  # the error as it is, in a code block
    # then the rest of the report, the failed result in no other section
    assert md.index("#### HEAD failed") < md.index("> **Warning") < md.index(
        "#### Regressions and improvements")
    significant = md.split("#### Regressions and improvements")[1].split("####")[0]
    assert "TopologySpreading/500Nodes** · time" not in significant
    assert "| TopologySpreading/500Nodes | SchedulingThroughput | time |" not in significant


def test_markdown_fence_outlasts_backticks_in_the_error() -> None:
    error = "AssertionError: ```\nnot a fence end ````"
    md = render_markdown(parse_report(failed_dict(error=error)))
    assert f"`````text\n{error}\n`````" in md


def test_many_failures_stay_under_the_size_bound() -> None:
    data = failed_dict()
    data["failures"] = [
        {"side": "head", "mode": "time", "status": "failed",
         "workloads": [f"Case{i}/Workload{j}" for j in range(40)], "rounds": [1],
         "error": "\n".join(f"line {k} " + "x" * 400 for k in range(30)) + f" #{i}"}
        for i in range(60)]
    md = render_markdown(parse_report(data))
    assert len(md.encode()) <= MAX_BYTES
    assert md.count("#### HEAD failed") <= 10
    assert "more failures: the HTML and JSON reports list every one" in md
    assert "and 20 more" in md  # workload names are capped per failure
    assert "#### Regressions and improvements" in md  # the rest still fits


def test_html_opens_with_the_failure() -> None:
    html = render_html(parse_report(failed_dict()))
    box = html[html.index('<div class="fail"'):html.index("<h2>Compared</h2>")]
    assert "HEAD failed: 2 workloads, time mode, rounds 1-5 (error)" in box
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in box and "<script>" not in box
    assert "SyntaxError: invalid syntax" in box and "def broken(:" in box
    assert html.index('<div class="fail"') < html.index("<h2>Compared</h2>")
    assert 'class="v v-error' in html
