"""Computing coverage maps: ``schedperf coverage`` end to end on tiny selections, the tracer
only ever in the coverage child (never in ``schedperf run`` or compare's workers), a workload
failing under coverage, maps reused only for their own clean commit, and the header rule."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from bench.cli.main import main
from bench.coverage.attribute import attribute_lines
from bench.coverage.changed import ChangedStatements
from bench.coverage.collect import MapRequest, MapResult, code_version, load_or_collect
from bench.coverage.cover import choose_for_change
from bench.coverage.statements import parse_statements
from bench.measure.children import ChildProcesses
from reports.store.coverage import CoverageMap, read_map, write_map
from tests.bench.coverage.probe import PROBE_ENV
from tests.bench.measure.helpers import run_worker
from tests.shared import REPO_ROOT

NODE_PORTS = "scheduler_core/plugins/node_ports.py"
HOST_PORTS = "SchedulingHostPortConflicts/50Nodes"
NO_PORTS = "SchedulingWithExtendedResource/10Nodes"

PROBE_CONFIG = textwrap.dedent("""\
    - name: Probe
      labels: [integration-test]
      schedulerConfigPath: probe-scheduler.yaml
      workloadTemplate:
      - opcode: createNodes
        countParam: $nodes
      - opcode: createPods
        countParam: $pods
        collectMetrics: true
      workloads:
      - name: 2Nodes
        params: {nodes: 2, pods: 3}
    - name: ProbeFails
      labels: [broken]
      schedulerConfigPath: failing-scheduler.yaml
      workloadTemplate:
      - opcode: createNodes
        countParam: $nodes
      - opcode: createPods
        countParam: $pods
        collectMetrics: true
      workloads:
      - name: 2Nodes
        params: {nodes: 2, pods: 3}
    """)
SCHEDULER = textwrap.dedent("""\
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    pluginRegistry:
      {name}: "tests.bench.coverage.probe:{name}"
    profiles:
    - schedulerName: default-scheduler
      plugins:
        filter:
          enabled: [{{name: {name}}}]
    """)


def probe_config(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "probe-scheduler.yaml").write_text(SCHEDULER.format(name="TraceProbe"))
    (folder / "failing-scheduler.yaml").write_text(SCHEDULER.format(name="FailingProbe"))
    path = folder / "performance-config.yaml"
    path.write_text(PROBE_CONFIG)
    return path


def line_of(path: Path, text: str) -> int:
    found = [i for i, x in enumerate(path.read_text().splitlines(), 1) if x.strip() == text]
    assert len(found) == 1, text
    return found[0]


@pytest.mark.slow
def test_coverage_command_attributes_host_port_lines_to_the_host_port_workload(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    code = main(["coverage", "--name", f"^({HOST_PORTS}|{NO_PORTS})$", "--store", str(store),
                 "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    commit, dirty, _ = code_version()
    assert (out["commit"], out["dirty"]) == (commit, dirty)
    assert {w["workload"]: w["status"] for w in out["workloads"]} == {HOST_PORTS: "ok",
                                                                      NO_PORTS: "ok"}
    assert out["selection"]["total"]["statements"] > 1000
    assert out["compare"]["workloads"] == [HOST_PORTS]  # the one with the compare label
    cmap = read_map(store, commit, allow_dirty=True)
    assert cmap is not None and cmap.dirty == dirty
    source = REPO_ROOT / NODE_PORTS
    wanted_ports = line_of(source, "state.write(_STATE_KEY, ports)")  # pods with host ports
    no_ports = line_of(source, "return None, SKIP")                    # pods without
    pre_filter = line_of(source, "def pre_filter(self, state: CycleState, pod: Pod, "
                                 "table: NodeTable")
    sets = cmap.line_sets()
    assert wanted_ports in sets[HOST_PORTS][NODE_PORTS]
    assert wanted_ports not in sets[NO_PORTS][NODE_PORTS]
    assert no_ports in sets[NO_PORTS][NODE_PORTS]
    # the def line runs at import, but belongs to the workloads that run the body
    assert pre_filter in sets[HOST_PORTS][NODE_PORTS] and pre_filter in sets[NO_PORTS][NODE_PORTS]
    imported = cmap.import_lines()[NODE_PORTS]
    assert line_of(source, "NAME = names.NODE_PORTS") in imported and pre_filter not in imported
    costs = cmap.costs()
    assert costs[HOST_PORTS] > 0 and costs[NO_PORTS] > 0


def test_the_tracer_is_on_in_the_coverage_child_and_off_in_measured_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = probe_config(tmp_path / "cfg")
    probe = tmp_path / "probe.txt"
    monkeypatch.setenv(PROBE_ENV, str(probe))
    before = sys.gettrace()

    def seen() -> list[str]:
        lines = probe.read_text().split("\n") if probe.exists() else []
        probe.unlink(missing_ok=True)
        return [x for x in lines if x]

    # under coverage: the probe, inside the running workload, sees a tracer (another process)
    assert main(["coverage", "--config", str(config), "--store", str(tmp_path / "s")]) == 0
    (under,) = seen()
    assert under.endswith(" traced") and under.split()[0] != str(os.getpid())
    assert sys.gettrace() is before  # nothing was started in this process
    # schedperf run: none
    run = subprocess.run([sys.executable, "-m", "bench.cli.main", "run", "--config",
                          str(config), "--label", "integration-test", "--out",
                          str(tmp_path / "run")], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert [x.split()[1] for x in seen()] == ["untraced"]
    # compare's measurement worker: none
    code, result, stderr = run_worker(tmp_path, {"configs": [str(config)],
                                                 "workloads": ["Probe/2Nodes"]})
    assert code == 0 and result is not None, stderr
    assert [x.split()[1] for x in seen()] == ["untraced"]


def test_no_measuring_module_imports_coverage_py() -> None:
    code = ("import sys, bench.cli.main, bench.cli.run, bench.cli.compare, "
            "bench.measure.worker, bench.measure.forked, bench.measure.session; "
            "print('coverage' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=120, check=True).stdout.strip()
    assert out == "False"


def test_a_workload_failing_under_coverage_is_exit_2_with_its_cause(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = probe_config(tmp_path / "cfg")
    store = tmp_path / "store"
    code = main(["coverage", "--config", str(config), "--label", "", "--store", str(store)])
    err = capsys.readouterr().err
    assert code == 2
    assert "ProbeFails/2Nodes failed under coverage: failed:" in err
    assert "probe failure" in err
    cmap = read_map(store, code_version()[0], allow_dirty=True)
    assert cmap is not None  # stored, with the failure recorded
    assert cmap.workload_names() == ["Probe/2Nodes"]
    assert set(cmap.failures()) == {"ProbeFails/2Nodes"}


def test_bad_input_is_exit_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "--include-module", "no_such_package_here"]) == 2
    assert "--include-module no_such_package_here" in capsys.readouterr().err
    assert main(["coverage", "--file", "scheduler_core/nope.py"]) == 2
    assert "--file scheduler_core/nope.py" in capsys.readouterr().err
    assert main(["coverage", "--name", "("]) == 2


def fake_map(commit: str, dirty: bool, names: list[str]) -> CoverageMap:
    return CoverageMap(commit=commit, dirty=dirty, workloads=pl.DataFrame(
        {"workload": names, "labels": [["integration-test"]] * len(names),
         "cost_seconds": [1.0] * len(names), "status": ["ok"] * len(names),
         "error": [None] * len(names)},
        schema={"workload": pl.String, "labels": pl.List(pl.String),
                "cost_seconds": pl.Float64, "status": pl.String, "error": pl.String}))


def test_a_stored_map_is_reused_only_for_its_own_clean_commit(tmp_path: Path) -> None:
    request = MapRequest(name_regex=f"^{HOST_PORTS}$")
    calls: list[tuple[str, bool]] = []

    def collect(req: MapRequest, *, commit: str, dirty: bool, core_root: Path | None,
                ) -> MapResult:
        calls.append((commit, dirty))
        return MapResult(fake_map(commit, dirty, [HOST_PORTS]))

    a, b = "a" * 40, "b" * 40
    _, computed = load_or_collect(tmp_path, request, commit=a, dirty=False, collect=collect)
    assert computed is not None and calls == [(a, False)]
    cmap, computed = load_or_collect(tmp_path, request, commit=a, dirty=False, collect=collect)
    assert computed is None and cmap.commit == a and len(calls) == 1  # reused
    cmap, computed = load_or_collect(tmp_path, request, commit=b, dirty=False, collect=collect)
    assert computed is not None and cmap.commit == b and calls[-1] == (b, False)
    load_or_collect(tmp_path, request, commit=b, dirty=True, collect=collect)
    assert calls[-1] == (b, True)  # a dirty tree is always mapped anew
    # a map lacking a selected workload does not do either
    write_map(tmp_path, fake_map(a, False, ["Other/x"]))
    load_or_collect(tmp_path, request, commit=a, dirty=False, collect=collect)
    assert calls[-1] == (a, False) and len(calls) == 4


def test_the_map_of_another_commit_is_refused_for_a_change() -> None:
    change = ChangedStatements(base="c" * 40, head="b" * 40, lines={NODE_PORTS: frozenset({1})})
    with pytest.raises(ValueError, match="map HEAD first"):
        choose_for_change(fake_map("a" * 40, False, [HOST_PORTS]), change)


SOURCE = textwrap.dedent("""\
    import os

    LIMIT = 3


    def scale(x):
        if x > LIMIT:
            return 2 * x
        w = x + 1
        return w


    def never(x):
        return x
    """)


def test_a_def_line_belongs_to_the_workloads_that_run_the_body() -> None:
    stmts = parse_statements(SOURCE)

    def at(text: str) -> int:
        return next(i for i, x in enumerate(SOURCE.splitlines(), 1) if x.strip() == text)

    imported = {at("import os"), at("LIMIT = 3"), at("def scale(x):"), at("def never(x):")}
    # the import runs every def line but no body: the def lines are not import-time
    assert attribute_lines(imported, stmts) == {at("import os"), at("LIMIT = 3")}
    # a workload that runs scale's body gets its def line, though the tracer saw none
    ran = {at("if x > LIMIT:"), at("w = x + 1"), at("return w")}
    assert attribute_lines(ran, stmts) == ran | {at("def scale(x):")}


def test_a_workload_over_its_time_limit_is_a_failure(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = probe_config(tmp_path / "cfg")
    # a nanosecond: every run is over it, however fast the machine
    code = main(["coverage", "--config", str(config), "--store", str(tmp_path / "store"),
                 "--timeout-per-workload", "1e-9"])
    assert code == 2
    assert "Probe/2Nodes failed under coverage: timeout" in capsys.readouterr().err


def test_sigterm_kills_the_coverage_child_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    config = probe_config(tmp_path / "cfg")
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    started: list[subprocess.Popen[bytes]] = []
    real = ChildProcesses.popen

    def popen_then_sigterm(self: ChildProcesses, *args: Any, **kw: Any) -> Any:
        proc = real(self, *args, **kw)
        started.append(proc)
        os.kill(os.getpid(), signal.SIGTERM)  # the child runs: interrupt the command now
        return proc

    monkeypatch.setattr(ChildProcesses, "popen", popen_then_sigterm)
    store = tmp_path / "store"
    code = main(["coverage", "--config", str(config), "--store", str(store)])
    assert code == 143
    assert "interrupted by SIGTERM" in capsys.readouterr().err
    (proc,) = started
    assert proc.returncode is not None  # killed and reaped
    assert list(temp.iterdir()) == []   # its folder is gone
    assert not (store / "_coverage").exists()
