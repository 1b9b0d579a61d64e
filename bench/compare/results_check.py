"""What a recorded results file must hold before compare reads it (``--base-results`` /
``--head-results`` given a ``schedperf run`` folder or its ``results.parquet``).

Compare reads a subset of the columns (docs/results-schema.md), so a file may lack the ones
it does not use; but a column no schedperf writes, an ``engine`` or ``status`` no schedperf
knows, or a throughput that is negative, NaN or infinite is not a results file's: it is
named (file, column, the workload and round of the first bad row) rather than compared.
"""

from __future__ import annotations

import polars as pl

from workloads.output.parquet import RESULTS_SCHEMA
from workloads.result import ENGINES, STATUSES

__all__ = ["results_problem"]

THROUGHPUT = "SchedulingThroughput"


def _where(row: dict[str, object]) -> str:
    name = "/".join(str(row[c]) for c in ("test_case", "workload") if row.get(c) is not None)
    rnd = f", round {row['round']}" if row.get("round") is not None else ""
    return f"(workload {name or '?'}{rnd})"


def _choice_problem(df: pl.DataFrame, column: str, allowed: tuple[str, ...]) -> str | None:
    if column not in df.columns:
        return None
    if df.schema[column] != pl.String:
        return f"column {column}: {df.schema[column]}, expected text"
    bad = df.filter(pl.col(column).is_not_null() & ~pl.col(column).is_in(allowed))
    if bad.is_empty():
        return None
    row = bad.row(0, named=True)
    return (f"column {column}: {row[column]!r} {_where(row)} is not one of "
            f"{', '.join(allowed)}")


def results_problem(df: pl.DataFrame) -> str | None:
    """The first thing that makes ``df`` (a results file as read) not schedperf results, or
    None. Needs the columns compare needs to be present with their types (checked first by
    the caller)."""
    unknown = [c for c in df.columns if c not in RESULTS_SCHEMA.names]
    if unknown:
        return (f"unknown column{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (not a "
                "results.parquet column, docs/results-schema.md)")
    for column, allowed in (("engine", ENGINES), ("status", STATUSES)):
        problem = _choice_problem(df, column, allowed)
        if problem:
            return problem
    value = pl.col("value").cast(pl.Float64)
    bad = df.filter((pl.col("metric") == THROUGHPUT) & value.is_not_null()
                    & (value.is_nan() | value.is_infinite() | (value < 0)))
    if bad.is_empty():
        return None
    row = bad.row(0, named=True)
    return (f"column value: {THROUGHPUT} {row['bucket']} {row['value']} {_where(row)} is out "
            "of range (expected a finite number >= 0, pods/s)")
