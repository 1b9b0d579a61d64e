"""From the samples table to the report model (reports.render, ``report.json`` schema 1).

Every judged (workload, metric) of a mode is compared with reports.stats (Hodges-Lehmann
ratio and interval; Wilcoxon on paired rounds or Mann-Whitney; Benjamini-Hochberg over the
mode's whole family). Regressions get an attribution from the per-plugin time per pod of the
time-mode rounds of that workload, and are matched against the accepted-regressions file.

Failures are verdicts, never "inconclusive": a (workload, mode) with an outcome that is not
ok or threshold-missed on either side (bench.compare.samples outcomes: failed, timeout, a
worker that crashed or could not import its code), or whose metric one side recorded and the
other did not although it ran the workload, gets verdict ``error`` on each of its results,
and the report lists the failures (which side, which workloads, the end of the error) under
``failures``; the report's verdict is then ``error``. A workload unsupported on both sides,
or only ever run on one side of recorded results, is listed as not compared.
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from bench.compare.samples import JUDGED, MEASURED, OUTCOME_SCHEMA, UNSUPPORTED
from reports.accepted import Acceptance
from reports.stats import attribute, compare_frames
from reports.stats.compare import MIN_EFFECT

__all__ = ["ENV_KEYS", "build_report", "environment_notes", "group_failures", "headline"]

ENV_KEYS = ("machine", "cpu_model", "cpu_count", "python", "numpy_version", "blas")
_ORDER = ("error", "regression", "inconclusive", "improvement", "no change")
_SIDE_WORD = {"base": "BASE", "head": "HEAD"}


def environment_notes(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    return [f"{k}: {base.get(k)} vs {head.get(k)}" for k in ENV_KEYS
            if k in base and k in head and base.get(k) != head.get(k)]


def headline(results: Sequence[Mapping[str, Any]]) -> str:
    """error > regression (not accepted) > inconclusive > improvement > no change."""
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
        med = part.group_by("metric").agg(pl.col("value").median()).sort("metric")
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


def group_failures(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Failure rows (side, mode, workload, round, status, error) grouped by what went wrong:
    one entry per (side, mode, status, error) with its workloads (in order of appearance) and
    rounds, BASE's first."""
    groups: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for r in rows:
        key = (r["side"], r["mode"], r["status"], r["error"] or "")
        g = groups.setdefault(key, {"side": r["side"], "mode": r["mode"],
                                    "status": r["status"], "workloads": [], "rounds": [],
                                    "error": r["error"] or f"status {r['status']}"})
        if r["workload"] not in g["workloads"]:
            g["workloads"].append(r["workload"])
        if r.get("round") is not None and r["round"] not in g["rounds"]:
            g["rounds"].append(r["round"])
    out = sorted(groups.values(), key=lambda g: (g["side"] != "base", g["mode"]))
    for g in out:
        g["rounds"].sort()
    return out


def _failures(outcomes: pl.DataFrame) -> tuple[dict[tuple[str, str], list[dict[str, Any]]],
                                               set[tuple[str, str, str]], list[str]]:
    """(failure rows by (mode, workload), the (side, mode, workload) that ran, notes on the
    workloads unsupported on both sides)."""
    failed: dict[tuple[str, str], list[dict[str, Any]]] = {}
    ran: set[tuple[str, str, str]] = set()
    notes: list[str] = []
    for (mode, workload), g in outcomes.group_by(["mode", "workload"], maintain_order=True):
        rows = g.to_dicts()
        statuses = {(r["side"], r["status"]) for r in rows}
        if {s for _, s in statuses} == {UNSUPPORTED} and {s for s, _ in statuses} == {
                "base", "head"}:
            reason = next((r["error"] for r in rows if r["error"]), "")
            notes.append(f"{workload} ({mode}): unsupported on both sides"
                         + (f": {reason.splitlines()[-1]}" if reason else ""))
            continue
        for r in rows:
            if r["status"] in MEASURED:
                ran.add((r["side"], str(mode), str(workload)))
            else:
                failed.setdefault((str(mode), str(workload)), []).append(r)
    return failed, ran, notes


@dataclass
class _Tally:
    """What judging adds up: the failure rows by (mode, workload) (``failed``) and the (side,
    mode, workload) that ran, as the outcomes and samples tell; the results, the plugin
    breakdowns of regressions, every failure row (the outcomes' first) and the notes on what
    was not compared."""

    failed: dict[tuple[str, str], list[dict[str, Any]]]
    ran: set[tuple[str, str, str]]
    failure_rows: list[dict[str, Any]]
    not_compared: list[str]
    results: list[dict[str, Any]] = field(default_factory=list)
    breakdowns: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Rules:
    """How a mode is judged (``min_effect``, ``q``, time rounds ``paired``) and what a result
    is told (uncommon, accepted on ``today``, attributed from the time samples ``time_df``)."""

    min_effect: Mapping[str, float]
    q: float
    paired: bool
    time_df: pl.DataFrame
    uncommon: Callable[[str], bool]
    accepted: Sequence[Acceptance]
    today: dt.date
    in_base: Callable[[str], bool]


def _tally(df: pl.DataFrame, outcomes: pl.DataFrame) -> _Tally:
    """The tally before any sample is judged: failures and runs from the outcomes, runs from
    the samples."""
    failed, ran, not_compared = _failures(outcomes)
    ran |= {(str(s), str(m), str(w)) for s, m, w in df.select("side", "mode", "workload")
            .unique().iter_rows()}
    failure_rows = [r for rows in failed.values() for r in rows]
    return _Tally(failed, ran, failure_rows, not_compared)


def _time_pairing(df: pl.DataFrame, failed: Mapping[tuple[str, str], Any]
                  ) -> tuple[pl.DataFrame, bool]:
    """(the time-mode samples, whether their rounds pair up)."""
    broken = {w for (m, w) in failed if m == "time"}
    time_df = df.filter(pl.col("mode") == "time")
    # pairing is decided on the workloads that did not fail (a lost round is their error)
    judged_time = time_df.filter(~pl.col("workload").is_in(sorted(broken)))
    time_rounds = {s: set(judged_time.filter(pl.col("side") == s)["round"].to_list())
                   for s in ("base", "head")}
    return time_df, bool(time_rounds["base"]) and time_rounds["base"] == time_rounds["head"]


def _verdict(row: Mapping[str, Any], mode: str, tally: _Tally) -> tuple[str, Any] | None:
    """(verdict, note) of one compared (workload, metric) of ``mode``; None when it is not
    compared (recorded results: never run on one side). A failure found here is added to
    ``tally``'s failure rows, a workload not compared to its notes."""
    w, metric = row["workload"], row["metric"]
    note = row["note"]
    if (mode, w) in tally.failed:
        sides = sorted({_SIDE_WORD[f["side"]] for f in tally.failed[(mode, w)]})
        return "error", f"{' and '.join(sides)} failed on this workload"
    if row["verdict"] is None and str(note).startswith("missing in "):
        side = "head" if note == "missing in HEAD" else "base"
        other = "base" if side == "head" else "head"
        if (side, mode, w) not in tally.ran:  # recorded results: never run on that side
            tally.not_compared.append(f"{w} ({mode}): measured only in {_SIDE_WORD[other]}")
            return None
        note = (f"{_SIDE_WORD[side]} recorded no {metric} value for this workload "
                f"({_SIDE_WORD[other]} did)")
        tally.failure_rows.append({"side": side, "mode": mode, "workload": w,
                                   "round": None, "status": "no data", "error": note})
        return "error", note
    if row["verdict"] is None:  # values that cannot be judged (e.g. <= 0)
        first = str(note).split(maxsplit=1)[0].rstrip(":").lower() if note else ""
        for side in [first] if first in _SIDE_WORD else list(_SIDE_WORD):
            tally.failure_rows.append({"side": side, "mode": mode, "workload": w,
                                       "round": None, "status": "bad data",
                                       "error": f"{metric}: {note}"})
        return "error", note
    return row["verdict"] or "inconclusive", note


def _result(row: Mapping[str, Any], mode: str, verdict: str, note: Any,
            sides: tuple[pl.DataFrame, pl.DataFrame], higher_is_better: bool,
            uncommon: Callable[[str], bool]) -> dict[str, Any]:
    """One entry of the report's results (not accepted, no attribution yet)."""
    w, metric = row["workload"], row["metric"]
    sel = (pl.col("workload") == w) & (pl.col("metric") == metric)
    b, h = sides
    return {
        "workload": w, "mode": mode, "metric": metric, "unit": row["unit"],
        "higher_is_better": higher_is_better, "uncommon": uncommon(w),
        "base": _sample(b.filter(sel).sort("round")["value"].to_list()),
        "head": _sample(h.filter(sel).sort("round")["value"].to_list()),
        "ratio": _num(row["ratio"]), "ci_low": _num(row["ci_low"]),
        "ci_high": _num(row["ci_high"]), "p_value": _num(row["p_value"]),
        "q_value": _num(row["p_adjusted"]), "verdict": verdict,
        "more_rounds": row["more_rounds_needed"], "accepted": None,
        "attribution": [], "note": note,
    }


def _explain_regression(r: dict[str, Any], rules: _Rules, tally: _Tally) -> None:
    """The first accepted regression that matches ``r``, and its attribution from the plugin
    timings (their breakdown goes to ``tally``)."""
    w, metric = r["workload"], r["metric"]
    for a in rules.accepted:
        if a.matches(w, metric) and a.active(rules.today, rules.in_base):
            r["accepted"] = {"why": a.why, "source": a.source}
            break
    r["attribution"], breakdown = _attribution(rules.time_df, w, rules.paired)
    if breakdown:
        tally.breakdowns[w] = breakdown


def _judge_mode(df: pl.DataFrame, mode: str, rules: _Rules, tally: _Tally) -> None:
    """Judge every (workload, metric) of ``mode`` as one family; results go to ``tally``."""
    judged = [m for (md, m) in JUDGED if md == mode]
    part = df.filter((pl.col("mode") == mode) & pl.col("metric").is_in(judged))
    b, h = part.filter(pl.col("side") == "base"), part.filter(pl.col("side") == "head")
    if b.is_empty() and h.is_empty():
        return
    directions = {m: JUDGED[(mode, m)][1] for m in judged}
    table = compare_frames(b, h, keys=("workload", "metric"), mode=mode,  # type: ignore[arg-type]
                           paired=rules.paired and mode == "time",
                           min_effect=rules.min_effect.get(mode), q=rules.q,
                           higher_is_better=directions)
    for row in table.iter_rows(named=True):
        decided = _verdict(row, mode, tally)
        if decided is None:
            continue
        verdict, note = decided
        r = _result(row, mode, verdict, note, (b, h), directions[row["metric"]],
                    rules.uncommon)
        if verdict == "regression":
            _explain_regression(r, rules, tally)
        tally.results.append(r)


def _settings(modes: Sequence[str], repeat: int, q: float, min_effect: Mapping[str, float],
              seed: int | None, label: str | None, wall_seconds: float | None,
              extra_settings: Mapping[str, Any] | None, not_compared: Sequence[str]
              ) -> dict[str, Any]:
    """The report's settings: the common ones, ``extra_settings``, and ``not_compared`` added
    to theirs (once each)."""
    settings_extra = dict(extra_settings or {})
    if not_compared:
        settings_extra["not_compared"] = list(dict.fromkeys(
            [*settings_extra.get("not_compared", ()), *not_compared]))
    return {"modes": list(modes), "repeat": repeat,
            "min_effect": {m: min_effect.get(m, MIN_EFFECT[m]) for m in modes},
            "q": q, "seed": seed, "label": label, "wall_seconds": wall_seconds,
            **settings_extra}


def build_report(df: pl.DataFrame, *, kind: str, base: Mapping[str, Any],
                 head: Mapping[str, Any], modes: Sequence[str], repeat: int, q: float,
                 min_effect: Mapping[str, float], seed: int | None, label: str | None,
                 uncommon: Callable[[str], bool], accepted: Sequence[Acceptance] = (),
                 in_base: Callable[[str], bool] = lambda commit: False,
                 today: dt.date | None = None, wall_seconds: float | None = None,
                 extra_settings: Mapping[str, Any] | None = None,
                 outcomes: pl.DataFrame | None = None) -> dict[str, Any]:
    """The report dict; ``base``/``head`` are report Side dicts (label, commit, core_path,
    config, environment); ``outcomes`` the outcomes table of both sides (see the module
    doc; without it, only the samples tell what ran)."""
    today = today or dt.datetime.now(dt.UTC).date()
    if outcomes is None:
        outcomes = pl.DataFrame(schema=OUTCOME_SCHEMA)
    tally = _tally(df, outcomes)
    time_df, paired = _time_pairing(df, tally.failed)
    rules = _Rules(min_effect=min_effect, q=q, paired=paired, time_df=time_df,
                   uncommon=uncommon, accepted=accepted, today=today, in_base=in_base)
    for mode in modes:
        _judge_mode(df, mode, rules, tally)
    notes = environment_notes(base.get("environment", {}), head.get("environment", {}))
    failures = group_failures(tally.failure_rows)
    return {
        "schema": 1,
        "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "kind": kind, "base": dict(base), "head": dict(head),
        "environment_differs": bool(notes), "environment_notes": notes,
        "settings": _settings(modes, repeat, q, min_effect, seed, label, wall_seconds,
                              extra_settings, tally.not_compared),
        "verdict": "error" if failures else headline(tally.results),
        "failures": failures,
        "results": tally.results,
        "plugin_breakdown": tally.breakdowns,
    }
