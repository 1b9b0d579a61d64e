"""HTTP extenders in workload runs: the built-in server started for a run, an extender that is
down (ignorable: a warning; not ignorable: the pods stay pending with the reason and the run
fails), and the extension-cost catalog cases placing pods alike."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

from bench.cli.main import cli
from workloads.config import load_configs
from workloads.extender_server import ExtenderProcess
from workloads.runner.execution import execute


def _case(tmp_path: Path, extender: dict, pods: int = 6) -> Path:
    sched = {"apiVersion": "kubescheduler.config.k8s.io/v1",
             "kind": "KubeSchedulerConfiguration", "extenders": [extender]}
    (tmp_path / "sched.yaml").write_text(yaml.safe_dump(sched))
    case = {"name": "Ext", "schedulerConfigPath": "sched.yaml", "workloadTemplate": [
        {"opcode": "createNodes", "count": 3},
        {"opcode": "createPods", "count": pods, "collectMetrics": True}],
        "workloads": [{"name": "w", "labels": ["integration-test"]}]}
    path = tmp_path / "performance-config.yaml"
    path.write_text(yaml.safe_dump([case], sort_keys=False))
    return path


def _run(path: Path):
    (tc,) = load_configs(path)
    return execute(tc, tc.workloads[0])


def test_a_built_in_extender_is_started_called_and_stopped(tmp_path):
    path = _case(tmp_path, {"urlPrefix": "schedperf-extender://ok", "filterVerb": "filter",
                            "prioritizeVerb": "prioritize", "weight": 1, "bindVerb": "bind"})
    result, run = _run(path)
    assert result.status == "ok", result.reason
    assert result.scheduled_pods == 6
    assert result.extra["extender[0]/filter/calls"] == 6
    assert result.extra["extender[0]/bind/calls"] == 6
    assert result.extra["extender[0]/filter/errors"] == 0
    assert result.extra["extender[0]/server_cpu_seconds"] > 0
    assert not result.warnings
    server = run.extenders.servers[0]
    # timed like a plugin in the sampled cycles, under the extender's name (its URL)
    timed = {k.split("/")[-1] for k in run.window_plugin_seconds if k.startswith(server.url)}
    assert {"Filter", "Score", "Bind"} <= timed, run.window_plugin_seconds
    assert server._proc is None  # stopped when the workload ended


def _down_url() -> str:
    with ExtenderProcess() as s:
        return s.url


def test_an_ignorable_extender_that_is_down_is_a_warning(tmp_path):
    url = _down_url()
    path = _case(tmp_path, {"urlPrefix": url, "filterVerb": "filter", "ignorable": True})
    res = CliRunner().invoke(cli, ["run", "--config", str(path), "--label", "integration-test",
                                   "--out", str(tmp_path / "out")], catch_exceptions=False)
    out = res.output
    assert res.exit_code == 0, out
    assert "Ext/w: warning: extenders[0] (" + url + "): 6 failed call(s) the scheduler went " \
        "on without (filter 6); last error: Post" in " ".join(out.split())
    rows = pl.read_parquet(tmp_path / "out" / "placements.parquet")
    assert rows["node"].null_count() == 0
    results = pl.read_parquet(tmp_path / "out" / "results.parquet")
    ignored = results.filter(pl.col("metric") == "extender[0]/filter/ignored")
    assert ignored["value"].to_list() == [6.0] and ignored["unit"].to_list() == ["calls"]


def test_a_required_extender_that_is_down_keeps_pods_pending_and_fails_the_run(tmp_path):
    url = _down_url()
    result, _ = _run(_case(tmp_path, {"urlPrefix": url, "filterVerb": "filter"}))
    assert result.status == "failed"
    assert result.scheduled_pods == 0
    assert f'(last failure: Post "{url}/filter": dial tcp' in result.reason
    assert result.unschedulable_reasons == {
        f'Post "{url}/filter": dial tcp 127.0.0.1:{url.rsplit(":", 1)[1]}: connect: '
        "connection refused": 6}


def test_an_unknown_built_in_mode_is_bad_input(tmp_path):
    result, _ = _run(_case(tmp_path, {"urlPrefix": "schedperf-extender://sleepy",
                                      "filterVerb": "filter"}))
    assert result.status == "failed"
    assert 'extenders[0].urlPrefix: "schedperf-extender://sleepy": unknown built-in extender ' \
        'mode "sleepy"' in result.reason


@pytest.mark.parametrize("size", ["60Nodes"])
def test_extension_cost_cases_place_pods_alike_where_every_node_is_examined(tmp_path, size):
    """Below 100 nodes every node is examined, so the in-process TierGate plugin (vectorised
    and per node), the WebAssembly guest (batched and per node) and the HTTP extender (with
    and without a node cache) see the same candidates and must place every pod alike."""
    res = CliRunner().invoke(cli, ["run", "--label", "integration-test", "--name",
                                   f"^ExtensionCost.*/{size}$", "--out", str(tmp_path / "out")],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    df = pl.read_parquet(tmp_path / "out" / "placements.parquet")
    by_case = {tc: d.sort("pod")["node"].to_list()
               for (tc,), d in df.group_by(["test_case"])}
    assert len(by_case) == 6
    first = next(iter(by_case.values()))
    assert all(nodes == first for nodes in by_case.values())
    assert all(int(n.rsplit("-", 1)[1]) % 5 != 2 for n in first)  # never an excluded node
