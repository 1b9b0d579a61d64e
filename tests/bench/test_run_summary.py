"""The end of schedperf run: counts instead of file names, whole workload names in logs,
threshold messages visible, --format table|json|csv."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from bench.cli.main import main
from bench.cli.run_summary import RunSummary, render
from tests.builders import tiny_config
from workloads.result import WorkloadResult

LONG = "A_workload_name_far_longer_than_any_terminal_column_would_show_in_full_" + "x" * 40


@pytest.fixture
def config(tmp_path: Path) -> Path:
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    (folder / "performance-config.yaml").write_text(tiny_config(
        ("5Nodes", [], 5, 2, 20), (LONG, [], 6, 2, 10), ("Missed", [], 5, 0, 10),
        thresholds={"Missed": "1000000000"}))
    return folder.parent


def _run(config: Path, out: Path, *args: str) -> int:
    return main(["run", "--config", str(config), "--label", "", "--out", str(out), *args])


def test_table_keeps_whole_names_and_ends_with_counts(config, tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(config, out) == 1  # "Missed" misses its threshold
    stdout = capsys.readouterr().out
    summary = stdout[stdout.index("schedperf run"):]  # the progress display comes before
    assert "…" not in summary
    row = next(line for line in summary.splitlines() if LONG in line)  # on one line
    assert "ok" in row
    # the threshold message stays visible after the table
    assert re.search(r"^Tiny/Missed: threshold-missed: .*SchedulingThroughput", stdout, re.M)
    last = stdout.strip().splitlines()[-1]
    written = sorted(p.name for p in out.iterdir())
    assert last == (f"results in {out}: {len(written)} files (1 DataItems JSON, 3 .dat "
                    "progress, 2 Parquet); 3 workloads: 2 ok, 1 threshold-missed")
    assert not any(name in stdout for name in written)  # counts, not file names


def test_json_summary_on_stdout_messages_on_stderr(config, tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(config, out, "--format", "json") == 1
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert (doc["out"], doc["complete"], doc["planned"], doc["finished"]) == (
        str(out), True, 3, 3)
    assert doc["statuses"] == {"ok": 2, "threshold-missed": 1}
    assert doc["files"] == {"dataitems": 1, "progress": 3, "parquet": 2, "total": 6}
    rows = {r["workload"]: r for r in doc["workloads"]}
    assert set(rows) == {"Tiny/5Nodes", f"Tiny/{LONG}", "Tiny/Missed"}
    assert rows["Tiny/Missed"]["status"] == "threshold-missed"
    assert "SchedulingThroughput" in rows["Tiny/Missed"]["reason"]
    assert rows["Tiny/5Nodes"]["attempts_per_pod"] == 1.0
    assert "Tiny/Missed: threshold-missed" in captured.err
    assert f"results in {out}" in captured.err


def test_csv_summary(config, tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(config, out, "--format", "csv", "--repeat", "2") == 1
    captured = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(captured.out)))
    assert [(r["workload"], r["round"], r["status"]) for r in rows] == [
        (name, str(rnd), status) for rnd in (1, 2)
        for name, status in (("Tiny/5Nodes", "ok"), (f"Tiny/{LONG}", "ok"),
                             ("Tiny/Missed", "threshold-missed"))]
    assert "Tiny/Missed #2: threshold-missed" in captured.err


def test_a_narrow_terminal_wraps_names_instead_of_cutting_them():
    result = WorkloadResult(test_case="Tiny", workload=LONG, topic="misc", params={},
                            labels=())
    buf = io.StringIO()
    terminal = Console(file=buf, width=60, force_terminal=True, color_system=None)
    render(RunSummary(out=Path("o"), planned=1, results=[(1, result)]), "table",
           out=terminal, err=terminal)
    text = buf.getvalue()
    assert "…" not in text
    cells = [line.split("│")[1].strip() for line in text.splitlines()
             if line.startswith("│")]
    assert "".join(cells) == f"Tiny/{LONG}"
