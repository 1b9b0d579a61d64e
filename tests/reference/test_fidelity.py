"""``schedperf fidelity``: workloads run through scheduler_core in lockstep with the real
kube-scheduler (v1.34), every scheduling attempt compared.

The whole catalog's and upstream's ``integration-test`` workloads are checked by
tests/reference/test_fidelity_integration.py; here a few small ones, and a core mutated on
purpose (an off-by-one in one plugin's score) that the check must catch, naming the plugin.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from click.testing import CliRunner

from bench.cli.main import cli
from scheduler_core.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from scheduler_core.plugins.node_affinity import NodeAffinity
from tests.shared import UPSTREAM_DIR, require_shared
from workloads.fidelity.results import FIDELITY_FILE

# a small preemption workload (PDB-free) and a small one with several profiles' plugins args
SMALL = "PreemptionPriorityTiers/8Nodes$|SchedulingWithPluginArgs/24Nodes$"


def fidelity(reference_binary, tmp_path, *args: str):
    out = tmp_path / "fid"
    result = CliRunner().invoke(cli, ["fidelity", "--out", str(out), "--reference-cache",
                                      str(reference_binary.path.parent.parent), *args])
    return result, out


def test_small_catalog_workloads_agree_attempt_by_attempt(reference_binary, tmp_path):
    result, out = fidelity(reference_binary, tmp_path, "--label", "", "--name", SMALL)
    assert result.exit_code == 0, result.output
    rows = pl.read_parquet(out / FIDELITY_FILE)
    attempts = rows.filter(pl.col("kind") == "attempt")
    assert attempts["workload"].n_unique() == 2
    assert len(attempts) > 50
    assert attempts["undocumented"].sum() == 0
    # preemption happened and was compared: some attempts were unschedulable on both sides
    assert (attempts["reference_outcome"] == "Unschedulable").any()
    assert (attempts["core_outcome"] == attempts["reference_outcome"]).all()
    assert rows["reference_sha256"].unique().to_list() == [reference_binary.sha256]
    assert "disagreed" in result.output


def test_an_off_by_one_score_is_caught_and_the_plugin_named(reference_binary, tmp_path,
                                                             monkeypatch):
    real = NodeResourcesBalancedAllocation.score

    def off_by_one(self, state, pod, table, idx):
        return np.asarray(real(self, state, pod, table, idx)) + 1

    monkeypatch.setattr(NodeResourcesBalancedAllocation, "score", off_by_one)
    result, out = fidelity(reference_binary, tmp_path, "--label", "", "--name",
                           "SchedulingWithPluginArgs/24Nodes$")
    assert result.exit_code == 1, result.output
    assert "NodeResourcesBalancedAllocation" in result.output
    diffs = pl.read_parquet(out / FIDELITY_FILE).filter(
        (pl.col("kind") == "difference") & pl.col("deviation").is_null())
    plugins = set(diffs.filter(pl.col("field") == "score")["plugin"].to_list())
    assert plugins == {"NodeResourcesBalancedAllocation"}
    # the core's value is the reference's plus one on every differing node
    scores = diffs.filter(pl.col("field") == "score")
    assert all(int(c) == int(r) + 1 for c, r in zip(scores["core"], scores["reference"],
                                                    strict=True))


def test_a_filter_mutation_is_caught_at_the_node(reference_binary, tmp_path, monkeypatch):
    """NodeAffinity's filter made to let every node through: the reference rejects the nodes
    the workload's required node affinity (Gt/Lt/Exists terms) rules out, the core does not;
    the rows name the plugin and each node."""
    monkeypatch.setattr(NodeAffinity, "filter", lambda self, state, pod, table, idx: None)
    result, out = fidelity(reference_binary, tmp_path, "--label", "", "--name",
                           "SchedulingWithPluginArgs/24Nodes$")
    assert result.exit_code == 1, result.output
    rows = pl.read_parquet(out / FIDELITY_FILE)
    feasible = rows.filter((pl.col("field") == "feasible") & pl.col("deviation").is_null())
    assert not feasible.is_empty()
    assert set(feasible["plugin"].to_list()) == {"NodeAffinity"}
    assert feasible["core"].unique().to_list() == ["feasible"]


def test_an_upstream_config_runs_with_a_gate_v134_locks(reference_binary, tmp_path):
    """SchedulerQueueingHints=false cannot be set in v1.34: the reference runs with it on
    and says so; every attempt is still compared."""
    config = require_shared(UPSTREAM_DIR / "affinity" / "performance-config.yaml")
    result, out = fidelity(reference_binary, tmp_path, "--config", str(config), "--name",
                           "SchedulingPodAffinity/5Nodes$")
    assert result.exit_code == 0, result.output
    assert "v1.34 locks it to true" in result.output
    attempts = pl.read_parquet(out / FIDELITY_FILE).filter(pl.col("kind") == "attempt")
    assert len(attempts) >= 5


def test_a_bad_deviations_file_is_bad_input(reference_binary, tmp_path):
    bad = tmp_path / "dev.yaml"
    bad.write_text("deviations:\n  - {id: a, stage: Nope, plugin: X, case: c, reason: r}\n")
    result, _ = fidelity(reference_binary, tmp_path, "--deviations", str(bad))
    assert result.exit_code == 2
    assert "deviations[0].stage" in result.output


def test_a_workload_that_times_out_is_an_error_not_an_agreement(reference_binary, tmp_path):
    """A check that stops part way has not compared the workload: exit 2, the reason says
    how many attempts were compared before it."""
    result, _ = fidelity(reference_binary, tmp_path, "--label", "", "--name",
                         "^PreemptionWithPDBs/20Nodes$", "--timeout-per-workload", "0.01")
    assert result.exit_code == 2, result.output
    assert "attempts before it were compared" in result.output
