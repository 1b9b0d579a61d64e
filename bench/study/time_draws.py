"""Time mode: decisions resampled from the pools' rounds and judged as compare judges them,
their rates (false alarms, power, the smallest size detected) and the attribution of flagged
workloads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from bench.compare.samples import JUDGED
from bench.study.settings import ALARMS, PLUGIN_KEY
from reports.stats import attribute, compare_frames
from reports.stats.compare import DEFAULT_Q, MIN_EFFECT

__all__ = ["DECISION_SCHEMA", "TIME_METRICS", "achieved", "draw_decisions", "round_noise",
           "summarize", "top_plugin", "undrawn"]

TIME_METRICS = {m: hib for (mode, m), (_, hib) in JUDGED.items() if mode == "time"}
DECISION_SCHEMA = {"cell": pl.String, "target": pl.String, "n": pl.Int64, "draw": pl.Int64,
                   "workload": pl.String, "affected": pl.Boolean, "regression": pl.Boolean,
                   "alarm": pl.Boolean, "verdicts": pl.String}


def _complete_rounds(rows: pl.DataFrame, workload: str) -> list[int]:
    """Rounds of ``rows`` where ``workload`` has every judged metric on both sides."""
    part = rows.filter((pl.col("workload") == workload)
                       & pl.col("metric").is_in(list(TIME_METRICS)))
    counts = part.group_by("round").len()
    want = 2 * len(TIME_METRICS)
    return sorted(counts.filter(pl.col("len") == want)["round"].to_list())


def _gaps(pool: pl.DataFrame, workload: str) -> str:
    """Which judged metric ``workload`` lacks in which rounds of ``pool``, per side."""
    part = pool.filter(pl.col("workload") == workload)
    seen = sorted(part["round"].unique().to_list())
    gaps = []
    for metric in TIME_METRICS:
        for side in ("base", "head"):
            have = set(part.filter((pl.col("metric") == metric)
                                   & (pl.col("side") == side))["round"].to_list())
            lack = [str(r) for r in seen if r not in have]
            if lack:
                gaps.append(f"{metric} missing on {side} in round{'s' * (len(lack) > 1)} "
                            f"{', '.join(lack)}")
    return "; ".join(gaps) or "no rounds"


@dataclass(frozen=True)
class _Cell:
    """A decision cell ("aa" or a size with its affected target): per workload, the pool its
    rounds come from and the rounds with every judged metric on both sides."""

    name: str
    target: str | None
    pools: dict[str, pl.DataFrame]
    complete: dict[str, list[int]]

    def short_of(self, n: int) -> list[str]:
        """Workloads with fewer than ``n`` complete rounds (the cell cannot draw ``n``)."""
        return [w for w, r in self.complete.items() if len(r) < n]

    def why_not(self, n: int) -> str:
        """Why the cell is not judged with ``n`` rounds: the workloads short of rounds and
        what their rounds lack."""
        where = self.name if self.target is None else f"{self.name}/{self.target}"
        short = "; ".join(f"{w} has {len(self.complete[w])} ({_gaps(self.pools[w], w)})"
                          for w in self.short_of(n))
        return (f"cell {where} not judged with {n} rounds: too few rounds with every judged "
                f"metric ({', '.join(TIME_METRICS)}) on both sides: {short}")


def _cells(rows: pl.DataFrame, workloads: Sequence[str], affected: Sequence[str],
           sizes: Sequence[str]) -> list[_Cell]:
    aa = rows.filter(pl.col("pool") == "aa")
    aa_rounds = {w: _complete_rounds(aa, w) for w in workloads}
    cells = [_Cell("aa", None, dict.fromkeys(workloads, aa), aa_rounds)]
    for size in sizes:
        for target in affected:
            pool = rows.filter((pl.col("pool") == size) & (pl.col("target") == target))
            cells.append(_Cell(size, target,
                               {w: pool if w == target else aa for w in workloads},
                               {w: _complete_rounds(pool, target) if w == target
                                else aa_rounds[w] for w in workloads}))
    return cells


def undrawn(rows: pl.DataFrame, workloads: Sequence[str], affected: Sequence[str],
            sizes: Sequence[str], rounds: Sequence[int]) -> list[str]:
    """One problem per cell and number of rounds that :func:`draw_decisions` leaves out,
    naming the workloads short of complete rounds and the metrics their rounds lack."""
    return [cell.why_not(n) for cell in _cells(rows, workloads, affected, sizes)
            for n in rounds if cell.short_of(n)]


def draw_decisions(rows: pl.DataFrame, workloads: Sequence[str], affected: Sequence[str],
                   sizes: Sequence[str], rounds: Sequence[int], draws: int,
                   rng: np.random.Generator, *, min_effect: float = MIN_EFFECT["time"],
                   q: float = DEFAULT_Q) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """Resampled decisions: one row per (cell, n, draw, workload) with the verdicts of its
    judged metrics; plus attributions of flagged affected workloads. A cell with a workload
    short of ``n`` complete rounds is left out at ``n`` (:func:`undrawn` says which and why)."""
    out: list[dict[str, Any]] = []
    attributions: list[dict[str, Any]] = []
    for c in _cells(rows, workloads, affected, sizes):
        cell, target = c.name, c.target
        for n in rounds:
            if c.short_of(n):
                continue
            for d in range(draws):
                parts = []
                for w in workloads:
                    pick = rng.choice(c.complete[w], size=n, replace=False).tolist()
                    parts.append(c.pools[w].filter((pl.col("workload") == w)
                                                   & pl.col("round").is_in(pick)))
                sample = pl.concat(parts)
                judged = sample.filter(pl.col("metric").is_in(list(TIME_METRICS)))
                table = compare_frames(judged.filter(pl.col("side") == "base"),
                                       judged.filter(pl.col("side") == "head"),
                                       mode="time", paired=True, min_effect=min_effect, q=q,
                                       higher_is_better=TIME_METRICS)
                verdicts: dict[str, dict[str, str]] = {}
                for r in table.iter_rows(named=True):
                    verdicts.setdefault(r["workload"], {})[r["metric"]] = (
                        r["verdict"] or "inconclusive")
                for w in workloads:
                    v = verdicts.get(w, {})
                    out.append({"cell": cell, "target": target, "n": n, "draw": d,
                                "workload": w, "affected": w == target,
                                "regression": any(x == "regression" for x in v.values()),
                                "alarm": any(x in ALARMS for x in v.values()),
                                "verdicts": ",".join(f"{m}={x}" for m, x in sorted(v.items()))})
                if target and any(x == "regression" for x in verdicts.get(target, {}).values()):
                    attributions.append({"cell": cell, "target": target, "n": n, "draw": d,
                                         "top": top_plugin(sample, target)})
    # an explicit schema: the A/A rows come first and have no target (inferring from them
    # fails on the first slowdown row), and no draw at all must still give the columns
    return pl.DataFrame(out, schema=DECISION_SCHEMA), attributions


def top_plugin(sample: pl.DataFrame, workload: str) -> str | None:
    """The first key reports.stats.attribute names for ``workload`` from the plugin timings
    of ``sample``'s rounds (BASE and HEAD paired round by round); None without any."""
    plug = sample.filter((pl.col("workload") == workload)
                         & pl.col("metric").str.starts_with("plugin:"))
    rounds: dict[str, list[dict[str, float]]] = {}
    for side in ("base", "head"):
        per = []
        for _, g in plug.filter(pl.col("side") == side).group_by("round", maintain_order=True):
            per.append({m.removeprefix("plugin:"): v
                        for m, v in zip(g["metric"].to_list(), g["value"].to_list(),
                                        strict=True)})
        rounds[side] = per
    if not rounds["base"] or len(rounds["base"]) != len(rounds["head"]):
        return None
    try:
        found = attribute(rounds["base"], rounds["head"], mode="time", paired=True, top=1)
    except ValueError:
        return None
    return str(found[0].key) if found else None


def achieved(rows: pl.DataFrame, sizes: Sequence[str], affected: Sequence[str]
             ) -> dict[str, dict[str, float | None]]:
    """Per size and affected workload: the median per-round HEAD/BASE ratio of CPU time per
    pod minus one (the slowdown the calibrated HEAD actually caused)."""
    out: dict[str, dict[str, float | None]] = {}
    for s in sizes:
        out[s] = {}
        for w in affected:
            part = rows.filter((pl.col("pool") == s) & (pl.col("target") == w)
                               & (pl.col("workload") == w) & (pl.col("metric") == "cpu_per_pod"))
            wide = part.pivot(on="side", index="round", values="value").drop_nulls()
            if wide.is_empty() or "base" not in wide.columns or "head" not in wide.columns:
                out[s][w] = None
                continue
            out[s][w] = float(np.median(np.log(wide["head"] / wide["base"]).exp()) - 1)
    return out


def round_noise(rows: pl.DataFrame) -> dict[str, dict[str, float]]:
    """A/A pool: per workload and metric, the standard deviation of the per-round log ratio
    (what pacing leaves of the machine's noise) and of BASE alone across rounds."""
    aa = rows.filter((pl.col("pool") == "aa") & pl.col("metric").is_in(list(TIME_METRICS)))
    out: dict[str, dict[str, float]] = {}
    for (w, m), g in aa.group_by(["workload", "metric"], maintain_order=True):
        wide = g.pivot(on="side", index="round", values="value").drop_nulls()
        if len(wide) < 3:
            continue
        lr = np.log(wide["head"].to_numpy() / wide["base"].to_numpy())
        lb = np.log(wide["base"].to_numpy())
        out.setdefault(str(w), {})[str(m)] = {"sd_log_ratio": float(np.std(lr, ddof=1)),
                                              "sd_log_base": float(np.std(lb, ddof=1)),
                                              "rounds": len(wide)}
    return out


def summarize(decisions: pl.DataFrame, attributions: Sequence[Mapping[str, Any]],
              sizes: Sequence[str], affected: Sequence[str], rounds: Sequence[int],
              power_goal: float = 0.9) -> dict[str, Any]:
    """False alarms, power per size, the smallest size reaching ``power_goal``, attribution."""
    out: dict[str, Any] = {"aa": {}, "power": {}, "controls": {}, "smallest_detected": {},
                           "attribution": {}}
    for n in rounds:
        aa = decisions.filter((pl.col("cell") == "aa") & (pl.col("n") == n))
        if aa.is_empty():
            continue
        per_w = aa.group_by("workload").agg(pl.col("alarm").mean().alias("rate"))
        draws = aa.group_by("draw").agg(pl.col("alarm").any())
        out["aa"][str(n)] = {
            "per_workload": dict(zip(per_w["workload"], per_w["rate"], strict=True)),
            "any_alarm_per_draw": float(draws["alarm"].mean()),  # type: ignore[arg-type]
            "draws": int(aa["draw"].n_unique())}
        out["power"][str(n)], out["controls"][str(n)] = {}, {}
        for s in sizes:
            cell = decisions.filter((pl.col("cell") == s) & (pl.col("n") == n))
            if cell.is_empty():
                continue
            hit = cell.filter(pl.col("affected"))
            power = hit.group_by("workload").agg(pl.col("regression").mean())
            out["power"][str(n)][s] = dict(zip(power["workload"], power["regression"],
                                               strict=True))
            ctl = cell.filter(~pl.col("affected"))
            out["controls"][str(n)][s] = float(ctl["alarm"].mean()) if len(ctl) else None
        ok = [s for s in sorted(sizes, key=float)
              if s in out["power"][str(n)]
              and all(v >= power_goal for v in out["power"][str(n)][s].values())]
        out["smallest_detected"][str(n)] = ok[0] if ok else None
        named = [a for a in attributions if a["n"] == n]
        out["attribution"][str(n)] = {
            "flagged": len(named),
            "names_plugin": (sum(a["top"] == PLUGIN_KEY for a in named) / len(named))
            if named else None}
    return out
