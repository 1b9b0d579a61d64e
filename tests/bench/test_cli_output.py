"""Output for logs: ``schedperf list`` and the progress display of ``schedperf run`` print
whole workload names when stdout is not a terminal (click's CliRunner is not one), and
``list --format json|csv`` give the table's fields in a machine-readable form."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from bench.cli.list import FIELDS, _table, listed
from bench.cli.main import cli
from bench.cli.output import PIPE_WIDTH, output_console
from tests.builders import UNMODELLED, tiny_config
from workloads.config import load_configs

CASE = "SchedulingPodAntiAffinityWithNamespaceSelectorAndAVeryLongTestCaseName"
LONG = "5Nodes_10Pods_QueueingHintsEnabled_SchedulerAsyncAPICallsEnabled_AndMore"
SHORT = "2Nodes"
BROKEN = "BadParam"  # countParam $measurePods is undefined: the sizes cannot be resolved


def write_catalog(root: Path) -> Path:
    misc = root / "configs" / "misc"
    misc.mkdir(parents=True)
    text = tiny_config((LONG, ["integration-test", "short"], 5, 2, 10),
                       (SHORT, ["integration-test"], 2, 0, 3),
                       (BROKEN, ["integration-test"], 1, 1, 1))
    text = text.replace("name: Tiny", f"name: {CASE}")
    text = text.replace("params: {nodes: 1, initPods: 1, measurePods: 1}",
                        "params: {nodes: 1, initPods: 1, measurePodz: 1}")
    (misc / "performance-config.yaml").write_text(text)
    volumes = root / "configs" / "volumes"
    volumes.mkdir()
    (volumes / "pv.yaml").write_text("apiVersion: v1\nkind: VolumeAttachment\n"
                                     "metadata: {name: pv}\n")
    (volumes / "performance-config.yaml").write_text(UNMODELLED)
    return root / "configs"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    return write_catalog(tmp_path)


def invoke(*args: str) -> Result:
    # COLUMNS=80: what a CI log or a pipe gets from rich without the fix
    return CliRunner(env={"COLUMNS": "80"}).invoke(cli, list(args), catch_exceptions=False)


def expected(catalog: Path) -> list[dict[str, object]]:
    return [listed(tc, w).record() for tc in load_configs(catalog) for w in tc.workloads]


# --------------------------------------------------------------------------- list


def test_list_table_prints_whole_names_when_not_a_terminal(catalog: Path) -> None:
    result = invoke("list", "--config", str(catalog))
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    row = next(line for line in result.output.splitlines() if f"{CASE}/{LONG}" in line)
    assert "integration-test,short" in row and "yes" in row
    broken = next(line for line in result.output.splitlines() if f"{CASE}/{BROKEN}" in line)
    assert "error:" in broken and "parameter $measurePods is undefined" in broken
    unmodelled = next(line for line in result.output.splitlines() if "Volumes/small" in line)
    assert "no: op 1 createAny" in unmodelled and "VolumeAttachment is not modelled" in unmodelled


def test_list_table_on_a_narrow_terminal_wraps_names_instead_of_cutting_them(
        catalog: Path) -> None:
    rows = [listed(tc, w) for tc in load_configs(catalog) for w in tc.workloads]
    out = io.StringIO()
    Console(file=out, width=60, force_terminal=True, color_system=None).print(_table(rows))
    text = out.getvalue()
    assert "…" not in text
    first_column = "".join(line.split("│")[1].strip() for line in text.splitlines()
                           if line.startswith("│"))
    assert f"{CASE}/{LONG}" in first_column and f"{CASE}/{SHORT}" in first_column


def test_list_json_is_a_list_of_objects_with_the_table_fields(catalog: Path) -> None:
    result = invoke("list", "--config", str(catalog), "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert rows == expected(catalog)
    assert all(tuple(row) == FIELDS for row in rows)
    by_name = {row["workload"]: row for row in rows}
    assert by_name[f"{CASE}/{LONG}"] == {
        "workload": f"{CASE}/{LONG}", "labels": ["performance", "integration-test", "short"],
        "nodes": 5, "pods": 12, "supported": "yes", "reason": None}
    broken = by_name[f"{CASE}/{BROKEN}"]
    assert (broken["nodes"], broken["pods"], broken["supported"]) == (None, None, "error")
    assert "parameter $measurePods is undefined" in broken["reason"]
    assert by_name["Volumes/small"]["supported"] == "no"
    assert "VolumeAttachment is not modelled" in by_name["Volumes/small"]["reason"]


def test_list_csv_has_a_header_and_the_same_rows_as_json(catalog: Path) -> None:
    result = invoke("list", "--config", str(catalog), "--format", "csv", "--label", "")
    assert result.exit_code == 0, result.output
    reader = csv.DictReader(io.StringIO(result.output))
    assert tuple(reader.fieldnames or ()) == FIELDS
    want = [{k: ("" if v is None else ",".join(v) if isinstance(v, list) else str(v))
             for k, v in row.items()} for row in expected(catalog)]
    assert list(reader) == want
    assert want[0]["workload"] == f"{CASE}/{LONG}"
    assert want[0]["labels"] == "performance,integration-test,short"


def test_list_label_filter_applies_to_every_format(catalog: Path) -> None:
    for fmt in ("json", "csv", "table"):
        result = invoke("list", "--config", str(catalog), "--label", "short", "--format", fmt)
        assert result.exit_code == 0, result.output
        assert f"{CASE}/{LONG}" in result.output and SHORT not in result.output


def test_list_unknown_format_exits_2(catalog: Path) -> None:
    result = invoke("list", "--config", str(catalog), "--format", "yaml")
    assert result.exit_code == 2
    assert "'yaml' is not one of 'table', 'json', 'csv'" in result.output


# --------------------------------------------------------------------------- run progress


def test_run_progress_prints_whole_names_when_not_a_terminal(catalog: Path,
                                                             tmp_path: Path) -> None:
    result = invoke("run", "--config", str(catalog), "--label", "integration-test",
                    "--name", f"{LONG}$|{SHORT}$", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    lines = result.output.splitlines()
    # the progress display's final state: name, bar, n/n ops, "<status> (<pods> pods)"
    progress = [line for line in lines if line.rstrip().endswith(tuple("0123456789"))
                and " pods) " in line]
    assert len(progress) == 2, result.output
    assert progress[0].startswith(f"{CASE}/{LONG} ") and "ok (12 pods)" in progress[0]
    assert progress[1].startswith(f"{CASE}/{SHORT} ") and "ok (3 pods)" in progress[1]


# --------------------------------------------------------------------------- output_console


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("stream", "width"), [(io.StringIO, PIPE_WIDTH), (_Terminal, 77)])
def test_output_console_is_wide_only_when_not_a_terminal(
        monkeypatch: pytest.MonkeyPatch, stream: type[io.StringIO], width: int) -> None:
    monkeypatch.setenv("COLUMNS", "77")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setattr(sys, "stdout", stream())
    assert output_console().width == width


def test_output_console_asks_the_stream_not_force_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "77")
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich then treats any stream as a terminal
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert output_console().width == PIPE_WIDTH
