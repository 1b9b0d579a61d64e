"""Sides of a comparison that were already measured: nothing is rerun.

``--base-results`` / ``--head-results`` accept:

* a ``schedperf compare`` output folder (its ``samples.parquet``): the head side by default,
  ``DIR#base`` for its base side — so a new run can be compared with an older compare's;
* a ``schedperf run`` output folder or its ``results.parquet`` (all ``--repeat`` rounds):
  SchedulingThroughput Average per round (several collection windows of a workload averaged,
  as the run summary does);
* ``commit:<sha prefix>`` with ``--store DIR``: every round the results store holds for that
  commit (runs of ``schedperf run`` that were ingested).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from bench.compare.samples import SCHEMA
from bench.compare.worktrees import GitError

__all__ = ["RecordedError", "load_recorded"]

ENV_COLUMNS = ("machine", "cpu_model", "cpu_count", "python", "numpy_version", "blas",
               "commit", "core_path")


class RecordedError(GitError):
    """Recorded results that cannot be used (bad input: exit 2)."""


def _from_results(df: pl.DataFrame, side: str, what: str) -> tuple[pl.DataFrame, dict[str, Any]]:
    need = {"test_case", "workload", "metric", "bucket", "value"}
    missing = need - set(df.columns)
    if missing:
        raise RecordedError(f"{what}: not schedperf results (missing columns "
                            f"{', '.join(sorted(missing))})")
    thr = df.filter((pl.col("metric") == "SchedulingThroughput")
                    & (pl.col("bucket") == "Average") & pl.col("value").is_not_null())
    if thr.is_empty():
        raise RecordedError(f"{what}: no SchedulingThroughput Average values to compare")
    run_cols = [c for c in ("run_id", "round") if c in thr.columns]
    thr = thr.with_columns(
        (pl.col("test_case") + "/" + pl.col("workload")).alias("name"))
    if run_cols:
        keys = thr.select(run_cols).unique(maintain_order=True).sort(run_cols)
        keys = keys.with_row_index("rnd", offset=1)
        thr = thr.join(keys, on=run_cols)
    else:
        thr = thr.with_columns(pl.lit(1, pl.UInt32).alias("rnd"))
    per = thr.group_by(["name", "rnd"], maintain_order=True).agg(pl.col("value").mean())
    rows = per.select(
        pl.lit(side).alias("side"), pl.lit("time").alias("mode"),
        pl.col("name").alias("workload"), pl.lit("SchedulingThroughput").alias("metric"),
        pl.lit("pods/s").alias("unit"), pl.col("rnd").cast(pl.Int64).alias("round"),
        pl.col("value").cast(pl.Float64))
    first = df.row(0, named=True)
    env = {k: first[k] for k in ENV_COLUMNS if k in first and first[k] is not None}
    return rows.select(list(SCHEMA)), env


def load_recorded(spec: str, side: str, *, store: Path | None = None
                  ) -> tuple[pl.DataFrame, dict[str, Any]]:
    """(samples rows labelled ``side``, side description) for one ``--*-results`` value."""
    if spec.startswith("commit:"):
        prefix = spec.removeprefix("commit:")
        if store is None:
            raise RecordedError(f"{spec}: needs --store DIR")
        if not prefix:
            raise RecordedError(f"{spec}: give a commit hash (prefix) after 'commit:'")
        from reports.store import scan_store

        df = scan_store(store).filter(pl.col("commit").str.starts_with(prefix)).collect()
        if df.is_empty():
            raise RecordedError(f"{spec}: the store {store} has no results for that commit")
        rows, env = _from_results(df, side, spec)
        return rows, {"label": spec, "commit": env.get("commit"), "environment": env}
    path_text, _, which = spec.partition("#")
    path = Path(path_text)
    if which and which not in ("base", "head"):
        raise RecordedError(f"{spec}: after '#' write base or head")
    if path.is_dir() and (path / "samples.parquet").is_file():
        df = pl.read_parquet(path / "samples.parquet")
        df = df.filter(pl.col("side") == (which or "head")).with_columns(
            pl.lit(side).alias("side"))
        if df.is_empty():
            raise RecordedError(f"{spec}: no {which or 'head'} samples in {path}")
        meta: dict[str, Any] = {}
        report = path / "report.json"
        if report.is_file():
            import json

            meta = json.loads(report.read_text()).get(which or "head", {})
        return df.select(list(SCHEMA)), {**meta, "label": spec}
    results = path / "results.parquet" if path.is_dir() else path
    if not results.is_file():
        raise RecordedError(f"{spec}: neither a compare output folder (samples.parquet), a "
                            "schedperf run folder (results.parquet) nor a results file")
    try:
        df = pl.read_parquet(results)
    except Exception as exc:  # polars raises several kinds for a bad file
        raise RecordedError(f"{results}: not a readable Parquet file: {exc}") from None
    rows, env = _from_results(df, side, str(results))
    return rows, {"label": spec, "commit": env.get("commit"), "environment": env}
