"""Issue 16, crash safety: a ``schedperf run`` killed with SIGKILL in the middle of a workload
keeps every finished workload in a folder that ``ingest`` and ``compare --base-results``
accept; two ``schedperf ingest`` processes on one store at once both land, every row once.

The kill happens at a known point (the second workload's first progress event, reported on a
pipe), never after a delay."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from bench.cli.main import main
from reports.store import LEDGER_NAME, scan_store
from reports.store.schema import KEY_COLUMNS
from tests.builders import tiny_config

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# the second workload announces it is running, then waits to be killed
KILLED_IN_WORKLOAD_2 = """\
import os, signal, sys
from bench.cli import run
from bench.cli.main import main

ready = int(sys.argv[1])
real = run.run_workload
calls = []

def run_workload(tc, w, **kw):
    calls.append(w.full_name)
    if len(calls) == 2:
        progress = kw["progress"]

        def announce_then_wait(ev):
            progress(ev)
            os.write(ready, b"2")
            signal.pause()  # SIGKILL ends it here, inside the workload

        kw["progress"] = announce_then_wait
    return real(tc, w, **kw)

run.run_workload = run_workload
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    (folder / "performance-config.yaml").write_text(tiny_config(
        ("A5Nodes", [], 5, 0, 20), ("B10Nodes", [], 10, 2, 30), ("C8Nodes", [], 8, 3, 10)))
    return folder.parent


def _run_killed_in_workload_2(config: Path, out: Path, cwd: Path) -> None:
    ready_r, ready_w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_IN_WORKLOAD_2, str(ready_w), "run", "--config",
         str(config), "--label", "", "--out", str(out), "--format", "json"],
        cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        pass_fds=(ready_w,))
    os.close(ready_w)
    try:
        with os.fdopen(ready_r, "rb") as ready:
            said = ready.read(1)
        assert said == b"2", proc.communicate()
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def test_sigkill_inside_a_workload_keeps_the_finished_one_for_ingest_and_compare(
        config, tmp_path, capsys):
    out = tmp_path / "out"
    _run_killed_in_workload_2(config, out, tmp_path)
    df = pl.read_parquet(out / "results.parquet")
    finished = df.filter(pl.col("metric") == "workload_status")
    assert finished.select("test_case", "workload").rows() == [("Tiny", "A5Nodes")]
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]

    store = tmp_path / "store"
    assert main(["ingest", str(out), "--store", str(store)]) == 0, capsys.readouterr()
    stored = scan_store(store).collect()
    assert set(stored["workload"].unique()) == {"A5Nodes"}
    assert stored.height == df.height

    code = main(["compare", "--base-results", str(out), "--head-results", str(out),
                 "--out", str(tmp_path / "cmp"), "--accepted", str(_no_acceptances(tmp_path))])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert (tmp_path / "cmp" / "report.json").is_file()


def _no_acceptances(tmp_path: Path) -> Path:
    path = tmp_path / "accepted.yaml"
    path.write_text("[]\n")
    return path


INGEST = "import sys; from bench.cli.main import main; sys.exit(main(sys.argv[1:]))"


def test_two_ingest_processes_at_once_keep_every_row_once(config, tmp_path, capsys):
    runs = []
    for seed in (1, 2):
        out = tmp_path / f"run{seed}"
        assert main(["run", "--config", str(config), "--label", "", "--out", str(out),
                     "--seed", str(seed), "--format", "json"]) == 0
        runs.append(out)
    capsys.readouterr()
    store = tmp_path / "store"
    procs = [subprocess.Popen([sys.executable, "-c", INGEST, "ingest", str(run), "--store",
                               str(store)], cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for run in runs]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    stored = scan_store(store).collect()
    expected = sum(pl.read_parquet(run / "results.parquet").height for run in runs)
    assert stored.height == expected
    run_ids = {pl.read_parquet(run / "results.parquet")["run_id"][0] for run in runs}
    assert set(stored["run_id"].unique()) == run_ids
    assert stored.select(KEY_COLUMNS).is_duplicated().sum() == 0
    ledger = json.loads((store / LEDGER_NAME).read_text())["files"]
    assert len(ledger) == 2  # both ingests recorded their file: neither rewrite was lost
