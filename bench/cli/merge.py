"""``schedperf merge RESULT_DIR... --out DIR``: one run folder from the folders of shards.

``schedperf run --shard i/n`` jobs each write a run folder holding some of the workloads;
``merge`` puts them back together so the folder looks like one ``schedperf run`` output:

* ``results.parquet``, ``placements.parquet`` and ``decisions.parquet`` (when any input has
  one): the inputs' rows concatenated with polars, in the order the folders are given, written
  with the exact pyarrow schemas ``schedperf run`` writes (docs/results-schema.md).
* DataItems JSON (``BenchmarkPerfScheduling_*.json``) and ``.dat`` progress files: copied
  byte for byte; a name taken by an earlier input gets ``_1``, ``_2``, ... before the suffix,
  as ``schedperf run`` does. So there is one DataItems file per topic, round and shard.
* Anything else (sub-folders, other files) is left out and named in the summary.

**run_id.** Rows keep the ``run_id``, ``timestamp`` and environment columns of the shard
that produced them: a merged folder holds several runs, one per shard, each with its own
machine description (CI shards run on different runners). Rewriting them to one merged id
would make the merged rows differ from the shards' rows, so ingesting a shard folder and the
merged folder would store every row twice; kept as they are, the store's row key
(``run_id``, ``round``, ``timestamp``, workload, metric, bucket, item labels) recognises them.
The commit is the same in all inputs (checked), so the merged runs group under one commit.

**Checks** (bad input, exit 2, nothing written): every input is a run folder with a
``results.parquet`` of the current schema; no folder is given twice; no two inputs hold the
same run or the same workload (shards of one selection never overlap, so an overlap means a
wrong shard spec or a folder given twice); all inputs measured the same commit.

**Atomic.** Everything is written into a temporary folder beside ``--out`` which is renamed
to ``--out`` at the end: ``--out`` appears complete or not at all. ``--out`` must not exist
or be an empty folder.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import click
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bench.selection import BadInput
from workloads.output import RESULTS_SCHEMA_VERSION, atomic_write_bytes
from workloads.output.dataitems import FILE_PREFIX
from workloads.output.parquet import (
    DECISIONS_SCHEMA,
    PLACEMENTS_SCHEMA,
    RESULTS_SCHEMA,
    STATUS_METRIC,
)

__all__ = ["MergeError", "MergeSummary", "merge", "merge_run_dirs"]

RESULTS = "results.parquet"
TABLES: dict[str, pa.Schema] = {
    RESULTS: RESULTS_SCHEMA,
    "placements.parquet": PLACEMENTS_SCHEMA,
    "decisions.parquet": DECISIONS_SCHEMA,
}
_WORKLOAD_KEY = ["topic", "test_case", "workload"]


class MergeError(Exception):
    """The inputs cannot be merged (bad input)."""


@dataclass
class MergeSummary:
    """What :func:`merge_run_dirs` wrote."""

    out: Path
    run_ids: list[str]
    workloads: int
    rows: dict[str, int]  # file name -> rows written
    copied: list[str]  # copied file names, as written
    skipped: list[Path]  # input entries left out
    statuses: Counter[str] = field(default_factory=Counter)  # per (run, round, workload)
    notes: list[str] = field(default_factory=list)


def _read_results(folder: Path) -> pl.DataFrame:
    path = folder / RESULTS
    try:
        df = pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise MergeError(f"{path}: unreadable Parquet file: {exc}") from exc
    missing = [n for n in RESULTS_SCHEMA.names if n not in df.columns]
    extra = [n for n in df.columns if n not in RESULTS_SCHEMA.names]
    if missing or extra:
        what = "; ".join(part for part in (
            "missing columns " + ", ".join(missing) if missing else "",
            "unexpected columns " + ", ".join(extra) if extra else "") if part)
        raise MergeError(f"{path}: not a schedperf results.parquet "
                         f"(schema_version {RESULTS_SCHEMA_VERSION}): {what}")
    versions = sorted(set(df["schema_version"].drop_nulls().to_list()))
    if versions and versions != [RESULTS_SCHEMA_VERSION]:
        raise MergeError(f"{path}: schema_version {versions}, this schedperf merges "
                         f"{RESULTS_SCHEMA_VERSION} only (ingest older files separately)")
    return df.select(RESULTS_SCHEMA.names)


def _check_inputs(folders: Sequence[Path], out: Path) -> list[Path]:
    if not folders:
        raise MergeError("no RESULT_DIR given")
    seen: dict[Path, Path] = {}
    for folder in folders:
        if not folder.is_dir():
            raise MergeError(f"{folder}: no such folder (expected a schedperf run output)")
        if not (folder / RESULTS).is_file():
            raise MergeError(f"{folder}: no {RESULTS} here; is it a schedperf run output "
                             "folder?")
        real = folder.resolve()
        if real in seen:
            raise MergeError(f"{folder}: given twice (also as {seen[real]})")
        seen[real] = folder
    real_out = out.resolve()
    for real, folder in seen.items():
        if real_out == real:
            raise MergeError(f"--out {out} is also an input ({folder})")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise MergeError(f"--out {out} exists and is not an empty folder")
    return list(folders)


def _check_overlaps(folders: Sequence[Path], frames: Sequence[pl.DataFrame]) -> None:
    run_owner: dict[str, Path] = {}
    workload_owner: dict[tuple[str, str, str], Path] = {}
    for folder, df in zip(folders, frames, strict=True):
        for run_id in df["run_id"].unique().sort().to_list():
            if run_id in run_owner:
                raise MergeError(f"{run_owner[run_id]} and {folder} hold the same run "
                                 f"{run_id}: give each shard's folder once")
            run_owner[run_id] = folder
        keys = df.select(_WORKLOAD_KEY).unique().sort(_WORKLOAD_KEY).rows()
        for key in keys:
            if key in workload_owner:
                topic, test_case, workload = key
                raise MergeError(f"{workload_owner[key]} and {folder} both hold workload "
                                 f"{test_case}/{workload} (topic {topic}): shards of one "
                                 "selection never overlap; check the --shard values")
            workload_owner[key] = folder
    commits: dict[str | None, Path] = {}
    for folder, df in zip(folders, frames, strict=True):
        for commit in df["commit"].unique().to_list():
            commits.setdefault(commit, folder)
    if len(commits) > 1:
        shown = ", ".join(f"{(c or 'none')[:12]} ({f})" for c, f in commits.items())
        raise MergeError(f"the inputs measured different commits: {shown}; merge shards of "
                         "one run only")


def _parquet_bytes(df: pl.DataFrame, schema: pa.Schema, source: str) -> bytes:
    try:
        table = df.to_arrow().select(schema.names).cast(schema)
    except (pa.ArrowException, KeyError) as exc:
        raise MergeError(f"{source}: columns do not match the {source} schema: {exc}") from exc
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _read_table(path: Path, schema: pa.Schema) -> pl.DataFrame:
    try:
        df = pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise MergeError(f"{path}: unreadable Parquet file: {exc}") from exc
    missing = [n for n in schema.names if n not in df.columns]
    if missing:
        raise MergeError(f"{path}: missing columns {', '.join(missing)}")
    return df.select(schema.names)


def _copy_name(name: str, taken: set[str]) -> str:
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    n = 0
    while True:
        candidate = name if n == 0 else f"{stem}_{n}{dot}{suffix}"
        if candidate not in taken:
            return candidate
        n += 1


def _is_copied(path: Path) -> bool:
    return path.is_file() and (
        (path.name.startswith(FILE_PREFIX) and path.suffix == ".json") or path.suffix == ".dat")


def _statuses(df: pl.DataFrame) -> Counter[str]:
    rows = (df.filter(pl.col("metric") == STATUS_METRIC)
            .select("run_id", "round", *_WORKLOAD_KEY, "bucket").unique())
    return Counter(rows["bucket"].to_list())


def merge_run_dirs(folders: Sequence[Path], out: Path) -> MergeSummary:
    """Merge ``schedperf run`` output folders into ``out`` (module docstring); raises
    :class:`MergeError` for bad input, leaving nothing behind."""
    folders = _check_inputs([Path(f) for f in folders], Path(out))
    frames = [_read_results(f) for f in folders]
    _check_overlaps(folders, frames)

    outputs: dict[str, bytes] = {}
    rows: dict[str, int] = {}
    notes: list[str] = []
    results = pl.concat(frames, how="vertical")
    outputs[RESULTS] = _parquet_bytes(results, RESULTS_SCHEMA, RESULTS)
    rows[RESULTS] = results.height
    for name, schema in TABLES.items():
        if name == RESULTS:
            continue
        present = [f / name for f in folders if (f / name).is_file()]
        if not present:
            continue
        if len(present) < len(folders):
            notes.append(f"{name} is in {len(present)} of {len(folders)} inputs; merged "
                         "from those")
        table = pl.concat([_read_table(p, schema) for p in present], how="vertical")
        outputs[name] = _parquet_bytes(table, schema, name)
        rows[name] = table.height

    copies: list[tuple[str, Path]] = []
    skipped: list[Path] = []
    taken = set(outputs)
    for folder in folders:
        for entry in sorted(folder.iterdir()):
            if entry.name in TABLES:
                continue
            if _is_copied(entry):
                name = _copy_name(entry.name, taken)
                taken.add(name)
                copies.append((name, entry))
            else:
                skipped.append(entry)

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.merge-", suffix=".tmp", dir=out.parent))
    try:
        for name, data in outputs.items():
            atomic_write_bytes(tmp / name, data)
        for name, source in copies:
            atomic_write_bytes(tmp / name, source.read_bytes())
        os.chmod(tmp, 0o755)  # mkdtemp makes 0700; results are for sharing
        os.replace(tmp, out)  # replaces an empty folder; fails on a non-empty one
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
        raise
    run_ids = [r for df in frames for r in df["run_id"].unique().sort().to_list()]
    return MergeSummary(out=out, run_ids=run_ids,
                        workloads=results.select(_WORKLOAD_KEY).unique().height, rows=rows,
                        copied=[name for name, _ in copies], skipped=skipped,
                        statuses=_statuses(results), notes=notes)


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, metavar="RESULT_DIR...",
                type=click.Path(path_type=Path))
@click.option("--out", "out_dir", required=True, metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="The merged folder; must not exist or be empty.")
def merge(run_dirs: tuple[Path, ...], out_dir: Path) -> None:
    """Merge the output folders of sharded `schedperf run`s into one run folder.

    results.parquet, placements.parquet and decisions.parquet are concatenated (rows keep
    their shard's run_id); DataItems JSON and .dat files are copied. Inputs must not
    overlap and must have measured the same commit.

    Exit status: 0 merged, 2 bad input (nothing written).
    """
    try:
        summary = merge_run_dirs(run_dirs, out_dir)
    except MergeError as exc:
        raise BadInput(str(exc)) from exc
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(summary.statuses.items()))
    tables = ", ".join(f"{name} {n} rows" for name, n in summary.rows.items())
    click.echo(f"merged {len(run_dirs)} folders ({len(summary.run_ids)} runs) into "
               f"{summary.out}: {summary.workloads} workloads"
               + (f" ({statuses})" if statuses else ""))
    click.echo(f"  {tables}; {len(summary.copied)} DataItems/.dat files copied")
    for note in summary.notes:
        click.echo(f"  note: {note}")
    if summary.skipped:
        click.echo("  left out: " + ", ".join(str(p) for p in summary.skipped))
