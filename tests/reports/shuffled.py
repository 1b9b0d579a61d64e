"""A store whose measurement order, ingest order and commit-date order all differ from git
order: five commits of a real repository (c0 ... c4, HEAD c4), measured and ingested in the
order c3, c0, c4, c1, c2, with committer dates c2 < c0 < c1 < c4 < c3.

Workloads (SchedulingThroughput Average, pods/s):

* ``Step/500Nodes``: 6 rounds per commit, 1 % noise, 800 -> 640 (-20 %) at HEAD;
* ``Flat/100Nodes``: 6 rounds per commit, 1 % noise, 400 throughout;
* ``One/Shot``: one round per commit, +-20 % steps between commits (n=1).

Only the step of ``Step/500Nodes`` at HEAD is significant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import numpy as np

from tests.reports.gitrepo import START, make_repo
from workloads.output.parquet import write_results_parquet
from workloads.result import DataItem, WorkloadResult

__all__ = ["FLAT", "MEASURED", "ONE", "ONE_VALUES", "STEP", "Shuffled", "make_shuffled"]

STEP, FLAT, ONE = "Step/500Nodes", "Flat/100Nodes", "One/Shot"
MEASURED = [3, 0, 4, 1, 2]  # the commits in the order they were measured and ingested
DATE_DAYS = [1, 2, 0, 4, 3]  # committer date of commit i: START + DATE_DAYS[i] days
ONE_VALUES = [300.0, 360.0, 290.0, 350.0, 280.0]
ROUNDS = 6


@dataclass(frozen=True)
class Shuffled:
    repo: Path
    runs: list[Path]  # one run folder per commit: runs[i] measured commit i
    commits: list[str]  # git order, oldest first


def _result(name: str, pods_s: float) -> WorkloadResult:
    test_case, workload = name.split("/")
    return WorkloadResult(
        test_case=test_case, workload=workload, topic="misc", params={}, labels=("short",),
        wall_seconds=1.0, cpu_seconds=0.5, scheduled_pods=10, attempts=10,
        data_items=[DataItem({"Average": pods_s}, "pods/s",
                             {"Name": f"{name}/namespace", "Metric": "SchedulingThroughput"})])


def make_shuffled(base: Path) -> Shuffled:
    """The repository and one schedperf run folder per commit (not ingested yet)."""
    commits = make_repo(base / "repo", 5,
                        dates=[START + timedelta(days=d) for d in DATE_DAYS])
    rng = np.random.default_rng(11)
    runs: list[Path] = [base] * 5
    for k, i in enumerate(MEASURED):
        results: list[tuple[int, WorkloadResult]] = []
        for r in range(1, ROUNDS + 1):
            step = 640.0 if i == 4 else 800.0
            results.append((r, _result(STEP, step * (1 + 0.01 * rng.standard_normal()))))
            results.append((r, _result(FLAT, 400.0 * (1 + 0.01 * rng.standard_normal()))))
        results.append((1, _result(ONE, ONE_VALUES[i])))
        folder = base / "runs" / f"measured-{k}"
        write_results_parquet(folder / "results.parquet", results,
                              {"commit": commits[i], "branch": "main", "machine": "ci"},
                              run_id=f"run-{k}", timestamp=START + timedelta(days=30 + k))
        runs[i] = folder
    return Shuffled(base / "repo", runs, commits)
