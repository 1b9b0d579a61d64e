"""Shared inputs for the results-store tests: the frozen foreign-format fixtures in
``fixtures/`` and a real ``schedperf run`` output folder made once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from bench.cli.run import run
from tests.builders import tiny_config

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ASV_RESULTS = FIXTURES / "asv" / "results"
ASV_FILE = ASV_RESULTS / "ci-runner" / "4f2a9c1e-virtualenv-py3.11-numpy.json"
ASV_FILE_2 = ASV_RESULTS / "ci-runner" / "9b3c5d7e-virtualenv-py3.11-numpy.json"
PYTEST_FILE = FIXTURES / "pytest-benchmark" / "bench-4f2a9c1e.json"
DATAITEMS_DIR = FIXTURES / "dataitems"
DATAITEMS_FILE = DATAITEMS_DIR / "BenchmarkPerfScheduling_benchmark_misc_2025-04-23T11:53:49Z.json"
DATAITEMS_OLD = DATAITEMS_DIR / "BenchmarkPerfScheduling_benchmark_2023-06-01T10:00:00Z.json"

# a tiny performance-config of our own: two workloads, a few pods each
TINY_CONFIG = tiny_config(("4Nodes", ["integration-test", "short"], 4, 2, 12),
                          ("8Nodes", ["integration-test"], 8, 4, 16))


@pytest.fixture(scope="session")
def run_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``schedperf run --repeat 2`` output folder (results.parquet, placements, DataItems)."""
    base = tmp_path_factory.mktemp("schedperf-run")
    (base / "configs" / "misc").mkdir(parents=True)
    (base / "configs" / "misc" / "performance-config.yaml").write_text(TINY_CONFIG)
    out = base / "out"
    result = CliRunner().invoke(run, ["--config", str(base / "configs"), "--out", str(out),
                                      "--repeat", "2", "--record-decisions"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def run_dir(run_output: Path, tmp_path: Path) -> Path:
    """A private copy of the run output folder (tests may modify it)."""
    return Path(shutil.copytree(run_output, tmp_path / "run"))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


def read_store(store: Path) -> pl.DataFrame:
    """Every row of a store, read the documented way."""
    return pl.read_parquet(f"{store}/**/*.parquet", hive_partitioning=False)
