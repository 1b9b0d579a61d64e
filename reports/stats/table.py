"""Whole-run comparison over tidy result tables (polars): one row per (keys..., unit).

Input frames look like ``results.parquet`` (docs/results-schema.md) filtered to the rows to
compare, e.g. one bucket per metric: columns ``workload``, ``metric``, ``unit``, ``round`` and
``value``. Every group is compared with :func:`reports.stats.compare_samples` (direction from
:func:`reports.stats.metric_direction` unless given), then all comparisons of the run are
re-judged together by :func:`reports.stats.decide` (Benjamini-Hochberg).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from reports.stats.compare import DEFAULT_Q, Comparison, Mode, compare_samples
from reports.stats.direction import metric_direction
from reports.stats.fdr import decide

__all__ = ["compare_frames"]

_OUT_SCHEMA = {
    "n_base": pl.Int64, "n_head": pl.Int64, "ratio": pl.Float64,
    "ci_low": pl.Float64, "ci_high": pl.Float64, "p_value": pl.Float64,
    "p_adjusted": pl.Float64, "verdict": pl.String, "more_rounds_needed": pl.Int64,
    "note": pl.String,
}


def _samples(df: pl.DataFrame, round_col: str, value: str) -> tuple[list[Any], list[float]]:
    v = pl.col(value).cast(pl.Float64)
    df = df.filter(v.is_not_null() & v.is_not_nan()).sort(round_col)
    return df[round_col].to_list(), [float(v) for v in df[value].to_list()]


def compare_frames(base: pl.DataFrame, head: pl.DataFrame, *,
                   keys: Sequence[str] = ("workload", "metric"), value: str = "value",
                   round_col: str = "round", unit: str = "unit", mode: Mode = "time",
                   paired: bool = False, min_effect: float | None = None, q: float = DEFAULT_Q,
                   higher_is_better: Mapping[str, bool] | None = None) -> pl.DataFrame:
    """Compare every (``keys``, ``unit``) group of ``base`` with the same group of ``head``.

    ``higher_is_better`` maps a metric name (column ``metric`` if present in ``keys``, else the
    first key) to its direction, overriding :func:`metric_direction`. Groups with no known
    direction, missing on one side, with no values, or with values <= 0 get a row with null
    statistics and the reason in ``note``. ``paired``: rounds present on both sides are paired
    by the ``round_col`` value. Output: ``keys``, ``unit``, ``n_base``, ``n_head``, ``ratio``,
    ``ci_low``, ``ci_high``, ``p_value``, ``p_adjusted``, ``verdict``, ``more_rounds_needed``,
    ``note``, sorted by ``keys``.
    """
    cols = [*keys, unit, round_col, value]
    for name, df in (("base", base), ("head", head)):
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"{name}: missing column(s) {missing}; have {df.columns}")
    group_cols = [*keys, unit]
    metric_col = "metric" if "metric" in keys else keys[0]
    overrides = dict(higher_is_better or {})
    b_groups = dict(base.group_by(group_cols, maintain_order=True))
    h_groups = dict(head.group_by(group_cols, maintain_order=True))
    rows: list[dict[str, Any]] = []
    tested: list[tuple[int, Comparison]] = []
    for gk in sorted(set(b_groups) | set(h_groups), key=lambda k: tuple(map(str, k))):
        row: dict[str, Any] = dict(zip(group_cols, gk, strict=True))
        row.update(n_base=None, n_head=None, ratio=None, ci_low=None, ci_high=None,
                   p_value=None, p_adjusted=None, verdict=None, more_rounds_needed=None)
        rows.append(row)
        if gk not in b_groups or gk not in h_groups:
            row["note"] = f"missing in {'HEAD' if gk in b_groups else 'BASE'}"
            continue
        metric = str(row[metric_col])
        try:
            hib = overrides[metric] if metric in overrides else \
                metric_direction(metric, str(row[unit])).higher_is_better
            b_rounds, b_vals = _samples(b_groups[gk], round_col, value)
            h_rounds, h_vals = _samples(h_groups[gk], round_col, value)
            if paired:
                for side, rounds in (("BASE", b_rounds), ("HEAD", h_rounds)):
                    if len(set(rounds)) < len(rounds):
                        raise ValueError(f"{side} has several values for one {round_col}; "
                                         "pairing needs one value per round (filter a bucket)")
                common = sorted(set(b_rounds) & set(h_rounds))
                bi = dict(zip(b_rounds, b_vals, strict=True))
                hi = dict(zip(h_rounds, h_vals, strict=True))
                b_vals, h_vals = [bi[r] for r in common], [hi[r] for r in common]
            name = "/".join(str(x) for x in gk[:-1])
            c = compare_samples(b_vals, h_vals, higher_is_better=hib, mode=mode,
                                min_effect=min_effect, paired=paired, q=q, name=name)
        except ValueError as exc:
            row["note"] = str(exc)
            continue
        tested.append((len(rows) - 1, c))
    for (i, _), c in zip(tested, decide([c for _, c in tested], q=q), strict=True):
        rows[i].update(n_base=c.n_base, n_head=c.n_head, ratio=c.ratio, ci_low=c.ci_low,
                       ci_high=c.ci_high, p_value=c.p_value, p_adjusted=c.p_adjusted,
                       verdict=c.verdict.value, more_rounds_needed=c.more_rounds_needed,
                       note=c.note)
    schema = {k: base.schema[k] for k in group_cols} | _OUT_SCHEMA
    for r in rows:
        for k in ("ci_low", "ci_high", "p_value", "p_adjusted"):
            if isinstance(r[k], float) and math.isnan(r[k]):
                r[k] = None
    return pl.DataFrame(rows, schema=schema)
