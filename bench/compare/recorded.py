"""Sides of a comparison that were already measured: nothing is rerun.

``--base-results`` / ``--head-results`` accept:

* a ``schedperf compare`` output folder (its ``samples.parquet``): the head side by default,
  ``DIR#base`` for its base side — so a new run can be compared with an older compare's;
* a ``schedperf run`` output folder or its ``results.parquet`` (all ``--repeat`` rounds):
  SchedulingThroughput Average per round (several collection windows of a workload averaged,
  as the run summary does);
* ``commit:<sha prefix>`` with ``--store DIR``: every round the results store holds for that
  commit (runs of ``schedperf run`` that were ingested).

Besides the samples, each side brings its outcomes (bench.compare.samples.OUTCOME_SCHEMA):
the status of every workload and round it recorded (a run's ``status`` / ``status_reason``
columns; a compare folder's ``outcomes.parquet``, or the failures of its ``report.json`` when
it has none), so a workload that failed there is an error here too, and the workloads'
labels, which select workloads (:func:`select_recorded`: ``--label``, ``--name``) and mark the
uncommon ones.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from bench.compare.results_check import results_problem
from bench.compare.samples import OUTCOME_SCHEMA, SCHEMA, outcome_row, outcomes_frame
from bench.compare.worktrees import WorktreeError
from reports.engine_ratios import EngineRow, engine_rows
from scheduler_core.inputfile import InputFileError, check_file, read_text
from workloads.catalog.selection import SelectionError, matches, parse_filter
from workloads.result import ENGINE_CORE

__all__ = ["UNCOMMON_LABEL", "Recorded", "RecordedError", "load_recorded", "select_recorded"]

ENV_COLUMNS = ("machine", "cpu_model", "cpu_count", "python", "numpy_version", "blas",
               "commit", "core_path")
UNCOMMON_LABEL = "uncommon"


class RecordedError(WorktreeError):
    """Recorded results that cannot be used (bad input: exit 2)."""


@dataclass(frozen=True)
class Recorded:
    """One recorded side: samples rows (labelled with the side), the report Side dict, the
    outcomes rows, the workloads' labels (None when the source does not record them) and
    the workloads known to be uncommon."""

    samples: pl.DataFrame
    side: dict[str, Any]
    outcomes: pl.DataFrame
    labels: dict[str, tuple[str, ...]] | None
    uncommon: frozenset[str]
    engines: tuple[EngineRow, ...] = ()  # a run that measured both engines: their ratios

    def workloads(self) -> set[str]:
        return set(self.samples["workload"].to_list()) | set(
            self.outcomes["workload"].to_list())


def _split(labels: str | None) -> tuple[str, ...]:
    return tuple(x.strip() for x in (labels or "").split(",") if x.strip())


def _labels_of(outcomes: pl.DataFrame) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for name, labels in outcomes.select("workload", "labels").iter_rows():
        if labels is not None:
            out.setdefault(name, _split(labels))
    return out


def _check_columns(df: pl.DataFrame, what: str) -> None:
    """The columns compare reads are there, with their types."""
    need = {"test_case", "workload", "metric", "bucket", "value"}
    missing = need - set(df.columns)
    if missing:
        raise RecordedError(f"{what}: not schedperf results (missing columns "
                            f"{', '.join(sorted(missing))})")
    wrong = [f"{c} ({df.schema[c]}, expected {'a number' if c == 'value' else 'text'})"
             for c in sorted(need) if not (df.schema[c].is_numeric() if c == "value"
                                           else df.schema[c] == pl.String)]
    if wrong:
        raise RecordedError(f"{what}: not schedperf results (columns of the wrong type: "
                            f"{', '.join(wrong)})")


def _from_results(df: pl.DataFrame, side: str, what: str
                  ) -> tuple[pl.DataFrame, dict[str, Any], pl.DataFrame]:
    _check_columns(df, what)
    df = df.with_columns((pl.col("test_case") + "/" + pl.col("workload")).alias("name"))
    run_cols = [c for c in ("run_id", "round") if c in df.columns]
    if run_cols:  # one round number per (run, round), in order
        keys = df.select(run_cols).unique(maintain_order=True).sort(run_cols)
        df = df.join(keys.with_row_index("rnd", offset=1), on=run_cols)
    else:
        df = df.with_columns(pl.lit(1, pl.UInt32).alias("rnd"))
    for col in ("status", "status_reason", "labels"):
        if col not in df.columns:
            df = df.with_columns(pl.lit(None, pl.String).alias(col))
    states = df.group_by(["name", "rnd"], maintain_order=True).agg(
        pl.col("status").drop_nulls().first(), pl.col("status_reason").drop_nulls().first(),
        pl.col("labels").drop_nulls().first())
    outcomes = outcomes_frame(
        outcome_row(side, "time", name, int(rnd), status or "ok", reason, labels)
        for name, rnd, status, reason, labels in states.iter_rows())
    thr = df.filter((pl.col("metric") == "SchedulingThroughput")
                    & (pl.col("bucket") == "Average") & pl.col("value").is_not_null())
    failed = outcomes.filter(~pl.col("status").is_in(["ok", "threshold-missed"]))
    if thr.is_empty() and failed.is_empty():
        raise RecordedError(f"{what}: no SchedulingThroughput Average values to compare")
    per = thr.group_by(["name", "rnd"], maintain_order=True).agg(pl.col("value").mean())
    rows = per.select(
        pl.lit(side).alias("side"), pl.lit("time").alias("mode"),
        pl.col("name").alias("workload"), pl.lit("SchedulingThroughput").alias("metric"),
        pl.lit("pods/s").alias("unit"), pl.col("rnd").cast(pl.Int64).alias("round"),
        pl.col("value").cast(pl.Float64))
    first = df.row(0, named=True)
    env = {k: first[k] for k in ENV_COLUMNS if k in first and first[k] is not None}
    return rows.select(list(SCHEMA)), env, outcomes


def _recorded(rows: pl.DataFrame, side: dict[str, Any], outcomes: pl.DataFrame,
              labels: dict[str, tuple[str, ...]] | None,
              uncommon: set[str] | None = None) -> Recorded:
    if uncommon is None:
        uncommon = {w for w, ls in (labels or {}).items() if UNCOMMON_LABEL in ls}
    return Recorded(rows, side, outcomes, labels, frozenset(uncommon))


def _read_parquet(path: Path) -> pl.DataFrame:
    """A results Parquet file; unreadable, special, oversized or corrupt: RecordedError."""
    try:
        check_file(path, what="a Parquet results file")
        return pl.read_parquet(path)
    except InputFileError as exc:
        raise RecordedError(str(exc)) from None
    except Exception as exc:  # polars raises several kinds for a bad file
        raise RecordedError(f"{path}: not a readable Parquet file: "
                            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                            ) from None


def _read_report_json(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(read_text(path, what="a compare report.json"))
    except InputFileError as exc:
        raise RecordedError(str(exc)) from None
    except (ValueError, RecursionError) as exc:
        raise RecordedError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise RecordedError(f"{path}: expected a JSON object (a compare report)")
    return doc


def _compare_folder(path: Path, spec: str, which: str, side: str) -> Recorded:
    df = _read_parquet(path / "samples.parquet")
    missing = [c for c in SCHEMA if c not in df.columns]
    if missing:
        raise RecordedError(f"{path / 'samples.parquet'}: columns {', '.join(missing)} are "
                            "missing (expected a schedperf compare samples.parquet)")
    df = df.filter(pl.col("side") == which).with_columns(pl.lit(side).alias("side"))
    report: dict[str, Any] = {}
    if (path / "report.json").is_file():
        report = _read_report_json(path / "report.json")
    if (path / "outcomes.parquet").is_file():
        outcomes = _read_parquet(path / "outcomes.parquet").filter(
            pl.col("side") == which).with_columns(pl.lit(side).alias("side"))
        outcomes = outcomes.select([pl.col(c) if c in outcomes.columns
                                    else pl.lit(None, t).alias(c)
                                    for c, t in OUTCOME_SCHEMA.items()])
        labels: dict[str, tuple[str, ...]] | None = _labels_of(outcomes) or None
    else:  # an older folder: its failures from report.json; labels are not recorded
        outcomes = outcomes_frame(
            outcome_row(side, f["mode"], w, r, f.get("status") or "error", f.get("error"))
            for f in report.get("failures") or () if f.get("side") == which
            for w in f.get("workloads") or () for r in (f.get("rounds") or [None]))
        labels = None
    if df.is_empty() and outcomes.is_empty():
        raise RecordedError(f"{spec}: no {which or 'head'} samples in {path}")
    uncommon = None if labels is not None else {
        r["workload"] for r in report.get("results") or () if r.get("uncommon")}
    meta = {k: v for k, v in report.get(which, {}).items() if k != "problems"}
    return _recorded(df.select(list(SCHEMA)), {**meta, "label": spec}, outcomes, labels,
                     uncommon)


def load_recorded(spec: str, side: str, *, store: Path | None = None) -> Recorded:
    """The recorded side ``side`` (base or head) of one ``--*-results`` value."""
    if spec.startswith("commit:"):
        prefix = spec.removeprefix("commit:")
        if store is None:
            raise RecordedError(f"{spec}: needs --store DIR")
        if not prefix:
            raise RecordedError(f"{spec}: give a commit hash (prefix) after 'commit:'")
        from reports.store import scan_store, store_folder_problem
        from reports.store.schema import core_engine

        problem = store_folder_problem(store)
        if problem:
            raise RecordedError(f"{spec}: store {store}: {problem}")
        of_commit = scan_store(store).filter(pl.col("commit").str.starts_with(prefix))
        df = of_commit.filter(core_engine()).collect()
        if df.is_empty():
            raise RecordedError(f"{spec}: the store {store} has no results for that commit")
        rows, env, outcomes = _from_results(df, side, spec)
        return replace(_recorded(rows, {"label": spec, "commit": env.get("commit"),
                                        "environment": env}, outcomes, _labels_of(outcomes)),
                       engines=tuple(engine_rows(of_commit)))
    path_text, _, which = spec.partition("#")
    path = Path(path_text)
    if which and which not in ("base", "head"):
        raise RecordedError(f"{spec}: after '#' write base or head")
    if path.is_dir() and (path / "samples.parquet").is_file():
        return _compare_folder(path, spec, which or "head", side)
    results = path / "results.parquet" if path.is_dir() else path
    if not os.path.lexists(results):  # a FIFO, a loop or a folder there: _read_parquet says
        raise RecordedError(f"{spec}: neither a compare output folder (samples.parquet), a "
                            "schedperf run folder (results.parquet) nor a results file")
    df = _read_parquet(results)
    _check_columns(df, str(results))
    problem = results_problem(df)
    if problem:
        raise RecordedError(f"{results}: {problem}")
    engines = tuple(engine_rows(df.lazy()))
    if "engine" in df.columns:  # the kube-scheduler engine's rows are not this code's
        df = df.filter(pl.col("engine").fill_null(ENGINE_CORE) == ENGINE_CORE)
    rows, env, outcomes = _from_results(df, side, str(results))
    return replace(_recorded(rows, {"label": spec, "commit": env.get("commit"),
                                    "environment": env}, outcomes, _labels_of(outcomes)),
                   engines=engines)


def select_recorded(rec: Recorded, label_filter: str | None, name_regex: str | None
                    ) -> Recorded:
    """The workloads of ``rec`` whose labels pass ``label_filter`` (the syntax of
    workloads.catalog.selection; None: no filter) and whose name matches ``name_regex``
    (``re.search``). RecordedError when the filter cannot be applied (a source without
    labels) or leaves nothing."""
    what = str(rec.side.get("label"))
    try:
        parse_filter(label_filter)
        pattern = re.compile(name_regex) if name_regex else None
    except SelectionError as exc:
        raise RecordedError(str(exc)) from None
    except re.error as exc:
        raise RecordedError(f"--name {name_regex!r} is not a valid regular expression: "
                            f"{exc}") from None
    if label_filter and parse_filter(label_filter) and rec.labels is None:
        raise RecordedError(f"{what}: records no workload labels (a compare folder written "
                            "before outcomes.parquet existed), so --label cannot select from "
                            "it; select with --name")
    names = sorted(rec.workloads())
    keep = [w for w in names
            if (not label_filter or matches(label_filter, (rec.labels or {}).get(w, ())))
            and (pattern is None or pattern.search(w))]
    if not keep:
        parts = [f"label filter {label_filter!r}"] if label_filter else []
        parts += [f"--name {name_regex!r}"] if name_regex else []
        raise RecordedError(f"{what}: no workload matches {' and '.join(parts)} (it has "
                            f"{len(names)}: {', '.join(names[:5])}"
                            f"{', ...' if len(names) > 5 else ''})")
    chosen = pl.col("workload").is_in(keep)
    return replace(rec, samples=rec.samples.filter(chosen),
                   outcomes=rec.outcomes.filter(chosen),
                   engines=tuple(e for e in rec.engines if e.workload in keep))
