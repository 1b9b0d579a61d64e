"""The store's one schema: the columns of ``results.parquet`` (``bench.results.parquet``,
schema_version ``RESULTS_SCHEMA_VERSION``) followed by two store columns:

    source          what the rows were read from: ``run`` (a ``schedperf run`` folder or its
                    results.parquet), ``asv``, ``pytest-benchmark``, ``dataitems``
    source_sha256   sha256 of the ingested file's contents (the bookkeeping key)

A results.parquet therefore ingests losslessly: its columns are kept as they are. Every
``*.parquet`` file under a store has exactly :data:`STORE_SCHEMA`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from bench.results.parquet import RESULTS_SCHEMA, RESULTS_SCHEMA_VERSION

__all__ = [
    "DEFAULT_STORE",
    "KEY_COLUMNS",
    "RESULTS_SCHEMA",
    "RESULTS_SCHEMA_VERSION",
    "SOURCES",
    "SOURCE_ASV",
    "SOURCE_DATAITEMS",
    "SOURCE_PYTEST",
    "SOURCE_RUN",
    "STORE_FIELDS",
    "STORE_SCHEMA",
    "polars_schema",
    "store_table",
    "table_from_rows",
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
]
STORE_SCHEMA = pa.schema([*RESULTS_SCHEMA, *STORE_FIELDS])

# What identifies one measured value: a row of a new file whose key is already in the store
# (same run, round, time, workload, metric, bucket, item labels) is not added again. This is
# what makes a re-ingest after a crash (data written, bookkeeping not) add nothing, and a
# results.parquet ingested mid-run and again at the end add only the new rounds.
KEY_COLUMNS = ("run_id", "round", "timestamp", "test_case", "workload", "metric", "bucket",
               "item_labels")


def polars_schema() -> pl.Schema:
    """:data:`STORE_SCHEMA` as a polars schema (for scanning an empty store)."""
    return pl.Schema(pl.from_arrow(STORE_SCHEMA.empty_table()).schema)


def _with_source(table: pa.Table, source: str, sha256: str) -> pa.Table:
    n = table.num_rows
    table = table.append_column("source", pa.array([source] * n, pa.string()))
    return table.append_column("source_sha256", pa.array([sha256] * n, pa.string()))


def store_table(results: pa.Table, *, source: str, sha256: str) -> pa.Table:
    """A table with exactly the columns of :data:`RESULTS_SCHEMA` (any order) as a store
    table: the results columns unchanged, then ``source`` and ``source_sha256``."""
    results = results.select(RESULTS_SCHEMA.names).cast(RESULTS_SCHEMA)
    return _with_source(results, source, sha256).replace_schema_metadata(None)


def table_from_rows(rows: Iterable[Mapping[str, Any]], *, source: str,
                    sha256: str) -> pa.Table:
    """Store table from row dicts keyed by results columns; missing columns are null and
    ``schema_version`` is :data:`RESULTS_SCHEMA_VERSION`."""
    full = [{**r, "schema_version": RESULTS_SCHEMA_VERSION} for r in rows]
    return _with_source(pa.Table.from_pylist(full, schema=RESULTS_SCHEMA), source, sha256)
