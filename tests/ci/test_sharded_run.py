"""The nightly flow end to end: `schedperf run --shard i/n` jobs, then `schedperf merge`."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.ci.conftest import invoke


def _workloads(folder: Path) -> list[tuple[str, str]]:
    df = pl.read_parquet(folder / "results.parquet")
    return sorted(df.filter(pl.col("metric") == "workload_status")
                  .select("topic", "test_case", "workload").rows())


@pytest.mark.parametrize("n", [2, 3])
def test_shards_then_merge_cover_the_selection_once(tiny_catalog: Path, tmp_path: Path,
                                                    n: int) -> None:
    everything = tmp_path / "all"
    assert invoke("run", "--config", str(tiny_catalog), "--out", str(everything)).exit_code == 0
    folders = []
    for i in range(1, n + 1):
        out = tmp_path / f"results-{i}"
        result = invoke("run", "--config", str(tiny_catalog), "--shard", f"{i}/{n}",
                        "--out", str(out))
        assert result.exit_code == 0, result.output
        assert f"shard {i}/{n}: " in result.output and "of 4 selected workloads" in result.output
        folders.append(out)
    assert sum(len(_workloads(f)) for f in folders) == 4
    merged = tmp_path / "merged"
    result = invoke("merge", *map(str, folders), "--out", str(merged))
    assert result.exit_code == 0, result.output
    assert _workloads(merged) == _workloads(everything)


def test_more_shards_than_workloads_still_writes_a_run_folder(tiny_catalog: Path,
                                                              tmp_path: Path) -> None:
    out = tmp_path / "results-6"
    result = invoke("run", "--config", str(tiny_catalog), "--shard", "6/6", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "shard 6/6: 0 of 4" in result.output
    assert _workloads(out) == []


@pytest.mark.parametrize(("spec", "message"), [
    ("0/4", "between 1 and 4"), ("5/4", "between 1 and 4"), ("x", "expected I/N"),
], ids=["zero", "past-the-end", "word"])
def test_a_bad_shard_is_a_usage_error(tiny_catalog: Path, tmp_path: Path, spec: str,
                                      message: str) -> None:
    result = invoke("run", "--config", str(tiny_catalog), "--shard", spec,
                    "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "o").exists()
