"""The HTML report in a real browser: headless Chromium loads it from file:// with DNS
blackholed, its DOM has the tables and plots, and the page requests nothing.

Skipped when no Chromium is installed (Debian: ``apt-get install chromium``) or it cannot
start here. Chromium's own background traffic (update checks, account lookups) comes from the
browser process (``initiator`` "not an origin" in the net log); a page on file:// has the
opaque origin "null". A control page with external references proves that the net-log check
sees page requests at all.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="no chromium (apt-get install chromium)")
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--disable-extensions", "--disable-default-apps",
          "--host-resolver-rules=MAP * ~NOTFOUND"]
_CONTROL = ('<!DOCTYPE html><html><head><link rel="stylesheet" href="https://cdn.invalid/a.css">'
            '</head><body><img src="http://img.invalid/b.png"></body></html>')


def _netlog_events(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8", errors="replace").rstrip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:  # not finalised: close the events list by hand
        data = json.loads(text.rstrip(",") + "]}")
    names = {v: k for k, v in data["constants"]["logEventTypes"].items()}
    return [{"type": names.get(e["type"]), **e.get("params", {})} for e in data["events"]]


def _load(pages: list[Path], tmp_path: Path) -> list[tuple[str, list[str]]]:
    """Each page in its own headless Chromium, all at once: per page (the DOM after load,
    the URLs the page itself requested)."""
    assert CHROMIUM is not None
    runs = []
    for i, page in enumerate(pages):
        netlog = tmp_path / f"{page.stem}.netlog.json"
        try:
            proc = subprocess.Popen(
                [CHROMIUM, *_FLAGS, f"--user-data-dir={tmp_path / f'profile{i}'}",
                 f"--log-net-log={netlog}", "--dump-dom", page.as_uri()],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as exc:
            pytest.skip(f"chromium cannot run here: {exc}")
        runs.append((proc, netlog))
    out = []
    for proc, netlog in runs:
        try:
            dom, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.skip("chromium cannot run here: no answer in 60 s")
        if proc.returncode != 0 or "<html" not in dom or not netlog.exists():
            pytest.skip(f"chromium cannot run here: exit {proc.returncode}: "
                        f"{err.strip()[-300:]}")
        requested = [e["url"] for e in _netlog_events(netlog)
                     if e["type"] == "URL_REQUEST_START_JOB" and "url" in e
                     and e.get("initiator") != "not an origin"
                     and not e["url"].startswith(("file:", "data:"))]
        out.append((dom, requested))
    return out


def test_report_renders_offline_and_requests_nothing(sample_html: str, tmp_path: Path) -> None:
    page, control = tmp_path / "report.html", tmp_path / "control.html"
    page.write_text(sample_html, encoding="utf-8")
    control.write_text(_CONTROL, encoding="utf-8")
    (dom, requested), (_, control_requests) = _load([page, control], tmp_path)
    # the check sees page requests: the control page's two external references show up
    assert sorted(control_requests) == ["http://img.invalid/b.png", "https://cdn.invalid/a.css"]
    assert requested == []
    assert dom.count("<svg") == 6
    assert dom.count("<table") >= 8
    assert "Regressions and improvements (5)" in dom
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom and "<script" not in dom
    without_namespaces = dom.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    assert "http://" not in without_namespaces and "https://" not in without_namespaces
