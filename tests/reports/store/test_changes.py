"""schedperf changes: change points of the per-commit history in the store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from click.testing import CliRunner

from bench.cli.changes import changes as changes_command
from bench.cli.changes import find_changes
from reports.store import ingest_paths
from tests.reports.gitrepo import make_repo
from tests.reports.store.test_history import _result
from workloads.output.parquet import write_results_parquet

START = datetime(2025, 3, 1, tzinfo=UTC)


def _store_with_step(tmp_path, store):
    """20 commits of a repository, measured in reverse; 5000Nodes drops 15 % from commit 12
    on, 500Nodes stays level."""
    commits = make_repo(tmp_path / "repo", 20)
    rng = np.random.default_rng(3)
    for i in reversed(range(20)):
        level = 1000.0 if i < 12 else 850.0
        results = [_result("5000Nodes", level * (1 + 0.01 * rng.standard_normal())),
                   _result("500Nodes", 400.0 * (1 + 0.01 * rng.standard_normal()))]
        env = {"commit": commits[i], "branch": "main", "machine": "ci"}
        write_results_parquet(tmp_path / "runs" / f"r{i:02d}" / "results.parquet", results,
                              env, run_id=f"run-{i}",
                              timestamp=START + timedelta(days=20 - i))
    assert not ingest_paths([tmp_path / "runs"], store, repo=tmp_path / "repo").errors
    return commits


def test_step_is_found_at_its_commit_and_only_there(tmp_path, store):
    commits = _store_with_step(tmp_path, store)
    found = find_changes(store, metric="SchedulingThroughput", bucket=None, workload=None,
                         since=None, min_size=5, p_value=0.01)
    assert [(c["name"], c["commit"], c["direction"]) for c in found] == [
        ("SchedulingBasic/5000Nodes", commits[12], "regression")]
    assert found[0]["change"] == pytest.approx(-0.15, abs=0.02)
    later = find_changes(store, metric="SchedulingThroughput", bucket=None, workload=None,
                         since=commits[13][:12], min_size=5, p_value=0.01)
    assert later == []
    earlier = find_changes(store, metric="SchedulingThroughput", bucket=None, workload=None,
                           since=commits[11][:12], min_size=5, p_value=0.01)
    assert [c["commit"] for c in earlier] == [commits[12]]


def test_command_prints_the_table_and_rejects_an_empty_store(tmp_path, store):
    _store_with_step(tmp_path, store)
    result = CliRunner().invoke(changes_command, ["--store", str(store)],
                                catch_exceptions=False, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "5000Nodes" in result.output and "regression" in result.output
    missing = CliRunner().invoke(changes_command, ["--store", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "none: no such folder" in missing.output
    (tmp_path / "empty").mkdir()
    empty = CliRunner().invoke(changes_command, ["--store", str(tmp_path / "empty")])
    assert empty.exit_code == 2 and "empty holds no results yet" in empty.output


def test_order_unknown_without_repo_and_git_order_with_it(tmp_path, store):
    """Ingested where no repository has the commits: no change point can be placed (and the
    command says why); --repo orders the same store and finds the step at its commit."""
    commits = make_repo(tmp_path / "repo", 20)
    rng = np.random.default_rng(3)
    for i in reversed(range(20)):
        level = 1000.0 if i < 12 else 850.0
        results = [_result("5000Nodes", level * (1 + 0.01 * rng.standard_normal()))]
        env = {"commit": commits[i], "branch": "main", "machine": "ci"}
        write_results_parquet(tmp_path / "runs" / f"r{i:02d}" / "results.parquet", results,
                              env, run_id=f"run-{i}", timestamp=START + timedelta(days=20 - i))
    assert not ingest_paths([tmp_path / "runs"], store).errors
    runner = CliRunner(env={"COLUMNS": "250"})
    blind = runner.invoke(changes_command, ["--store", str(store)], catch_exceptions=False)
    assert blind.exit_code == 0, blind.output
    assert "no change points" in blind.output and "order unknown for 20 of 20" in blind.output
    seen = runner.invoke(changes_command, ["--store", str(store), "--repo",
                                           str(tmp_path / "repo")], catch_exceptions=False)
    assert seen.exit_code == 0, seen.output
    assert commits[12][:12] in seen.output and "regression" in seen.output
    assert f"order: git history of {tmp_path / 'repo'}" in seen.output
