"""``schedperf ingest`` through click's CliRunner (and through bench.cli.main.main once the
command is registered), exit codes and what it prints."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from bench.cli.history import history
from bench.cli.ingest import ingest
from bench.cli.main import cli, main
from reports.store import DEFAULT_STORE, LEDGER_NAME
from tests.reports.store.conftest import ASV_RESULTS, DATAITEMS_FILE, PYTEST_FILE, read_store


def invoke(*args: str):
    return CliRunner().invoke(ingest, list(args))


def test_ingest_everything_exits_0(run_dir, store):
    result = invoke(str(run_dir), str(ASV_RESULTS), str(PYTEST_FILE), str(DATAITEMS_FILE),
                    "--store", str(store))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"ingested: {run_dir / 'results.parquet'} (run, " + lines[0].split(
        "(run, ")[1]
    assert sum(line.startswith("ingested: ") for line in lines) == 5
    assert lines[-1].startswith(f"store {store}: 5 files ingested (")
    assert lines[-1].endswith("0 already ingested")


def test_second_ingest_adds_nothing_exits_0(store):
    assert invoke(str(PYTEST_FILE), "--store", str(store)).exit_code == 0
    before = read_store(store)
    result = invoke(str(PYTEST_FILE), "--store", str(store))
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        f"already ingested: {PYTEST_FILE}",
        f"store {store}: 0 files ingested (0 new rows), 1 already ingested"]
    assert read_store(store).equals(before)


@pytest.mark.parametrize(("make", "message"), [
    (lambda tmp: tmp / "missing.json", "no such file or folder"),
    (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", "no results files in this folder"),
    (lambda tmp: (tmp / "notes.txt").write_text("hello") and tmp / "notes.txt",
     "not a results file: neither Parquet nor JSON"),
], ids=["missing-path", "folder-without-results", "text-file"])
def test_unusable_paths_exit_2_others_ingested(tmp_path, store, make, message):
    bad = make(tmp_path)
    result = invoke(str(bad), str(PYTEST_FILE), "--store", str(store))
    assert result.exit_code == 2
    assert f"error: {bad}: {message}" in result.output
    assert f"ingested: {PYTEST_FILE}" in result.output


def test_run_folder_note_for_its_dataitems(run_dir, store):
    dataitems = sorted(run_dir.glob("BenchmarkPerfScheduling_*.json"))[0]
    result = invoke(str(dataitems), "--store", str(store))
    assert result.exit_code == 0, result.output
    assert f"ingested: {run_dir / 'results.parquet'} (run," in result.output
    assert "note: " in result.output and "part of the schedperf run" in result.output


def test_default_store_is_dot_schedperf(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(ingest, [str(PYTEST_FILE)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / DEFAULT_STORE / LEDGER_NAME).is_file()
    assert list((tmp_path / DEFAULT_STORE).glob("source=pytest-benchmark/date=*/part-*.parquet"))
    assert CliRunner().invoke(history, ["--metric", "test_filter_fit"]).exit_code == 0


def test_corrupt_bookkeeping_exits_2(store):
    store.mkdir(parents=True)
    (store / LEDGER_NAME).write_text("{")
    result = invoke(str(PYTEST_FILE), "--store", str(store))
    assert result.exit_code == 2
    assert "unreadable bookkeeping" in result.output and "move _ingested.json away" in (
        result.output)


def test_store_that_is_a_file_is_bad_usage(tmp_path):
    not_a_folder = tmp_path / "store"
    not_a_folder.write_text("")
    result = invoke(str(PYTEST_FILE), "--store", str(not_a_folder))
    assert result.exit_code == 2


def test_exit_codes_through_main_once_registered(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(cli.commands, "ingest", ingest)
    monkeypatch.setitem(cli.commands, "history", history)
    store = str(tmp_path / "store")
    assert main(["ingest", str(PYTEST_FILE), "--store", store]) == 0
    assert main(["ingest", str(tmp_path / "nope.json"), "--store", store]) == 2
    assert main(["history", "--store", store, "--metric", "test_filter_fit"]) == 0
    assert main(["history", "--store", store]) == 2
    err = capsys.readouterr().err
    assert "nope.json: no such file or folder" in err
    assert "no rows of metric 'SchedulingThroughput'" in err


def test_bookkeeping_path_is_absolute(store, tmp_path):
    cwd = os.getcwd()
    try:
        os.chdir(PYTEST_FILE.parent)
        assert invoke(PYTEST_FILE.name, "--store", str(store)).exit_code == 0
    finally:
        os.chdir(cwd)
    entry = next(iter(json.loads((store / LEDGER_NAME).read_text())["files"].values()))
    assert entry["path"] == str(PYTEST_FILE)
