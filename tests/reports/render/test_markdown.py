"""render_markdown: what a PR comment shows, escaping, and the size bound."""

from __future__ import annotations

import re

import pytest

from reports.render import MAX_BYTES, Report, parse_report, render_markdown
from reports.render.markdown import md_escape
from tests.reports.render.conftest import many_results_dict, report_dict


@pytest.fixture
def md(report: Report) -> str:
    return render_markdown(report)


def _table_rows(md: str, first_cell: str) -> list[str]:
    return [line for line in md.splitlines() if line.startswith(f"| {first_cell} |")]


def test_headline_then_environment_warning(md: str) -> None:
    lines = md.splitlines()
    assert lines[0] == ("### schedperf: REGRESSION — 3 regressions, 2 improvements, "
                        "1 inconclusive, 4 no change; 1 accepted regression")
    assert lines[2].startswith("> **Warning: BASE and HEAD ran in different environments**")
    assert "cpu\\_model: Xeon 8375C vs EPYC 7R13" in lines[2]
    assert "BASE **main** (aaaaaaaaaaaa) vs HEAD **pr-42** (bbbbbbbbbbbb)" in md
    assert "took 6 min 52 s" in md and "min effect instructions 1 %, time 3 %" in md


def test_no_warning_when_environments_match() -> None:
    data = report_dict()
    data["environment_differs"] = False
    assert "Warning" not in render_markdown(parse_report(data))


@pytest.mark.parametrize(("workload", "cells"), [
    ("TopologySpreading/500Nodes", ["SchedulingThroughput", "time", "812 → 773 pods/s",
                                    "-4.8 %", "[-6.7 %, -2.9 %]", "0.020", "**regression**",
                                    "instructions: regression (+6.0 %)"]),
    ("SchedulingBasic/5000Nodes", ["SchedulingThroughput", "time", "+12.0 %", "improvement",
                                   "instructions: no change (+0.10 %)"]),
    ("Pipes\\|In\\|Name/100Nodes", ["+20.0 %", "improvement", "-"]),
], ids=["regression", "improvement", "pipes-escaped"])
def test_significant_rows(md: str, workload: str, cells: list[str]) -> None:
    section = md.split("#### Regressions and improvements (5)")[1].split("####")[0]
    rows = [r for r in _table_rows(section, workload) if "SchedulingThroughput" in r]
    assert len(rows) == 1, rows
    row_cells = re.split(r"(?<!\\)\|", rows[0])[1:-1]
    assert len(row_cells) == 9  # escaped pipes do not add cells
    for cell in cells:
        assert cell in [c.strip() for c in row_cells], (cell, row_cells)


def test_regressions_come_worst_first(md: str) -> None:
    section = md.split("#### Regressions and improvements")[1].split("####")[0]
    changes = [row.split(" | ")[4] for row in section.splitlines() if "regression**" in row]
    assert changes == ["-10.0 %", "+6.0 %", "-4.8 %"]


def test_accepted_uncommon_attribution_inconclusive(md: str) -> None:
    assert ("- **NodeAffinity/500Nodes** · time · SchedulingThroughput: -4.0 % "
            "[-5.9 %, -2.1 %] — accepted: minDomains support costs \\~4 %; tracked in #123 "
            "(.schedperf/accepted.yaml:3)") in md
    assert "2 uncommon scenarios checked; 1 result changed or unsettled:" in md
    assert "- **Uncommon/GatedPodsChurn** · time · SchedulingThroughput: regression, -10.0 %" in md
    assert ("- **TopologySpreading/500Nodes** (time, regression -4.8 %): PodTopologySpread "
            "Filter +35 %; InterPodAffinity PreFilter +8 %") in md
    assert ("- **Preemption/500Nodes** · time · SchedulingThroughput: -2.5 % [-7.4 %, +2.4 %], "
            "~12 more rounds") in md


def test_details_hold_the_unchanged_results(md: str) -> None:
    details = md.split("<details>")[1].split("</details>")[0]
    assert "<summary>No change: 4 results</summary>" in details
    assert "| &lt;script&gt;alert(1)&lt;/script&gt; | SchedulingThroughput | time |" in details
    assert "| Cost \\$5 and \\$6/10Nodes |" in details
    assert "Uncommon/HugeTaints" in details
    assert "<script>" not in md


def test_uncommon_note_when_all_unchanged() -> None:
    data = report_dict()
    data["results"] = [r for r in data["results"] if r["workload"] != "Uncommon/GatedPodsChurn"]
    assert "1 uncommon scenario checked: all no change." in render_markdown(parse_report(data))
    data["results"] = [r for r in data["results"] if not r["uncommon"]]
    assert "No uncommon scenarios in this comparison." in render_markdown(parse_report(data))


def test_empty_report_says_so() -> None:
    data = report_dict()
    data["results"] = []
    data["verdict"] = "no change"
    md = render_markdown(parse_report(data))
    assert md.startswith("### schedperf: NO CHANGE — 0 regressions, 0 improvements")
    assert "No regressions or improvements." in md and "<details>" not in md


@pytest.mark.parametrize(("text", "expected"), [
    ("a|b", "a\\|b"),
    ("<b>&amp;</b>", "&lt;b&gt;&amp;amp;&lt;/b&gt;"),
    ("x_y*z`[l](u)", "x\\_y\\*z\\`\\[l\\](u)"),
    ("$x$", "\\$x\\$"),
    ("two\nlines", "two lines"),
    ("a" * 100 + "z" * 100, "a" * 47 + "…" + "z" * 72),
    ("ping @octocat, a@b and @ alone", "ping @\u2060octocat, a@\u2060b and @ alone"),
], ids=["pipe", "html", "emphasis-code-link", "math", "newline", "clipped", "mention"])
def test_md_escape(text: str, expected: str) -> None:
    assert md_escape(text) == expected


@pytest.mark.parametrize("n", [200, 600])
def test_many_results_stay_under_the_size_bound(n: int) -> None:
    md = render_markdown(parse_report(many_results_dict(n)))
    assert len(md.encode()) <= MAX_BYTES
    assert md.count("<details>") == 1 and md.rstrip().endswith("</sub>")
    unchanged = int(re.search(r"<summary>No change: (\d+) results</summary>", md)[1])
    details = md.split("<details>")[1].splitlines()
    shown = sum(line.startswith("| ") for line in details) - 2  # header and --- rows
    truncated = re.search(r"\*… (\d+) more not shown \(comment size limit\)", md)
    if n == 600:  # too many for one comment: the details table says how many it left out
        assert truncated and shown + int(truncated[1]) == unchanged
    else:
        assert truncated is None


def test_a_tight_budget_keeps_every_section() -> None:
    md = render_markdown(parse_report(many_results_dict(200)), max_bytes=8_000)
    assert len(md.encode()) <= 8_000
    for heading in ("#### Regressions and improvements (44)", "#### Where the time went",
                    "#### Inconclusive (22)", "<summary>No change: 134 results</summary>",
                    "</details>"):
        assert heading in md
    assert "*… 134 more not shown (comment size limit)" in md
