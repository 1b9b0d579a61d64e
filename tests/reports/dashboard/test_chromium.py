"""The site in a real browser: headless Chromium loads the index, a workload page and the
comparison from file:// with DNS blackholed; the DOM has the tables and SVGs, the pages log
nothing to the console (a CSP violation would) and request nothing. A control page with an
external image and an inline script proves both checks see such problems.

Reuses the Chromium discovery, flags and net-log reader of the HTML report's browser test.
Skipped when Chromium is missing or cannot start here.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from reports.dashboard import page_name
from tests.reports.dashboard.conftest import STEP_NAME
from tests.reports.render.test_chromium import _FLAGS, CHROMIUM, _netlog_events

pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="no chromium (apt-get install chromium)")
_CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\] (.*)")
_CONTROL = ('<!DOCTYPE html><html><body><img src="http://img.invalid/b.png">'
            "<script>console.error('boom')</script></body></html>")


@dataclass
class Loaded:
    dom: str
    requested: list[str]
    console: list[str]


def _run(args: list[str], tmp_path: Path, name: str) -> subprocess.Popen[str]:
    assert CHROMIUM is not None
    try:
        return subprocess.Popen(
            [CHROMIUM, *_FLAGS, f"--user-data-dir={tmp_path / f'profile-{name}'}",
             "--enable-logging=stderr", "--v=0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        pytest.skip(f"chromium cannot run here: {exc}")


def _wait(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.skip("chromium cannot run here: no answer in 60 s")
    if proc.returncode != 0:
        pytest.skip(f"chromium cannot run here: exit {proc.returncode}: {err.strip()[-300:]}")
    return out, err


def _load_all(pages: dict[str, Path], tmp_path: Path,
              screenshot: tuple[Path, Path]) -> dict[str, Loaded]:
    """Every page in its own Chromium (DOM, net log, console), plus one screenshot, all at
    once."""
    runs = {}
    for name, page in pages.items():
        netlog = tmp_path / f"{name}.netlog.json"
        runs[name] = (_run([f"--log-net-log={netlog}", "--dump-dom", page.as_uri()],
                           tmp_path, name), netlog)
    shot_page, shot = screenshot
    shooter = _run([f"--screenshot={shot}", "--window-size=1280,900", shot_page.as_uri()],
                   tmp_path, "screenshot")
    loaded = {}
    for name, (proc, netlog) in runs.items():
        dom, err = _wait(proc)
        if "<html" not in dom or not netlog.exists():
            pytest.skip(f"chromium cannot run here: no DOM or net log for {name}")
        requested = [e["url"] for e in _netlog_events(netlog)
                     if e["type"] == "URL_REQUEST_START_JOB" and "url" in e
                     and e.get("initiator") != "not an origin"
                     and not e["url"].startswith(("file:", "data:"))]
        console = [m.group(1) for m in map(_CONSOLE.search, err.splitlines()) if m]
        loaded[name] = Loaded(dom, requested, console)
    _wait(shooter)
    return loaded


def test_site_in_headless_chromium(site: Path, tmp_path: Path) -> None:
    control = tmp_path / "control.html"
    control.write_text(_CONTROL, encoding="utf-8")
    pages = {"index": site / "index.html", "compare": site / "compare.html",
             "step": site / "workloads" / page_name("run", STEP_NAME, "ci"),
             "control": control}
    shot = tmp_path / "index.png"
    loaded = _load_all(pages, tmp_path, (pages["index"], shot))

    # the checks see problems: the control page's request and its console messages
    assert loaded["control"].requested == ["http://img.invalid/b.png"]
    assert any("boom" in line for line in loaded["control"].console)

    for name in ("index", "compare", "step"):
        page = loaded[name]
        assert page.requested == [], name
        assert page.console == [], name
        assert "<script" not in page.dom.lower(), name

    index = loaded["index"].dom
    assert index.count("<table") >= 5
    assert index.count('<svg class="spark"') == 9  # 10 workloads, one without a value
    assert "Evil/&lt;script&gt;alert(1)&lt;/script&gt;" in index
    step = loaded["step"].dom
    assert step.count('<svg class="plot"') == 1 and step.count('<svg class="panel"') == 7
    assert "change point" in step
    assert "<table" in loaded["compare"].dom and "v-regression" in loaded["compare"].dom
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
