"""Which workloads the study runs (by label, as compare picks them) and which of them have
pods with the feature after their set-up (the probe)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.study.settings import PLUGIN, Say

__all__ = ["FeatureShare", "choose_workloads", "probe_features"]


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


def choose_workloads(configs: Sequence[Path], label: str | None, name_regex: str | None,
                     default: str = "compare", fallback: str = "integration-test"
                     ) -> tuple[str, list[tuple[Any, Any]]]:
    """(label used, [(test case, workload)]): ``label``, or ``default`` falling back to
    ``fallback`` when no workload carries ``default``."""
    from bench.selection import BadInput, load_test_cases, select_workloads

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
