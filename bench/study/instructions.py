"""Instruction mode of the detector study: per affected workload (and a few controls), a BASE
count and one calibrated HEAD count per size, judged as compare judges counts; attribution of
the regressions from paced time rounds."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from bench.compare.measure import SideRun, run_time
from bench.compare.samples import to_frame
from bench.measure.spec import WorkerSpec
from bench.study.configs import write_config
from bench.study.counts import Count, count_in_slot, count_row, judge_counts
from bench.study.probe import FeatureShare
from bench.study.settings import ALARMS, Say, StudySettings, size_key
from bench.study.time_draws import top_plugin

__all__ = ["fit_unit_costs", "fitted_calibration", "instruction_attribution", "pick_controls",
           "run_instruction_study"]

# instruction-mode HEADs aim this much (relative) above the nominal size, so that a nominal
# 1 % cannot land below the 1 % minimum effect: with the plugin's constants (the two largest
# sizes; unit and call costs vary by about 1 % and 30 % between workloads) and with the
# workload's own fitted costs (the other sizes; they predict counts to about 0.3 %)
INSTRUCTION_MARGIN = 0.02
FITTED_MARGIN = 0.005


def run_instruction_study(settings: StudySettings, spec: WorkerSpec,
                          probe: Mapping[str, FeatureShare],
                          aa_counts: Mapping[str, Mapping[str, Count]], say: Say
                          ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The A/A verdicts (from ``aa_counts``, when both sides are there), then per affected
    workload and control, in a slot of its own: a BASE count, then one HEAD count per size
    (affected: calibrated so that the extra work is f of that BASE count; controls: the
    plain config of the size), each size judged against the BASE counts."""
    from workloads.example_plugins.slowdown import CALL_INSTRUCTIONS, UNIT_INSTRUCTIONS

    records: list[dict[str, Any]] = []
    for side, counts in aa_counts.items():
        for c in counts.values():
            records.append({"study": "aa", "side": side, "size": None, **count_row(c)})
    result: dict[str, Any] = {"aa": None, "slowdown": {}}
    base_aa, head_aa = aa_counts.get("base", {}), aa_counts.get("head", {})
    both = [n for n in sorted(base_aa) if base_aa[n].measured is not None
            and head_aa.get(n) and head_aa[n].measured is not None]
    if both:
        identical = [n for n in both if head_aa[n].measured == base_aa[n].measured]
        verdicts = judge_counts({n: base_aa[n] for n in both}, {n: head_aa[n] for n in both})
        diffs = {n: (head_aa[n].measured or 0) - (base_aa[n].measured or 0)
                 for n in both if n not in set(identical)}
        rel = [abs(d) / (base_aa[n].measured or 1) for n, d in diffs.items()]
        alarms = sum(v in ALARMS for v in verdicts.values())
        result["aa"] = {"workloads": len(both), "identical": len(identical),
                        "identical_rate": len(identical) / len(both),
                        "false_alarms": alarms, "false_alarm_rate": alarms / len(verdicts),
                        "verdicts": verdicts, "differences": diffs,
                        "max_relative_difference": max(rel, default=0.0)}
    failed = {n for n, c in base_aa.items() if c.measured is None}
    affected = sorted(n for n in spec.workloads
                      if probe[n].is_affected and probe[n].status == "ok" and n not in failed)
    controls = [n for n in pick_controls(probe, spec.workloads, settings.controls)
                if n not in failed]
    result["affected"], result["controls"] = affected, controls
    per_call = CALL_INSTRUCTIONS / UNIT_INSTRUCTIONS
    cfg_dir = settings.out / "configs"
    # slots: each workload's counts all happen in one slot; balance by attempts
    n_slots = max(1, min(settings.jobs, len(affected) + len(controls)))
    queues: list[list[str]] = [[] for _ in range(n_slots)]
    load = [0] * n_slots
    for w in sorted(affected + controls, key=lambda n: -probe[n].attempts):
        i = load.index(min(load))
        queues[i].append(w)
        load[i] += probe[w].attempts
    per_slot_jobs = max(1, settings.jobs // n_slots)
    base: dict[str, Count] = {}
    heads: dict[str, dict[str, Count]] = {size_key(s): {} for s in settings.sizes}
    cals: dict[str, dict[str, float]] = {}
    cfg_of: dict[tuple[str, str], Path] = {}

    fits: dict[str, dict[str, Any]] = {}

    def count(slot: Path, w: str, tag: str, key: str, size: float,
              cal: str | dict[str, float]) -> Count:
        cfg = write_config(cfg_dir / f"instructions-{tag}-{key}.yaml", size,
                           settings.feature, cal)
        cfg_of[(w, key)] = cfg
        return count_in_slot(slot, spec, [w], cfg, settings.out / "instructions" /
                             f"{tag}-{key}", per_slot_jobs)[w]

    def slot_worker(i: int) -> None:
        slot = settings.out / "instructions" / f"slot{i}"
        for w in queues[i]:
            tag = f"w{spec.workloads.index(w):02d}"
            if w not in set(affected):
                base[w] = count(slot, w, tag, "base", 0.0, "instructions")
                for size in settings.sizes:
                    heads[size_key(size)][w] = count(slot, w, tag, size_key(size), size,
                                                     "instructions")
                continue
            c = count(slot, w, tag, "base", 0.0,
                      {"perPod": 1.0, "perNode": 0.0, "perCall": per_call})
            base[w] = c
            if c.measured is None:
                continue
            p = probe[w]
            owed = c.measured * (1 + INSTRUCTION_MARGIN)
            plain = {"perPod": owed / (p.affected * UNIT_INSTRUCTIONS), "perNode": 0.0,
                     "perCall": per_call}
            cals[w] = {}
            fit: tuple[float, float] | None = None
            done: list[tuple[float, dict[str, float], Count]] = []
            for size in sorted(settings.sizes, reverse=True):
                key = size_key(size)
                cal = plain
                if fit is not None:
                    cal = fitted_calibration(c.measured * size * (1 + FITTED_MARGIN), size,
                                             fit, p)
                cals[w][key] = cal
                h = count(slot, w, tag, key, size, cal)
                heads[key][w] = h
                if h.measured is not None:
                    done.append((size, cal, h))
                if fit is None and len(done) == 2:
                    fit = fit_unit_costs(done, c, p)
                    fits[w] = {"call_instructions": fit[0], "unit_instructions": fit[1],
                               "from_sizes": [size_key(d[0]) for d in done]}

    say(f"instructions: {len(affected)} affected workloads and {len(controls)} controls, a "
        f"BASE and {len(settings.sizes)} HEAD counts each, in {n_slots} slots")
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=n_slots) as pool:
        list(pool.map(slot_worker, range(n_slots)))
    say(f"instructions: slowdown counts took {time.perf_counter() - started:.0f} s")
    for c in base.values():
        records.append({"study": "slowdown", "side": "base", "size": None, **count_row(c)})
    result["calibration"] = cals
    result["fitted_costs"] = fits
    for size in settings.sizes:
        key = size_key(size)
        hs = heads[key]
        for c in hs.values():
            records.append({"study": "slowdown", "side": "head", "size": size,
                            **count_row(c)})
        verdicts = judge_counts({n: base[n] for n in hs}, hs)
        per: dict[str, Any] = {}
        for n, c in hs.items():
            b = base[n]
            change = (c.per_pod / b.per_pod - 1) if c.per_pod and b.per_pod else None
            per[n] = {"affected": n in set(affected), "share": probe[n].share,
                      "verdict": verdicts.get(n), "change": change,
                      "extra_instructions": (c.measured - b.measured)
                      if c.measured is not None and b.measured is not None else None,
                      "status": c.status, "config": str(cfg_of[(n, key)]),
                      "attribution": None}
        flagged_aff = [n for n in affected if per.get(n, {}).get("verdict") == "regression"]
        flagged_ctl = [n for n in controls if per.get(n, {}).get("verdict") in ALARMS]
        result["slowdown"][key] = {
            "workloads": per,
            "detected": len(flagged_aff), "affected": len(affected),
            "detection_rate": len(flagged_aff) / len(affected) if affected else None,
            "controls_flagged": len(flagged_ctl),
            "exact": len(flagged_aff) == len(affected) and not flagged_ctl,
        }
    return result, records


def fit_unit_costs(done: Sequence[tuple[float, Mapping[str, float], Count]], base: Count,
                   p: FeatureShare) -> tuple[float, float] | None:
    """(instructions per call, per unit) of ``work`` in this workload, from two HEAD counts:
    each extra count is ``calls * call + units * unit``, calls and units simulated exactly as
    the plugin runs them. None when the two counts do not determine a sensible pair."""
    from workloads.example_plugins.slowdown import simulate

    rows, extra = [], []
    for size, cal, h in done[:2]:
        calls, units = simulate(size * cal["perPod"], cal["perCall"], p.affected,
                                p.setup_affected)
        rows.append([calls, units])
        extra.append((h.measured or 0) - (base.measured or 0))
    try:
        call, unit = np.linalg.solve(np.array(rows, dtype=float), np.array(extra, dtype=float))
    except np.linalg.LinAlgError:
        return None
    if not (0 <= call < 50_000 and 10_000 < unit < 40_000):
        return None
    return float(call), float(unit)


def fitted_calibration(target: float, size: float, fit: tuple[float, float],
                       p: FeatureShare) -> dict[str, float]:
    """The calibration whose simulated extra instructions (with the workload's fitted call
    and unit costs) first reach ``target`` at ``size``: bisection over ``perPod``."""
    from workloads.example_plugins.slowdown import simulate

    call, unit = fit
    per_call = call / unit

    def extra(per_pod: float) -> float:
        calls, units = simulate(size * per_pod, per_call, p.affected, p.setup_affected)
        return calls * call + units * unit

    lo, hi = 0.0, max(1.0, 2 * target / (size * p.affected * unit))
    while extra(hi) < target:
        hi *= 2
    for _ in range(50):
        mid = (lo + hi) / 2
        if extra(mid) >= target:
            hi = mid
        else:
            lo = mid
    return {"perPod": hi, "perNode": 0.0, "perCall": per_call}


def pick_controls(probe: Mapping[str, FeatureShare], names: Iterable[str], k: int) -> list[str]:
    """The ``k`` unaffected ``names`` with the fewest attempts after set-up (cheapest)."""
    ok = [probe[n] for n in names if probe[n].status == "ok" and not probe[n].is_affected]
    return [p.name for p in sorted(ok, key=lambda p: (p.attempts, p.name))[:k]]


def instruction_attribution(settings: StudySettings, spec: WorkerSpec, ir: Mapping[str, Any],
                            base_config: Path, say: Say) -> None:
    """For instruction-mode regressions at the smallest and the largest size: what compare
    would attribute from ``attribution_rounds`` paced time rounds of the flagged workload
    alone (bench.compare.measure.run_time, what a user would run next), BASE against the very
    HEAD config that was counted, over the rounds with plugin timings on both sides. Fills
    each flagged workload's ``attribution`` (``"not checked"`` at the other sizes)."""
    keys = {size_key(min(settings.sizes)), size_key(max(settings.sizes))}
    n = settings.attribution_rounds
    started = time.perf_counter()
    for key, cell in ir["slowdown"].items():
        for i, (w, info) in enumerate(sorted(cell["workloads"].items())):
            if info["verdict"] != "regression":
                continue
            if key not in keys or n < 1:
                info["attribution"] = "not checked"
                continue
            sides = [SideRun("base", "BASE", env=dict(os.environ),
                             scheduler_config=str(base_config)),
                     SideRun("head", "HEAD", env=dict(os.environ),
                             scheduler_config=info["config"])]
            rows = run_time(sides, spec.replace(workloads=(w,)), n,
                            settings.out / "instructions-attribution" / f"{key}-w{i:02d}",
                            jobs=settings.jobs, timeout=settings.timeout)
            frame = to_frame(rows).filter(pl.col("workload") == w)
            both = (frame.filter(pl.col("metric").str.starts_with("plugin:"))
                    .group_by("round").agg(pl.col("side").n_unique().alias("sides"))
                    .filter(pl.col("sides") == 2)["round"].to_list())
            info["attribution"] = top_plugin(frame.filter(pl.col("round").is_in(both)), w)
    say(f"instructions: attribution rounds took {time.perf_counter() - started:.0f} s")
