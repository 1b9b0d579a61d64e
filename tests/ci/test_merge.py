"""schedperf merge: real `schedperf run` folders of disjoint workloads put back together."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import click
import polars as pl
import pyarrow.parquet as pq
import pytest

from bench.cli.merge import MergeError, merge, merge_run_dirs
from reports.store import ingest_paths, scan_store
from tests.ci.conftest import invoke
from workloads.output.parquet import DECISIONS_SCHEMA, PLACEMENTS_SCHEMA, RESULTS_SCHEMA

STATUS = "workload_status"


def run_merge(*args: str):
    """`schedperf merge` through click (registered in main.py by the lead, or standalone)."""
    from click.testing import CliRunner

    from bench.cli.main import cli

    if "merge" in cli.commands:
        return invoke("merge", *args)
    return CliRunner().invoke(merge, list(args), catch_exceptions=False)


def _workloads(folder: Path) -> set[tuple[str, str]]:
    df = pl.read_parquet(folder / "results.parquet").filter(pl.col("metric") == STATUS)
    return set(df.select("test_case", "workload").rows())


def test_merge_concatenates_tables_and_copies_files(shard_runs: list[Path],
                                                    tmp_path: Path) -> None:
    out = tmp_path / "merged"
    result = run_merge(*map(str, shard_runs), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "merged 2 folders (2 runs)" in result.output
    assert "4 workloads (4 ok)" in result.output

    for name, schema in (("results.parquet", RESULTS_SCHEMA),
                         ("placements.parquet", PLACEMENTS_SCHEMA)):
        merged = pq.read_table(out / name)
        assert merged.schema.equals(schema), name  # the exact schema `run` writes
        parts = [pq.read_table(f / name) for f in shard_runs]
        assert merged.num_rows == sum(p.num_rows for p in parts)
        assert merged.to_pylist() == [row for p in parts for row in p.to_pylist()]
    assert _workloads(out) == _workloads(shard_runs[0]) | _workloads(shard_runs[1])

    # rows keep their shard's run_id
    runs = pl.read_parquet(out / "results.parquet")["run_id"].unique().sort().to_list()
    shard_ids = sorted(pl.read_parquet(f / "results.parquet")["run_id"][0] for f in shard_runs)
    assert runs == shard_ids

    # every DataItems and .dat file, byte for byte, none lost to a name clash
    sources = sorted(p.read_bytes() for f in shard_runs for p in f.iterdir()
                     if p.suffix in (".json", ".dat"))
    copied = sorted(p.read_bytes() for p in out.iterdir() if p.suffix in (".json", ".dat"))
    assert copied == sources
    assert len([p for p in out.iterdir() if p.name.startswith("BenchmarkPerfScheduling_")]) == 2
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp") or p.name.startswith(".")]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".merged")]
    json.loads(next(out.glob("BenchmarkPerfScheduling_*.json")).read_text())


def test_name_clashes_get_a_counter(shard_runs: list[Path], tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(shard_runs[0], a)
    shutil.copytree(shard_runs[1], b)
    clash = next(a.glob("BenchmarkPerfScheduling_*.json")).name
    for old in b.glob("BenchmarkPerfScheduling_*.json"):
        old.rename(b / clash)
    summary = merge_run_dirs([a, b], tmp_path / "out")
    stem = clash.removesuffix(".json")
    assert {clash, f"{stem}_1.json"} <= set(summary.copied)
    assert (tmp_path / "out" / f"{stem}_1.json").read_bytes() == (b / clash).read_bytes()


def test_merged_folder_ingests_and_is_idempotent_with_its_shards(shard_runs: list[Path],
                                                                  tmp_path: Path) -> None:
    out = tmp_path / "merged"
    merge_run_dirs(shard_runs, out)
    store = tmp_path / "store"
    report = ingest_paths([out], store)
    assert not report.errors
    rows = scan_store(store).collect()
    assert rows.height == pl.read_parquet(out / "results.parquet").height
    # the shards' own folders add nothing: same run ids, same rows
    again = ingest_paths(shard_runs, store)
    assert not again.errors and again.rows_new == 0
    assert scan_store(store).collect().height == rows.height


def test_decisions_are_merged_from_the_inputs_that_have_them(tiny_catalog: Path,
                                                             shard_runs: list[Path],
                                                             tmp_path: Path) -> None:
    with_decisions = tmp_path / "d"
    result = invoke("run", "--config", str(tiny_catalog), "--name", "^Tiny/5Nodes$",
                    "--record-decisions", "--out", str(with_decisions))
    assert result.exit_code == 0, result.output
    summary = merge_run_dirs([with_decisions, shard_runs[1]], tmp_path / "out")
    decisions = pq.read_table(tmp_path / "out" / "decisions.parquet")
    assert decisions.schema.equals(DECISIONS_SCHEMA)
    assert decisions.num_rows == pq.read_table(with_decisions / "decisions.parquet").num_rows > 0
    assert any("decisions.parquet is in 1 of 2 inputs" in n for n in summary.notes)


def test_an_empty_shard_merges(tiny_catalog: Path, shard_runs: list[Path],
                               tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    shutil.copytree(shard_runs[0], empty)
    table = pq.read_table(empty / "results.parquet").slice(0, 0)
    pq.write_table(table, empty / "results.parquet")
    for p in empty.glob("*.json"):
        p.unlink()
    summary = merge_run_dirs([shard_runs[1], empty], tmp_path / "out")
    assert summary.workloads == 2
    assert _workloads(tmp_path / "out") == _workloads(shard_runs[1])


def test_other_entries_are_left_out_and_named(shard_runs: list[Path], tmp_path: Path) -> None:
    a = tmp_path / "a"
    shutil.copytree(shard_runs[0], a)
    (a / "notes.txt").write_text("hello")
    (a / "profiles").mkdir()
    out = tmp_path / "out"
    result = run_merge(str(a), str(shard_runs[1]), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "left out:" in result.output and "notes.txt" in result.output
    assert not (out / "notes.txt").exists() and not (out / "profiles").exists()


def test_out_may_be_an_existing_empty_folder(shard_runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    merge_run_dirs(shard_runs, out)
    assert (out / "results.parquet").is_file()
    assert oct(out.stat().st_mode & 0o777) == oct(0o755)


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _set_column(folder: Path, column: str, value: str) -> None:
    df = pl.read_parquet(folder / "results.parquet").with_columns(pl.lit(value).alias(column))
    table = df.to_arrow().cast(RESULTS_SCHEMA)
    pq.write_table(table, folder / "results.parquet")


def _bad_inputs(case: str, runs: list[Path], tmp: Path) -> tuple[list[Path], Path]:
    out = tmp / "out"
    if case == "missing-folder":
        return [runs[0], tmp / "nope"], out
    if case == "not-a-run-folder":
        (tmp / "plain").mkdir()
        return [runs[0], tmp / "plain"], out
    if case == "given-twice":
        return [runs[0], runs[1], runs[0]], out
    if case == "same-run-copied":
        return [runs[0], _copy(runs[0], tmp / "copy")], out
    if case == "overlapping-workloads":
        other = _copy(runs[0], tmp / "other")
        _set_column(other, "run_id", "20990101T000000Z-deadbeef")
        return [runs[0], other], out
    if case == "different-commits":
        other = _copy(runs[1], tmp / "other")
        _set_column(other, "commit", "0" * 40)
        return [runs[0], other], out
    if case == "not-parquet":
        other = _copy(runs[1], tmp / "other")
        (other / "results.parquet").write_text("not parquet")
        return [runs[0], other], out
    if case == "other-schema":
        other = _copy(runs[1], tmp / "other")
        pq.write_table(pq.read_table(other / "placements.parquet"), other / "results.parquet")
        return [runs[0], other], out
    if case == "out-not-empty":
        out.mkdir()
        (out / "x").write_text("x")
        return list(runs), out
    if case == "out-is-input":
        return list(runs), runs[0]
    raise AssertionError(case)


@pytest.mark.parametrize(("case", "message"), [
    ("missing-folder", "no such folder"),
    ("not-a-run-folder", "no results.parquet here"),
    ("given-twice", "given twice"),
    ("same-run-copied", "hold the same run"),
    ("overlapping-workloads", "both hold workload"),
    ("different-commits", "different commits"),
    ("not-parquet", "unreadable Parquet file"),
    ("other-schema", "not a schedperf results.parquet"),
    ("out-not-empty", "is not an empty folder"),
    ("out-is-input", "is also an input"),
], ids=lambda v: v if " " not in v and "." not in v else "message")
def test_bad_input_exits_2_and_writes_nothing(shard_runs: list[Path], tmp_path: Path,
                                              case: str, message: str) -> None:
    inputs, out = _bad_inputs(case, shard_runs, tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(MergeError, match=message):
        merge_run_dirs(inputs, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    if case not in ("out-not-empty", "out-is-input"):
        assert not out.exists()
    result = run_merge(*map(str, inputs), "--out", str(out))
    assert result.exit_code == 2
    assert message in result.output


def test_no_input_is_a_usage_error(tmp_path: Path) -> None:
    result = run_merge("--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert not (tmp_path / "out").exists()


def test_a_failure_while_writing_leaves_nothing(shard_runs: list[Path], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def failing_replace(src: os.PathLike, dst: os.PathLike) -> None:
        calls.append(dst)
        raise OSError("disk full")

    import bench.cli.merge as merge_module

    monkeypatch.setattr(merge_module.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        merge_run_dirs(shard_runs, tmp_path / "out")
    assert calls
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_merge_help_names_the_exit_codes() -> None:
    assert isinstance(merge, click.Command)
    result = run_merge("--help")
    assert result.exit_code == 0
    assert "2 bad input" in result.output
