"""The real ``schedperf compare`` A/A runs of the study, in a subprocess as a user runs them:
their wall time is the cost of a default compare; their report is digested into results.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from bench.study.settings import Say, StudySettings

__all__ = ["real_compare", "report_digest"]

ROOT = Path(__file__).resolve().parents[2]


def _sources_modified_since(since_ns: int) -> list[str]:
    """.py files under scheduler_core/, workloads/ and bench/ modified at or after
    ``since_ns`` (someone editing the checkout while a count ran changes what is counted)."""
    out = []
    for root in ("scheduler_core", "workloads", "bench"):
        for folder, dirs, files in os.walk(ROOT / root):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for f in files:
                path = os.path.join(folder, f)
                try:
                    if f.endswith(".py") and os.stat(path).st_mtime_ns >= since_ns:
                        out.append(os.path.relpath(path, ROOT))
                except OSError:
                    continue
    return sorted(out)


def real_compare(mode: str, base: Path, head: Path, out: Path, label: str, time_label: str,
                 settings: StudySettings, say: Say) -> tuple[float, dict[str, Any], Path]:
    """``schedperf compare`` in a subprocess, exactly as a user runs it (default settings);
    (wall seconds, report.json, output folder)."""
    cmd = [sys.executable, "-m", "bench.cli.main", "compare", "--base-config", str(base),
           "--head-config", str(head), "--measure", mode, "--label", label,
           "--time-label", time_label, "--jobs", str(settings.jobs), "--out", str(out)]
    for c in settings.configs:
        cmd += ["--config", str(c)]
    if settings.name_regex:
        cmd += ["--name", settings.name_regex]
    say(f"compare ({mode}): {' '.join(cmd[1:])}")
    done = out / "study-wall-seconds.json"
    if settings.resume and done.is_file() and (out / "report.json").is_file():
        info = json.loads(done.read_text(encoding="utf-8"))
        wall = float(info["wall_seconds"])
        report = dict(json.loads((out / "report.json").read_text(encoding="utf-8")))
        report["sources_modified"] = info.get("sources_modified", [])
        say(f"compare ({mode}): reused ({wall:.0f} s when it ran)")
        return wall, report, out
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    started_ns = time.time_ns()
    with open(out / "compare.log", "wb") as log:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        tail = (out / "compare.log").read_text(errors="replace").strip().splitlines()[-5:]
        raise click.ClickException(f"schedperf compare ({mode}) exited with "
                                   f"{proc.returncode}: " + " | ".join(tail))
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    edited = _sources_modified_since(started_ns)
    if edited:
        say(f"compare ({mode}): source files changed while it ran: {', '.join(edited)}")
    done.write_text(json.dumps({"wall_seconds": wall, "sources_modified": edited}) + "\n",
                    encoding="utf-8")
    report = {**report, "sources_modified": edited}
    say(f"compare ({mode}): {wall:.0f} s, verdict {report['verdict']}")
    return wall, report, out


def report_digest(report: Mapping[str, Any]) -> dict[str, Any]:
    res = report.get("results", [])
    return {"verdict": report.get("verdict"), "comparisons": len(res),
            "verdicts": {v: sum(r["verdict"] == v for r in res)
                         for v in ("regression", "improvement", "inconclusive", "no change")},
            "problems": {s: report.get(s, {}).get("problems") for s in ("base", "head")},
            "sources_modified_while_running": report.get("sources_modified", [])}
