"""The asv configuration and suite (bench/asv_bench), and the shared hot-path setup
(bench/hotpaths.py): static checks, catalog discovery edge cases, and an ``asv check`` +
one-benchmark ``asv run --quick`` smoke run against this checkout (results in a temp dir)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench import hotpaths
from bench.asv_bench import catalog
from scheduler_core.framework.config import DEFAULT_MULTIPOINT
from scheduler_core.plugins.registry import IN_TREE
from workloads.result import DataItem, WorkloadResult

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "asv.conf.json"


def _conf() -> dict:
    return json.loads(CONF.read_text())


# --------------------------------------------------------------------------- asv.conf.json
def test_conf_required_fields() -> None:
    conf = _conf()
    assert conf["version"] == 1
    assert conf["repo"] == "."
    assert conf["branches"] == ["main"]
    assert conf["environment_type"] == "virtualenv"
    assert (ROOT / conf["benchmark_dir"] / "__init__.py").is_file()
    assert conf["benchmark_dir"] == "bench/asv_bench"


@pytest.mark.parametrize("key", ["results_dir", "env_dir", "html_dir"])
def test_conf_output_dirs_are_under_dot_asv(key: str) -> None:
    assert Path(_conf()[key]).parts[0] == ".asv"


def test_dot_asv_is_git_ignored() -> None:
    lines = (ROOT / ".gitignore").read_text().splitlines()
    assert ".asv/" in lines


@pytest.mark.parametrize("var", ["POLARS_MAX_THREADS", "OMP_NUM_THREADS",
                                 "OPENBLAS_NUM_THREADS"])
def test_conf_pins_threads_without_new_environments(var: str) -> None:
    assert _conf()["matrix"]["env_nobuild"][var] == ["1"]


def test_conf_regression_thresholds_spelled_as_asv_reads_them() -> None:
    conf = _conf()
    assert "regression_thresholds" not in conf  # asv silently ignores this spelling
    thresholds = conf["regressions_thresholds"]
    assert thresholds[".*"] == 0.05
    for regex, value in thresholds.items():
        re.compile(regex)
        assert 0 < value < 1


def test_conf_build_and_install_commands_use_the_wheel() -> None:
    conf = _conf()
    assert any("{build_cache_dir}" in c and "pip wheel" in c for c in conf["build_command"])
    assert all("{wheel_file}" in c for c in conf["install_command"])


# --------------------------------------------------------------------------- hot paths
def _default_plugins(point: str) -> set[str]:
    names = set()
    for name, _ in DEFAULT_MULTIPOINT:
        cls = IN_TREE[name]
        if name == "DynamicResources":
            continue  # not modelled (PreFilter skips every pod): never rejects, nothing to time
        if callable(getattr(cls, point, None)):
            names.add(name)
    return names


@pytest.mark.parametrize(("point", "listed"), [("filter", hotpaths.FILTER_PLUGINS),
                                                ("score", hotpaths.SCORE_PLUGINS)],
                         ids=["filter", "score"])
def test_every_default_plugin_has_a_hot_path_case(point: str, listed: tuple[str, ...]) -> None:
    assert set(listed) == _default_plugins(point)
    assert set(listed) <= set(hotpaths.PLUGIN_PODS)


@pytest.mark.parametrize(("env", "counts"), [("", (500, 5000)), ("1", (500, 5000, 15000))],
                         ids=["default", "full"])
def test_node_counts_follow_full_mode(monkeypatch: pytest.MonkeyPatch, env: str,
                                      counts: tuple[int, ...]) -> None:
    monkeypatch.setenv(hotpaths.FULL_ENV, env)
    assert hotpaths.node_counts() == counts
    assert hotpaths.FULL_ENV == catalog.FULL_ENV


@pytest.fixture(scope="module")
def small() -> hotpaths.HotCluster:
    return hotpaths.build_cluster(200)


@pytest.mark.parametrize("plugin", hotpaths.FILTER_PLUGINS)
def test_filter_case_runs_over_every_node(small: hotpaths.HotCluster, plugin: str) -> None:
    out = hotpaths.FilterCase(small, plugin).run()
    assert out is None or (out.dtype == np.bool_ and len(out) == 200)


@pytest.mark.parametrize("plugin", hotpaths.SCORE_PLUGINS)
def test_score_case_scores_every_node(small: hotpaths.HotCluster, plugin: str) -> None:
    out = hotpaths.ScoreCase(small, plugin).run()
    assert len(out) == 200 and 0 <= out.min() <= out.max() <= 100


def test_pod_update_case_round_trip(small: hotpaths.HotCluster) -> None:
    case = hotpaths.PodUpdateCase(small)
    table = small.table
    before = table.pod_count.copy()
    case.reset_absent()
    case.add()
    assert case.present() and table.pod_count[case.slot] == before[case.slot] + 1
    case.reset_present()  # already present: no-op
    case.remove()
    assert not case.present() and np.array_equal(table.pod_count, before)


def test_node_add_case_reuses_the_slot(small: hotpaths.HotCluster) -> None:
    case = hotpaths.NodeAddCase(small)
    first = case.add()
    case.reset_absent()
    assert case.add() == first and small.table.num_nodes == 201
    case.reset_absent()
    assert small.table.num_nodes == 200


def test_requeue_case_moves_the_fit_rejected_pods() -> None:
    case = hotpaths.RequeueCase(50)
    assert case.queue.unschedulable_count() == 50
    assert case.run() == 40  # NodeResourcesFit-rejected pods; NodeAffinity ones stay
    case.reset()
    assert case.queue.unschedulable_count() == 50


# --------------------------------------------------------------------------- catalog discovery
TINY_CONFIG = """\
- name: Tiny
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods
    collectMetrics: true
  workloads:
  - name: 2Nodes
    labels: [short]
    params: {nodes: 2, pods: 4}
  - name: 30Nodes
    labels: [performance]
    params: {nodes: 30, pods: 1000}
"""


def _write_topic(root: Path, topic: str, text: str) -> None:
    (root / topic).mkdir(parents=True)
    (root / topic / "performance-config.yaml").write_text(text)


def test_discover_missing_catalog_gives_the_placeholder(tmp_path: Path) -> None:
    found = catalog.discover(tmp_path / "nope", "short")
    assert found == {}
    assert catalog.param_names(found) == [catalog.PLACEHOLDER]


@pytest.mark.parametrize(("labels", "names"), [
    ("short", ["Tiny/2Nodes [a]", "Tiny/2Nodes [b]"]),
    ("performance", ["Tiny/30Nodes [a]", "Tiny/30Nodes [b]"]),
    ("", ["Tiny/2Nodes [a]", "Tiny/30Nodes [a]", "Tiny/2Nodes [b]", "Tiny/30Nodes [b]"]),
], ids=["short", "performance", "all"])
def test_discover_filters_by_label_and_disambiguates_topics(
        tmp_path: Path, labels: str, names: list[str]) -> None:
    _write_topic(tmp_path, "a", TINY_CONFIG)
    _write_topic(tmp_path, "b", TINY_CONFIG)
    assert list(catalog.discover(tmp_path, labels)) == names


def test_discover_skips_a_broken_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _write_topic(tmp_path, "good", TINY_CONFIG)
    _write_topic(tmp_path, "bad", "- name: [unclosed\n")
    assert list(catalog.discover(tmp_path, "short")) == ["Tiny/2Nodes"]
    assert "skipping" in capsys.readouterr().err


def test_catalog_dir_is_the_cli_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.selection import CATALOG_DIR

    monkeypatch.delenv(catalog.CATALOG_ENV, raising=False)
    assert catalog.catalog_dir() == CATALOG_DIR


@pytest.mark.parametrize(("env", "expected"), [("", "short"), ("1", "performance")],
                         ids=["default", "full"])
def test_label_filter_follows_full_mode(monkeypatch: pytest.MonkeyPatch, env: str,
                                        expected: str) -> None:
    monkeypatch.setenv(catalog.FULL_ENV, env)
    assert catalog.label_filter() == expected


def _result(status: str, items: list[DataItem], scheduled: int, attempts: int
            ) -> WorkloadResult:
    return WorkloadResult("Tc", "w", "topic", {}, (), status=status, data_items=items,
                          scheduled_pods=scheduled, attempts=attempts)


def _throughput(avg: float) -> DataItem:
    return DataItem({"Average": avg}, "pods/s", {"Metric": "SchedulingThroughput"})


@pytest.mark.parametrize(("result", "throughput", "per_pod"), [
    (_result("ok", [_throughput(100.0), _throughput(300.0)], 10, 15), 200.0, 1.5),
    (_result("ok", [DataItem({"Perc50": 1.0}, "s", {"Metric": "x"})], 4, 4), None, 1.0),
    (_result("unsupported", [], 0, 0), None, None),
], ids=["two-windows", "no-throughput", "nothing-scheduled"])
def test_summarize(result: WorkloadResult, throughput: float | None,
                   per_pod: float | None) -> None:
    s = catalog.summarize(result)
    assert s["throughput"] == throughput and s["attempts_per_pod"] == per_pod
    assert s["status"] == result.status


def test_run_selected_runs_each_workload_once(tmp_path: Path) -> None:
    _write_topic(tmp_path, "a", TINY_CONFIG)
    out = catalog.run_selected(catalog.discover(tmp_path, ""), timeout=60)
    assert list(out) == ["Tiny/2Nodes", "Tiny/30Nodes"]
    assert [s["status"] for s in out.values()] == ["ok", "ok"]
    assert [s["scheduled_pods"] for s in out.values()] == [4, 1000]
    assert [s["attempts_per_pod"] for s in out.values()] == [1.0, 1.0]
    # every workload that schedules measured pods has a throughput, however fast the
    # machine (4 pods: the phase rate; 1000 pods: sampled or the phase rate)
    assert out["Tiny/2Nodes"]["throughput"] > 0
    assert out["Tiny/30Nodes"]["throughput"] > 0


# --------------------------------------------------------------------------- asv smoke run
def _git_head() -> str | None:
    if shutil.which("git") is None:
        return None
    proc = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


@pytest.fixture(scope="module")
def asv_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], str]:
    """A copy of asv.conf.json pointing at this checkout, with every output in a temp dir
    (and HOME there too, for ~/.asv-machine.json)."""
    pytest.importorskip("asv")
    head = _git_head()
    if head is None:
        pytest.skip("not in a git checkout (or git missing)")
    tmp = tmp_path_factory.mktemp("asv")
    conf = _conf()
    conf.update(repo=str(ROOT), benchmark_dir=str(ROOT / conf["benchmark_dir"]),
                results_dir=str(tmp / "results"), env_dir=str(tmp / "env"),
                html_dir=str(tmp / "html"))
    path = tmp / "asv.conf.json"
    path.write_text(json.dumps(conf))
    env = dict(os.environ, HOME=str(tmp))
    env.pop(hotpaths.FULL_ENV, None)
    return path, env, head


def _asv(args: list[str], conf: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "asv", *args, "--config", str(conf)],
                          capture_output=True, text=True, env=env, cwd=conf.parent,
                          timeout=120, check=False)


@pytest.mark.slow
def test_asv_check(asv_env: tuple[Path, dict[str, str], str]) -> None:
    conf, env, _ = asv_env
    proc = _asv(["check", "--python=same"], conf, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No problems found" in proc.stdout


@pytest.mark.slow
def test_asv_run_quick_smoke(asv_env: tuple[Path, dict[str, str], str]) -> None:
    conf, env, head = asv_env
    machine = _asv(["machine", "--yes", "--machine", "smoke"], conf, env)
    assert machine.returncode == 0, machine.stdout + machine.stderr
    bench = r"snapshot\.NodeAdd\.time_add_node"
    proc = _asv(["run", "--quick", "--python=same", "--machine", "smoke",
                 "--set-commit-hash", head, "--bench", bench, "--show-stderr"], conf, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = [f for f in (conf.parent / "results" / "smoke").glob("*.json")
             if f.name != "machine.json"]
    assert len(files) == 1, proc.stdout
    data = json.loads(files[0].read_text())
    assert data["commit_hash"] == head
    columns = data["result_columns"]
    entry = data["results"]["snapshot.NodeAdd.time_add_node"]
    values = entry[columns.index("result")]
    assert len(values) == len(hotpaths.DEFAULT_NODE_COUNTS)
    assert all(isinstance(v, float) and 0 < v < 1 for v in values), values
    assert entry[columns.index("params")] == [["500", "5000"]]
