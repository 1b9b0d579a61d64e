"""From the samples table to the report model (reports.render, ``report.json`` schema 1).

Every judged (workload, metric) of a mode is compared with reports.stats (Hodges-Lehmann
ratio and interval; Wilcoxon on paired rounds or Mann-Whitney; Benjamini-Hochberg over the
mode's whole family). Regressions get an attribution from the per-plugin time per pod of the
time-mode rounds of that workload, and are matched against the accepted-regressions file.
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from bench.compare.samples import JUDGED
from reports.accepted import Acceptance
from reports.stats import attribute, compare_frames
from reports.stats.compare import MIN_EFFECT

__all__ = ["ENV_KEYS", "build_report", "environment_notes", "headline"]

ENV_KEYS = ("machine", "cpu_model", "cpu_count", "python", "numpy_version", "blas")
_ORDER = ("regression", "inconclusive", "improvement", "no change")


def environment_notes(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    return [f"{k}: {base.get(k)} vs {head.get(k)}" for k in ENV_KEYS
            if k in base and k in head and base.get(k) != head.get(k)]


def headline(results: Sequence[Mapping[str, Any]]) -> str:
    """regression (not accepted) > inconclusive > improvement > no change."""
    seen = {r["verdict"] for r in results if not (r["verdict"] == "regression"
                                                   and r.get("accepted"))}
    return next((v for v in _ORDER if v in seen), "no change")


def _sample(values: list[float]) -> dict[str, Any]:
    return {"n": len(values), "median": statistics.median(values) if values else None,
            "values": values}


def _num(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else float(x)


def _attribution(df: pl.DataFrame, workload: str, paired: bool) -> tuple[list[dict[str, Any]],
                                                                          dict[str, Any]]:
    """(top attributions, breakdown) from the plugin timings of ``workload``."""
    plug = df.filter((pl.col("workload") == workload)
                     & pl.col("metric").str.starts_with("plugin:"))
    if plug.is_empty():
        return [], {}
    rounds: dict[str, list[dict[str, float]]] = {}
    breakdown: dict[str, dict[str, float]] = {}
    for side in ("base", "head"):
        part = plug.filter(pl.col("side") == side)
        per_round = []
        for (_,), g in part.group_by(["round"], maintain_order=True):
            per_round.append({m.removeprefix("plugin:"): v
                              for m, v in zip(g["metric"], g["value"], strict=True)})
        rounds[side] = per_round
        med = part.group_by("metric").agg(pl.col("value").median())
        breakdown[side] = {m.removeprefix("plugin:"): v
                           for m, v in zip(med["metric"], med["value"], strict=True)}
    if not rounds["base"] or not rounds["head"]:
        return [], {}
    paired = paired and len(rounds["base"]) == len(rounds["head"])
    try:
        found = attribute(rounds["base"], rounds["head"], mode="time", paired=paired, top=5)
    except ValueError:
        return [], breakdown
    out = []
    for a in found:
        plugin, _, point = str(a.key).partition("/")
        out.append({"plugin": plugin, "extension_point": point, "base_per_pod": a.base,
                    "head_per_pod": a.head,
                    "change": _num(a.rel_change), "text": a.sentence})
    return out, breakdown


def build_report(df: pl.DataFrame, *, kind: str, base: Mapping[str, Any],
                 head: Mapping[str, Any], modes: Sequence[str], repeat: int, q: float,
                 min_effect: Mapping[str, float], seed: int | None, label: str | None,
                 uncommon: Callable[[str], bool], accepted: Sequence[Acceptance] = (),
                 in_base: Callable[[str], bool] = lambda commit: False,
                 today: dt.date | None = None, wall_seconds: float | None = None,
                 extra_settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report dict; ``base``/``head`` are report Side dicts (label, commit, core_path,
    config, environment)."""
    today = today or dt.datetime.now(dt.UTC).date()
    results: list[dict[str, Any]] = []
    breakdowns: dict[str, Any] = {}
    time_df = df.filter(pl.col("mode") == "time")
    time_rounds = {s: set(time_df.filter(pl.col("side") == s)["round"].to_list())
                   for s in ("base", "head")}
    paired = bool(time_rounds["base"]) and time_rounds["base"] == time_rounds["head"]
    for mode in modes:
        judged = [m for (md, m) in JUDGED if md == mode]
        part = df.filter((pl.col("mode") == mode) & pl.col("metric").is_in(judged))
        b, h = part.filter(pl.col("side") == "base"), part.filter(pl.col("side") == "head")
        if b.is_empty() and h.is_empty():
            continue
        directions = {m: JUDGED[(mode, m)][1] for m in judged}
        table = compare_frames(b, h, keys=("workload", "metric"), mode=mode,  # type: ignore[arg-type]
                               paired=paired and mode == "time",
                               min_effect=min_effect.get(mode), q=q,
                               higher_is_better=directions)
        for row in table.iter_rows(named=True):
            w, metric = row["workload"], row["metric"]
            sel = (pl.col("workload") == w) & (pl.col("metric") == metric)
            verdict = row["verdict"] or "inconclusive"
            r: dict[str, Any] = {
                "workload": w, "mode": mode, "metric": metric, "unit": row["unit"],
                "higher_is_better": directions[metric], "uncommon": uncommon(w),
                "base": _sample(b.filter(sel).sort("round")["value"].to_list()),
                "head": _sample(h.filter(sel).sort("round")["value"].to_list()),
                "ratio": _num(row["ratio"]), "ci_low": _num(row["ci_low"]),
                "ci_high": _num(row["ci_high"]), "p_value": _num(row["p_value"]),
                "q_value": _num(row["p_adjusted"]), "verdict": verdict,
                "more_rounds": row["more_rounds_needed"], "accepted": None,
                "attribution": [], "note": row["note"],
            }
            if verdict == "regression":
                for a in accepted:
                    if a.matches(w, metric) and a.active(today, in_base):
                        r["accepted"] = {"why": a.why, "source": a.source}
                        break
                r["attribution"], breakdown = _attribution(time_df, w, paired)
                if breakdown:
                    breakdowns[w] = breakdown
            results.append(r)
    base_env, head_env = base.get("environment", {}), head.get("environment", {})
    notes = environment_notes(base_env, head_env)
    return {
        "schema": 1,
        "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "kind": kind, "base": dict(base), "head": dict(head),
        "environment_differs": bool(notes), "environment_notes": notes,
        "settings": {"modes": list(modes), "repeat": repeat,
                     "min_effect": {m: min_effect.get(m, MIN_EFFECT[m]) for m in modes},
                     "q": q, "seed": seed, "label": label, "wall_seconds": wall_seconds,
                     **(extra_settings or {})},
        "verdict": headline(results),
        "results": results,
        "plugin_breakdown": breakdowns,
    }
