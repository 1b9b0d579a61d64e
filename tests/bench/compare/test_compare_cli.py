"""schedperf compare end to end on tiny workloads: configs, refs (each side imports its own
worktree), recorded results, instruction counts, exit codes and accepted regressions."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from bench.cli.main import cli
from bench.measure.instructions import valgrind_available
from reports.render import load_report
from tests.builders import tiny_config

ROOT = Path(__file__).resolve().parents[3]

CONFIG = tiny_config(("40Nodes", ["integration-test"], 40, 10, 1000),
                     labels="compare, compare-time")

PACKING = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"""
DEFAULT = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""


@pytest.fixture
def config(tmp_path):
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    (folder / "performance-config.yaml").write_text(CONFIG)
    return folder.parent


def invoke(*args: str, cwd: Path | None = None):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_two_scheduler_configs_time_mode(config, tmp_path):
    (tmp_path / "a.yaml").write_text(DEFAULT)
    (tmp_path / "b.yaml").write_text(PACKING)
    out = tmp_path / "out"
    result = invoke("compare", "--base-config", str(tmp_path / "a.yaml"), "--head-config",
                    str(tmp_path / "b.yaml"), "--config", str(config), "--measure", "time",
                    "--repeat", "2", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert {"report.md", "report.html", "report.json", "samples.parquet", "raw"} <= {
        p.name for p in out.iterdir()}
    report = load_report(out / "report.json")
    assert report.kind == "configs"
    assert report.base.config.endswith("a.yaml") and report.head.config.endswith("b.yaml")
    metrics = {(r.workload, r.metric) for r in report.results}
    assert metrics == {("Tiny/40Nodes", "SchedulingThroughput"), ("Tiny/40Nodes", "cpu_per_pod")}
    samples = pl.read_parquet(out / "samples.parquet")
    rounds = samples.filter(pl.col("metric") == "cpu_per_pod").sort("side", "round")
    assert rounds.select("side", "round").rows() == [
        ("base", 1), ("base", 2), ("head", 1), ("head", 2)]
    # per-plugin timings are recorded for attribution
    assert samples.filter(pl.col("metric").str.starts_with("plugin:")).height > 0
    assert "scheduler configurations" in (out / "report.md").read_text()


def test_config_compare_leaves_out_test_cases_with_their_own_scheduler_config(tmp_path):
    """--base-config/--head-config replace a test case's schedulerConfigPath: a test case that
    brings its own (a second profile, an out-of-tree plugin) is listed as not compared."""
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    own = tiny_config(("10Nodes", [], 10, 5, 30), labels="compare-time").replace(
        "- name: Tiny", "- name: Own\n  schedulerConfigPath: own.yaml")
    (folder / "performance-config.yaml").write_text(CONFIG + own)
    (folder / "own.yaml").write_text(DEFAULT)
    (tmp_path / "a.yaml").write_text(DEFAULT)
    (tmp_path / "b.yaml").write_text(PACKING)
    out = tmp_path / "out"
    result = invoke("compare", "--base-config", str(tmp_path / "a.yaml"), "--head-config",
                    str(tmp_path / "b.yaml"), "--config", str(folder.parent), "--measure",
                    "time", "--repeat", "1", "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert {r["workload"] for r in report["results"]} == {"Tiny/40Nodes"}
    assert report["settings"]["not_compared"] == [
        "Own/10Nodes (its test case sets schedulerConfigPath own.yaml)"]
    assert "Not compared (1" in (out / "report.md").read_text()
    assert "Own/10Nodes" in (out / "report.html").read_text()
    # only such test cases selected: nothing to compare is bad input
    result = invoke("compare", "--base-config", str(tmp_path / "a.yaml"), "--head-config",
                    str(tmp_path / "b.yaml"), "--config", str(folder.parent), "--measure",
                    "time", "--name", "^Own/", "--out", str(tmp_path / "out2"))
    assert result.exit_code == 2
    assert "sets its own schedulerConfigPath" in result.output


def test_config_compare_checks_both_scheduler_configs_before_measuring(config, tmp_path,
                                                                      monkeypatch):
    """--base-config/--head-config get the deep check of validate/run: a profile that cannot
    be built (an unknown plugin) is bad input naming the flag, file and field; nothing is
    measured and no output folder is made."""
    import bench.compare.forms as forms

    def measure(*args: object, **kwargs: object) -> None:
        raise AssertionError("measured despite a bad scheduler config")

    monkeypatch.setattr(forms, "_measure", measure)
    (tmp_path / "a.yaml").write_text(DEFAULT)
    (tmp_path / "b.yaml").write_text(DEFAULT + "  plugins:\n    score:\n      enabled: "
                                     "[{name: NoSuchPlugin}]\n")  # found building the profile
    out = tmp_path / "out"
    result = invoke("compare", "--base-config", str(tmp_path / "a.yaml"), "--head-config",
                    str(tmp_path / "b.yaml"), "--config", str(config), "--measure", "time",
                    "--repeat", "2", "--out", str(out))
    assert result.exit_code == 2, result.output
    assert (f'--head-config: {tmp_path / "b.yaml"}: profiles[0].plugins.score: unknown '
            'plugin "NoSuchPlugin"') in result.output, result.output
    assert "--base-config:" not in result.output
    assert "nothing was measured" in result.output
    assert not out.exists()


def _repo_with_two_core_commits(tmp_path: Path) -> Path:
    """A repository holding a copy of scheduler_core; the second commit changes it."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "scheduler_core", repo / "scheduler_core",
                    ignore=shutil.ignore_patterns("__pycache__"))

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    git("add", ".")
    git("commit", "-q", "-m", "base")
    init = repo / "scheduler_core" / "__init__.py"
    init.write_text(init.read_text() + "\nSIDE_MARKER = 'head'\n")
    git("commit", "-q", "-am", "head")
    return repo


def test_refs_each_side_imports_its_own_worktree(config, tmp_path):
    repo = _repo_with_two_core_commits(tmp_path)
    out = tmp_path / "out"
    result = invoke("compare", "main~1", "main", "--repo", str(repo), "--config", str(config),
                    "--measure", "time", "--repeat", "1", "--coverage-store",
                    str(tmp_path / "store"), "--out", str(out))
    assert result.exit_code == 0, result.output
    commits = subprocess.run(["git", "-C", str(repo), "rev-parse", "main~1", "main"],
                             check=True, capture_output=True, text=True).stdout.split()
    report = json.loads((out / "report.json").read_text())
    assert [report["base"]["commit"], report["head"]["commit"]] == commits
    # HEAD's only change is a module-level line: run by every import, measured by none
    lines = (repo / "scheduler_core" / "__init__.py").read_text().splitlines()
    marker = lines.index("SIDE_MARKER = 'head'") + 1
    selection = report["selection"]
    assert (selection["state"], selection["added"], selection["blind_spots"]) == (
        "applied", [], [])
    assert selection["import_time"] == [{"file": "scheduler_core/__init__.py",
                                         "first": marker, "last": marker}]
    assert selection["map"]["commit"] == commits[1]
    for side, commit in zip(("base", "head"), commits, strict=True):
        path = Path(report[side]["core_path"])
        assert path.name == "scheduler_core" and commit[:12] in path.parent.name
        raw = json.loads((out / "raw" / "time" / side / "round-1" / "result.json").read_text())
        assert raw["core"]["commit"] == commit and raw["core"]["warning"] is None
    assert report["base"]["core_path"] != report["head"]["core_path"]
    # the worktrees are gone again
    listing = subprocess.run(["git", "-C", str(repo), "worktree", "list"], check=True,
                             capture_output=True, text=True).stdout
    assert listing.count("\n") == 1


@pytest.mark.skipif(not valgrind_available(), reason="valgrind is not installed")
def test_instruction_counts_of_identical_code_are_identical(config, tmp_path):
    (tmp_path / "a.yaml").write_text(DEFAULT)
    out = tmp_path / "out"
    result = invoke("compare", "--base-config", str(tmp_path / "a.yaml"), "--head-config",
                    str(tmp_path / "a.yaml"), "--config", str(config), "--measure",
                    "instructions", "--out", str(out))
    assert result.exit_code == 0, result.output
    (r,) = load_report(out / "report.json").results
    assert (r.mode, r.metric, r.ratio, r.verdict) == (
        "instructions", "instructions_per_pod", 1.0, "no change")
    assert r.base.values == r.head.values


def _fake_compare_dir(tmp_path: Path, slowdown: float) -> Path:
    """A compare output folder with samples where HEAD is ``slowdown`` slower."""
    rows = []
    for side, factor in (("base", 1.0), ("head", 1.0 - slowdown)):
        for rnd, noise in enumerate((1.0, 1.01, 0.99, 1.005, 0.995), 1):
            rows.append({"side": side, "mode": "time", "workload": "Uncommon_X/small",
                         "metric": "SchedulingThroughput", "unit": "pods/s", "round": rnd,
                         "value": 1000.0 * factor * noise})
    folder = tmp_path / "recorded"
    folder.mkdir()
    pl.DataFrame(rows).write_parquet(folder / "samples.parquet")
    return folder


def test_recorded_regression_fails_the_gate_unless_accepted(tmp_path):
    folder = _fake_compare_dir(tmp_path, 0.10)
    args = ["compare", "--base-results", f"{folder}#base", "--head-results", f"{folder}#head",
            "--fail-on-regression"]
    result = invoke(*args, "--out", str(tmp_path / "o1"))
    assert result.exit_code == 1, result.output
    (r,) = load_report(tmp_path / "o1" / "report.json").results
    assert r.verdict == "regression" and r.ratio == pytest.approx(0.9, abs=0.01)
    accepted = tmp_path / "accepted.yaml"
    accepted.write_text('- workload: "Uncommon_.*"\n  until: 2999-01-01\n  why: known cost\n')
    result = invoke(*args, "--accepted", str(accepted), "--out", str(tmp_path / "o2"))
    assert result.exit_code == 0, result.output
    (r,) = load_report(tmp_path / "o2" / "report.json").results
    assert r.accepted is not None and r.accepted.why == "known cost"
    assert "known cost" in (tmp_path / "o2" / "report.md").read_text()


def test_two_run_folders(config, tmp_path):
    for name in ("a", "b"):
        assert invoke("run", "--config", str(config), "--label", "compare", "--repeat", "2",
                      "--out", str(tmp_path / name)).exit_code == 0
    result = invoke("compare", "--base-results", str(tmp_path / "a"), "--head-results",
                    str(tmp_path / "b" / "results.parquet"), "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    (r,) = load_report(tmp_path / "o" / "report.json").results
    assert (r.workload, r.metric, r.base.n, r.head.n) == (
        "Tiny/40Nodes", "SchedulingThroughput", 2, 2)


@pytest.mark.parametrize(("args", "message"), [
    (["HEAD"], "expected two refs"),
    (["no-such-ref", "HEAD", "--repo", str(ROOT)], "unknown git ref 'no-such-ref'"),
    (["--base-config", "a.yaml"], "--base-config and --head-config go together"),
    (["HEAD~1", "HEAD", "--base-results", "x", "--head-results", "y"], "exactly one of"),
    (["--base-results", "/nonexistent", "--head-results", "/nonexistent"],
     "neither a compare output folder"),
    (["--base-results", "commit:abc", "--head-results", "commit:def"], "needs --store"),
    (["--min-effect", "time=2", "--base-results", "x", "--head-results", "y"],
     "between 0 and 1"),
], ids=["one-ref", "unknown-ref", "half-configs", "two-forms", "missing-results",
        "commit-without-store", "bad-min-effect"])
def test_bad_input_exits_2(tmp_path, args, message):
    result = invoke("compare", *args, "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert message in result.output
