"""The results store: one Parquet dataset holding every ingested result in one tidy schema.

    <store>/source=<kind>/date=<YYYY-MM-DD>/part-<uuid>.parquet   data (STORE_SCHEMA)
    <store>/_ingested.json                                         bookkeeping (sha256 -> file)

    ingest_paths(paths, store) -> IngestReport   schedperf run folders / results.parquet, asv
                                                 results, pytest-benchmark JSON, DataItems JSON
    scan_store(store) -> pl.LazyFrame            every row, lazily (corrupt parts left out:
                                                 unreadable_parts(store) names them)
    history(store, metric=..., repo=...)         a metric over commits in git order, per
                                                 workload, each step judged
    load_graph(store, repo) / order_series(...)  versions in git order (``order``)
    judge_steps(steps)                           is a step significant (``steps``)

Read it directly with ``pl.scan_parquet(f"{store}/**/*.parquet")``. Modules: ``schema``
(columns), ``detect`` (what a file is), ``ingest_run`` / ``ingest_asv`` / ``ingest_pytest`` /
``ingest_dataitems`` (one parser per format), ``dataset`` (writing parts), ``bookkeeping``,
``ingest`` (the orchestration), ``gitinfo`` (commit dates and parents from git), ``order``
(git order of versions), ``steps`` (judging a step), ``history``, ``coverage`` (coverage maps
per commit under ``<store>/_coverage/``: Arrow IPC files, no ``*.parquet``; docs/coverage.md).
Documented in docs/store.md.
"""

from __future__ import annotations

from reports.store.bookkeeping import LEDGER_NAME, Ledger
from reports.store.dataset import (
    PART_GLOB,
    scan_store,
    store_files,
    store_folder_problem,
    unreadable_parts,
)
from reports.store.gitinfo import GitError
from reports.store.history import DEFAULT_BUCKETS, DEFAULT_METRIC, HistoryError, history
from reports.store.ingest import (
    DUPLICATE,
    ERROR,
    INGESTED,
    FileOutcome,
    IngestReport,
    ingest_paths,
)
from reports.store.order import (
    ORDER_DATE,
    ORDER_GIT,
    ORDER_PARENTS,
    ORDER_RUN,
    ORDER_SINGLE,
    ORDER_UNKNOWN,
    CommitGraph,
    Placed,
    load_graph,
    order_note,
    order_series,
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
from reports.store.steps import ONE_VALUE, Step, StepVerdict, judge_steps

__all__ = [
    "DEFAULT_BUCKETS",
    "DEFAULT_METRIC",
    "DEFAULT_STORE",
    "DUPLICATE",
    "ERROR",
    "INGESTED",
    "KEY_COLUMNS",
    "LEDGER_NAME",
    "ONE_VALUE",
    "ORDER_DATE",
    "ORDER_GIT",
    "ORDER_PARENTS",
    "ORDER_RUN",
    "ORDER_SINGLE",
    "ORDER_UNKNOWN",
    "PART_GLOB",
    "SOURCES",
    "SOURCE_ASV",
    "SOURCE_DATAITEMS",
    "SOURCE_PYTEST",
    "SOURCE_RUN",
    "STORE_SCHEMA",
    "CommitGraph",
    "FileOutcome",
    "GitError",
    "HistoryError",
    "IngestReport",
    "Ledger",
    "Malformed",
    "Placed",
    "Step",
    "StepVerdict",
    "StoreError",
    "history",
    "ingest_paths",
    "judge_steps",
    "load_graph",
    "order_note",
    "order_series",
    "scan_store",
    "store_files",
    "store_folder_problem",
    "unreadable_parts",
]
