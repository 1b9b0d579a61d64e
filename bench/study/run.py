"""The whole detector study: picks and probes the workloads, runs the time and the instruction
mode, writes results.json (the modules of bench/study/ do the parts)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np
import polars as pl
from rich.console import Console

from bench.measure.instructions import valgrind_available
from bench.measure.spec import WorkerSpec
from bench.study.compare_runs import real_compare, report_digest
from bench.study.configs import write_config
from bench.study.counts import COUNTS_SCHEMA, Count, count_in_slot, read_compare_counts
from bench.study.instructions import instruction_attribution, run_instruction_study
from bench.study.probe import FeatureShare, choose_workloads, probe_features
from bench.study.settings import RESULTS_SCHEMA, Say, StudySettings, size_key
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
    problems: list[str] = []
    modes = _modes(settings, problems)
    label, time_label, sets = _workload_sets(settings, modes)
    say(f"instructions: {len(sets['instructions'])} workloads (label {label}); time: "
        f"{len(sets['time'])} (label {time_label}); feature {settings.feature}; modes "
        f"{', '.join(modes)}")
    configs = _write_configs(settings)
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
    ctx = _Context(settings, configs, label, time_label, probe, say, loads, durations, problems)
    if "time" in modes:
        _time_mode(ctx, sets["time"], results)
    if "instructions" in modes:
        _instruction_mode(ctx, _spec(sets["instructions"], settings.seed), results)
    loads.append(_loadavg())
    durations["total"] = time.perf_counter() - t0
    _finish(results, ctx)
    return results


@dataclass
class _Context:
    """What the two modes of one study run share, and what they record as they go."""

    settings: StudySettings
    configs: dict[str, Path]  # "base" and one plain config per size key
    label: str
    time_label: str
    probe: dict[str, FeatureShare]
    say: Say
    loads: list[float]  # 1-minute load averages along the way
    durations: dict[str, float]
    problems: list[str]


def _modes(settings: StudySettings, problems: list[str]) -> list[str]:
    """The modes to run, in order; instructions mode only where valgrind is."""
    modes = [m for m in ("instructions", "time") if m in settings.modes]
    if "instructions" in modes and not valgrind_available():
        problems.append("valgrind not found: instructions mode skipped")
        modes.remove("instructions")
    return modes


def _workload_sets(settings: StudySettings, modes: Sequence[str]
                   ) -> tuple[str, str, dict[str, list[tuple[Any, Any]]]]:
    """(instructions label, time label, per mode the (test case, workload) pairs); an error
    when a mode to run has none."""
    label, picked = choose_workloads(settings.configs, settings.label, settings.name_regex)
    time_label, picked_time = choose_workloads(settings.configs, settings.time_label,
                                               settings.name_regex, "compare-time", label)
    sets = {"instructions": picked, "time": picked_time}
    for mode in modes:
        if not sets[mode]:
            raise click.ClickException(f"no workload matches the {mode} label "
                                       f"{label if mode == 'instructions' else time_label!r}")
    return label, time_label, sets


def _spec(picked: Sequence[tuple[Any, Any]], seed: int) -> WorkerSpec:
    return WorkerSpec(configs=tuple(sorted({str(tc.source) for tc, _ in picked})),
                      workloads=tuple(w.full_name for _, w in picked), seed=seed)


def _write_configs(settings: StudySettings) -> dict[str, Path]:
    """The BASE config (InjectedSlowdown with fraction 0) and a plain config per size."""
    out = settings.out
    configs = {"base": write_config(out / "configs" / "base.yaml", 0.0, settings.feature)}
    for sz in settings.sizes:
        configs[size_key(sz)] = write_config(out / "configs" / f"plain-{size_key(sz)}.yaml",
                                             sz, settings.feature, "instructions")
    return configs


def _time_mode(ctx: _Context, picked: Sequence[tuple[Any, Any]],
               results: dict[str, Any]) -> None:
    """The real compare A/A (its wall time), then the time-mode study."""
    settings, base = ctx.settings, ctx.configs["base"]
    if settings.compare_runs:
        wall, report, _ = real_compare("time", base, base, settings.out / "compare-time-aa",
                                       ctx.label, ctx.time_label, settings, ctx.say)
        results["compare_wall_seconds"]["time"] = wall
        results["compare_time_aa"] = report_digest(report)
        ctx.loads.append(_loadavg())
    t = time.perf_counter()
    summary = run_time_study(
        settings.out, picked, ctx.probe, base_config=base, feature=settings.feature,
        sizes=settings.sizes, rounds=settings.rounds, pool=settings.pool,
        pool_slowdown=settings.pool_slowdown, draws=settings.draws, jobs=settings.jobs,
        seed=settings.seed, say=ctx.say, timeout=settings.timeout)
    ctx.durations["time"] = time.perf_counter() - t
    ctx.loads.append(_loadavg())
    ctx.problems.extend(f"time: {p}" for p in summary["problems"])
    results["time"] = summary


def _instruction_mode(ctx: _Context, spec: WorkerSpec, results: dict[str, Any]) -> None:
    """The A/A counts, the slowdown counts (instructions.parquet), the attribution."""
    settings, out = ctx.settings, ctx.settings.out
    t = time.perf_counter()
    aa_counts = _instruction_aa(ctx, spec, results)
    ctx.loads.append(_loadavg())
    ir, records = run_instruction_study(settings, spec, ctx.probe, aa_counts, ctx.say)
    if records:
        pl.DataFrame([{k: r.get(k) for k in COUNTS_SCHEMA} for r in records],
                     schema=COUNTS_SCHEMA).write_parquet(out / "instructions.parquet")
    instruction_attribution(settings, spec, ir, ctx.configs["base"], ctx.say)
    ctx.durations["instructions"] = time.perf_counter() - t
    results["instructions"] = ir


def _instruction_aa(ctx: _Context, spec: WorkerSpec, results: dict[str, Any]
                    ) -> dict[str, dict[str, Count]]:
    """Per side, the A/A counts: from a real compare, or counted here twice in one slot
    (``instruction_aa``), or none."""
    settings, out, base = ctx.settings, ctx.settings.out, ctx.configs["base"]
    if settings.compare_runs:
        wall, report, folder = real_compare("instructions", base, base,
                                            out / "compare-instructions-aa", ctx.label,
                                            ctx.time_label, settings, ctx.say)
        results["compare_wall_seconds"]["instructions"] = wall
        results["compare_instructions_aa"] = report_digest(report)
        return read_compare_counts(folder)
    if settings.instruction_aa:
        slot = out / "instructions" / "slot-aa"
        return {side: count_in_slot(slot, spec, spec.workloads, base,
                                    out / "instructions" / f"aa-{side}", jobs=settings.jobs)
                for side in ("base", "head")}
    return {}


def _finish(results: dict[str, Any], ctx: _Context) -> None:
    """The machine's load, the durations and the problems (repeats counted); results.json."""
    finite = [x for x in ctx.loads if math.isfinite(x)]
    results["machine"] = {"cpu_count": os.cpu_count(),
                          "load_1min": {"min": min(finite, default=None),
                                        "mean": float(np.mean(finite)) if finite else None,
                                        "max": max(finite, default=None)}}
    results["durations_seconds"] = ctx.durations
    seen: dict[str, int] = {}
    for p in ctx.problems:
        seen[p] = seen.get(p, 0) + 1
    results["problems"] = [p if n == 1 else f"{p} (x{n})" for p, n in seen.items()]
    results["finished"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    (ctx.settings.out / "results.json").write_text(
        json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
