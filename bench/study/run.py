"""The whole detector study: picks and probes the workloads, runs the time and the instruction
mode, writes results.json (the modules of bench/study/ do the parts)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import os
import time
from typing import Any

import click
import numpy as np
import polars as pl
from rich.console import Console

from bench.measure.instructions import valgrind_available
from bench.measure.spec import WorkerSpec
from bench.study.compare_runs import real_compare, report_digest
from bench.study.configs import write_config
from bench.study.counts import COUNTS_SCHEMA, count_in_slot, read_compare_counts
from bench.study.instructions import instruction_attribution, run_instruction_study
from bench.study.probe import choose_workloads, probe_features
from bench.study.settings import RESULTS_SCHEMA, StudySettings, size_key
from bench.study.time_mode import run_time_study

__all__ = ["run_study"]


def _loadavg() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return math.nan


def run_study(settings: StudySettings, console: Console | None = None) -> dict[str, Any]:
    """Run the whole study; write everything into ``settings.out``; return results.json."""
    console = console or Console(stderr=True)
    t0 = time.perf_counter()

    def say(text: str) -> None:
        console.print(f"[dim]{time.perf_counter() - t0:6.0f} s  {text}[/]", highlight=False)

    out = settings.out
    out.mkdir(parents=True, exist_ok=True)
    loads = [_loadavg()]
    started_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    modes = [m for m in ("instructions", "time") if m in settings.modes]
    problems: list[str] = []
    if "instructions" in modes and not valgrind_available():
        problems.append("valgrind not found: instructions mode skipped")
        modes.remove("instructions")
    label, picked = choose_workloads(settings.configs, settings.label, settings.name_regex)
    time_label, picked_time = choose_workloads(settings.configs, settings.time_label,
                                               settings.name_regex, "compare-time", label)
    sets = {"instructions": picked, "time": picked_time}
    for mode in modes:
        if not sets[mode]:
            raise click.ClickException(f"no workload matches the {mode} label "
                                       f"{label if mode == 'instructions' else time_label!r}")
    specs = {m: WorkerSpec(configs=tuple(sorted({str(tc.source) for tc, _ in p})),
                           workloads=tuple(w.full_name for _, w in p), seed=settings.seed)
             for m, p in sets.items() if p}
    say(f"instructions: {len(picked)} workloads (label {label}); time: {len(picked_time)} "
        f"(label {time_label}); feature {settings.feature}; modes {', '.join(modes)}")
    configs = {"base": write_config(out / "configs" / "base.yaml", 0.0, settings.feature)}
    for sz in settings.sizes:
        configs[size_key(sz)] = write_config(out / "configs" / f"plain-{size_key(sz)}.yaml",
                                             sz, settings.feature, "instructions")
    durations: dict[str, float] = {}
    t = time.perf_counter()
    union = {w.full_name: (tc, w) for m in modes for tc, w in sets[m]}
    probe = probe_features(list(union.values()), configs["base"], settings.seed, say)
    durations["probe"] = time.perf_counter() - t
    for name, p in probe.items():
        if p.status != "ok":
            problems.append(f"probe: {name}: {p.status} with the BASE config (no data in "
                            "either mode)")
    affected = {m: sorted(w.full_name for _, w in sets[m] if probe[w.full_name].is_affected)
                for m in modes}
    for m in modes:
        if not affected[m]:
            raise click.ClickException(f"no {m} workload has pods with feature "
                                       f"{settings.feature!r} after its set-up")
    results: dict[str, Any] = {
        "schema": RESULTS_SCHEMA, "started": started_at, "settings": settings.to_dict(),
        "label": label, "time_label": time_label, "modes": modes,
        "sets": {m: [w.full_name for _, w in sets[m]] for m in modes},
        "workloads": {n: dataclasses.asdict(p) | {"share": p.share}
                      for n, p in probe.items()},
        "affected": affected, "compare_wall_seconds": {}, "problems": problems,
    }

    if "time" in modes:
        if settings.compare_runs:
            wall, report, _ = real_compare("time", configs["base"], configs["base"],
                                           out / "compare-time-aa", label, time_label,
                                           settings, say)
            results["compare_wall_seconds"]["time"] = wall
            results["compare_time_aa"] = report_digest(report)
            loads.append(_loadavg())
        t = time.perf_counter()
        summary = run_time_study(
            out, picked_time, probe, base_config=configs["base"], feature=settings.feature,
            sizes=settings.sizes, rounds=settings.rounds, pool=settings.pool,
            pool_slowdown=settings.pool_slowdown, draws=settings.draws, jobs=settings.jobs,
            seed=settings.seed, say=say, timeout=settings.timeout)
        durations["time"] = time.perf_counter() - t
        loads.append(_loadavg())
        problems.extend(f"time: {p}" for p in summary["problems"])
        results["time"] = summary

    if "instructions" in modes:
        t = time.perf_counter()
        spec = specs["instructions"]
        if settings.compare_runs:
            wall, report, folder = real_compare("instructions", configs["base"],
                                                configs["base"], out / "compare-instructions-aa",
                                                label, time_label, settings, say)
            results["compare_wall_seconds"]["instructions"] = wall
            results["compare_instructions_aa"] = report_digest(report)
            aa_counts = read_compare_counts(folder)
        elif settings.instruction_aa:
            slot = out / "instructions" / "slot-aa"
            aa_counts = {side: count_in_slot(slot, spec, spec.workloads, configs["base"],
                                             out / "instructions" / f"aa-{side}",
                                             jobs=settings.jobs)
                         for side in ("base", "head")}
        else:
            aa_counts = {}
        loads.append(_loadavg())
        ir, records = run_instruction_study(settings, spec, probe, aa_counts, say)
        if records:
            pl.DataFrame([{k: r.get(k) for k in COUNTS_SCHEMA} for r in records],
                         schema=COUNTS_SCHEMA).write_parquet(out / "instructions.parquet")
        instruction_attribution(settings, spec, ir, configs["base"], say)
        durations["instructions"] = time.perf_counter() - t
        results["instructions"] = ir
    loads.append(_loadavg())
    durations["total"] = time.perf_counter() - t0
    finite = [x for x in loads if math.isfinite(x)]
    results["machine"] = {"cpu_count": os.cpu_count(),
                          "load_1min": {"min": min(finite, default=None),
                                        "mean": float(np.mean(finite)) if finite else None,
                                        "max": max(finite, default=None)}}
    results["durations_seconds"] = durations
    seen: dict[str, int] = {}
    for p in problems:
        seen[p] = seen.get(p, 0) + 1
    results["problems"] = [p if n == 1 else f"{p} (x{n})" for p, n in seen.items()]
    results["finished"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n",
                                      encoding="utf-8")
    return results
