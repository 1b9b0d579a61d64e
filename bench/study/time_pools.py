"""Time mode: pools of paced rounds (bench.measure.pacing via bench.compare.measure.run_time,
exactly as compare runs them) and the calibration a slowdown pool's HEAD gets from the A/A pool."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from bench.compare.measure import SideRun, run_time
from bench.measure.spec import WorkerSpec
from bench.study.settings import Say

__all__ = ["POOL_SCHEMA", "PoolSpec", "calibration_for", "median_cpu_per_pod", "run_pool",
           "run_pools"]

POOL_SCHEMA = {"pool": pl.String, "target": pl.String, "side": pl.String,
               "workload": pl.String, "metric": pl.String, "unit": pl.String,
               "round": pl.Int64, "value": pl.Float64}


@dataclass(frozen=True)
class PoolSpec:
    """One pool: ``name`` ("aa" or a size key), the workloads it runs, the two configs, and
    the affected workload it is for (None: the A/A pool)."""

    name: str
    spec: WorkerSpec
    base: Path
    head: Path
    target: str | None = None


def run_pool(pool: PoolSpec, rounds: int, workdir: Path, *, jobs: int, say: Say,
             timeout: float | None = None) -> tuple[pl.DataFrame, list[str]]:
    """``rounds`` paced rounds of ``pool``, exactly as compare runs them; (rows, problems)."""
    # both sides run the harness's own scheduler_core, with their own scheduler config
    sides = [SideRun("base", "BASE", env=dict(os.environ), scheduler_config=str(pool.base)),
             SideRun("head", "HEAD", env=dict(os.environ), scheduler_config=str(pool.head))]
    rows = run_time(sides, pool.spec, rounds, workdir, jobs=jobs, timeout=timeout,
                    progress=None)
    problems = [p for s in sides for p in s.problems]
    say(f"pool {pool.name}{'/' + pool.target if pool.target else ''}: {rounds} rounds, "
        f"{len(problems)} problem(s)")
    frame = pl.DataFrame(rows, schema={"side": pl.String, "mode": pl.String,
                                       "workload": pl.String, "metric": pl.String,
                                       "unit": pl.String, "round": pl.Int64,
                                       "value": pl.Float64}).drop("mode")
    frame = frame.with_columns(pl.lit(pool.name).alias("pool"),
                               pl.lit(pool.target).cast(pl.String).alias("target"))
    return frame.select(list(POOL_SCHEMA)), problems


def run_pools(pools: Sequence[tuple[PoolSpec, int]], workdir: Path, *, jobs: int, say: Say,
              timeout: float | None = None) -> tuple[pl.DataFrame, list[str]]:
    frames, problems = [], []
    for pool, rounds in pools:
        folder = workdir / (pool.name + (f"-{pool.target.replace('/', '_')}"
                                         if pool.target else ""))
        f, p = run_pool(pool, rounds, folder, jobs=jobs, say=say, timeout=timeout)
        frames.append(f)
        problems.extend(p)
    return pl.concat(frames) if frames else pl.DataFrame(schema=POOL_SCHEMA), problems


def median_cpu_per_pod(rows: pl.DataFrame, workload: str) -> float | None:
    v = rows.filter((pl.col("workload") == workload) & (pl.col("metric") == "cpu_per_pod")
                    & (pl.col("side") == "base"))["value"]
    return float(v.median()) if len(v) else None  # type: ignore[arg-type]


def calibration_for(rows: pl.DataFrame, probe: Mapping[str, Any], workload: str
                    ) -> dict[str, float] | None:
    """InjectedSlowdown calibration making a HEAD of size f add f of ``workload``'s median
    BASE CPU time per pod (A/A pool), spread over its affected attempts."""
    from workloads.example_plugins.slowdown import CALL_SECONDS, UNIT_SECONDS

    cpu = median_cpu_per_pod(rows.filter(pl.col("pool") == "aa"), workload)
    p = probe[workload]
    if cpu is None or not p.affected or not p.pods:
        return None
    return {"perPod": cpu * p.pods / p.affected / UNIT_SECONDS, "perNode": 0.0,
            "perCall": CALL_SECONDS / UNIT_SECONDS}
