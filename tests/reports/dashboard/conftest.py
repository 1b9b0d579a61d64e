"""A results store made the way users make one: ``schedperf run``-style results.parquet files
(workloads.output.write_results_parquet) for sixteen commits of a real git repository, ingested
with the store's own ingest, plus the frozen asv fixtures. One workload steps down by 20 % at
commit 8, one is uncommon, one is named ``<script>alert(1)</script>``; the repository tags
commit 2 ``v0.1.0`` (a release) and commit 4 ``experiment`` (not a release).

The site built from it is made once per session (matplotlib takes a few seconds).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from reports.dashboard import build_site
from reports.store import ingest_paths
from tests.reports.store.conftest import ASV_RESULTS
from workloads.output.parquet import write_results_parquet
from workloads.result import DataItem, WorkloadResult

SCRIPT = "<script>alert(1)</script>"
COMMITS = 16
STEP_AT = 8  # first commit of the lower level
ROUNDS = 5
START = datetime(2025, 3, 1, tzinfo=UTC)
RELEASE_AT = 2
# (test case, workload, topic, labels, pods/s before, after the step)
WORKLOADS = [
    ("Basic", "500Nodes", "misc", ("performance",), 800.0, 640.0),
    ("Affinity", "100Nodes", "affinity", ("performance", "short"), 400.0, 400.0),
    ("Rare", "Churn", "uncommon", ("uncommon",), 300.0, 300.0),
    ("Evil", SCRIPT, "misc", ("performance",), 100.0, 100.0),
]
STEP_NAME = "Basic/500Nodes"
UNCOMMON_NAME = "Rare/Churn"
SCRIPT_NAME = f"Evil/{SCRIPT}"


@dataclass(frozen=True)
class Project:
    store: Path
    repo: Path
    commits: list[str]  # oldest first


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def make_repo(repo: Path, n: int = COMMITS, tags: dict[str, int] | None = None) -> list[str]:
    """A repository of ``n`` empty commits (oldest first) with ``tags`` {name: index}."""
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    commits = []
    for i in range(n):
        when = (START + timedelta(days=i)).isoformat()
        _git(repo, "commit", "-q", "--allow-empty", "-m", f"c{i}", f"--date={when}")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    for name, index in (tags or {}).items():
        _git(repo, "tag", "-a", "-m", name, name, commits[index])
    return commits


def _result(test_case: str, workload: str, topic: str, labels: tuple[str, ...],
            pods_s: float, cpu: float) -> WorkloadResult:
    return WorkloadResult(
        test_case=test_case, workload=workload, topic=topic, params={"nodes": 5},
        labels=labels, wall_seconds=2.0, cpu_seconds=cpu, scheduled_pods=10, attempts=12,
        data_items=[DataItem({"Average": pods_s, "Perc50": pods_s + 1}, "pods/s",
                             {"Name": f"{test_case}/{workload}/namespace-1",
                              "Metric": "SchedulingThroughput"})])


def write_runs(root: Path, commits: list[str], *, rounds: int = ROUNDS,
               seed: int = 7) -> Path:
    """One results.parquet per commit (``rounds`` rounds each, 1 % noise)."""
    rng = np.random.default_rng(seed)
    for i, commit in enumerate(commits):
        results = []
        for r in range(1, rounds + 1):
            for tc, w, topic, labels, before, after in WORKLOADS:
                level = before if i < STEP_AT else after
                noise = 1 + 0.01 * rng.standard_normal()
                results.append((r, _result(tc, w, topic, labels, level * noise,
                                           0.5 * (1 + 0.01 * rng.standard_normal()))))
        env = {"commit": commit, "branch": "main", "machine": "ci"}
        write_results_parquet(root / f"run{i:02d}" / "results.parquet", results, env,
                              run_id=f"run-{i:02d}", timestamp=START + timedelta(days=i))
    return root


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    base = tmp_path_factory.mktemp("dashboard-project")
    commits = make_repo(base / "repo", tags={"v0.1.0": RELEASE_AT, "experiment": 4})
    store = base / "store"
    report = ingest_paths([write_runs(base / "runs", commits), ASV_RESULTS], store)
    assert not report.errors, [(o.path, o.message) for o in report.errors]
    return Project(store=store, repo=base / "repo", commits=commits)


@pytest.fixture(scope="session")
def one_commit(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The four run workloads at one commit of a repository without tags (quick to build:
    no history plots)."""
    base = tmp_path_factory.mktemp("one-commit")
    commits = make_repo(base / "repo", n=1)
    store = base / "store"
    assert not ingest_paths([write_runs(base / "runs", commits)], store).errors
    return Project(store=store, repo=base / "repo", commits=commits)


@pytest.fixture(scope="session")
def site(project: Project, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of the project store, compared against its release (built once)."""
    out = tmp_path_factory.mktemp("dashboard-site") / "site"
    build_site(project.store, out, repo=project.repo, title="Nightly <perf> & co")
    return out


def html_pages(site: Path) -> list[Path]:
    """The dashboard's own pages (not the copied asv site)."""
    return sorted(p for p in site.rglob("*.html") if "asv" not in p.relative_to(site).parts)
