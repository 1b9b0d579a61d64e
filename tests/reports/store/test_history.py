"""history over commits: the query (reports.store.history) and the ``history`` command.
(Git order, n and spread, and judged steps: test_git_order.py.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli.history import history as history_command
from reports.store import HistoryError, history, ingest_paths
from tests.reports.gitrepo import make_repo
from tests.reports.store.conftest import ASV_RESULTS, PYTEST_FILE
from workloads.output.parquet import write_results_parquet
from workloads.result import DataItem, WorkloadResult

# pods/s Average per commit (three commits of a real repository) for two workloads; commit c3
# ran twice (two runs)
THROUGHPUT = {
    "c1": {"5000Nodes": [100.0], "500Nodes": [400.0]},
    "c2": {"5000Nodes": [110.0], "500Nodes": [380.0]},
    "c3": {"5000Nodes": [90.0, 100.0], "500Nodes": [390.0, 410.0]},
}
START = datetime(2025, 3, 1, tzinfo=UTC)


def _result(workload: str, pods_s: float) -> WorkloadResult:
    name = f"SchedulingBasic/{workload}/namespace-2"
    return WorkloadResult(
        test_case="SchedulingBasic", workload=workload, topic="misc", params={"nodes": 5},
        labels=("performance",), wall_seconds=2.0, scheduled_pods=10, attempts=12,
        data_items=[DataItem({"Average": pods_s, "Perc50": pods_s + 1}, "pods/s",
                             {"Name": name, "Metric": "SchedulingThroughput"})])


def make_runs(root: Path, commits: list[str]) -> Path:
    """One results.parquet per (commit, repetition), the way ``schedperf run`` writes them."""
    n = 0
    for day, per_workload in enumerate(THROUGHPUT.values()):
        for rep in range(len(per_workload["5000Nodes"])):
            results = [_result(w, values[rep]) for w, values in per_workload.items()]
            env = {"commit": commits[day], "branch": "main", "machine": "ci"}
            write_results_parquet(root / f"run{n}" / "results.parquet", results, env,
                                  run_id=f"run-{n}", timestamp=START + timedelta(days=day,
                                                                                  hours=rep))
            n += 1
    return root


@pytest.fixture
def commits(tmp_path):
    return make_repo(tmp_path / "repo", len(THROUGHPUT))


@pytest.fixture
def history_store(tmp_path, store, commits):
    assert not ingest_paths([make_runs(tmp_path / "runs", commits)], store,
                            repo=tmp_path / "repo").errors
    return store


def test_throughput_over_commits(history_store, commits):
    bucket, df = history(history_store)
    assert bucket == "Average"
    big = df.filter(name="SchedulingBasic/5000Nodes")
    assert big["commit"].to_list() == commits
    assert big["mean"].to_list() == [100.0, 110.0, 95.0]
    assert big["runs"].to_list() == [1, 1, 2] and big["n"].to_list() == [1, 1, 2]
    assert big["min"].to_list()[-1] == 90.0 and big["max"].to_list()[-1] == 100.0
    assert big["change"].to_list()[0] is None
    assert big["change"].to_list()[1:] == pytest.approx([0.10, 95 / 110 - 1])
    assert set(big["unit"]) == {"pods/s"} and set(big["branch"]) == {"main"}


@pytest.mark.parametrize(("regex", "names"), [
    (None, ["SchedulingBasic/5000Nodes", "SchedulingBasic/500Nodes"]),
    ("500Nodes$", ["SchedulingBasic/500Nodes"]),
    ("^SchedulingBasic/5000", ["SchedulingBasic/5000Nodes"]),
    ("nomatch", []),
], ids=["all", "suffix", "full-name-prefix", "nothing"])
def test_workload_regex_matches_full_name(history_store, regex, names):
    _, df = history(history_store, workload=regex)
    assert df["name"].unique(maintain_order=True).to_list() == names


def test_last_keeps_newest_commits(history_store, commits):
    _, df = history(history_store, last=2)
    assert df.filter(name="SchedulingBasic/500Nodes")["commit"].to_list() == commits[1:]


@pytest.mark.parametrize(("metric", "bucket", "expected_bucket"), [
    ("SchedulingThroughput", "Perc50", "Perc50"),
    ("wall_seconds", None, "Value"),
    ("test_filter_fit", None, "median"),  # pytest-benchmark
    ("time_schedule_pods", None, "Value"),  # asv
], ids=["explicit", "extra-metric", "pytest-median", "asv-value"])
def test_default_bucket_per_metric(history_store, metric, bucket, expected_bucket):
    ingest_paths([PYTEST_FILE, ASV_RESULTS], history_store)
    used, df = history(history_store, metric=metric, bucket=bucket)
    assert used == expected_bucket and df.height > 0


def test_asv_results_over_two_commits(store):
    ingest_paths([ASV_RESULTS], store)
    _, df = history(store, metric="time_schedule_pods", workload="nodes=500,profile=default")
    assert df["mean"].to_list() == pytest.approx([0.412, 0.515])
    assert df["change"].to_list()[1] == pytest.approx(0.25)
    _, skipped = history(store, metric="time_schedule_pods", workload="5000,profile=spread")
    assert skipped["n"].to_list() == [0, 0]
    assert skipped["problems"].to_list() == ["unsupported", "unsupported"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"metric": "NoSuchMetric"}, "no rows of metric 'NoSuchMetric' in the store (metrics: "),
    ({"workload": "("}, "not a valid regular expression"),
], ids=["unknown-metric", "bad-regex"])
def test_bad_queries(history_store, kwargs, message):
    with pytest.raises(HistoryError) as err:
        history(history_store, **kwargs)
    assert message in str(err.value)


def test_ambiguous_bucket_asks_for_one(store, tmp_path):
    path = tmp_path / "BenchmarkPerfScheduling_benchmark_misc_2025-01-01T00:00:00Z.json"
    path.write_text(json.dumps({"version": "v1", "dataItems": [
        {"data": {"Perc90": 1.0, "Perc99": 2.0}, "unit": "ms",
         "labels": {"Metric": "odd_metric", "Name": "A/b/ns"}}]}))
    ingest_paths([path], store)
    with pytest.raises(HistoryError, match="has buckets Perc90, Perc99: choose one"):
        history(store, metric="odd_metric")
    assert history(store, metric="odd_metric", bucket="Perc99")[1]["mean"].to_list() == [2.0]


# --------------------------------------------------------------------------- command


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200"}).invoke(history_command, list(args))


def test_command_prints_table(history_store, commits):
    result = invoke("--store", str(history_store))
    assert result.exit_code == 0, result.output
    assert "SchedulingThroughput Average [pods/s]" in result.output
    lines = [line for line in result.output.splitlines() if "SchedulingBasic/5000Nodes" in line]
    assert len(lines) == 3
    assert commits[0][:10] in lines[0] and "+10.0%" in lines[1] and "-13.6%" in lines[2]
    assert "2025-03-03 00:00" in lines[2]


def test_command_metric_and_workload(history_store):
    result = invoke("--store", str(history_store), "--metric", "wall_seconds", "--workload",
                    "500Nodes$")
    assert result.exit_code == 0, result.output
    assert "wall_seconds Value [s]" in result.output
    assert "5000Nodes" not in result.output and "SchedulingBasic/500Nodes" in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--workload", "nomatch"], "no SchedulingThroughput Average values for --workload"),
    (["--workload", "("], "not a valid regular expression"),
    (["--metric", "nope"], "no rows of metric 'nope'"),
    (["--last", "-1"], "-1 is not in the range x>=0"),
], ids=["nothing-matches", "bad-regex", "unknown-metric", "bad-last"])
def test_command_bad_input_exits_2(history_store, args, message):
    result = invoke("--store", str(history_store), *args)
    assert result.exit_code == 2
    assert message in result.output


def test_command_empty_store_exits_2(tmp_path):
    (tmp_path / "empty").mkdir()
    result = invoke("--store", str(tmp_path / "empty"))
    assert result.exit_code == 2
    assert f"store {tmp_path / 'empty'} holds no results yet" in result.output


def test_command_missing_store_is_named_not_read_as_empty(tmp_path):
    result = invoke("--store", str(tmp_path / "nothing-here"))
    assert result.exit_code == 2
    assert f"store {tmp_path / 'nothing-here'}: no such folder" in result.output
    assert "holds no results" not in result.output


def test_command_reads_around_a_corrupt_part_and_names_it(history_store):
    """Issue 16: a corrupt or foreign part file does not end the command: it is named on
    stderr and its rows are left out; the other parts are read."""
    good = invoke("--store", str(history_store))
    stray = history_store / "source=run" / "date=2025-01-01" / "part-stray.parquet"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"PAR1 not really")
    result = invoke("--store", str(history_store))
    assert result.exit_code == 0, result.output
    assert f"warning: {stray}: not a readable Parquet file" in result.output
    assert "its rows are left out" in result.output
    assert good.output.strip() in result.output  # the same table as without the stray part
