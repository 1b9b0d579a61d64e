"""Ingest results files into the store: detect each file's format, parse it into store rows,
drop rows already in the store, write the data files, then record the files in the
bookkeeping.

Idempotent: a file whose sha256 is in the bookkeeping is not read again, and rows whose
:data:`~reports.store.schema.KEY_COLUMNS` are already in the store are not added again.
A file that cannot be ingested is reported (path and problem) and skipped; the others are
ingested. Files are written in batches (one part per source and day per batch), so a
folder of many small result files does not become many tiny Parquet files.

Each commit's committer date and parents are recorded with its rows (``commit_date``,
``commit_parents``) when a git repository at hand has it: ``repo`` (``--repo``), the
checkout a ``schedperf run`` imported ``scheduler_core`` from (its ``scheduler_core_path``),
the checkout holding the ingested file, the checkout holding the current folder; tried in
that order (a commit hash names the same commit in every clone). Commits none of them has
keep what the file says (asv's and pytest-benchmark's commit date) or stay unknown.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from reports.store.bookkeeping import Ledger, store_lock
from reports.store.dataset import (
    partition_keys,
    remove_stale_temp_files,
    scan_store,
    store_files,
    write_parts,
)
from reports.store.detect import SKIP, Candidate, expand, identify
from reports.store.gitinfo import GitError, check_repo, commit_details, find_checkout
from reports.store.ingest_asv import find_benchmarks_json, load_benchmarks, parse_asv
from reports.store.ingest_dataitems import parse_dataitems
from reports.store.ingest_pytest import parse_pytest_benchmark
from reports.store.ingest_run import parse_results_parquet
from reports.store.problems import Malformed, StoreError
from reports.store.schema import (
    KEY_COLUMNS,
    SOURCE_ASV,
    SOURCE_DATAITEMS,
    SOURCE_PYTEST,
    SOURCE_RUN,
    CommitInfo,
    with_commit_info,
)
from scheduler_core.inputfile import InputFileError, read_bytes
from workloads.result import ENGINE_CORE

__all__ = ["DUPLICATE", "ERROR", "FLUSH_ROWS", "INGESTED", "FileOutcome", "IngestReport",
           "ingest_paths"]

INGESTED = "ingested"
DUPLICATE = "already ingested"
ERROR = "error"
FLUSH_ROWS = 250_000  # rows buffered before a batch of parts is written


@dataclass
class FileOutcome:
    path: Path
    status: str  # INGESTED, DUPLICATE or ERROR
    kind: str | None = None
    rows: int = 0  # rows read from the file
    rows_new: int = 0  # rows added to the store (fewer when some were already there)
    message: str | None = None  # the problem (ERROR), or a note


@dataclass
class IngestReport:
    outcomes: list[FileOutcome] = field(default_factory=list)

    def _with(self, status: str) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == status]

    @property
    def ingested(self) -> list[FileOutcome]:
        return self._with(INGESTED)

    @property
    def duplicates(self) -> list[FileOutcome]:
        return self._with(DUPLICATE)

    @property
    def errors(self) -> list[FileOutcome]:
        return self._with(ERROR)

    @property
    def rows_new(self) -> int:
        return sum(o.rows_new for o in self.outcomes)

    # commit -> the repository its date and parents came from ("" when none had it), for
    # the commits of the files ingested
    commits: dict[str, str] = field(default_factory=dict)
    # repositories that could not be read, with the problem
    repo_problems: list[str] = field(default_factory=list)


@dataclass
class _Pending:
    outcome: FileOutcome
    sha256: str
    table: pa.Table
    size: int
    run_ids: list[str]
    repos: list[Path] = field(default_factory=list)  # where to look its commits up


class _Commits:
    """Looks the commits of pending files up in the repositories at hand (cached), and
    records their date and parents in the files' rows."""

    def __init__(self, repo: Path | None, report: IngestReport):
        self.repo, self.report = repo, report
        self.info: dict[str, CommitInfo | None] = {}
        self.broken: set[Path] = set()
        here = find_checkout(Path.cwd())
        self.cwd = [here] if here is not None else []

    def repos_for(self, path: Path, table: pa.Table) -> list[Path]:
        """Where to look the commits of ``table`` (read from ``path``) up, best first."""
        found: list[Path] = [self.repo] if self.repo is not None else []
        if "scheduler_core_path" in table.column_names:
            for where in table["scheduler_core_path"].unique().to_pylist():
                checkout = find_checkout(where) if where else None
                if checkout is not None:
                    found.append(checkout)
        for checkout in (find_checkout(path.parent), *self.cwd):
            if checkout is not None:
                found.append(checkout)
        return list(dict.fromkeys(found))

    def annotate(self, batch: list[_Pending]) -> None:
        wanted: dict[Path, set[str]] = {}
        for p in batch:
            commits = {c for c in p.table["commit"].unique().to_pylist() if c}
            for c in commits - self.info.keys():
                for repo in p.repos:
                    wanted.setdefault(repo, set()).add(c)
        missing = set().union(*wanted.values()) if wanted else set()
        for repo, commits in wanted.items():
            ask = commits & missing
            if not ask or repo in self.broken:
                continue
            try:
                found = commit_details(repo, ask)
            except GitError as exc:
                self.broken.add(repo)
                self.report.repo_problems.append(str(exc))
                continue
            for c, info in found.items():
                self.info[c] = info
                self.report.commits[c] = str(repo)
            missing -= found.keys()
        for c in missing:
            self.info[c] = None
        for p in batch:
            commits = {c for c in p.table["commit"].unique().to_pylist() if c}
            for c in commits:
                self.report.commits.setdefault(c, "")
            known = {c: info for c in commits if (info := self.info.get(c)) is not None}
            p.table = with_commit_info(p.table, known)


def _parse(cand: Candidate, data: bytes, sha256: str) -> tuple[str, pa.Table, str | None]:
    """(kind, store rows, note) of one file; SKIP kind for files that are not results.
    Raises Malformed, also for a value the parsers passed on that the store's columns cannot
    hold (a field of the wrong type deep in the file)."""
    try:
        return _parse_kind(cand, data, sha256)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Malformed(f"a value of the wrong type for the store: {first}") from None


def _parse_kind(cand: Candidate, data: bytes, sha256: str) -> tuple[str, pa.Table, str | None]:
    kind, doc = identify(cand.path, data, cand.explicit)
    if kind == SKIP:
        return kind, pa.table({}), None
    note = cand.note
    if kind == SOURCE_RUN:
        table = parse_results_parquet(data, sha256)
    elif kind == SOURCE_DATAITEMS:
        table = parse_dataitems(doc, cand.path, sha256)
    elif kind == SOURCE_PYTEST:
        table = parse_pytest_benchmark(doc, sha256)
    elif kind == SOURCE_ASV:
        benchmarks, missing = load_benchmarks(find_benchmarks_json(cand.path))
        table = parse_asv(doc, sha256, benchmarks)
        note = note or missing
    else:  # pragma: no cover - identify returns the kinds above
        raise AssertionError(kind)
    return kind, table, note


# parts written before results schema_version 3 have no engine: scheduler_core's
_ENGINE_KEY = pl.col("engine").fill_null(ENGINE_CORE)


def _keys(table: pa.Table) -> pl.DataFrame:
    frame: pl.DataFrame = pl.from_arrow(table.select(list(KEY_COLUMNS)))  # type: ignore[assignment]
    return frame.with_columns(_ENGINE_KEY)


def _drop_known(batch: list[_Pending], store: Path) -> None:
    """Remove from each pending table the rows already in the store or in an earlier file
    of the batch (same key columns; only rows of the same run_id can match)."""
    run_ids = sorted({r for p in batch for r in p.run_ids})
    known: dict[str, list[pl.DataFrame]] = {}
    if store_files(store):
        try:
            stored = (scan_store(store).filter(pl.col("run_id").is_in(run_ids))
                      .select(KEY_COLUMNS).with_columns(_ENGINE_KEY).unique().collect())
        except pl.exceptions.PolarsError as exc:
            raise StoreError(f"{store}: its data files cannot be read "
                             f"({str(exc).splitlines()[0]}); every *.parquet under the "
                             "store must have the store schema") from exc
        for (run_id,), keys in stored.partition_by("run_id", as_dict=True).items():
            known[run_id] = [keys]
    for p in batch:
        keys = _keys(p.table)
        seen = [k for r in p.run_ids for k in known.get(r, [])]
        if seen:
            kept = (keys.with_row_index("_row")
                    .join(pl.concat(seen), on=list(KEY_COLUMNS), how="anti", nulls_equal=True))
            if kept.height != p.table.num_rows:
                p.table = p.table.take(pa.array(kept["_row"].to_numpy()))
                keys = kept.drop("_row")
        for (run_id,), new in keys.partition_by("run_id", as_dict=True).items():
            known.setdefault(run_id, []).append(new)
        p.outcome.rows_new = p.table.num_rows


def _flush(batch: list[_Pending], store: Path, ledger: Ledger, settle: _Settler,
           commits: _Commits) -> None:
    if not batch:
        return
    commits.annotate(batch)
    _drop_known(batch, store)
    parts = write_parts(store, [p.table for p in batch])
    for p in batch:  # recorded only after the data files landed
        mine = sorted(parts[name] for name in partition_keys(p.table)[0] if name in parts)
        ledger.record(p.sha256, path=str(p.outcome.path.resolve()), kind=p.outcome.kind,
                      size=p.size, rows=p.outcome.rows, rows_new=p.outcome.rows_new,
                      run_ids=p.run_ids, parts=mine)
    ledger.save()
    settle.final([p.outcome for p in batch])
    batch.clear()


class _Settler:
    """Collects outcomes in input order and passes them to the callback in that order, each
    as soon as it and every earlier one is final (an ingested file is final once its batch
    is written)."""

    def __init__(self, report: IngestReport, on_outcome: Callable[[FileOutcome], Any] | None):
        self.report, self.on_outcome = report, on_outcome
        self.waiting: set[int] = set()
        self.emitted = 0

    def add(self, outcome: FileOutcome, *, final: bool = True) -> None:
        self.report.outcomes.append(outcome)
        if not final:
            self.waiting.add(id(outcome))
        self._drain()

    def final(self, outcomes: list[FileOutcome]) -> None:
        self.waiting.difference_update(id(o) for o in outcomes)
        self._drain()

    def _drain(self) -> None:
        outcomes = self.report.outcomes
        while self.emitted < len(outcomes) and id(outcomes[self.emitted]) not in self.waiting:
            if self.on_outcome is not None:
                self.on_outcome(outcomes[self.emitted])
            self.emitted += 1


def ingest_paths(paths: Iterable[Path | str], store: Path | str, *,
                 on_outcome: Callable[[FileOutcome], Any] | None = None,
                 flush_rows: int = FLUSH_ROWS, repo: Path | str | None = None) -> IngestReport:
    """Ingest files and folders into ``store`` (created if missing); see the module
    docstring. ``on_outcome`` is called once per file, in input order, as its fate is
    settled; ``repo`` is a git repository to look commits up in first. Raises
    :class:`~reports.store.problems.StoreError` when the store is unusable,
    :class:`~reports.store.gitinfo.GitError` when ``repo`` is not a git repository."""
    store = Path(store)
    repo_path = check_repo(repo) if repo is not None else None
    report = IngestReport()
    commits = _Commits(repo_path, report)
    settle = _Settler(report, on_outcome)
    candidates, problems = expand([Path(p) for p in paths], store)
    for path, problem in problems:
        settle.add(FileOutcome(path, ERROR, message=problem))
    with store_lock(store):
        remove_stale_temp_files(store)
        ledger = Ledger.load(store)
        batch: list[_Pending] = []
        batch_rows = 0
        seen: set[str] = set()
        for cand in candidates:
            try:
                data = read_bytes(cand.path, what="a results file")
            except InputFileError as exc:
                settle.add(FileOutcome(cand.path, ERROR, message=exc.problem))
                continue
            sha256 = hashlib.sha256(data).hexdigest()
            previous = ledger.get(sha256)
            if previous is not None or sha256 in seen:
                kind = previous["kind"] if previous else None
                settle.add(FileOutcome(cand.path, DUPLICATE, kind=kind, message=cand.note))
                continue
            try:
                kind, table, note = _parse(cand, data, sha256)
            except Malformed as exc:
                settle.add(FileOutcome(cand.path, ERROR, message=str(exc)))
                continue
            if kind == SKIP:
                continue
            seen.add(sha256)
            outcome = FileOutcome(cand.path, INGESTED, kind=kind, rows=table.num_rows,
                                  message=note)
            settle.add(outcome, final=False)
            run_ids = sorted(r for r in table["run_id"].unique().to_pylist() if r is not None)
            batch.append(_Pending(outcome, sha256, table, len(data), run_ids,
                                  commits.repos_for(cand.path, table)))
            batch_rows += table.num_rows
            if batch_rows >= flush_rows:
                _flush(batch, store, ledger, settle, commits)
                batch_rows = 0
        _flush(batch, store, ledger, settle, commits)
    return report
