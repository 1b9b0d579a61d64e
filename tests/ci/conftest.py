"""Fixtures for the CI tests: a tiny catalog, real `schedperf run` folders, git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench.cli.main import cli
from tests.builders import tiny_config

ROOT = Path(__file__).resolve().parents[2]

# Four workloads in two topics, a few pods each: enough to shard and merge for real.
TINY = tiny_config(("5Nodes", [], 5, 5, 20), ("10Nodes", [], 10, 2, 30))


def write_tiny_catalog(folder: Path) -> Path:
    for topic, name in (("misc", "Tiny"), ("affinity", "Small")):
        (folder / topic).mkdir(parents=True, exist_ok=True)
        (folder / topic / "performance-config.yaml").write_text(
            TINY.replace("name: Tiny", f"name: {name}"))
    return folder


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="session")
def tiny_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_catalog(tmp_path_factory.mktemp("catalog"))


@pytest.fixture(scope="session")
def shard_runs(tiny_catalog: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two real run folders holding disjoint workloads, as two shards would."""
    base = tmp_path_factory.mktemp("runs")
    folders = []
    for i, regex in enumerate(("^Tiny/", "^Small/"), start=1):
        out = base / f"results-{i}"
        result = invoke("run", "--config", str(tiny_catalog), "--name", regex,
                        "--out", str(out))
        assert result.exit_code == 0, result.output
        folders.append(out)
    return folders


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True)
    return proc.stdout.strip()


@pytest.fixture
def git_origin(tmp_path: Path) -> tuple[Path, Path]:
    """(bare origin, clone of it with three commits on main)."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "--quiet", "--bare", "-b", "main", str(origin)], check=True)
    clone = tmp_path / "work"
    subprocess.run(["git", "clone", "--quiet", str(origin), str(clone)], check=True,
                   capture_output=True)
    git(clone, "config", "user.name", "Test")
    git(clone, "config", "user.email", "test@example.invalid")
    git(clone, "checkout", "--quiet", "-b", "main")
    for n in range(3):
        (clone / "f.txt").write_text(f"{n}\n")
        git(clone, "add", "f.txt")
        git(clone, "commit", "--quiet", "-m", f"commit {n}")
    git(clone, "push", "--quiet", "origin", "main")
    return origin, clone
