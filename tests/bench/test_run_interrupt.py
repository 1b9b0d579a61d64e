"""schedperf run keeps every finished workload when SIGINT or SIGTERM interrupts it, and its
folder holds all finished workloads after each one. The signal is sent at a known point (after
N workloads finished, or inside workload N+1) through a hook, never after a delay."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from bench.cli import run as run_module
from bench.cli.main import main
from tests.builders import tiny_config

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["Tiny/A5Nodes", "Tiny/B10Nodes", "Tiny/C8Nodes"]
PODS = {"A5Nodes": 0 + 20, "B10Nodes": 2 + 30, "C8Nodes": 3 + 10}  # init + measured pods


@pytest.fixture
def config(tmp_path: Path) -> Path:
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    (folder / "performance-config.yaml").write_text(tiny_config(
        ("A5Nodes", [], 5, 0, 20), ("B10Nodes", [], 10, 2, 30), ("C8Nodes", [], 8, 3, 10)))
    return folder.parent


def _statuses(out: Path) -> list[tuple[int, str]]:
    df = pl.read_parquet(out / "results.parquet")
    return df.filter(pl.col("metric") == "workload_status").select("round", "workload").rows()


def _check_folder(out: Path, finished: list[tuple[int, str]]) -> None:
    """The folder is a complete, readable record of exactly the ``finished`` workloads."""
    assert _statuses(out) == finished
    placements = pl.read_parquet(out / "placements.parquet")
    counts = placements.group_by("round", "workload").len().sort("round", "workload").rows()
    assert counts == sorted((r, w, PODS[w]) for r, w in finished)
    names = set()
    for path in out.glob("BenchmarkPerfScheduling_*.json"):
        names |= {d["labels"]["Name"].rsplit("/", 1)[0]
                  for d in json.loads(path.read_text())["dataItems"]}
    assert names == {f"Tiny/{w}" for _, w in finished}
    assert len(list(out.glob("*.dat"))) == len(finished)
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_folder_holds_every_finished_workload_after_each_one(config, tmp_path, monkeypatch):
    """What a run killed at any point between two workloads (even by SIGKILL) leaves."""
    out = tmp_path / "out"
    seen = []

    def check(finished: int, planned: int) -> None:
        order = [(r, n.split("/")[1]) for r in (1, 2) for n in NAMES]
        _check_folder(out, order[:finished])
        seen.append((finished, planned))

    monkeypatch.setattr(run_module, "WORKLOAD_FINISHED_HOOKS", [check])
    assert main(["run", "--config", str(config), "--label", "", "--out", str(out),
                 "--repeat", "2"]) == 0
    assert seen == [(n, 6) for n in range(1, 7)]
    assert len(list(out.glob("BenchmarkPerfScheduling_*.json"))) == 2  # one per topic, round


@pytest.mark.parametrize("after", [1, 2])
def test_sigint_after_n_workloads_keeps_them(config, tmp_path, monkeypatch, capsys, after):
    out = tmp_path / "out"

    def interrupt(finished: int, planned: int) -> None:
        if finished == after:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(run_module, "WORKLOAD_FINISHED_HOOKS", [interrupt])
    code = main(["run", "--config", str(config), "--label", "", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 130
    assert f"interrupted after {after}/3 workloads; partial results in {out}" in captured.err
    assert "aborted" not in captured.err + captured.out
    _check_folder(out, [(1, n.split("/")[1]) for n in NAMES[:after]])


@pytest.mark.parametrize("finished", [0, 2])
def test_sigterm_inside_a_workload_keeps_the_finished_ones(config, tmp_path, monkeypatch,
                                                           capsys, finished):
    """SIGTERM arrives in the middle of workload ``finished + 1`` (from its progress
    callback): that one is dropped, the finished ones are kept."""
    out = tmp_path / "out"
    real = run_module.run_workload
    calls = []

    def run_workload(tc, w, **kw):
        calls.append(w.full_name)
        if len(calls) == finished + 1:
            progress = kw["progress"]

            def signal_then_progress(ev):
                os.kill(os.getpid(), signal.SIGTERM)
                progress(ev)

            kw["progress"] = signal_then_progress
        return real(tc, w, **kw)

    monkeypatch.setattr(run_module, "run_workload", run_workload)
    code = main(["run", "--config", str(config), "--label", "", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 143
    assert calls == NAMES[:finished + 1]
    if finished:
        assert f"interrupted after {finished}/3 workloads; partial results in {out}" \
            in captured.err
        _check_folder(out, [(1, n.split("/")[1]) for n in NAMES[:finished]])
    else:
        assert "interrupted after 0/3 workloads; no results written" in captured.err
        assert not out.exists() or not any(out.iterdir())


HOOKED_RUN = """\
import os, signal, sys
from bench.cli import run
from bench.cli.main import main

ready = int(sys.argv[1])
def hook(finished, planned):
    if finished == 1:
        os.write(ready, b"1")  # tell the test; then wait for its signal
        signal.pause()
run.WORKLOAD_FINISHED_HOOKS.append(hook)
sys.exit(main(sys.argv[2:]))
"""


def test_sigterm_from_outside_keeps_finished_workloads(config, tmp_path):
    """A real schedperf process gets SIGTERM from another process once one workload has
    finished (its hook says so on a pipe, then waits)."""
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ready_r, ready_w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", HOOKED_RUN, str(ready_w), "run", "--config", str(config),
         "--label", "", "--out", str(out), "--format", "json"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        pass_fds=(ready_w,))
    os.close(ready_w)
    try:
        with os.fdopen(ready_r, "rb") as ready:
            said = ready.read(1)  # blocks until the hook writes (or the process ends)
        assert said == b"1", proc.communicate()
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, stderr
    assert f"interrupted after 1/3 workloads; partial results in {out}" in stderr
    doc = json.loads(stdout)
    assert (doc["complete"], doc["interrupted_by"], doc["finished"], doc["planned"]) == (
        False, "SIGTERM", 1, 3)
    _check_folder(out, [(1, "A5Nodes")])
