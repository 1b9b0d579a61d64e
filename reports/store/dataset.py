"""The store's Parquet dataset: ``<store>/source=<kind>/date=<YYYY-MM-DD>/part-<uuid>.parquet``.

``date`` is the UTC day of the rows' ``timestamp`` (the day of writing for rows without one).
The folder names are Hive-style, so ``pl.scan_parquet(store)`` adds ``date`` as a column and
prunes on it; ``pl.scan_parquet(f"{store}/**/*.parquet")`` reads the files' own columns
(``source`` is one of them). Parts are written atomically (temporary file + ``os.replace``,
the temporary name ends in ``.tmp``, so no reader ever sees a partial ``*.parquet``).
"""

from __future__ import annotations

import contextlib
import io
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reports.store.schema import STORE_SCHEMA, polars_schema
from scheduler_core.inputfile import InputFileError, check_file
from workloads.output.dataitems import atomic_write_bytes

__all__ = ["PART_GLOB", "part_problem", "partition_keys", "remove_stale_temp_files",
           "scan_store", "split_partitions", "store_files", "store_folder_problem",
           "unreadable_parts", "write_parts"]

PART_GLOB = "**/*.parquet"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SORT = [("metric", "ascending"), ("test_case", "ascending"), ("workload", "ascending"),
         ("timestamp", "ascending")]


def store_folder_problem(store: Path) -> str | None:
    """Why ``store`` is no store to read from: it does not exist (a missing store is an
    error for the readers, never an empty one: a mistyped ``--store`` must not read as "no
    results"), or it is not a folder. None for a folder, even one holding no results yet
    (an empty store; the readers say so). ``schedperf ingest`` creates a missing store."""
    if not store.exists():
        return "no such folder (create it with `schedperf ingest PATH --store DIR`)"
    if not store.is_dir():
        return "not a folder"
    return None


def store_files(store: Path) -> list[Path]:
    """The data files of a store (sorted)."""
    return sorted(p for p in store.glob(PART_GLOB) if not p.name.startswith("."))


_PART_CHECKS: dict[tuple[str, int, int], str | None] = {}  # (path, size, mtime) -> problem


def part_problem(path: Path) -> str | None:
    """Why a data file cannot be read (not a regular file, no valid Parquet footer), or None.
    Only the footer is read; the answer is kept while the file's size and mtime stay."""
    try:
        st = path.stat()
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _PART_CHECKS:
        try:
            check_file(path, what="a Parquet data file", limit=0)
            pq.read_metadata(path)
            problem = None
        except InputFileError as exc:
            problem = exc.problem
        except Exception as exc:  # pyarrow raises several kinds for a corrupt file
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            problem = f"not a readable Parquet file: {first}"
        _PART_CHECKS[key] = problem
    return _PART_CHECKS[key]


def unreadable_parts(store: Path | str) -> list[tuple[Path, str]]:
    """The data files :func:`scan_store` leaves out, with why (a corrupt or truncated part,
    something that is not a file): commands name them and read around them."""
    out = []
    for path in store_files(Path(store)):
        problem = part_problem(path)
        if problem is not None:
            out.append((path, problem))
    return out


def scan_store(store: Path | str) -> pl.LazyFrame:
    """A lazy frame over every row of the store, in the store schema (an empty frame when
    the store has no data yet). Columns a part lacks (added by a later results schema
    version, or ``commit_date``/``commit_parents`` in parts written before they existed)
    read as null. A part whose Parquet footer cannot be read is left out
    (:func:`unreadable_parts` names it)."""
    store = Path(store)
    files = [p for p in store_files(store) if part_problem(p) is None]
    if not files:
        return pl.LazyFrame(schema=polars_schema())
    return pl.scan_parquet([str(p) for p in files], hive_partitioning=False,
                           schema=polars_schema(), missing_columns="insert")


def _parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


_US_PER_DAY = 86_400_000_000


def partition_keys(table: pa.Table) -> tuple[list[str], np.ndarray]:
    """(partition names, partition index of every row): the (source, UTC day) partitions
    ``source=<kind>/date=<YYYY-MM-DD>`` of a store table's rows."""
    now_us = (datetime.now(UTC) - _EPOCH) // timedelta(microseconds=1)
    micros = pc.fill_null(table["timestamp"].cast(pa.int64()), now_us)
    days = np.floor_divide(micros.to_numpy(), _US_PER_DAY)
    sources = pc.fill_null(table["source"], "unknown").combine_chunks().dictionary_encode()
    codes = sources.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    combined = codes * 10_000_000 + (days + 5_000_000)
    uniques, index = np.unique(combined, return_inverse=True)
    names = []
    for key in uniques.tolist():
        source = sources.dictionary[key // 10_000_000].as_py()
        day = _EPOCH + timedelta(days=key % 10_000_000 - 5_000_000)
        names.append(f"source={source}/date={day:%Y-%m-%d}")
    return names, index


def split_partitions(table: pa.Table) -> dict[str, pa.Table]:
    """A store table's rows by partition name (``source=<kind>/date=<YYYY-MM-DD>``)."""
    names, index = partition_keys(table)
    if len(names) == 1:
        return {names[0]: table}
    order = np.argsort(index, kind="stable")
    bounds = np.searchsorted(index[order], np.arange(len(names) + 1))
    return {name: table.take(pa.array(order[bounds[i]:bounds[i + 1]]))
            for i, name in enumerate(names)}


def write_parts(store: Path, tables: list[pa.Table]) -> dict[str, str]:
    """Write the rows of ``tables`` (store schema) as one new part per partition; returns
    {partition name: part path relative to ``store``}."""
    groups: dict[str, list[pa.Table]] = {}
    for table in tables:
        if not table.schema.equals(STORE_SCHEMA):
            raise ValueError(f"not the store schema:\n{table.schema}")
        if table.num_rows:
            for name, rows in split_partitions(table).items():
                groups.setdefault(name, []).append(rows)
    written = {}
    for name, parts in sorted(groups.items()):
        table = pa.concat_tables(parts).combine_chunks().sort_by(_SORT)
        rel = f"{name}/part-{uuid.uuid4().hex}.parquet"
        atomic_write_bytes(store / rel, _parquet_bytes(table))
        written[name] = rel
    return written


def remove_stale_temp_files(store: Path) -> int:
    """Delete temporary files a killed writer left behind (call with the store locked)."""
    removed = 0
    for tmp in store.rglob(".*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed += 1
    return removed
