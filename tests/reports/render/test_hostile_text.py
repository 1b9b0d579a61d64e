"""Hostile text stays text (issue 16): workload, test case, plugin and side names and error
text holding HTML, Markdown table syntax, backticks, @mentions and very long strings are
escaped or cut in report.md / the PR comment (the same Markdown) and report.html; the HTML is
also loaded in headless Chromium and its DOM checked for injected elements (skipped without
Chromium, failed under CI=true)."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from reports.render import parse_report, render_html, render_markdown
from tests.reports.render.conftest import _result, report_dict
from tests.shared import in_ci

LONG = "Long" + "x" * 5000 + "End"
HOSTILE = [
    '<img src=x onerror="alert(1)">/100Nodes',
    "Tab|le|Syn|tax/| --- | --- |",
    "Back`ticks```fence/`x`",
    "@octocat-and-@github/team please/@admin",
    "[click](javascript:alert(1))/<a href=x>y</a>",
    "Line\n| injected | row |\n<details>/x",
    f"{LONG}/{LONG}",
]
INJECTED_TAGS = {"img", "a", "script", "iframe", "object", "embed", "svg:script", "form"}


def hostile_report() -> dict[str, Any]:
    data = report_dict()
    data["results"] += [_result(name, "time", verdict, ratio, attribution=[{
        "plugin": name, "extension_point": "Filter<b>", "base_per_pod": 1e-4,
        "head_per_pod": 2e-4, "change": 1.0, "text": f"{name} Filter +100 %"}])
        for name, verdict, ratio in zip(HOSTILE, ["regression", "improvement", "no change",
                                                  "regression", "inconclusive", "regression",
                                                  "regression"], [0.9, 1.2, 1.0, 0.8, 0.97,
                                                                  0.85, 0.7], strict=True)]
    data["results"][0]["accepted"] = None
    data["head"]["label"] = "@octocat <b>pr</b> | `x`"
    data["failures"] = [{"side": "head", "mode": "time", "status": "error",
                         "workloads": HOSTILE, "rounds": [1],
                         "error": "boom ``` <script>alert(1)</script> @octocat\n" + LONG}]
    data["verdict"] = "error"
    return data


def benign_report() -> dict[str, Any]:
    """The fixture report with a plain failure: every element a report may hold."""
    data = report_dict()
    data["failures"] = [{"side": "head", "mode": "time", "status": "error",
                         "workloads": ["Plain/100Nodes"], "rounds": [1], "error": "boom"}]
    data["verdict"] = "error"
    return data


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_markdown_keeps_hostile_text_as_text() -> None:
    benign = render_markdown(parse_report(benign_report()))
    md = render_markdown(parse_report(hostile_report()))
    tags = set(re.findall(r"</?([a-zA-Z][\w:-]*)", _outside_code(md)))
    assert tags <= set(re.findall(r"</?([a-zA-Z][\w:-]*)", benign)), tags
    # no @mention reaches GitHub: every @ is followed by something that is not a name
    assert not re.search(r"(?<![\w`])@[A-Za-z0-9]", _outside_code(md)), \
        [line for line in md.splitlines() if re.search(r"@[A-Za-z0-9]", line)][:3]
    # the long name is cut
    assert LONG not in md and "x" * 1000 not in md
    # every table row has as many cell separators as its header
    table: int | None = None
    for line in md.splitlines():
        if line.startswith("| "):
            n = _unescaped_pipes(line)
            table = n if table is None else table
            assert n == table, line[:200]
        else:
            table = None
    # code fences stay closed: the error's backticks are inside a longer fence
    assert "boom ``` " in md
    fence = re.search(r"^(`{4,})text$", md, re.M)
    assert fence and md.count(fence[1]) >= 2


def _outside_code(md: str) -> str:
    """``md`` without fenced code blocks (GitHub links no mentions inside them)."""
    return re.sub(r"^(`{3,})text$.*?^\1$", "", md, flags=re.M | re.S)


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [name for name, _ in attrs]


def _elements(html: str) -> _Elements:
    parser = _Elements()
    parser.feed(html)
    return parser


def test_html_keeps_hostile_text_as_text() -> None:
    benign = _elements(render_html(parse_report(benign_report())))
    html = render_html(parse_report(hostile_report()))
    found = _elements(html)
    assert set(found.tags) <= set(benign.tags), set(found.tags) - set(benign.tags)
    assert not {t for t in found.tags if t in INJECTED_TAGS} - set(benign.tags)
    assert "onerror" not in found.attrs and "href" not in set(found.attrs) - set(benign.attrs)
    assert "&lt;img src=x onerror=" in html


def _chromium() -> str:
    path = next((p for p in map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome")) if p), None)
    if path is None:
        message = "no chromium (apt-get install chromium chromium-driver)"
        if in_ci():
            pytest.fail(f"{message} (CI=true: failing instead of skipping)", pytrace=False)
        pytest.skip(message)
    return path


def test_html_hostile_names_inject_nothing_in_chromium(tmp_path: Path) -> None:
    chromium = _chromium()
    page = tmp_path / "report.html"
    page.write_text(render_html(parse_report(hostile_report())), encoding="utf-8")
    proc = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", f"--user-data-dir={tmp_path / 'profile'}",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 or "<html" not in proc.stdout:
        message = f"chromium cannot run here: exit {proc.returncode}: {proc.stderr[-300:]}"
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    dom = _elements(proc.stdout)
    benign = _elements(render_html(parse_report(benign_report())))
    assert "img" not in dom.tags and "script" not in dom.tags and "iframe" not in dom.tags
    assert dom.tags.count("a") == benign.tags.count("a")
    assert "onerror" not in dom.attrs
    assert "&lt;img src=x onerror=" in proc.stdout
