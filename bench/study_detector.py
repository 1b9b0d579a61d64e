"""Proving the detector: false alarms and power of ``schedperf compare``, measured.

    python bench/study_detector.py [--label compare] [--time-label compare-time]
        [--feature spread] [--sizes 0.01,0.02,0.05,0.10] [--measure instructions|time]
        [--rounds 10,20] [--pool 40] [--pool-slowdown 30] [--draws 300] [--out DIR]

Method (docs/detector-study.md has the details and the numbers):

* Workloads: instructions mode uses ``--label`` (default ``compare``, ``integration-test``
  when no workload carries it), time mode ``--time-label`` (default ``compare-time``, as
  ``schedperf compare``). BASE is the default profile plus the out-of-tree plugin
  ``InjectedSlowdown`` (workloads/example_plugins/slowdown.py) with ``fraction: 0``; a HEAD of
  size ``f`` gives pods with ``--feature`` extra deterministic work. A probe run of every
  workload finds which ones have such pods after their set-up ("affected").
* Calibration per workload: a HEAD of size ``f`` for workload ``w`` adds ``f`` of ``w``'s
  measured BASE cost (instructions: its BASE count; time: its median BASE CPU time per pod
  in the A/A pool), spread over its affected attempts. What each workload actually got is
  measured and reported next to the nominal size.
* A/A, instructions: one real ``schedperf compare --base-config BASE --head-config BASE``
  (its wall time is the cost of a default compare); its two counts per workload give the
  identical-count rate and the false alarms. Time mode runs such a compare too, for its wall
  time only.
* Time mode (bench/study_time.py): compare judges rounds of *paced pairs* (both sides run at
  once, taking turns on the CPU every 5 ms, so machine drift cancels in each round's ratio);
  a pair is physical, so the study stores paced rounds in pools and resamples rounds, never
  runs. The A/A pool holds ``--pool`` paced rounds of the whole time set with BASE on both
  sides; per size and affected workload, a slowdown pool holds ``--pool-slowdown`` paced
  rounds of that workload alone, BASE against its calibrated HEAD. A decision at ``n``
  rounds draws ``n`` distinct rounds (without replacement) per workload: from the slowdown
  pool for the affected workload of the cell, from the A/A pool for the rest of the set (those
  run the same code under either config), and judges the whole family as compare does
  (Hodges-Lehmann, paired Wilcoxon, Benjamini-Hochberg, the 3 % minimum effect). ``--draws``
  decisions per cell and ``n`` overlap (they share rounds): the figures rest on the pools'
  independent rounds, which results.json states next to them.
* Slowdowns, instructions: every affected workload is counted once per size (counts are
  exact: one count is the whole story), plus ``--controls`` unaffected workloads per size.
* Attribution: for flagged workloads, ``reports.stats.attribute`` over the plugin timings of
  time rounds, as compare does; the study asks whether it names InjectedSlowdown/PreFilter
  first. Time mode attributes every flagged affected workload of every draw from the drawn
  rounds. Instruction counts carry no plugin timings, so for instruction-mode regressions the
  study runs ``--attribution-rounds`` paced time rounds of the flagged workload (what a user
  would run next: ``schedperf compare`` time rounds) at the smallest and the largest size.

Outputs in ``--out``: results.json, time_pools.parquet (every paced round's samples, by
pool), time_decisions.parquet (every resampled decision), instructions.parquet (every
count), the scheduler configs, the compare reports and the raw worker folders.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import numpy as np
import polars as pl
import yaml
from rich.console import Console
from rich.table import Table

from bench.compare.measure import SideRun, run_time
from bench.compare.samples import instruction_rows, to_frame
from bench.measure.instructions import (
    CACHEGRIND_FILE,
    CachegrindError,
    measure_instructions,
    parse_cachegrind_total,
    valgrind_available,
)
from bench.measure.spec import WorkerSpec
from bench.study_time import ALARMS, run_time_study, top_plugin
from reports.stats import compare_frames
from reports.stats.compare import DEFAULT_Q, MIN_EFFECT

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
# instruction-mode HEADs aim this much (relative) above the nominal size, so that a nominal
# 1 % cannot land below the 1 % minimum effect: with the plugin's constants (the two largest
# sizes; unit and call costs vary by about 1 % and 30 % between workloads) and with the
# workload's own fitted costs (the other sizes; they predict counts to about 0.3 %)
INSTRUCTION_MARGIN = 0.02
FITTED_MARGIN = 0.005
IR_METRIC = "instructions_per_pod"
Say = Callable[[str], None]
COUNTS_SCHEMA = {"study": pl.String, "side": pl.String, "size": pl.Float64,
                 "workload": pl.String, "status": pl.String, "measured": pl.Int64,
                 "total": pl.Int64, "setup": pl.Int64, "measured_pods": pl.Int64,
                 "measured_attempts": pl.Int64, "per_pod": pl.Float64}


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
    rounds: tuple[int, ...] = (10, 20)  # paced rounds per decision: compare's --repeat, raised
    pool: int = 40  # time: A/A paced rounds of the whole time set
    pool_slowdown: int = 30  # time: paced rounds per size and affected workload
    draws: int = 300
    attribution_rounds: int = 3  # paced time rounds behind an instruction attribution
    controls: int = 2
    seed: int = 0
    jobs: int = 2
    compare_runs: bool = True  # real `schedperf compare` A/A runs (wall time, A/A data)
    # without compare_runs: count BASE twice in-process (the instruction A/A) or, when False,
    # once and only for the affected workloads and the controls (the test's short cut)
    instruction_aa: bool = True
    resume: bool = False  # reuse the real compare reports in ``out``
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


# ----------------------------------------------------------------------------- instructions

def _count_from(c: Any) -> Count:
    return Count(c.name, c.status, c.reason, c.measured, c.total, c.setup, c.measured_pods,
                 0)


def read_compare_counts(folder: Path) -> dict[str, dict[str, Count]]:
    """Per side, per workload: the counts a ``schedperf compare --measure instructions``
    left in ``folder/raw/instructions/<side>/attempt<k>/`` (its last attempt): forked counts
    in ``counted/`` (result.json's ``forked`` entries name the cachegrind files by pid), or
    one process pair per workload in ``w<i>/{a,s}``."""
    out: dict[str, dict[str, Count]] = {}
    for side in ("base", "head"):
        attempts = sorted((folder / "raw" / "instructions" / side).glob("attempt*"),
                          key=lambda p: int(p.name.removeprefix("attempt") or 0))
        counts: dict[str, Count] = {}
        if attempts:
            counted = attempts[-1] / "counted"
            if (counted / "result.json").is_file():
                counts.update(_read_forked(counted))
            for wdir in sorted(attempts[-1].glob("w*")):
                counts.update([_read_count_dir(wdir)])
        out[side] = counts
    return out


def _read_forked(counted: Path) -> dict[str, Count]:
    try:
        entries = json.loads((counted / "result.json").read_text(encoding="utf-8"))["forked"]
    except (OSError, ValueError, KeyError) as exc:
        return {"?": Count("?", "error", f"{counted}: {exc}")}
    out = {}
    for e in entries:
        m = e.get("measurement") or {}
        name = e.get("name") or m.get("name", "?")
        if e.get("problem") or m.get("status") != "ok":
            out[name] = Count(name, m.get("status") or "error", e.get("problem"))
            continue
        try:
            total = parse_cachegrind_total(counted / f"cachegrind.out.{e['full_pid']}")
            setup = parse_cachegrind_total(counted / f"cachegrind.out.{e['setup_pid']}")
        except (OSError, KeyError, CachegrindError) as exc:
            out[name] = Count(name, "error", str(exc))
            continue
        out[name] = Count(name, "ok", None, measured=total - setup, total=total, setup=setup,
                          measured_pods=m.get("measured_pods", 0),
                          measured_attempts=m.get("measured_attempts", 0))
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
    # one process pair per workload (its folder layout is what workdir_result reads)
    counts = measure_instructions(spec.replace(workloads=tuple(names),
                                               scheduler_config=str(cfg)),
                                  jobs=jobs, workdir=workdir, method="separate")
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
            results["compare_time_aa"] = _report_digest(report)
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
    for col in ("mode", "rounds", "decisions", "backed by", "any alarm / decision",
                "alarm / workload", "note"):
        t.add_column(col)
    ir = results.get("instructions")
    if ir and ir["aa"]:
        aa = ir["aa"]
        t.add_row("instructions", "1 count/side", "1", f"{aa['workloads']} workloads x 2 "
                  "counts", pct(1.0 if aa["false_alarms"] else 0.0, 0),
                  f"{pct(aa['false_alarm_rate'])} (mean)",
                  f"identical counts {aa['identical']}/{aa['workloads']} (largest "
                  f"difference {pct(aa['max_relative_difference'], 4)})")
    tm = results.get("time")
    if tm:
        pool = tm["independent_rounds"]["aa"]
        for n, cell in tm["aa"].items():
            worst = max(cell["per_workload"].items(), key=lambda kv: kv[1], default=("-", 0.0))
            t.add_row("time", f"{n} paced", str(cell["draws"]), f"{pool} paced rounds",
                      pct(cell["any_alarm_per_draw"]), f"{pct(worst[1])} (worst)",
                      f"worst: {worst[0]}; draws overlap")
    console.print(t)

    t = Table(title="Injected slowdowns: detection")
    t.add_column("size")
    if ir:
        t.add_column("instructions: flagged/affected, controls flagged, change, named")
    levels = [str(n) for n in tm["rounds"]] if tm else []
    for n in levels:
        t.add_column(f"time {n} paced rounds: power per affected workload, controls' alarms")
    for key in [size_key(s) for s in results["settings"]["sizes"]]:
        row = [pct(float(key), 0)]
        if ir:
            row.append(_instruction_detection(ir["slowdown"].get(key)))
        for n in levels:
            power = tm["power"].get(n, {}).get(key)
            if power is None:
                row.append("-")
                continue
            lines = [f"{w}: {pct(power.get(w))}" for w in tm["affected"]]
            lines.append(f"controls: {pct(tm['controls'][n].get(key))}")
            row.append("\n".join(lines))
        t.add_row(*row)
    if tm:
        row = [f"named {PLUGIN_KEY}"] + (["-"] if ir else [])
        for n in levels:
            a = tm["attribution"].get(n) or {"flagged": 0, "names_plugin": None}
            row.append(f"{pct(a['names_plugin'])} of {a['flagged']} flagged draws")
        t.add_row(*row)
    console.print(t)
    lines = []
    if tm:
        _print_time_tables(tm, console)
    if ir:
        caught = [float(k) for k, c in ir["slowdown"].items() if c["exact"]]
        lines.append(f"instructions: smallest size caught in every affected workload with no "
                     f"control flagged: {pct(min(caught), 0) if caught else 'none'}")
    if tm:
        for n, sz in tm["smallest_detected"].items():
            lines.append(f"time, {n} paced rounds: smallest size detected with >= 90 % power "
                         f"in every affected workload: {pct(float(sz), 0) if sz else 'none'}")
        ind = tm["independent_rounds"]
        lines.append(f"time: {tm['draws']} overlapping draws per cell rest on {ind['aa']} A/A "
                     f"paced rounds and {ind['per_size_and_workload']} per size and affected "
                     f"workload ({ind['total']} independent rounds in all)")
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


def _instruction_detection(cell: Mapping[str, Any] | None) -> str:
    """The instructions column of the detection table for one size."""
    if not cell:
        return "-"
    flagged = [i for i in cell["workloads"].values()
               if i["affected"] and i["verdict"] == "regression"]
    named = [i for i in flagged if str(i.get("attribution")).startswith(PLUGIN)]
    checked = [i for i in flagged if i.get("attribution") != "not checked"]
    changes = [i["change"] for i in cell["workloads"].values()
               if i["affected"] and i["change"] is not None]
    span = f"{pct(min(changes), 2)}-{pct(max(changes), 2)}" if changes else "-"
    return (f"{cell['detected']}/{cell['affected']}, {cell['controls_flagged']}, {span}, "
            + (f"{len(named)}/{len(checked)}" if checked else "-"))


def _print_time_tables(tm: Mapping[str, Any], console: Console) -> None:
    """Time mode: the slowdowns achieved and the A/A pool's per-round noise."""
    t = Table(title="Time mode: slowdown achieved")
    t.add_column("size (achieved: median per-round HEAD/BASE cpu_per_pod - 1)")
    for w in tm["affected"]:
        t.add_column(w)
    for key, per in tm["achieved"].items():
        t.add_row(pct(float(key), 0), *[pct(per.get(w)) for w in tm["affected"]])
    console.print(t)
    t = Table(title="Time mode: per-round noise in the A/A pool (sd of log values)")
    for col in ("workload", "rounds", "cpu_per_pod HEAD/BASE", "cpu_per_pod BASE",
                "SchedulingThroughput HEAD/BASE", "SchedulingThroughput BASE"):
        t.add_column(col)
    for w, per in tm["noise"].items():
        cells = []
        for m in ("cpu_per_pod", "SchedulingThroughput"):
            x = per.get(m) or {}
            cells += [pct(x.get("sd_log_ratio"), 2), pct(x.get("sd_log_base"), 2)]
        rounds = max((x.get("rounds", 0) for x in per.values()), default=0)
        t.add_row(w, str(rounds), *cells)
    console.print(t)


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
        raise click.BadParameter(f"{text!r}: round counts >= 1, e.g. 10,20")
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
@click.option("--rounds", default="10,20", show_default=True,
              help="Time mode: paced rounds per resampled decision (compare's --repeat is "
                   "10).")
@click.option("--pool", default=40, show_default=True, type=click.IntRange(min=1),
              help="Time mode: A/A paced rounds of the whole time set (BASE on both sides).")
@click.option("--pool-slowdown", default=30, show_default=True, type=click.IntRange(min=1),
              help="Time mode: paced rounds per size and affected workload (BASE vs HEAD).")
@click.option("--draws", default=300, show_default=True, type=click.IntRange(min=1),
              help="Time mode: resampled decisions per cell and round count.")
@click.option("--attribution-rounds", default=3, show_default=True,
              type=click.IntRange(min=0),
              help="Instructions mode: paced time rounds behind the attribution of a "
                   "flagged workload (smallest and largest size; 0: none).")
@click.option("--controls", default=2, show_default=True, type=click.IntRange(min=0),
              help="Instructions mode: unaffected workloads counted at every size.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--jobs", default=2, show_default=True, type=click.IntRange(min=1),
              help="Parallel valgrind runs; time mode: paced rounds at once.")
@click.option("--no-compare", "no_compare", is_flag=True,
              help="Skip the real `schedperf compare` A/A runs (no wall times; instruction "
                   "A/A counted in-process; time A/A from the study's own pool anyway).")
@click.option("--timeout-per-run", "timeout", default=900.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Wall seconds per worker run (time mode: per paced round).")
@click.option("--resume", is_flag=True,
              help="Reuse the real compare reports an interrupted study left in --out; "
                   "time rounds and instruction counts always run again.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Output folder [default: ./detector-study/<UTC time>].")
def main(configs: tuple[Path, ...], label: str | None, time_label: str | None,
         name_regex: str | None, feature: str, sizes: str, modes: tuple[str, ...],
         rounds: str, pool: int, pool_slowdown: int, draws: int, attribution_rounds: int,
         controls: int, seed: int, jobs: int, no_compare: bool,
         timeout: float, resume: bool, out_dir: Path | None) -> None:
    """Measure the false-alarm rate and the power of `schedperf compare` with injected
    slowdowns (docs/detector-study.md)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H-%M-%SZ")
    settings = StudySettings(
        out=(out_dir or Path("detector-study") / stamp).resolve(), configs=configs,
        label=label, time_label=time_label, name_regex=name_regex, feature=feature,
        sizes=_floats(sizes), modes=modes or ("instructions", "time"), rounds=_ints(rounds),
        pool=pool, pool_slowdown=pool_slowdown, draws=draws,
        attribution_rounds=attribution_rounds, controls=controls, seed=seed,
        jobs=jobs, compare_runs=not no_compare, timeout=timeout, resume=resume)
    console = Console()
    results = run_study(settings, Console(stderr=True))
    print_summary(results, console)
    console.print(f"results: {settings.out / 'results.json'}", highlight=False)


if __name__ == "__main__":
    main()
