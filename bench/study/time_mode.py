"""The time-mode half of the detector study: paced pairs, stored and resampled.

    python bench/study_detector.py --measure time [--rounds 10,20] [--pool 40] ...

``schedperf compare --measure time`` judges rounds of paced pairs (bench.measure.pacing: both
sides run at once, taking turns on the CPU every few milliseconds). A pair is physical: its
two runs share the machine's state slice by slice, so a decision cannot be resampled from
runs made apart. The study therefore stores *rounds* and resamples rounds:

* **A/A pool**: ``pool`` paced rounds of the whole time set, BASE config on both sides
  (InjectedSlowdown with ``fraction: 0``).
* **Slowdown pools**: per size ``f`` and per affected workload, ``pool_slowdown`` paced rounds
  of that workload alone, BASE vs a HEAD that adds ``f`` of the workload's median BASE CPU
  time per pod (calibrated from the A/A pool; instruction mode calibrates from its BASE count).
* **Decisions**: a draw of ``n`` rounds takes ``n`` distinct rounds of a pool (without
  replacement) per workload: slowdown rounds for the affected workload of the cell, A/A
  rounds for the rest of the set, and judges the whole family as compare does
  (reports.stats.compare_frames: Hodges-Lehmann, paired Wilcoxon, Benjamini-Hochberg, the
  default minimum effect). An A/A draw takes every workload from the A/A pool. Draws overlap
  (they share rounds), so the figures rest on the pools' independent rounds, which the
  summary states.
* **Attribution**: for every flagged affected workload, reports.stats.attribute over the
  drawn rounds' plugin timings; the study asks whether it names InjectedSlowdown/PreFilter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from bench.measure.spec import WorkerSpec
from bench.study.configs import write_config
from bench.study.settings import Say, size_key
from bench.study.time_draws import achieved, draw_decisions, round_noise, summarize, undrawn
from bench.study.time_pools import PoolSpec, calibration_for, run_pools
from reports.stats.compare import MIN_EFFECT

__all__ = ["run_time_study"]


def run_time_study(out: Path, picked: Sequence[tuple[Any, Any]], probe: Mapping[str, Any], *,
                   base_config: Path, feature: str, sizes: Sequence[float],
                   rounds: Sequence[int], pool: int, pool_slowdown: int, draws: int,
                   jobs: int, seed: int, say: Say, timeout: float | None = None
                   ) -> dict[str, Any]:
    """The whole time-mode study; writes time_pools.parquet and time_decisions.parquet into
    ``out`` and returns the summary for results.json."""
    workloads = [w.full_name for _, w in picked]
    affected = [w for w in workloads if probe[w].is_affected]
    spec = WorkerSpec(configs=tuple(sorted({str(tc.source) for tc, _ in picked})),
                      workloads=tuple(workloads), seed=seed)
    rows, problems = run_pools([(PoolSpec("aa", spec, base_config, base_config), pool)],
                               out / "time", jobs=jobs, say=say, timeout=timeout)
    cal = {w: calibration_for(rows, probe, w) for w in affected}
    slow = []
    for size in sizes:
        for w in affected:
            c = cal[w]
            if c is None:
                problems.append(f"{w}: no BASE CPU time per pod to calibrate from")
                continue
            cfg = write_config(out / "configs" / f"time-{size_key(size)}-{len(slow)}.yaml",
                               size, feature, c)
            one = spec.replace(workloads=(w,))
            slow.append((PoolSpec(size_key(size), one, base_config, cfg, target=w),
                         pool_slowdown))
    more, probs = run_pools(slow, out / "time", jobs=jobs, say=say, timeout=timeout)
    rows = pl.concat([rows, more])
    problems += probs
    rows.write_parquet(out / "time_pools.parquet")
    keys = [size_key(s) for s in sizes]
    rng = np.random.default_rng(seed)
    decisions, attributions = draw_decisions(rows, workloads, affected, keys, rounds, draws,
                                             rng)
    problems += undrawn(rows, workloads, affected, keys, rounds)
    decisions.write_parquet(out / "time_decisions.parquet")
    summary = summarize(decisions, attributions, keys, affected, rounds)
    summary.update(
        workloads=workloads, affected=affected, calibration=cal,
        achieved=achieved(rows, keys, affected), noise=round_noise(rows),
        independent_rounds={"aa": pool, "per_size_and_workload": pool_slowdown,
                            "total": pool + pool_slowdown * len(slow)},
        min_effect=MIN_EFFECT["time"], draws=draws, rounds=list(rounds), problems=problems)
    return summary
