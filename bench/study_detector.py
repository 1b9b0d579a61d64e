"""Proving the detector: false alarms and power of ``schedperf compare``, measured.

    python bench/study_detector.py [--label compare] [--time-label compare-time]
        [--feature spread] [--sizes 0.01,0.02,0.05,0.10] [--measure instructions|time]
        [--blocks 12] [--rounds 5,10] [--draws 300] [--out DIR]

Method (docs/detector-study.md has the details and the numbers):

* Workloads: instructions mode uses ``--label`` (default ``compare``, ``integration-test``
  when no workload carries it), time mode ``--time-label`` (default ``compare-time``, as
  ``schedperf compare``). BASE is the default profile plus the out-of-tree plugin
  ``InjectedSlowdown`` (workloads/example_plugins/slowdown.py) with ``fraction: 0``; a HEAD of
  size ``f`` gives pods with ``--feature`` extra deterministic work. A probe run of every
  workload finds which ones have such pods after their set-up ("affected").
* Calibration per workload: a HEAD of size ``f`` for workload ``w`` adds ``f`` of ``w``'s
  measured BASE cost (instructions: its BASE count; time: its median BASE CPU time per pod),
  spread over its affected attempts. What each workload actually got is measured and
  reported next to the nominal size.
* A/A: one real ``schedperf compare --base-config BASE --head-config BASE`` per mode (its
  wall time is the cost of a default compare). Instructions: its two counts per workload give
  the identical-count rate and the false alarms. Time: its runs, a calibration run and
  one full run per block form a pool of independent full-set BASE runs; A/A decisions are
  drawn by splitting random runs of the pool into BASE and HEAD rounds and judging them like
  compare does (Hodges-Lehmann, Wilcoxon on paired rounds, Benjamini-Hochberg over the whole
  set, the 3 % minimum effect).
* Slowdowns, time: ``--blocks`` blocks, each running in a random order one full-set BASE run
  and, per affected workload in a process of its own, one BASE run and one HEAD run per size.
  A decision at ``n`` rounds pairs the BASE and HEAD runs of ``n`` random blocks for the
  affected workloads and takes the rest of the family from the A/A pool (those workloads run
  the same code under either config), so every decision judges the whole set under BH.
* Slowdowns, instructions: every affected workload is counted once per size (counts are
  exact: one count is the whole story), plus ``--controls`` unaffected workloads per size.
* Attribution: for flagged workloads, ``reports.stats.attribute`` over the plugin timings of
  time rounds, as compare does; the study asks whether it names InjectedSlowdown first.
  Instruction counts carry no plugin timings, so for instruction-mode regressions the study
  runs ``--attribution-rounds`` short time rounds of the flagged workload (what a user would
  run next) at the smallest and the largest size.

Outputs in ``--out``: results.json, time_rounds.parquet (every stored per-round sample),
time_draws.parquet (every resampled decision), instructions.parquet (every count), the
scheduler configs, the two compare reports and the raw worker folders.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import numpy as np
import polars as pl
import yaml
from rich.console import Console
from rich.table import Table

from bench.compare.samples import JUDGED, instruction_rows, time_rows, to_frame
from bench.measure.instructions import (
    CACHEGRIND_FILE,
    CachegrindError,
    measure_instructions,
    parse_cachegrind_total,
    run_worker,
    valgrind_available,
)
from bench.measure.spec import WorkerResult, WorkerSpec
from reports.stats import attribute, compare_frames, compare_samples, decide
from reports.stats.compare import DEFAULT_Q, MIN_EFFECT, Comparison

__all__ = [
    "DEFAULT_SIZES",
    "FeatureShare",
    "StudySettings",
    "main",
    "run_study",
    "scheduler_config_text",
]

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = "InjectedSlowdown"
PLUGIN_PATH = "workloads.example_plugins.slowdown:InjectedSlowdown"
PLUGIN_KEY = f"{PLUGIN}/PreFilter"
DEFAULT_SIZES = (0.01, 0.02, 0.05, 0.10)
RESULTS_SCHEMA = 1
ALARMS = ("regression", "improvement")
# instruction-mode HEADs aim this much (relative) above the nominal size, so that a nominal
# 1 % cannot land below the 1 % minimum effect: with the plugin's constants (the two largest
# sizes; unit and call costs vary by about 1 % and 30 % between workloads) and with the
# workload's own fitted costs (the other sizes; they predict counts to about 0.3 %)
INSTRUCTION_MARGIN = 0.02
FITTED_MARGIN = 0.005
TIME_METRICS = {m: hib for (mode, m), (_, hib) in JUDGED.items() if mode == "time"}
IR_METRIC = "instructions_per_pod"
Say = Callable[[str], None]
COUNTS_SCHEMA = {"study": pl.String, "side": pl.String, "size": pl.Float64,
                 "workload": pl.String, "status": pl.String, "measured": pl.Int64,
                 "total": pl.Int64, "setup": pl.Int64, "measured_pods": pl.Int64,
                 "measured_attempts": pl.Int64, "per_pod": pl.Float64}
TIME_ROUNDS_SCHEMA = {"run": pl.Int64, "source": pl.String, "kind": pl.String,
                      "config": pl.String, "block": pl.Int64, "workload": pl.String,
                      "metric": pl.String, "unit": pl.String, "value": pl.Float64}


# ----------------------------------------------------------------------------- settings

@dataclass
class StudySettings:
    """Everything a study run depends on (the CLI options)."""

    out: Path
    configs: tuple[Path, ...] = ()
    label: str | None = None  # None: "compare", or "integration-test" when nothing has it
    time_label: str | None = None  # None: "compare-time", or the label when nothing has it
    name_regex: str | None = None
    feature: str = "spread"
    sizes: tuple[float, ...] = DEFAULT_SIZES
    modes: tuple[str, ...] = ("instructions", "time")
    blocks: int = 12
    rounds: tuple[int, ...] = (5, 10)  # compare's --repeat: 5 (its old default), 10 (now)
    draws: int = 300
    attribution_draws: int = 40
    attribution_rounds: int = 3  # time rounds per side behind an instruction attribution
    controls: int = 2
    seed: int = 0
    jobs: int = 2
    compare_runs: bool = True  # real `schedperf compare` A/A runs (wall time, A/A data)
    # without compare_runs: count BASE twice in-process (the instruction A/A) or, when False,
    # once and only for the affected workloads and the controls (the test's short cut)
    instruction_aa: bool = True
    resume: bool = False  # reuse finished runs (compare reports, worker results) in ``out``
    timeout: float | None = 900.0

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["out"] = str(self.out)
        out["configs"] = [str(c) for c in self.configs]
        return out


@dataclass
class FeatureShare:
    """What the probe found for one workload, after its set-up ops: scheduling attempts,
    those of pods with the feature, and pods bound in the metrics windows."""

    name: str
    status: str
    affected: int  # PreFilter calls for pods with the feature, after the set-up ops
    attempts: int  # scheduling attempts after the set-up ops
    pods: int = 0  # pods bound in the metrics windows
    setup_affected: int = 0  # PreFilter calls for pods with the feature during the set-up

    @property
    def share(self) -> float:
        return self.affected / self.attempts if self.attempts else 0.0

    @property
    def is_affected(self) -> bool:
        return self.affected > 0


@dataclass
class Count:
    """One instruction count of one workload (measured = all - setup)."""

    name: str
    status: str
    reason: str | None = None
    measured: int | None = None
    total: int | None = None
    setup: int | None = None
    measured_pods: int = 0
    measured_attempts: int = 0

    @property
    def per_pod(self) -> float | None:
        if self.measured is None or not self.measured_pods:
            return None
        return self.measured / self.measured_pods


@dataclass
class TimeRun:
    """One time-mode worker run: judged values and plugin timings per workload."""

    run_id: int
    source: str  # "compare" (the A/A compare), "calibration" or "block"
    kind: str  # "full" (every workload of the time set) or "one" (one affected workload)
    config: str  # "base" or a size key
    block: int | None
    workload: str | None = None  # kind "one": which
    values: dict[tuple[str, str], float] = field(default_factory=dict)
    plugins: dict[str, dict[str, float]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)


def size_key(size: float) -> str:
    return f"{size:g}"


def pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{100 * x:.{digits}f} %"


# ----------------------------------------------------------------------------- configs

def scheduler_config_text(fraction: float, feature: str,
                          calibration: str | Mapping[str, float] = "time") -> str:
    """A KubeSchedulerConfiguration: the default profile plus InjectedSlowdown."""
    cal: Any = calibration if isinstance(calibration, str) else dict(calibration)
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "pluginRegistry": {PLUGIN: PLUGIN_PATH},
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": PLUGIN}]}},
            "pluginConfig": [{"name": PLUGIN, "args": {
                "fraction": float(fraction), "feature": feature, "calibration": cal}}],
        }],
    }
    head = (f"# written by bench/study_detector.py: InjectedSlowdown {fraction:g} on pods "
            f"with feature {feature}\n")
    return head + yaml.safe_dump(doc, sort_keys=False)


def write_config(path: Path, fraction: float, feature: str,
                 calibration: str | Mapping[str, float] = "time") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scheduler_config_text(fraction, feature, calibration), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- selection

def choose_workloads(configs: Sequence[Path], label: str | None, name_regex: str | None,
                     default: str = "compare", fallback: str = "integration-test"
                     ) -> tuple[str, list[tuple[Any, Any]]]:
    """(label used, [(test case, workload)]): ``label``, or ``default`` falling back to
    ``fallback`` when no workload carries ``default``."""
    from bench.cli.run import BadInput, load_test_cases, select_workloads

    test_cases = load_test_cases(configs)

    def pick(flt: str) -> list[tuple[Any, Any]]:
        try:
            return select_workloads(test_cases, flt, name_regex)
        except BadInput:
            return []

    if label is not None:
        return label, pick(label)
    picked = pick(default)
    if picked:
        return default, picked
    return fallback, pick(fallback)


def probe_features(picked: Sequence[tuple[Any, Any]], config: Path, seed: int,
                   say: Say) -> dict[str, FeatureShare]:
    """Run every workload in this process twice (all ops, then the set-up ops only) with the
    BASE config and count the PreFilter calls for pods with the feature after the set-up."""
    from workloads.runner import execute_workload

    out: dict[str, FeatureShare] = {}
    for tc, w in picked:
        tc2 = dataclasses.replace(tc, scheduler_config_path=config.resolve())
        seen = []
        status = "ok"
        for stop in ("all", "setup"):
            result, run = execute_workload(tc2, w, seed=seed, clock="virtual",
                                           wall_clock_metrics=False, plugin_sample_percent=0,
                                           stop_after=stop)
            if stop == "all":
                status = result.status
            plugin = None
            if run is not None:
                for fwk in run.scheduler.profiles.values():
                    plugin = next((p for p in fwk.pre_filter_plugins if p.name == PLUGIN), None)
                    if plugin is not None:
                        break
            pods = run.window_scheduled if run is not None else 0
            seen.append((plugin.affected_calls if plugin is not None else 0, result.attempts,
                         pods))
            del run
        (aff_all, att_all, pods_all), (aff_setup, att_setup, _) = seen
        out[w.full_name] = FeatureShare(w.full_name, status, aff_all - aff_setup,
                                        att_all - att_setup, pods_all, aff_setup)
    n = sum(1 for s in out.values() if s.is_affected)
    say(f"probe: {n} of {len(out)} workloads have pods with the feature after set-up")
    return out


# ----------------------------------------------------------------------------- helpers

def _loadavg() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return math.nan


def _sources_modified_since(since_ns: int) -> list[str]:
    """.py files under scheduler_core/, workloads/ and bench/ modified at or after
    ``since_ns`` (someone editing the checkout while a count ran changes what is counted)."""
    out = []
    for root in ("scheduler_core", "workloads", "bench"):
        for folder, dirs, files in os.walk(ROOT / root):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for f in files:
                path = os.path.join(folder, f)
                try:
                    if f.endswith(".py") and os.stat(path).st_mtime_ns >= since_ns:
                        out.append(os.path.relpath(path, ROOT))
                except OSError:
                    continue
    return sorted(out)


def real_compare(mode: str, base: Path, head: Path, out: Path, label: str, time_label: str,
                 settings: StudySettings, say: Say) -> tuple[float, dict[str, Any], Path]:
    """``schedperf compare`` in a subprocess, exactly as a user runs it (default settings);
    (wall seconds, report.json, output folder)."""
    cmd = [sys.executable, "-m", "bench.cli.main", "compare", "--base-config", str(base),
           "--head-config", str(head), "--measure", mode, "--label", label,
           "--time-label", time_label, "--jobs", str(settings.jobs), "--out", str(out)]
    for c in settings.configs:
        cmd += ["--config", str(c)]
    if settings.name_regex:
        cmd += ["--name", settings.name_regex]
    say(f"compare ({mode}): {' '.join(cmd[1:])}")
    done = out / "study-wall-seconds.json"
    if settings.resume and done.is_file() and (out / "report.json").is_file():
        info = json.loads(done.read_text(encoding="utf-8"))
        wall = float(info["wall_seconds"])
        report = dict(json.loads((out / "report.json").read_text(encoding="utf-8")))
        report["sources_modified"] = info.get("sources_modified", [])
        say(f"compare ({mode}): reused ({wall:.0f} s when it ran)")
        return wall, report, out
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    started_ns = time.time_ns()
    with open(out / "compare.log", "wb") as log:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        tail = (out / "compare.log").read_text(errors="replace").strip().splitlines()[-5:]
        raise click.ClickException(f"schedperf compare ({mode}) exited with "
                                   f"{proc.returncode}: " + " | ".join(tail))
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    edited = _sources_modified_since(started_ns)
    if edited:
        say(f"compare ({mode}): source files changed while it ran: {', '.join(edited)}")
    done.write_text(json.dumps({"wall_seconds": wall, "sources_modified": edited}) + "\n",
                    encoding="utf-8")
    report = {**report, "sources_modified": edited}
    say(f"compare ({mode}): {wall:.0f} s, verdict {report['verdict']}")
    return wall, report, out


# ----------------------------------------------------------------------------- time mode

def _time_run_from_rows(run_id: int, source: str, kind: str, config: str, block: int | None,
                        rows: Iterable[Mapping[str, Any]], workload: str | None = None
                        ) -> TimeRun:
    run = TimeRun(run_id, source, kind, config, block, workload)
    for r in rows:
        metric, w, value = r["metric"], r["workload"], r["value"]
        if value is None:
            continue
        if metric in TIME_METRICS:
            run.values[(w, metric)] = float(value)
        elif metric.startswith("plugin:"):
            run.plugins.setdefault(w, {})[metric.removeprefix("plugin:")] = float(value)
        run.rows.append({"run": run_id, "source": source, "kind": kind, "config": config,
                         "block": block, "workload": w, "metric": metric, "unit": r["unit"],
                         "value": float(value)})
    return run


def _time_worker(spec: WorkerSpec, folder: Path, timeout: float | None, resume: bool = False
                 ) -> tuple[list[dict[str, Any]], list[str]]:
    result = None
    if resume and (folder / "result.json").is_file():
        try:
            result = WorkerResult.load(folder / "result.json")
        except (OSError, ValueError, TypeError):
            result = None
        if result is not None and (result.error or WorkerSpec.from_dict(result.spec) != spec):
            result = None
    if result is None:
        run = run_worker(spec, folder, valgrind=None, timeout=timeout)
        problem = run.problem()
        if problem is not None or run.result is None:
            return [], [f"{folder.name}: {problem}"]
        result = run.result
    rows: list[dict[str, Any]] = []
    problems = []
    for m in result.workloads:
        if m.status != "ok":
            problems.append(f"{folder.name}: {m.name}: {m.status}: {m.reason}")
        rows.extend(time_rows("run", 0, vars(m)))
    return rows, problems


def time_calibration(runs: Sequence[TimeRun], probe: Mapping[str, FeatureShare],
                     affected: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per affected workload, the InjectedSlowdown calibration that makes a HEAD of size f
    add f of the workload's median BASE CPU time per pod (over the full BASE ``runs``),
    spread over its affected attempts; ``perCall`` from the plugin's measured call cost."""
    from workloads.example_plugins.slowdown import CALL_SECONDS, UNIT_SECONDS

    out = {}
    for w in affected:
        cpu = [r.values[(w, "cpu_per_pod")] for r in runs if (w, "cpu_per_pod") in r.values]
        p = probe[w]
        if not cpu or not p.affected or not p.pods:
            continue
        per_attempt = float(np.median(cpu)) * p.pods / p.affected
        out[w] = {"perPod": per_attempt / UNIT_SECONDS, "perNode": 0.0,
                  "perCall": CALL_SECONDS / UNIT_SECONDS}
    return out


def collect_time_runs(settings: StudySettings, spec: WorkerSpec, probe: Mapping[str, FeatureShare],
                      configs: Mapping[str, Path], compare_samples_path: Path | None,
                      rng: np.random.Generator, say: Say
                      ) -> tuple[list[TimeRun], list[str], list[float], dict[str, Any]]:
    """The A/A compare's runs (when given), one calibration run, then ``settings.blocks``
    blocks; (runs, problems, load averages, per-workload calibrations)."""
    runs: list[TimeRun] = []
    problems: list[str] = []
    loads: list[float] = []
    if compare_samples_path is not None:
        df = pl.read_parquet(compare_samples_path).filter(pl.col("mode") == "time")
        for (side, rnd), g in df.group_by(["side", "round"], maintain_order=True):
            runs.append(_time_run_from_rows(len(runs), "compare", "full", "base", None,
                                            g.iter_rows(named=True)))
            runs[-1].rows = [{**r, "side": side, "round": rnd} for r in runs[-1].rows]
    full_spec = spec.replace(mode="time", scheduler_config=str(configs["base"]))
    rows, probs = _time_worker(full_spec, settings.out / "time" / "calibration",
                               settings.timeout, settings.resume)
    problems.extend(f"time: {p}" for p in probs)
    if rows:
        runs.append(_time_run_from_rows(len(runs), "calibration", "full", "base", 0, rows))
    affected = sorted(n for n in spec.workloads if probe[n].is_affected)
    cals = time_calibration(runs, probe, affected)
    affected = [w for w in affected if w in cals]
    tags = {w: f"w{spec.workloads.index(w):02d}" for w in affected}
    head_configs = {}
    for key, size in [("base", 0.0)] + [(size_key(s), s) for s in settings.sizes]:
        for w in affected:
            head_configs[(key, w)] = write_config(
                settings.out / "configs" / f"time-{tags[w]}-{key}.yaml", size,
                settings.feature, cals[w])
    jobs: list[tuple[str, str, str | None]] = [("full", "base", None)]
    jobs += [("one", "base", w) for w in affected]
    jobs += [("one", size_key(s), w) for s in settings.sizes for w in affected]
    started = time.perf_counter()
    for b in range(1, settings.blocks + 1):
        order = [jobs[i] for i in rng.permutation(len(jobs))]
        loads.append(_loadavg())
        for kind, config, w in order:
            if w is None:
                s_ = full_spec
                folder = settings.out / "time" / f"block-{b:02d}" / "full-base"
            else:
                cfg = head_configs[(config, w)]
                s_ = spec.replace(mode="time", workloads=(w,), scheduler_config=str(cfg))
                folder = settings.out / "time" / f"block-{b:02d}" / f"{tags[w]}-{config}"
            rows, probs = _time_worker(s_, folder, settings.timeout, settings.resume)
            problems.extend(f"time: {p}" for p in probs)
            if rows:
                runs.append(_time_run_from_rows(len(runs), "block", kind, config, b, rows, w))
        spent = time.perf_counter() - started
        say(f"time block {b}/{settings.blocks} done ({spent:.0f} s, load {loads[-1]:.1f})")
    return runs, problems, loads, {"calibration": cals, "tags": tags}


def _pairs(base: Sequence[TimeRun], head: Sequence[TimeRun], workloads: Iterable[str],
           metrics: Iterable[str]) -> list[tuple[str, str, list[float], list[float]]]:
    """Per (workload, metric): values of the rounds present on both sides (round i of BASE
    pairs with round i of HEAD, as compare pairs interleaved rounds)."""
    out = []
    for w in workloads:
        for m in metrics:
            b_vals, h_vals = [], []
            for rb, rh in zip(base, head, strict=True):
                vb, vh = rb.values.get((w, m)), rh.values.get((w, m))
                if vb is not None and vh is not None and vb > 0 and vh > 0:
                    b_vals.append(vb)
                    h_vals.append(vh)
            if b_vals:
                out.append((w, m, b_vals, h_vals))
    return out


def judge_pairs(pairs: Sequence[tuple[str, str, list[float], list[float]]]
                ) -> list[tuple[str, str, Comparison]]:
    """compare's time-mode judgement (what reports.stats.compare_frames does per group, then
    Benjamini-Hochberg over the whole family), on plain lists."""
    tested: list[tuple[str, str, Comparison]] = []
    for w, m, b, h in pairs:
        try:
            c = compare_samples(b, h, higher_is_better=TIME_METRICS[m], mode="time",
                                min_effect=MIN_EFFECT["time"], paired=True, q=DEFAULT_Q,
                                name=f"{w}/{m}")
        except ValueError:
            continue
        tested.append((w, m, c))
    decided = decide([c for _, _, c in tested], q=DEFAULT_Q)
    return [(w, m, c) for (w, m, _), c in zip(tested, decided, strict=True)]


def _frames_check(pairs: Sequence[tuple[str, str, list[float], list[float]]],
                  judged: Sequence[tuple[str, str, Comparison]]) -> bool:
    """The same decision through reports.stats.compare_frames (what compare calls)."""
    rows = []
    for w, m, b, h in pairs:
        unit = JUDGED[("time", m)][0]
        for side, vals in (("base", b), ("head", h)):
            rows += [{"side": side, "workload": w, "metric": m, "unit": unit, "round": i + 1,
                      "value": v} for i, v in enumerate(vals)]
    df = pl.DataFrame(rows)
    table = compare_frames(df.filter(pl.col("side") == "base"),
                           df.filter(pl.col("side") == "head"), mode="time", paired=True,
                           min_effect=MIN_EFFECT["time"], q=DEFAULT_Q,
                           higher_is_better=dict(TIME_METRICS))
    theirs = {(r["workload"], r["metric"]): r["verdict"] for r in table.iter_rows(named=True)
              if r["verdict"] is not None}
    ours = {(w, m): c.verdict.value for w, m, c in judged}
    return theirs == ours


def draw_time(runs: Sequence[TimeRun], probe: Mapping[str, FeatureShare],
              settings: StudySettings, rng: np.random.Generator, say: Say
              ) -> tuple[pl.DataFrame, list[dict[str, Any]], dict[str, Any]]:
    """A/A and slowdown decisions resampled from the stored runs: (every decision's rows,
    attribution records, notes)."""
    pool = [r for r in runs if r.kind == "full" and r.config == "base"]
    workloads = sorted({w for r in pool for (w, _) in r.values})
    one = {(r.block, r.config, r.workload): r for r in runs if r.kind == "one"}
    affected = sorted({w for (_, _, w) in one if w is not None})
    others = [w for w in workloads if w not in set(affected)]
    blocks = sorted({b for (b, _, _) in one if b is not None})
    rows: list[dict[str, Any]] = []
    attributions: list[dict[str, Any]] = []
    notes: dict[str, Any] = {"aa_pool_runs": len(pool), "blocks": len(blocks),
                             "affected": affected, "frames_check": [], "skipped": []}
    metrics = list(TIME_METRICS)

    def record(cell: str, size: float | None, n: int, d: int,
               judged: Sequence[tuple[str, str, Comparison]]) -> None:
        for w, m, c in judged:
            rows.append({"cell": cell, "size": size, "rounds": n, "draw": d, "workload": w,
                         "metric": m, "ratio": c.ratio, "p_adjusted": c.p_adjusted,
                         "verdict": c.verdict.value})

    for n in settings.rounds:
        if 2 * n > len(pool):
            notes["skipped"].append(f"A/A at {n} rounds: needs {2 * n} full runs, "
                                    f"the pool has {len(pool)}")
            continue
        for d in range(settings.draws):
            pick = rng.choice(len(pool), 2 * n, replace=False)
            base, head = [pool[i] for i in pick[:n]], [pool[i] for i in pick[n:]]
            pairs = _pairs(base, head, workloads, metrics)
            judged = judge_pairs(pairs)
            if d == 0:
                notes["frames_check"].append(_frames_check(pairs, judged))
            record("aa", None, n, d, judged)
        say(f"time A/A: {settings.draws} decisions at {n} rounds")
    for size in settings.sizes:
        key = size_key(size)
        ok_blocks = [b for b in blocks
                     if all((b, c, w) in one for w in affected for c in ("base", key))]
        for n in settings.rounds:
            if n > len(ok_blocks) or 2 * n > len(pool):
                notes["skipped"].append(f"{key} at {n} rounds: {len(ok_blocks)} blocks, "
                                        f"{len(pool)} full runs")
                continue
            for d in range(settings.draws):
                chosen = [ok_blocks[i] for i in rng.choice(len(ok_blocks), n, replace=False)]
                pick = rng.choice(len(pool), 2 * n, replace=False)
                b_rest, h_rest = [pool[i] for i in pick[:n]], [pool[i] for i in pick[n:]]
                pairs = _pairs(b_rest, h_rest, others, metrics)
                for w in affected:
                    pairs += _pairs([one[(b, "base", w)] for b in chosen],
                                    [one[(b, key, w)] for b in chosen], [w], metrics)
                judged = judge_pairs(pairs)
                if d == 0:
                    notes["frames_check"].append(_frames_check(pairs, judged))
                record("slowdown", size, n, d, judged)
                if d < settings.attribution_draws:
                    flagged = sorted({w for w, _, c in judged
                                      if c.verdict.value == "regression" and w in affected})
                    for w in flagged:
                        top = attribute_top([one[(b, "base", w)] for b in chosen],
                                            [one[(b, key, w)] for b in chosen], w)
                        attributions.append({"mode": "time", "size": size, "rounds": n,
                                             "draw": d, "workload": w, "top": top})
            say(f"time slowdown {pct(size, 0)}: {settings.draws} decisions at {n} rounds")
    schema = {"cell": pl.String, "size": pl.Float64, "rounds": pl.Int64, "draw": pl.Int64,
              "workload": pl.String, "metric": pl.String, "ratio": pl.Float64,
              "p_adjusted": pl.Float64, "verdict": pl.String}
    return pl.DataFrame(rows, schema=schema), attributions, notes


def attribute_top(base: Sequence[TimeRun], head: Sequence[TimeRun], workload: str
                  ) -> str | None:
    """The first attribution compare would print for ``workload`` (plugin/extension point)."""
    b = [r.plugins.get(workload, {}) for r in base]
    h = [r.plugins.get(workload, {}) for r in head]
    if not any(b) or not any(h):
        return None
    try:
        found = attribute(b, h, mode="time", paired=len(b) == len(h), top=5)
    except ValueError:
        return None
    return str(found[0].key) if found else None


def time_achieved(runs: Sequence[TimeRun], sizes: Sequence[float]
                  ) -> dict[str, dict[str, dict[str, float | None]]]:
    """Per size and affected workload: the injected CPU time per pod over the BASE CPU time
    per pod (median over blocks of the InjectedSlowdown PreFilter time difference), and the
    Hodges-Lehmann change of cpu_per_pod over all blocks (paired)."""
    one = {(r.block, r.config, r.workload): r for r in runs if r.kind == "one"}
    affected = sorted({w for (_, _, w) in one if w is not None})
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for size in sizes:
        key = size_key(size)
        per: dict[str, dict[str, float | None]] = {}
        for w in affected:
            injected, base_cpu, head_cpu = [], [], []
            for (b, c, ww), rb in one.items():
                rh = one.get((b, key, w))
                if c != "base" or ww != w or rh is None:
                    continue
                cb, ch = rb.values.get((w, "cpu_per_pod")), rh.values.get((w, "cpu_per_pod"))
                pb = rb.plugins.get(w, {}).get(PLUGIN_KEY)
                ph = rh.plugins.get(w, {}).get(PLUGIN_KEY)
                if cb and ch:
                    base_cpu.append(cb)
                    head_cpu.append(ch)
                    if pb is not None and ph is not None:
                        injected.append((ph - pb) / cb)
            hl = None
            if len(base_cpu) >= 2:
                c = compare_samples(base_cpu, head_cpu, higher_is_better=False, mode="time",
                                    paired=True)
                hl = c.ratio - 1
            per[w] = {"injected": float(np.median(injected)) if injected else None,
                      "cpu_change": hl, "blocks": len(base_cpu)}
        out[key] = per
    return out


def summarize_time(draws: pl.DataFrame, attributions: Sequence[Mapping[str, Any]],
                   affected_list: Sequence[str], settings: StudySettings) -> dict[str, Any]:
    """Rates per cell: A/A false alarms (per decision, per test, per workload); slowdown
    detection per affected workload, others flagged, exact, attribution named."""
    affected = set(affected_list)
    alarm = pl.col("verdict").is_in(list(ALARMS))
    out: dict[str, Any] = {"aa": {}, "slowdown": {}, "smallest_detected": {}}
    aa = draws.filter(pl.col("cell") == "aa")
    for (n,), g in aa.group_by(["rounds"], maintain_order=True):
        per_draw = g.group_by("draw").agg(alarm.any().alias("alarm"))
        per_w = (g.group_by(["workload", "draw"]).agg(alarm.any().alias("alarm"))
                 .group_by("workload").agg(pl.col("alarm").mean().alias("rate"))
                 .sort("workload"))
        out["aa"][str(n)] = {
            "draws": per_draw.height,
            "tests": g.height,
            "false_alarm_rate": float(per_draw["alarm"].mean()),
            "false_alarm_rate_per_test": float(g.select(alarm.mean()).item()),
            "inconclusive_rate_per_test": float(
                g.select((pl.col("verdict") == "inconclusive").mean()).item()),
            "per_workload": dict(zip(per_w["workload"], per_w["rate"], strict=True)),
        }
    sd = draws.filter(pl.col("cell") == "slowdown")
    for (size, n), g in sd.group_by(["size", "rounds"], maintain_order=True):
        flags = (g.group_by(["draw", "workload"])
                 .agg((pl.col("verdict") == "regression").any().alias("flag"),
                      alarm.any().alias("alarm")))
        det = {}
        for w in sorted(affected):
            sub = flags.filter(pl.col("workload") == w)
            det[w] = float(sub["flag"].mean()) if sub.height else None
        per_draw = []
        for (_,), dg in flags.group_by(["draw"]):
            flagged = set(dg.filter(pl.col("flag"))["workload"])
            alarmed = set(dg.filter(pl.col("alarm"))["workload"])
            others = bool(alarmed - affected)
            every = affected <= flagged
            per_draw.append((others, every, every and not others))
        attr = [a for a in attributions
                if a["size"] == size and a["rounds"] == n and a["mode"] == "time"]
        named = [a["top"] is not None and str(a["top"]).startswith(PLUGIN + "/") for a in attr]
        rates = [v for v in det.values() if v is not None]
        out["slowdown"].setdefault(size_key(size), {})[str(n)] = {
            "draws": len(per_draw),
            "detection": det,
            "detection_mean": float(np.mean(rates)) if rates else None,
            "detection_min": float(min(rates)) if rates else None,
            "others_flagged_rate": float(np.mean([p[0] for p in per_draw])),
            "all_affected_flagged_rate": float(np.mean([p[1] for p in per_draw])),
            "exact_rate": float(np.mean([p[2] for p in per_draw])),
            "attribution_checked": len(named),
            "attribution_named_rate": float(np.mean(named)) if named else None,
        }
    for n in settings.rounds:
        found = None
        for size in sorted(settings.sizes):
            cell = out["slowdown"].get(size_key(size), {}).get(str(n))
            if cell and (cell["detection_min"] or 0) >= 0.9:
                found = size
                break
        out["smallest_detected"][str(n)] = found
    return out


# ----------------------------------------------------------------------------- instructions

def _count_from(c: Any) -> Count:
    return Count(c.name, c.status, c.reason, c.measured, c.total, c.setup, c.measured_pods,
                 0)


def read_compare_counts(folder: Path) -> dict[str, dict[str, Count]]:
    """Per side, per workload: the counts a ``schedperf compare --measure instructions``
    left in ``folder/raw/instructions/<side>/attempt<k>/w<i>/{a,s}`` (its last attempt)."""
    out: dict[str, dict[str, Count]] = {}
    for side in ("base", "head"):
        attempts = sorted((folder / "raw" / "instructions" / side).glob("attempt*"),
                          key=lambda p: int(p.name.removeprefix("attempt") or 0))
        counts: dict[str, Count] = {}
        if attempts:
            for wdir in sorted(attempts[-1].glob("w*")):
                counts.update([_read_count_dir(wdir)])
        out[side] = counts
    return out


def _read_count_dir(wdir: Path) -> tuple[str, Count]:
    spec = json.loads((wdir / "a" / "spec.json").read_text(encoding="utf-8"))
    name = spec["workloads"][0]
    try:
        res_a = json.loads((wdir / "a" / "result.json").read_text(encoding="utf-8"))
        res_s = json.loads((wdir / "s" / "result.json").read_text(encoding="utf-8"))
        total = parse_cachegrind_total(wdir / "a" / CACHEGRIND_FILE)
        setup = parse_cachegrind_total(wdir / "s" / CACHEGRIND_FILE)
    except (OSError, ValueError, CachegrindError) as exc:
        return name, Count(name, "error", str(exc))
    wa, ws = res_a["workloads"][0], res_s["workloads"][0]
    status = wa["status"] if ws["status"] == "ok" else ws["status"]
    c = Count(name, status, wa.get("reason"), total=total, setup=setup,
              measured_pods=wa["measured_pods"], measured_attempts=wa["measured_attempts"])
    if status == "ok":
        c.measured = total - setup
    return name, c


def count_in_slot(slot: Path, spec: WorkerSpec, names: Sequence[str], config: Path,
                  archive: Path | None, jobs: int = 1) -> dict[str, Count]:
    """Count ``names`` with ``config`` in the fixed folder ``slot``: the config is copied to
    ``slot/scheduler-config.yaml`` and the runs happen in ``slot/count``, so two counts made
    in one slot differ only by what the configs make the code do. (The length of a run
    folder's path changes the heap layout: the same code counted in a folder with a longer
    path came out 0.02 % lower.) The run folders are then copied to ``archive`` (cachegrind
    files left out)."""
    slot.mkdir(parents=True, exist_ok=True)
    workdir = slot / "count"
    shutil.rmtree(workdir, ignore_errors=True)
    cfg = slot / "scheduler-config.yaml"
    shutil.copyfile(config, cfg)
    counts = measure_instructions(spec.replace(workloads=tuple(names),
                                               scheduler_config=str(cfg)),
                                  jobs=jobs, workdir=workdir)
    out = {}
    for name, c in counts.items():
        cnt = _count_from(c)
        cnt.measured_attempts = workdir_result(workdir, name)
        out[name] = cnt
    if archive is not None:
        shutil.copytree(workdir, archive, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(CACHEGRIND_FILE))
        shutil.copyfile(config, archive / "scheduler-config.yaml")
    return out


def workdir_result(workdir: Path, name: str) -> int:
    """measured_attempts of ``name`` from the last attempt's "all" result.json."""
    attempts = sorted(workdir.glob("attempt*"),
                      key=lambda p: int(p.name.removeprefix("attempt") or 0))
    for wdir in sorted(attempts[-1].glob("w*")) if attempts else ():
        try:
            res = json.loads((wdir / "a" / "result.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for w in res.get("workloads", []):
            if w["name"] == name:
                return int(w.get("measured_attempts", 0))
    return 0


def judge_counts(base: Mapping[str, Count], head: Mapping[str, Count]) -> dict[str, str]:
    """Verdict per workload through reports.stats.compare_frames, as compare judges
    instruction counts (one count per side, 1 % minimum effect)."""
    rows = []
    for side, counts in (("base", base), ("head", head)):
        for c in counts.values():
            if c.measured is not None:
                rows += instruction_rows(side, 1, c.name, c.measured, c.measured_pods)
    df = to_frame(rows)
    table = compare_frames(df.filter(pl.col("side") == "base"),
                           df.filter(pl.col("side") == "head"), mode="instructions",
                           min_effect=MIN_EFFECT["instructions"], q=DEFAULT_Q,
                           higher_is_better={IR_METRIC: False})
    return {r["workload"]: r["verdict"] or "inconclusive" for r in table.iter_rows(named=True)}


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
            records.append({"study": "aa", "side": side, "size": None, **_count_row(c)})
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
        records.append({"study": "slowdown", "side": "base", "size": None, **_count_row(c)})
    result["calibration"] = cals
    result["fitted_costs"] = fits
    for size in settings.sizes:
        key = size_key(size)
        hs = heads[key]
        for c in hs.values():
            records.append({"study": "slowdown", "side": "head", "size": size,
                            **_count_row(c)})
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
    would attribute from ``attribution_rounds`` interleaved time rounds of the flagged
    workload alone, BASE against the very HEAD config that was counted. Fills each flagged
    workload's ``attribution`` (``"not checked"`` at the other sizes)."""
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
            runs: dict[str, list[TimeRun]] = {"base": [], "head": []}
            for r in range(1, n + 1):
                order = ("base", "head") if r % 2 else ("head", "base")
                for side in order:
                    cfg = base_config if side == "base" else Path(info["config"])
                    s_ = spec.replace(mode="time", workloads=(w,), scheduler_config=str(cfg))
                    folder = (settings.out / "instructions-attribution" / f"{key}-w{i:02d}"
                              / f"{side}-{r}")
                    rows, _ = _time_worker(s_, folder, settings.timeout, settings.resume)
                    if rows:
                        runs[side].append(_time_run_from_rows(r, "attribution", "one", side,
                                                              r, rows, w))
            if len(runs["base"]) == len(runs["head"]) and runs["base"]:
                info["attribution"] = attribute_top(runs["base"], runs["head"], w)
    say(f"instructions: attribution rounds took {time.perf_counter() - started:.0f} s")


def _count_row(c: Count) -> dict[str, Any]:
    return {"workload": c.name, "status": c.status, "measured": c.measured, "total": c.total,
            "setup": c.setup, "measured_pods": c.measured_pods,
            "measured_attempts": c.measured_attempts, "per_pod": c.per_pod}


# ----------------------------------------------------------------------------- the study

def run_study(settings: StudySettings, console: Console | None = None) -> dict[str, Any]:
    """Run the whole study; write everything into ``settings.out``; return results.json."""
    console = console or Console(stderr=True)
    t0 = time.perf_counter()

    def say(text: str) -> None:
        console.print(f"[dim]{time.perf_counter() - t0:6.0f} s  {text}[/]", highlight=False)

    out = settings.out
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(settings.seed)
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
        samples = None
        if settings.compare_runs:
            wall, report, folder = real_compare("time", configs["base"], configs["base"],
                                                out / "compare-time-aa", label, time_label,
                                                settings, say)
            results["compare_wall_seconds"]["time"] = wall
            results["compare_time_aa"] = _report_digest(report)
            samples = folder / "samples.parquet"
            loads.append(_loadavg())
        t = time.perf_counter()
        time_runs, probs, block_loads, cal = collect_time_runs(
            settings, specs["time"], probe, configs, samples, rng, say)
        durations["time_runs"] = time.perf_counter() - t
        loads += block_loads
        problems.extend(probs)
        rows = [r for run in time_runs for r in run.rows]
        pl.DataFrame([{k: r.get(k) for k in TIME_ROUNDS_SCHEMA} for r in rows],
                     schema=TIME_ROUNDS_SCHEMA).write_parquet(out / "time_rounds.parquet")
        t = time.perf_counter()
        draws, attributions, notes = draw_time(time_runs, probe, settings, rng, say)
        durations["time_draws"] = time.perf_counter() - t
        draws.write_parquet(out / "time_draws.parquet")
        summary = summarize_time(draws, attributions, notes["affected"], settings)
        summary["notes"] = notes
        summary["calibration"] = cal["calibration"]
        summary["achieved"] = time_achieved(time_runs, settings.sizes)
        summary["attributions"] = attributions
        results["time"] = summary
        if not all(notes["frames_check"]):
            problems.append("time: the fast judgement disagreed with compare_frames")

    if "instructions" in modes:
        t = time.perf_counter()
        spec = specs["instructions"]
        if settings.compare_runs:
            wall, report, folder = real_compare("instructions", configs["base"],
                                                configs["base"], out / "compare-instructions-aa",
                                                label, time_label, settings, say)
            results["compare_wall_seconds"]["instructions"] = wall
            results["compare_instructions_aa"] = _report_digest(report)
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


def _report_digest(report: Mapping[str, Any]) -> dict[str, Any]:
    res = report.get("results", [])
    return {"verdict": report.get("verdict"), "comparisons": len(res),
            "verdicts": {v: sum(r["verdict"] == v for r in res)
                         for v in ("regression", "improvement", "inconclusive", "no change")},
            "problems": {s: report.get(s, {}).get("problems") for s in ("base", "head")},
            "sources_modified_while_running": report.get("sources_modified", [])}


# ----------------------------------------------------------------------------- summary

def print_summary(results: Mapping[str, Any], console: Console) -> None:
    """The rich summary tables."""
    wl = results["workloads"]
    feature = results["settings"]["feature"]
    t = Table(title=f"Workloads with pods that have feature {feature} (after set-up)")
    for col in ("mode", "workload", "attempts", "with the feature", "share"):
        t.add_column(col)
    for mode in results["modes"]:
        for n in results["affected"][mode]:
            p = wl[n]
            t.add_row(mode, n, str(p["attempts"]), str(p["affected"]), pct(p["share"], 0))
    console.print(t)
    for mode in results["modes"]:
        console.print(f"{mode}: {len(results['sets'][mode])} workloads, "
                      f"{len(results['affected'][mode])} affected", highlight=False)

    t = Table(title="A/A (BASE = HEAD): false alarms")
    for col in ("mode", "rounds", "decisions", "backed by", "false alarm / decision",
                "per test", "inconclusive / test", "note"):
        t.add_column(col)
    ir = results.get("instructions")
    if ir and ir["aa"]:
        aa = ir["aa"]
        t.add_row("instructions", "1 count/side", "1", f"{aa['workloads']} workloads x 2 "
                  "counts", pct(1.0 if aa["false_alarms"] else 0.0, 0),
                  pct(aa["false_alarm_rate"]), "-",
                  f"identical counts {aa['identical']}/{aa['workloads']} (largest "
                  f"difference {pct(aa['max_relative_difference'], 4)})")
    tm = results.get("time")
    if tm:
        for n, cell in tm["aa"].items():
            worst = max(cell["per_workload"].items(), key=lambda kv: kv[1], default=("-", 0))
            t.add_row("time", n, str(cell["draws"]),
                      f"{tm['notes']['aa_pool_runs']} runs", pct(cell["false_alarm_rate"]),
                      pct(cell["false_alarm_rate_per_test"], 2),
                      pct(cell["inconclusive_rate_per_test"]),
                      f"worst {worst[0]} {pct(worst[1])}")
    console.print(t)

    t = Table(title="Injected slowdowns: detection")
    t.add_column("size")
    if ir:
        t.add_column("instructions: flagged/affected, controls flagged, change, named")
    levels = sorted({n for cell in tm["slowdown"].values() for n in cell}, key=int) if tm \
        else []
    for n in levels:
        t.add_column(f"time {n} rounds: power min/mean, others flagged, exact, named")
    for key in [size_key(s) for s in results["settings"]["sizes"]]:
        row = [pct(float(key), 0)]
        if ir:
            cell = ir["slowdown"].get(key)
            if cell:
                flagged = [i for i in cell["workloads"].values()
                           if i["affected"] and i["verdict"] == "regression"]
                named = [i for i in flagged if str(i.get("attribution")).startswith(PLUGIN)]
                checked = [i for i in flagged if i.get("attribution") != "not checked"]
                changes = [i["change"] for i in cell["workloads"].values()
                           if i["affected"] and i["change"] is not None]
                span = (f"{pct(min(changes), 2)}-{pct(max(changes), 2)}" if changes else "-")
                row.append(f"{cell['detected']}/{cell['affected']}, "
                           f"{cell['controls_flagged']}, {span}, "
                           + (f"{len(named)}/{len(checked)}" if checked else "-"))
            else:
                row.append("-")
        for n in levels:
            c = tm["slowdown"].get(key, {}).get(n) if tm else None
            row.append("-" if not c else
                       f"{pct(c['detection_min'], 0)}/{pct(c['detection_mean'], 0)}, "
                       f"{pct(c['others_flagged_rate'], 0)}, {pct(c['exact_rate'], 0)}, "
                       f"{pct(c['attribution_named_rate'], 0)}")
        t.add_row(*row)
    console.print(t)
    if tm:
        t = Table(title="Time mode: what the affected workloads got (median over blocks)")
        t.add_column("size")
        for w in tm["notes"]["affected"]:
            t.add_column(f"{w}: injected / cpu change")
        for key, per in tm["achieved"].items():
            t.add_row(pct(float(key), 0), *[
                f"{pct(per[w]['injected'])} / {pct(per[w]['cpu_change'])}"
                for w in tm["notes"]["affected"]])
        console.print(t)
    lines = []
    if ir:
        caught = [float(k) for k, c in ir["slowdown"].items() if c["exact"]]
        lines.append(f"instructions: smallest size caught in every affected workload with no "
                     f"control flagged: {pct(min(caught), 0) if caught else 'none'}")
    if tm:
        for n, sz in tm["smallest_detected"].items():
            lines.append(f"time, {n} rounds: smallest size detected with >= 90 % power in "
                         f"every affected workload: {pct(sz, 0) if sz else 'none'}")
    for mode, wall in results["compare_wall_seconds"].items():
        lines.append(f"schedperf compare (A/A, {mode} only): {wall:.0f} s wall")
    load = results["machine"]["load_1min"]
    lines.append(f"machine: {results['machine']['cpu_count']} cores, 1-min load "
                 f"{load['min']:.1f}-{load['max']:.1f} (mean {load['mean']:.1f}); study took "
                 f"{results['durations_seconds']['total'] / 60:.1f} min")
    for line in lines:
        console.print(line, highlight=False)
    for p in results["problems"]:
        console.print(f"[yellow]{p}[/]", highlight=False)


# ----------------------------------------------------------------------------- CLI

def _floats(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected comma-separated fractions") from None
    if not values or any(not 0 < v <= 1 for v in values):
        raise click.BadParameter(f"{text!r}: fractions in (0, 1], e.g. 0.01,0.05")
    return values


def _ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected comma-separated integers") from None
    if not values or any(v < 1 for v in values):
        raise click.BadParameter(f"{text!r}: round counts >= 1, e.g. 5,10")
    return values


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "configs", multiple=True,
              type=click.Path(exists=True, path_type=Path),
              help="performance-config.yaml files or folders [default: the catalog].")
@click.option("--label", default=None,
              help="Label filter of the study set [default: compare, or integration-test "
                   "when no workload has compare].")
@click.option("--time-label", default=None,
              help="Label filter of the time-mode set [default: compare-time, as schedperf "
                   "compare, or --label when no workload has it].")
@click.option("--name", "name_regex", default=None, metavar="REGEX")
@click.option("--feature", default="spread", show_default=True,
              type=click.Choice(["minDomains", "spread", "affinity", "all"]),
              help="Pods with this feature get the injected slowdown.")
@click.option("--sizes", default="0.01,0.02,0.05,0.10", show_default=True,
              help="Injected slowdowns (fractions).")
@click.option("--measure", "modes", multiple=True, type=click.Choice(["instructions", "time"]),
              help="Modes (repeatable) [default: both].")
@click.option("--blocks", default=12, show_default=True, type=click.IntRange(min=1),
              help="Time mode: blocks of runs (one full BASE run; per affected workload, alone "
                   "in a process, BASE and every size).")
@click.option("--rounds", default="5,10", show_default=True,
              help="Time mode: rounds per side of the resampled decisions (compare's "
                   "--repeat: 10 by default, 5 before).")
@click.option("--draws", default=300, show_default=True, type=click.IntRange(min=1),
              help="Time mode: resampled decisions per cell.")
@click.option("--attribution-draws", default=40, show_default=True,
              type=click.IntRange(min=0),
              help="Time mode: decisions per cell whose regressions get an attribution.")
@click.option("--attribution-rounds", default=3, show_default=True,
              type=click.IntRange(min=0),
              help="Instructions mode: time rounds per side behind the attribution of a "
                   "flagged workload (smallest and largest size; 0: none).")
@click.option("--controls", default=2, show_default=True, type=click.IntRange(min=0),
              help="Instructions mode: unaffected workloads counted at every size.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--jobs", default=2, show_default=True, type=click.IntRange(min=1),
              help="Parallel valgrind runs.")
@click.option("--no-compare", "no_compare", is_flag=True,
              help="Skip the real `schedperf compare` A/A runs (no wall times; instruction "
                   "A/A counted in-process, time A/A from the blocks only).")
@click.option("--timeout-per-run", "timeout", default=900.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True), help="Wall seconds per worker run.")
@click.option("--resume", is_flag=True,
              help="Reuse what an interrupted study left in --out (compare reports, time "
                   "runs with the same spec); instruction counts always run again.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Output folder [default: ./detector-study/<UTC time>].")
def main(configs: tuple[Path, ...], label: str | None, time_label: str | None,
         name_regex: str | None, feature: str, sizes: str, modes: tuple[str, ...], blocks: int,
         rounds: str, draws: int, attribution_draws: int, attribution_rounds: int,
         controls: int, seed: int, jobs: int, no_compare: bool,
         timeout: float, resume: bool, out_dir: Path | None) -> None:
    """Measure the false-alarm rate and the power of `schedperf compare` with injected
    slowdowns (docs/detector-study.md)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H-%M-%SZ")
    settings = StudySettings(
        out=(out_dir or Path("detector-study") / stamp).resolve(), configs=configs,
        label=label, time_label=time_label, name_regex=name_regex, feature=feature,
        sizes=_floats(sizes), modes=modes or ("instructions", "time"), blocks=blocks,
        rounds=_ints(rounds), draws=draws, attribution_draws=attribution_draws,
        attribution_rounds=attribution_rounds, controls=controls, seed=seed,
        jobs=jobs, compare_runs=not no_compare, timeout=timeout, resume=resume)
    console = Console()
    results = run_study(settings, Console(stderr=True))
    print_summary(results, console)
    console.print(f"results: {settings.out / 'results.json'}", highlight=False)


if __name__ == "__main__":
    main()
