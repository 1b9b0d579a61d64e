"""Instruction counting: the orchestration against a stand-in for valgrind (fast), and the
real thing: one tiny workload counted twice under cachegrind gives the same count."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from bench.measure import instructions
from bench.measure.instructions import (
    InstructionCountError,
    count_instructions,
    measure_instructions,
    valgrind_available,
)
from tests.bench.measure.helpers import ROOT, SMALL, SMALLER, write_config


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    return write_config(tmp_path_factory.mktemp("cfg"))


@pytest.mark.parametrize("method", ["fork", "separate"])
def test_counts_subtract_the_setup_run_per_workload(config, fake_valgrind, method):
    spec = {"configs": [str(config)], "workloads": [SMALL, SMALLER]}
    assert count_instructions(spec, jobs=2, valgrind=fake_valgrind, warm_up=False,
                              method=method) == {SMALL: 1000 * 50, SMALLER: 1000 * 10}


def test_details_of_a_forked_count(config, fake_valgrind, tmp_path):
    spec = {"configs": [str(config)], "workloads": [SMALL, SMALLER]}
    c = measure_instructions(spec, valgrind=fake_valgrind, workdir=tmp_path)[SMALL]
    assert (c.status, c.total, c.setup, c.measured) == (
        "ok", 10**9 + 70_000, 10**9 + 20_000, 50_000), c.reason
    assert (c.scheduled_pods, c.setup_pods, c.measured_pods, c.per_pod) == (70, 20, 50, 1000)
    assert c.core["path"] == str(ROOT / "scheduler_core")
    # CPU times come from rusage in clock ticks: a tiny workload's may round to 0
    assert all(x is not None and x >= 0 for x in (c.native_cpu_seconds,
                                                  c.valgrind_cpu_seconds,
                                                  c.process_cpu_seconds))
    # one native warm-up and one counted process for the whole spec; the counted process
    # imports what the warm-up's workloads imported before it forks
    assert sorted(p.name for p in (tmp_path / "attempt0").iterdir()) == ["counted", "native"]
    preimport = json.loads((tmp_path / "attempt0" / "counted" / "preimport.json").read_text())
    assert {"scheduler_core.scheduler", "workloads.runner"} <= set(preimport)
    assert '"mode": "instructions"' in (tmp_path / "attempt0" / "counted" / "spec.json"
                                        ).read_text()


def test_details_of_a_count(config, fake_valgrind, tmp_path):
    spec = {"configs": [str(config)], "workloads": [SMALL], "mode": "time"}
    c = measure_instructions(spec, valgrind=fake_valgrind, workdir=tmp_path,
                             method="separate")[SMALL]
    assert (c.status, c.total, c.setup, c.measured) == (
        "ok", 10**9 + 70_000, 10**9 + 20_000, 50_000)
    assert (c.scheduled_pods, c.setup_pods, c.measured_pods, c.per_pod) == (70, 20, 50, 1000)
    assert c.core["path"] == str(ROOT / "scheduler_core")
    assert c.native_cpu_seconds and c.native_cpu_seconds > 0
    # the kept run folders: a native warm-up, then "all" (a) and "setup" (s) under valgrind
    run = tmp_path / "attempt0" / "w000"
    assert sorted(p.name for p in run.iterdir()) == ["a", "native", "s"]
    assert '"mode": "instructions"' in (run / "a" / "spec.json").read_text()
    assert '"stop_after": "setup"' in (run / "s" / "spec.json").read_text()


@pytest.mark.parametrize("method", ["fork", "separate"])
def test_a_workload_without_a_count_raises_with_the_reason(config, fake_valgrind, method):
    spec = {"configs": [str(config)], "workloads": ["Tiny/missing"]}
    with pytest.raises(InstructionCountError, match=r"Tiny/missing: error: .*no such workload"):
        count_instructions(spec, valgrind=fake_valgrind, warm_up=False, method=method)


@pytest.mark.parametrize(("changes", "status", "folders"), [
    pytest.param(1, "ok", ["attempt0", "attempt1"], id="edited-once-counted-again"),
    pytest.param(2, "error", ["attempt0", "attempt1"], id="edited-every-time-discarded"),
])
def test_source_edits_while_counting_are_not_counted(monkeypatch, config, fake_valgrind,
                                                     tmp_path, changes, status, folders):
    """A .py file edited between the warm-up and a counted run would make that run compile
    it: such counts are thrown away and the workloads counted again."""
    edits = {"left": changes}

    def modified_since(files, since_ns):
        assert any(f.endswith("scheduler_core/scheduler.py") for f in files)
        if edits["left"]:
            edits["left"] -= 1
            return [files[0]]
        return []

    monkeypatch.setattr(instructions, "_modified_since", modified_since)
    spec = {"configs": [str(config)], "workloads": [SMALLER]}
    c = measure_instructions(spec, valgrind=fake_valgrind, workdir=tmp_path)
    assert c[SMALLER].status == status
    assert (c[SMALLER].measured is None) is (status == "error")
    assert sorted(p.name for p in tmp_path.iterdir()) == folders


def test_missing_valgrind_is_reported(config):
    with pytest.raises(FileNotFoundError, match="not found"):
        count_instructions({"configs": [str(config)], "workloads": [SMALL]},
                           valgrind="/nonexistent/valgrind")


@pytest.mark.skipif(not valgrind_available(), reason="valgrind is not installed")
def test_measured_instructions_are_identical_in_two_runs(config, tmp_path):
    """20 nodes, 50 measured pods, counted twice under cachegrind (each count is two
    valgrind runs, "all" and "setup", side by side): exactly the same measured count.
    The code runs from a copy, so that edits to the checkout while the test runs (a
    different program) cannot make the two counts differ."""
    frozen = tmp_path / "code"
    for package in ("scheduler_core", "workloads", "bench"):
        shutil.copytree(ROOT / package, frozen / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(frozen)}
    spec = {"configs": [str(config)], "workloads": [SMALL]}
    started = time.perf_counter()
    first = measure_instructions(spec, env=env, workdir=tmp_path / "one")[SMALL]
    second = measure_instructions(spec, env=env, workdir=tmp_path / "two")[SMALL]
    seconds = time.perf_counter() - started
    for c in (first, second):
        assert c.status == "ok", c.reason
        assert c.core["path"] == str(frozen / "scheduler_core")
        assert (c.scheduled_pods, c.setup_pods, c.measured_pods) == (70, 20, 50)
        assert c.measured is not None and 0 < c.measured < c.setup < c.total
        assert 100_000 < c.measured / 50 < 50_000_000  # per pod: a plausible magnitude
    assert first.measured == second.measured, (first, second)
    # the totals of one count may move together by a few dozen instructions (file timestamps
    # converted by os.stat; docs/measurement.md): the subtraction cancels that
    assert abs(first.total - second.total) == abs(first.setup - second.setup) < 1000
    print(f"two counts in {seconds:.1f} s; measured {first.measured} "
          f"({first.per_pod:.0f} per pod); CPU slowdown {first.slowdown:.1f}x")
