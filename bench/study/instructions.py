"""Instruction mode of the detector study: the A/A figures, which workloads to count (the
affected ones and a few controls; bench/study/slowdown_counts.py counts them), each size
judged as compare judges counts, and the attribution of the regressions from paced time
rounds."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from bench.compare.measure import SideRun, run_time
from bench.compare.samples import to_frame
from bench.measure.spec import WorkerSpec
from bench.study.counts import Count, count_row, judge_counts
from bench.study.probe import FeatureShare
from bench.study.settings import ALARMS, Say, StudySettings, size_key
from bench.study.slowdown_counts import SlowdownCounts
from bench.study.time_draws import top_plugin

__all__ = ["aa_verdicts", "instruction_attribution", "judge_size", "pick_controls",
           "run_instruction_study"]

def run_instruction_study(settings: StudySettings, spec: WorkerSpec,
                          probe: Mapping[str, FeatureShare],
                          aa_counts: Mapping[str, Mapping[str, Count]], say: Say
                          ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The A/A verdicts (from ``aa_counts``, when both sides are there), then per affected
    workload and control, in a slot of its own: a BASE count, then one HEAD count per size
    (affected: calibrated so that the extra work is f of that BASE count; controls: the
    plain config of the size), each size judged against the BASE counts."""
    records: list[dict[str, Any]] = []
    for side, counts in aa_counts.items():
        for c in counts.values():
            records.append({"study": "aa", "side": side, "size": None, **count_row(c)})
    result: dict[str, Any] = {"aa": aa_verdicts(aa_counts), "slowdown": {}}
    failed = {n for n, c in aa_counts.get("base", {}).items() if c.measured is None}
    affected = sorted(n for n in spec.workloads
                      if probe[n].is_affected and probe[n].status == "ok" and n not in failed)
    controls = [n for n in pick_controls(probe, spec.workloads, settings.controls)
                if n not in failed]
    result["affected"], result["controls"] = affected, controls
    counted = SlowdownCounts(settings, spec, probe, affected, controls)
    counted.run(say)
    for c in counted.base.values():
        records.append({"study": "slowdown", "side": "base", "size": None, **count_row(c)})
    result["calibration"] = counted.cals
    result["fitted_costs"] = counted.fits
    for size in settings.sizes:
        key = size_key(size)
        for c in counted.heads[key].values():
            records.append({"study": "slowdown", "side": "head", "size": size,
                            **count_row(c)})
        result["slowdown"][key] = judge_size(counted, key, affected, controls)
    return result, records


def aa_verdicts(aa_counts: Mapping[str, Mapping[str, Count]]) -> dict[str, Any] | None:
    """The A/A figures of the workloads counted on both sides (None without any): identical
    counts, compare's verdicts (any alarm is a false one) and the differences."""
    base_aa, head_aa = aa_counts.get("base", {}), aa_counts.get("head", {})
    both = [n for n in sorted(base_aa) if base_aa[n].measured is not None
            and head_aa.get(n) and head_aa[n].measured is not None]
    if not both:
        return None
    identical = [n for n in both if head_aa[n].measured == base_aa[n].measured]
    verdicts = judge_counts({n: base_aa[n] for n in both}, {n: head_aa[n] for n in both})
    diffs = {n: (head_aa[n].measured or 0) - (base_aa[n].measured or 0)
             for n in both if n not in set(identical)}
    rel = [abs(d) / (base_aa[n].measured or 1) for n, d in diffs.items()]
    alarms = sum(v in ALARMS for v in verdicts.values())
    return {"workloads": len(both), "identical": len(identical),
            "identical_rate": len(identical) / len(both),
            "false_alarms": alarms, "false_alarm_rate": alarms / len(verdicts),
            "verdicts": verdicts, "differences": diffs,
            "max_relative_difference": max(rel, default=0.0)}


def judge_size(counted: SlowdownCounts, key: str, affected: Sequence[str],
               controls: Sequence[str]) -> dict[str, Any]:
    """One size: each HEAD count judged against its BASE count, and how many affected
    workloads were flagged (and controls, which should not be)."""
    hs = counted.heads[key]
    base = counted.base
    verdicts = judge_counts({n: base[n] for n in hs}, hs)
    per: dict[str, Any] = {}
    for n, c in hs.items():
        b = base[n]
        change = (c.per_pod / b.per_pod - 1) if c.per_pod and b.per_pod else None
        per[n] = {"affected": n in set(affected), "share": counted.probe[n].share,
                  "verdict": verdicts.get(n), "change": change,
                  "extra_instructions": (c.measured - b.measured)
                  if c.measured is not None and b.measured is not None else None,
                  "status": c.status, "config": str(counted.cfg_of[(n, key)]),
                  "attribution": None}
    flagged_aff = [n for n in affected if per.get(n, {}).get("verdict") == "regression"]
    flagged_ctl = [n for n in controls if per.get(n, {}).get("verdict") in ALARMS]
    return {
        "workloads": per,
        "detected": len(flagged_aff), "affected": len(affected),
        "detection_rate": len(flagged_aff) / len(affected) if affected else None,
        "controls_flagged": len(flagged_ctl),
        "exact": len(flagged_aff) == len(affected) and not flagged_ctl,
    }


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
