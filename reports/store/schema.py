"""The store's one schema: the columns of ``results.parquet`` (``workloads.output.parquet``,
schema_version ``RESULTS_SCHEMA_VERSION``) followed by the store columns:

    source          what the rows were read from: ``run`` (a ``schedperf run`` folder or its
                    results.parquet), ``asv``, ``pytest-benchmark``, ``dataitems``
    source_sha256   sha256 of the ingested file's contents (the bookkeeping key)
    commit_date     the commit's committer date (UTC); null: unknown
    commit_parents  the commit's parents (full hashes, first parent first; empty for a root
                    commit); null: unknown

A results.parquet therefore ingests losslessly: its columns are kept as they are. Every
``*.parquet`` file written under a store has exactly :data:`STORE_SCHEMA`; parts written
before ``commit_date``/``commit_parents`` existed lack those two columns (read them with
:func:`reports.store.scan_store`, which fills them with null: unknown).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from workloads.output.parquet import RESULTS_SCHEMA, RESULTS_SCHEMA_VERSION
from workloads.result import ENGINE_CORE

__all__ = [
    "DEFAULT_STORE",
    "KEY_COLUMNS",
    "OPTIONAL_FIELDS",
    "RESULTS_SCHEMA",
    "RESULTS_SCHEMA_VERSION",
    "SOURCES",
    "SOURCE_ASV",
    "SOURCE_DATAITEMS",
    "SOURCE_PYTEST",
    "SOURCE_RUN",
    "STORE_FIELDS",
    "STORE_SCHEMA",
    "CommitInfo",
    "core_engine",
    "polars_schema",
    "store_table",
    "table_from_rows",
    "with_commit_info",
]

DEFAULT_STORE = Path(".schedperf/store")

SOURCE_RUN = "run"
SOURCE_ASV = "asv"
SOURCE_PYTEST = "pytest-benchmark"
SOURCE_DATAITEMS = "dataitems"
SOURCES = (SOURCE_RUN, SOURCE_ASV, SOURCE_PYTEST, SOURCE_DATAITEMS)

STORE_FIELDS: list[tuple[str, pa.DataType]] = [
    ("source", pa.string()),
    ("source_sha256", pa.string()),
    ("commit_date", pa.timestamp("us", tz="UTC")),
    ("commit_parents", pa.list_(pa.string())),
]
# the store columns that parts written by older versions may lack (read as null: unknown)
OPTIONAL_FIELDS = ("commit_date", "commit_parents")
# (committer date or None, parents or None) of one commit; None: unknown
CommitInfo = tuple[datetime | None, tuple[str, ...] | None]
STORE_SCHEMA = pa.schema([*RESULTS_SCHEMA, *STORE_FIELDS])

# What identifies one measured value: a row of a new file whose key is already in the store
# (same run, round, time, workload, metric, bucket, item labels, engine and its GOMAXPROCS;
# a null engine, in parts written before schema_version 3, is scheduler_core's) is not added
# again. This is
# what makes a re-ingest after a crash (data written, bookkeeping not) add nothing, and a
# results.parquet ingested mid-run and again at the end add only the new rounds.
KEY_COLUMNS = ("run_id", "round", "timestamp", "test_case", "workload", "metric", "bucket",
               "item_labels", "engine", "engine_gomaxprocs")


def core_engine() -> pl.Expr:
    """True for the rows of scheduler_core's runs: ``engine`` is ``schedperf-core``, or null
    (rows written before results schema_version 3, and asv / pytest-benchmark / DataItems
    rows). The reports and the dashboard's histories read these; rows of the kube-scheduler
    engine are a comparison, not a history of the code under test."""
    return pl.col("engine").fill_null(ENGINE_CORE) == ENGINE_CORE


def polars_schema() -> pl.Schema:
    """:data:`STORE_SCHEMA` as a polars schema (for scanning an empty store)."""
    return pl.Schema(pl.from_arrow(STORE_SCHEMA.empty_table()).schema)


def _with_source(table: pa.Table, source: str, sha256: str) -> pa.Table:
    n = table.num_rows
    table = table.append_column("source", pa.array([source] * n, pa.string()))
    table = table.append_column("source_sha256", pa.array([sha256] * n, pa.string()))
    for name, kind in STORE_FIELDS[2:]:
        table = table.append_column(name, pa.nulls(n, kind))
    return table


def with_commit_info(table: pa.Table, info: Mapping[str, CommitInfo]) -> pa.Table:
    """``table`` (store schema) with ``commit_date``/``commit_parents`` set from ``info``
    ({commit: (date, parents)}) for the rows of those commits; a None in ``info`` keeps the
    row's value."""
    if not info or table.num_rows == 0:
        return table
    commits = table["commit"].to_pylist()
    columns = {}
    for k, name in enumerate(("commit_date", "commit_parents")):
        old = table[name].to_pylist()
        new = []
        for c, v in zip(commits, old, strict=True):
            known = info.get(c) if c is not None else None
            value = known[k] if known is not None else None
            if value is None:
                new.append(v)
            else:
                new.append(list(value) if isinstance(value, tuple) else value)
        columns[name] = pa.array(new, STORE_SCHEMA.field(name).type)
    for name, column in columns.items():
        table = table.set_column(table.schema.get_field_index(name), name, column)
    return table


def store_table(results: pa.Table, *, source: str, sha256: str) -> pa.Table:
    """A table with exactly the columns of :data:`RESULTS_SCHEMA` (any order) as a store
    table: the results columns unchanged, then ``source`` and ``source_sha256``."""
    results = results.select(RESULTS_SCHEMA.names).cast(RESULTS_SCHEMA)
    return _with_source(results, source, sha256).replace_schema_metadata(None)


def table_from_rows(rows: Iterable[Mapping[str, Any]], *, source: str,
                    sha256: str) -> pa.Table:
    """Store table from row dicts keyed by results columns (plus, optionally,
    ``commit_date`` and ``commit_parents``); missing columns are null and ``schema_version``
    is :data:`RESULTS_SCHEMA_VERSION`."""
    rows = list(rows)
    full = [{**r, "schema_version": RESULTS_SCHEMA_VERSION} for r in rows]
    table = _with_source(pa.Table.from_pylist(full, schema=RESULTS_SCHEMA), source, sha256)
    for name in OPTIONAL_FIELDS:
        if any(r.get(name) is not None for r in rows):
            column = pa.array([r.get(name) for r in rows], STORE_SCHEMA.field(name).type)
            table = table.set_column(table.schema.get_field_index(name), name, column)
    return table
