"""The results store: one Parquet dataset holding every ingested result in one tidy schema.

    <store>/source=<kind>/date=<YYYY-MM-DD>/part-<uuid>.parquet   data (STORE_SCHEMA)
    <store>/_ingested.json                                         bookkeeping (sha256 -> file)

    ingest_paths(paths, store) -> IngestReport   schedperf run folders / results.parquet, asv
                                                 results, pytest-benchmark JSON, DataItems JSON
    scan_store(store) -> pl.LazyFrame            every row, lazily
    history(store, metric=..., ...)              a metric over commits, per workload

Read it directly with ``pl.scan_parquet(f"{store}/**/*.parquet")``. Modules: ``schema``
(columns), ``detect`` (what a file is), ``ingest_run`` / ``ingest_asv`` / ``ingest_pytest`` /
``ingest_dataitems`` (one parser per format), ``dataset`` (writing parts), ``bookkeeping``,
``ingest`` (the orchestration), ``history``. Documented in docs/store.md.
"""

from __future__ import annotations

from reports.store.bookkeeping import LEDGER_NAME, Ledger
from reports.store.dataset import PART_GLOB, scan_store, store_files
from reports.store.history import DEFAULT_BUCKETS, DEFAULT_METRIC, HistoryError, history
from reports.store.ingest import (
    DUPLICATE,
    ERROR,
    INGESTED,
    FileOutcome,
    IngestReport,
    ingest_paths,
)
from reports.store.problems import Malformed, StoreError
from reports.store.schema import (
    DEFAULT_STORE,
    KEY_COLUMNS,
    SOURCE_ASV,
    SOURCE_DATAITEMS,
    SOURCE_PYTEST,
    SOURCE_RUN,
    SOURCES,
    STORE_SCHEMA,
)

__all__ = [
    "DEFAULT_BUCKETS",
    "DEFAULT_METRIC",
    "DEFAULT_STORE",
    "DUPLICATE",
    "ERROR",
    "INGESTED",
    "KEY_COLUMNS",
    "LEDGER_NAME",
    "PART_GLOB",
    "SOURCES",
    "SOURCE_ASV",
    "SOURCE_DATAITEMS",
    "SOURCE_PYTEST",
    "SOURCE_RUN",
    "STORE_SCHEMA",
    "FileOutcome",
    "HistoryError",
    "IngestReport",
    "Ledger",
    "Malformed",
    "StoreError",
    "history",
    "ingest_paths",
    "scan_store",
    "store_files",
]
