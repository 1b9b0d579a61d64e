"""schedperf changes: change points of the per-commit history in the store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from click.testing import CliRunner

from bench.cli.changes import changes as changes_command
from bench.cli.changes import find_changes
from bench.results.parquet import write_results_parquet
from reports.store import ingest_paths
from tests.reports.store.test_history import _result

START = datetime(2025, 3, 1, tzinfo=UTC)


def _store_with_step(tmp_path, store):
    """20 commits; 5000Nodes drops 15 % from commit 12 on, 500Nodes stays level."""
    rng = np.random.default_rng(3)
    for i in range(20):
        level = 1000.0 if i < 12 else 850.0
        results = [_result("5000Nodes", level * (1 + 0.01 * rng.standard_normal())),
                   _result("500Nodes", 400.0 * (1 + 0.01 * rng.standard_normal()))]
        env = {"commit": f"{i:02d}" + "a" * 38, "branch": "main", "machine": "ci"}
        write_results_parquet(tmp_path / "runs" / f"r{i}" / "results.parquet", results, env,
                              run_id=f"run-{i}", timestamp=START + timedelta(days=i))
    assert not ingest_paths([tmp_path / "runs"], store).errors
    return store


def test_step_is_found_at_its_commit_and_only_there(tmp_path, store):
    _store_with_step(tmp_path, store)
    found = find_changes(store, metric="SchedulingThroughput", bucket=None, workload=None,
                         since=None, min_size=5, p_value=0.01)
    assert [(c["name"], str(c["commit"])[:2], c["direction"]) for c in found] == [
        ("SchedulingBasic/5000Nodes", "12", "regression")]
    assert found[0]["change"] == pytest.approx(-0.15, abs=0.02)
    later = find_changes(store, metric="SchedulingThroughput", bucket=None, workload=None,
                         since="13", min_size=5, p_value=0.01)
    assert later == []


def test_command_prints_the_table_and_rejects_an_empty_store(tmp_path, store):
    _store_with_step(tmp_path, store)
    result = CliRunner().invoke(changes_command, ["--store", str(store)],
                                catch_exceptions=False, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "5000Nodes" in result.output and "regression" in result.output
    empty = CliRunner().invoke(changes_command, ["--store", str(tmp_path / "none")])
    assert empty.exit_code == 2 and "no results stored yet" in empty.output
