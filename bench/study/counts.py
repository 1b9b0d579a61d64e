"""Instruction counts of the study: counting workloads in a fixed slot folder, reading the
counts a ``schedperf compare --measure instructions`` left, and judging counts as compare does."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from bench.compare.samples import instruction_rows, to_frame
from bench.measure.instructions import (
    CACHEGRIND_FILE,
    CachegrindError,
    measure_instructions,
    parse_cachegrind_total,
)
from bench.measure.spec import WorkerSpec
from reports.stats import compare_frames
from reports.stats.compare import DEFAULT_Q, MIN_EFFECT

__all__ = ["COUNTS_SCHEMA", "Count", "count_in_slot", "count_row", "judge_counts",
           "read_compare_counts", "workdir_result"]

IR_METRIC = "instructions_per_pod"
COUNTS_SCHEMA = {"study": pl.String, "side": pl.String, "size": pl.Float64,
                 "workload": pl.String, "status": pl.String, "measured": pl.Int64,
                 "total": pl.Int64, "setup": pl.Int64, "measured_pods": pl.Int64,
                 "measured_attempts": pl.Int64, "per_pod": pl.Float64}


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


def count_row(c: Count) -> dict[str, Any]:
    return {"workload": c.name, "status": c.status, "measured": c.measured, "total": c.total,
            "setup": c.setup, "measured_pods": c.measured_pods,
            "measured_attempts": c.measured_attempts, "per_pod": c.per_pod}
