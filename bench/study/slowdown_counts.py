"""Instruction mode: the BASE count and the calibrated HEAD counts per size of the affected
workloads and the controls, each workload's counts in one slot folder of its own, the slots
run in parallel; and the calibrations that make a HEAD's extra work ``f`` of the BASE count."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from bench.measure.spec import WorkerSpec
from bench.study.configs import write_config
from bench.study.counts import Count, count_in_slot
from bench.study.probe import FeatureShare
from bench.study.settings import Say, StudySettings, size_key

__all__ = ["SlowdownCounts", "fit_unit_costs", "fitted_calibration", "plan_slots"]

# instruction-mode HEADs aim this much (relative) above the nominal size, so that a nominal
# 1 % cannot land below the 1 % minimum effect: with the plugin's constants (the two largest
# sizes; unit and call costs vary by about 1 % and 30 % between workloads) and with the
# workload's own fitted costs (the other sizes; they predict counts to about 0.3 %)
INSTRUCTION_MARGIN = 0.02
FITTED_MARGIN = 0.005


def plan_slots(names: Sequence[str], probe: Mapping[str, FeatureShare], jobs: int
               ) -> list[list[str]]:
    """At most ``jobs`` slots (queues of workloads), balanced by attempts after set-up: each
    workload's counts all happen in one slot."""
    n_slots = max(1, min(jobs, len(names)))
    queues: list[list[str]] = [[] for _ in range(n_slots)]
    load = [0] * n_slots
    for w in sorted(names, key=lambda n: -probe[n].attempts):
        i = load.index(min(load))
        queues[i].append(w)
        load[i] += probe[w].attempts
    return queues


class SlowdownCounts:
    """The counts of one instruction-mode study: per workload a BASE count, then one HEAD
    count per size (affected: calibrated so that the extra work is f of that BASE count;
    controls: the plain config of the size). Filled by :meth:`run`; the slot threads write
    disjoint workloads."""

    def __init__(self, settings: StudySettings, spec: WorkerSpec,
                 probe: Mapping[str, FeatureShare], affected: Sequence[str],
                 controls: Sequence[str]) -> None:
        from workloads.example_plugins.slowdown import CALL_INSTRUCTIONS, UNIT_INSTRUCTIONS

        self.settings, self.spec, self.probe = settings, spec, probe
        self.affected, self.controls = set(affected), list(controls)
        self.queues = plan_slots([*affected, *controls], probe, settings.jobs)
        self.per_slot_jobs = max(1, settings.jobs // len(self.queues))
        self.per_call = CALL_INSTRUCTIONS / UNIT_INSTRUCTIONS
        self.unit_instructions = UNIT_INSTRUCTIONS
        self.base: dict[str, Count] = {}
        self.heads: dict[str, dict[str, Count]] = {size_key(s): {} for s in settings.sizes}
        self.cals: dict[str, dict[str, float]] = {}
        self.cfg_of: dict[tuple[str, str], Path] = {}
        self.fits: dict[str, dict[str, Any]] = {}

    def run(self, say: Say) -> None:
        """Count every slot's workloads, the slots in parallel."""
        n_slots = len(self.queues)
        say(f"instructions: {len(self.affected)} affected workloads and {len(self.controls)} "
            f"controls, a BASE and {len(self.settings.sizes)} HEAD counts each, in {n_slots} "
            "slots")
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=n_slots) as pool:
            list(pool.map(self._slot, range(n_slots)))
        say(f"instructions: slowdown counts took {time.perf_counter() - started:.0f} s")

    def _count(self, slot: Path, w: str, tag: str, key: str, size: float,
               cal: str | dict[str, float]) -> Count:
        cfg = write_config(self.settings.out / "configs" / f"instructions-{tag}-{key}.yaml",
                           size, self.settings.feature, cal)
        self.cfg_of[(w, key)] = cfg
        return count_in_slot(slot, self.spec, [w], cfg, self.settings.out / "instructions" /
                             f"{tag}-{key}", self.per_slot_jobs)[w]

    def _slot(self, i: int) -> None:
        slot = self.settings.out / "instructions" / f"slot{i}"
        for w in self.queues[i]:
            tag = f"w{self.spec.workloads.index(w):02d}"
            if w in self.affected:
                self._count_affected(slot, w, tag)
            else:
                self._count_control(slot, w, tag)

    def _count_control(self, slot: Path, w: str, tag: str) -> None:
        self.base[w] = self._count(slot, w, tag, "base", 0.0, "instructions")
        for size in self.settings.sizes:
            self.heads[size_key(size)][w] = self._count(slot, w, tag, size_key(size), size,
                                                        "instructions")

    def _count_affected(self, slot: Path, w: str, tag: str) -> None:
        """BASE, then the sizes from the largest: the two largest with the plugin's constants,
        the others with the call and unit costs fitted from those two counts."""
        c = self._count(slot, w, tag, "base", 0.0,
                        {"perPod": 1.0, "perNode": 0.0, "perCall": self.per_call})
        self.base[w] = c
        if c.measured is None:
            return
        p = self.probe[w]
        owed = c.measured * (1 + INSTRUCTION_MARGIN)
        plain = {"perPod": owed / (p.affected * self.unit_instructions), "perNode": 0.0,
                 "perCall": self.per_call}
        self.cals[w] = {}
        fit: tuple[float, float] | None = None
        done: list[tuple[float, dict[str, float], Count]] = []
        for size in sorted(self.settings.sizes, reverse=True):
            key = size_key(size)
            cal = plain
            if fit is not None:
                cal = fitted_calibration(c.measured * size * (1 + FITTED_MARGIN), size, fit, p)
            self.cals[w][key] = cal
            h = self._count(slot, w, tag, key, size, cal)
            self.heads[key][w] = h
            if h.measured is not None:
                done.append((size, cal, h))
            if fit is None and len(done) == 2:
                fit = fit_unit_costs(done, c, p)
                self.fits[w] = {"call_instructions": fit[0], "unit_instructions": fit[1],
                                "from_sizes": [size_key(d[0]) for d in done]}


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
