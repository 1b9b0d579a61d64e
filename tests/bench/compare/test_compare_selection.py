"""Change-aware selection in ``schedperf compare BASE HEAD``, end to end on a temporary
repository holding a copy of this scheduler_core and tiny configs of two workloads, one of
them in the compared set:

* a branch that slows a line only the other workload runs: that workload is added, measured
  (instruction counts: no test here depends on machine speed) and its regression fails the
  gate;
* a branch that changes lines no workload runs: the report opens with them (file:line), and
  --fail-on-blind-spot exits 1; the coverage map runs in a coverage process with a tracer,
  the measurement processes have none; the map is reused for the same commit and made anew
  for a new one; hostile file names are data;
* bad input (a git diff that fails, options of the selection with another form) exits 2.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli.main import cli
from bench.measure.instructions import valgrind_available
from reports.render import load_report
from reports.store.coverage import map_commits
from tests.bench.coverage.probe import PROBE_ENV
from tests.builders import tiny_config

ROOT = Path(__file__).resolve().parents[3]
NODE_PORTS = "scheduler_core/plugins/node_ports.py"
FRAMEWORK_CONFIG = "scheduler_core/framework/config.py"
PORTS_LINE = "        state.write(_STATE_KEY, ports)\n"  # pods with host ports only
# ~5 % more instructions per pod of the host-port workload below, in that line's branch
SLOWER = PORTS_LINE + "        sum(range(800))\n"
REGISTRY_LINE = "        cls = getattr(module, class_name)\n"  # out-of-tree plugins only
NEVER_RUN = "\n\ndef never_called(value):\n    doubled = 2 * value\n    return doubled\n"
HOSTILE = "scheduler_core/odd |name$`x`.py"  # imported by no workload, named as data
GLOB = "scheduler_core/star*.py"  # coverage.py cannot be restricted to it

TEMPLATE = """\
- name: {name}
  labels: [integration-test]{extra}
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods{template}
    collectMetrics: true
  workloads:
  - name: 10Nodes{labels}
    params: {{nodes: 10, pods: 30}}
"""
PLAIN = TEMPLATE.format(name="Plain", extra="", template="",
                        labels="\n    labels: [compare, compare-time]")
PORTS = TEMPLATE.format(name="Ports", extra="", template="\n    podTemplatePath: ports.yaml",
                        labels="")
PROBE = TEMPLATE.format(name="Probe", extra="\n  schedulerConfigPath: probe.yaml", template="",
                        labels="")
PORTS_POD = """\
apiVersion: v1
kind: Pod
metadata:
  generateName: port-pod-
spec:
  containers:
  - name: app
    image: registry.example.com/app:1
    ports:
    - containerPort: 8080
      hostPort: {{ AddInt 8000 (Mod .Index 4) }}
      protocol: TCP
"""
PROBE_SCHEDULER = textwrap.dedent("""\
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    pluginRegistry:
      TraceProbe: "tests.bench.coverage.probe:TraceProbe"
    profiles:
    - schedulerName: default-scheduler
      plugins:
        filter:
          enabled: [{name: TraceProbe}]
    """)


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def configs(tmp_path: Path, *cases: str) -> Path:
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    (folder / "performance-config.yaml").write_text("".join(cases))
    (folder / "ports.yaml").write_text(PORTS_POD)
    (folder / "probe.yaml").write_text(PROBE_SCHEDULER)
    return folder.parent


def replace(repo: Path, relative: str, old: str, new: str) -> None:
    path = repo / relative
    source = path.read_text()
    assert source.count(old) == 1, f"{relative} changed: update this test's edit"
    path.write_text(source.replace(old, new))


def line_of(repo: Path, relative: str, text: str) -> int:
    lines = (repo / relative).read_text().splitlines()
    (found,) = [i for i, x in enumerate(lines, 1) if x.strip() == text.strip()]
    return found


def core_repo(tmp_path: Path, change: Callable[[Path], None]) -> Path:
    """A repository with a copy of this scheduler_core on main and ``change`` committed on
    branch ``branch``."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "scheduler_core", repo / "scheduler_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "branch")
    change(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "change")
    return repo


@pytest.mark.slow
@pytest.mark.skipif(not valgrind_available(), reason="valgrind is not installed")
def test_a_slower_line_only_another_workload_runs_is_measured_and_fails_the_gate(tmp_path):
    repo = core_repo(tmp_path, lambda r: replace(r, NODE_PORTS, PORTS_LINE, SLOWER))
    out = tmp_path / "out"
    result = invoke("compare", "main", "branch", "--repo", str(repo), "--config",
                    str(configs(tmp_path, PLAIN, PORTS)), "--measure", "instructions",
                    "--coverage-store", str(tmp_path / "store"), "--fail-on-regression",
                    "--out", str(out))
    assert result.exit_code == 1, result.output
    report = load_report(out / "report.json")
    sel = report.selection
    assert sel is not None and sel.state == "applied" and not sel.blind_spots
    slower = line_of(repo, NODE_PORTS, "sum(range(800))")
    (added,) = sel.added
    assert (added.workload, added.modes) == ("Ports/10Nodes", ("instructions",))
    assert [str(r) for r in added.lines] == [f"{NODE_PORTS}:{slower}"]
    assert report.settings.extra["workloads"] == {"instructions": 2}
    verdicts = {r.workload: r for r in report.results}
    assert verdicts["Ports/10Nodes"].verdict == "regression"
    assert 1.02 < verdicts["Ports/10Nodes"].ratio < 1.10  # about 5 % more per pod
    assert verdicts["Plain/10Nodes"].verdict == "no change"  # it never runs that line
    md = (out / "report.md").read_text()
    section = md.split("#### Workloads added by change-aware selection (1)")[1].split("####")[0]
    assert f"node\\_ports.py:{slower} (1 line) | instructions: **regression**" in section


def _probe_lines(path: Path) -> list[tuple[str, str]]:
    text = path.read_text() if path.exists() else ""
    return [tuple(x.split()) for x in text.splitlines() if x]  # type: ignore[misc]


def _blind_spot_branch(repo: Path) -> None:
    replace(repo, FRAMEWORK_CONFIG, REGISTRY_LINE,
            REGISTRY_LINE.rstrip("\n") + "  # the class of an out-of-tree plugin\n")
    path = repo / NODE_PORTS
    path.write_text(path.read_text() + NEVER_RUN)
    (repo / HOSTILE).write_text("VALUE = 1\n")
    (repo / GLOB).write_text("def star():\n    return 1\n")


@pytest.mark.slow
def test_blind_spots_open_the_report_and_fail_the_gate_when_asked(tmp_path, monkeypatch):
    probe = tmp_path / "probe.txt"
    monkeypatch.setenv(PROBE_ENV, str(probe))
    repo = core_repo(tmp_path, _blind_spot_branch)
    cfg, store = configs(tmp_path, PLAIN, PROBE), tmp_path / "store"
    args = ["compare", "main", "branch", "--repo", str(repo), "--config", str(cfg),
            "--measure", "time", "--repeat", "1", "--coverage-store", str(store)]
    result = invoke(*args, "--fail-on-blind-spot", "--out", str(tmp_path / "o1"))
    assert result.exit_code == 1, result.output
    assert "blind spot(s)" in result.output
    start = line_of(repo, NODE_PORTS, "def never_called(value):")
    report = load_report(tmp_path / "o1" / "report.json")
    sel = report.selection
    assert sel is not None and sel.gate_fails and sel.map is not None
    assert sorted(str(b.where) for b in sel.blind_spots) == sorted(
        [f"{NODE_PORTS}:{start}-{start + 2}", f"{GLOB}:1-2"])
    # the lines of the out-of-tree plugin's loading: only the probe workload runs them
    registry = line_of(repo, FRAMEWORK_CONFIG, REGISTRY_LINE.strip()
                       + "  # the class of an out-of-tree plugin")
    assert [(a.workload, [str(r) for r in a.lines]) for a in sel.added] == [
        ("Probe/10Nodes", [f"{FRAMEWORK_CONFIG}:{registry}"])]
    assert {r.workload for r in report.results} == {"Plain/10Nodes", "Probe/10Nodes"}
    # a module-level line of a file no workload imports but the map's child did: import time
    assert [str(r) for r in sel.import_time] == [f"{HOSTILE}:1"]
    md = (tmp_path / "o1" / "report.md").read_text()
    headline, first = md.split("\n#### ")[:2]
    assert headline.rstrip().endswith("failing the gate")
    assert first.startswith("Blind spots: 2 blind spots")
    assert f"**scheduler\\_core/plugins/node\\_ports.py:{start}-{start + 2}**" in first
    assert "**scheduler\\_core/star\\*.py:1-2**" in first
    assert "scheduler\\_core/odd \\|name\\$\\`x\\`.py:1" in md
    # the tracer: on in the coverage process, off in every measuring one
    seen = _probe_lines(probe)
    traced = [pid for pid, state in seen if state == "traced"]
    measured = [pid for pid, state in seen if state == "untraced"]
    assert len(traced) == 1 and len(measured) >= 2 and traced[0] not in measured
    probe.unlink()

    # the same commit again: the stored map, no coverage process, and blind spots warn only
    result = invoke(*args, "--out", str(tmp_path / "o2"))
    assert result.exit_code == 0, result.output
    again = load_report(tmp_path / "o2" / "report.json").selection
    assert again is not None and again.map is not None and again.map.source == "stored"
    assert again.added == sel.added and again.blind_spots == sel.blind_spots
    assert {state for _, state in _probe_lines(probe)} == {"untraced"}

    # a new commit: a new map
    replace(repo, NODE_PORTS, "    doubled = 2 * value\n", "    doubled = 3 * value\n")
    git(repo, "commit", "-q", "-am", "again")
    result = invoke(*args, "--out", str(tmp_path / "o3"))
    assert result.exit_code == 0, result.output
    third = load_report(tmp_path / "o3" / "report.json").selection
    head = git(repo, "rev-parse", "branch")
    assert third is not None and third.map is not None
    assert (third.map.source, third.map.commit) == ("computed", head)
    assert len(map_commits(store)) == 2


NODE_NAME = "scheduler_core/plugins/node_name.py"
FILTER_START = "        wanted = pod.spec.node_name\n        if not wanted:\n"
BREAK_13 = ("        if len(table) == 13:\n            raise RuntimeError('boom on 13 nodes')\n"
            + FILTER_START)


def test_a_workload_failing_under_coverage_is_a_failure_of_head(tmp_path):
    """HEAD breaks a workload outside the compared set: mapping HEAD finds it, and says so
    as a failure of HEAD (exit 2), never as "no selection"."""
    repo = core_repo(tmp_path, lambda r: replace(r, NODE_NAME, FILTER_START, BREAK_13))
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    (folder / "performance-config.yaml").write_text(tiny_config(
        ("10Nodes", ["compare", "compare-time"], 10, 2, 10), ("13Nodes", [], 13, 2, 10),
        labels="integration-test"))
    out = tmp_path / "out"
    result = invoke("compare", "main", "branch", "--repo", str(repo), "--config",
                    str(folder.parent), "--measure", "time", "--repeat", "1",
                    "--coverage-store", str(tmp_path / "store"), "--out", str(out))
    assert result.exit_code == 2, result.output
    assert "HEAD failed (failed, under coverage) on 1 workload(s): Tiny/13Nodes" in result.output
    data = json.loads((out / "report.json").read_text())
    assert data["verdict"] == "error"
    (failure,) = data["failures"]
    assert (failure["side"], failure["mode"], failure["status"], failure["workloads"]) == (
        "head", "coverage", "failed", ["Tiny/13Nodes"])
    assert "boom on 13 nodes" in failure["error"]
    assert data["selection"]["state"] == "applied"  # from the workloads that ran
    first = (out / "report.md").read_text().split("\n#### ")[1]
    assert first.startswith("HEAD failed: 1 workload, under coverage (failed)")
    assert "boom on 13 nodes" in first


def test_no_select_changed_measures_the_compared_set_only(tmp_path):
    repo = core_repo(tmp_path, _blind_spot_branch)
    out = tmp_path / "out"
    result = invoke("compare", "main", "branch", "--repo", str(repo), "--config",
                    str(configs(tmp_path, PLAIN, PROBE)), "--measure", "time", "--repeat",
                    "1", "--no-select-changed", "--fail-on-blind-spot",
                    "--coverage-store", str(tmp_path / "store"), "--out", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads((out / "report.json").read_text())
    assert data["selection"]["state"] == "off"
    assert {r["workload"] for r in data["results"]} == {"Plain/10Nodes"}
    assert not (tmp_path / "store").exists()
    assert "Change-aware selection: off" in (out / "report.md").read_text()


def test_a_git_diff_that_fails_is_bad_input(tmp_path):
    repo = core_repo(tmp_path, lambda r: None)
    git(repo, "checkout", "-q", "--orphan", "unrelated")
    git(repo, "commit", "-q", "-m", "no common history")
    result = invoke("compare", "main", "unrelated", "--repo", str(repo), "--config",
                    str(configs(tmp_path, PLAIN)), "--measure", "time",
                    "--coverage-store", str(tmp_path / "store"), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "change-aware selection cannot read git diff" in result.output
    assert "no merge base" in result.output
    assert "--no-select-changed" in result.output
    assert git(repo, "worktree", "list").count("\n") == 0  # the worktrees are gone


@pytest.mark.parametrize(("args", "message"), [
    (["--base-results", "x", "--head-results", "y", "--fail-on-blind-spot"],
     "--fail-on-blind-spot: change-aware selection compares git refs"),
    (["--base-config", "a.yaml", "--head-config", "b.yaml", "--cover-package", "mine"],
     "--cover-package: change-aware selection"),
    (["HEAD", "HEAD", "--cover-package", "workloads.example_plugins"],
     "part of the harness package 'workloads'"),
    (["HEAD", "HEAD", "--cover-package", "not an import path"], "expected an import path"),
    (["HEAD", "HEAD", "--coverage-label", "no-such-label"], "--coverage-label: "),
], ids=["gate-with-results", "package-with-configs", "harness-package", "bad-import-path",
        "label-selects-nothing"])
def test_selection_options_bad_input_exits_2(tmp_path, args, message):
    result = invoke("compare", *args, "--repo", str(ROOT), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2, result.output
    assert message in result.output


PLUGIN = '''\
import os
from typing import ClassVar

_seen = []


class WhereFilter:
    """Accepts every node; on its first call writes which copy of this file runs."""

    name: ClassVar[str] = "WhereFilter"
    per_node: ClassVar[bool] = True

    def __init__(self, args=None, handle=None, *, args_path=""):
        pass

    def filter(self, pod, node_info):
        if not _seen:
            _seen.append(True)
            with open(os.environ["SCHEDPERF_TEST_WHERE"], "a", encoding="utf-8") as fh:
                fh.write(os.path.realpath(__file__) + "\\n")
        return None

    def events_to_register(self):
        return []
'''
PLUGIN_SCHEDULER = textwrap.dedent("""\
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    pluginRegistry:
      WhereFilter: "my_plugins.where:WhereFilter"
    profiles:
    - schedulerName: default-scheduler
      plugins:
        filter:
          enabled: [{name: WhereFilter}]
    """)


def test_a_cover_package_is_diffed_mapped_and_imported_by_each_side_from_its_worktree(
        tmp_path, monkeypatch):
    where = tmp_path / "where.txt"
    monkeypatch.setenv("SCHEDPERF_TEST_WHERE", str(where))

    def plugin(repo: Path) -> None:  # BASE has the plugin; HEAD changes its filter
        replace(repo, "my_plugins/where.py", "        return None\n",
                "        return None  # HEAD's copy\n")

    def with_plugin(repo: Path) -> None:
        (repo / "my_plugins").mkdir()
        (repo / "my_plugins" / "__init__.py").write_text("")
        (repo / "my_plugins" / "where.py").write_text(PLUGIN)

    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "scheduler_core", repo / "scheduler_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    with_plugin(repo)
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "branch")
    plugin(repo)
    git(repo, "commit", "-q", "-am", "change")
    cfg = configs(tmp_path, PLAIN, TEMPLATE.format(
        name="Plugin", extra="\n  schedulerConfigPath: plugin.yaml", template="", labels=""))
    (cfg / "misc" / "plugin.yaml").write_text(PLUGIN_SCHEDULER)
    out = tmp_path / "out"
    result = invoke("compare", "main", "branch", "--repo", str(repo), "--config", str(cfg),
                    "--measure", "time", "--repeat", "1", "--cover-package", "my_plugins",
                    "--coverage-store", str(tmp_path / "store"), "--out", str(out))
    assert result.exit_code == 0, result.output
    sel = load_report(out / "report.json").selection
    assert sel is not None and sel.packages == ("scheduler_core", "my_plugins")
    changed = line_of(repo, "my_plugins/where.py", "return None  # HEAD's copy")
    assert [(a.workload, [str(r) for r in a.lines]) for a in sel.added] == [
        ("Plugin/10Nodes", [f"my_plugins/where.py:{changed}"])]
    # the coverage process and HEAD's worker ran HEAD's copy, BASE's worker BASE's
    copies = [Path(x) for x in where.read_text().split()]
    sides = {p.parents[1].name.split("-")[0] for p in copies}
    assert sides == {"side0", "side1"}, copies
    base, head = git(repo, "rev-parse", "main"), git(repo, "rev-parse", "branch")
    assert {p.parents[1].name for p in copies} == {f"side0-{base[:12]}", f"side1-{head[:12]}"}
