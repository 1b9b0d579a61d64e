"""What a detector study run depends on: its settings (the CLI options) and the constants
every part of the study shares (the injected plugin, the sizes, the alarm verdicts)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ALARMS", "DEFAULT_SIZES", "PLUGIN", "PLUGIN_KEY", "PLUGIN_PATH", "RESULTS_SCHEMA",
           "Say", "StudySettings", "size_key"]

PLUGIN = "InjectedSlowdown"
PLUGIN_PATH = "workloads.example_plugins.slowdown:InjectedSlowdown"
PLUGIN_KEY = f"{PLUGIN}/PreFilter"
DEFAULT_SIZES = (0.01, 0.02, 0.05, 0.10)
RESULTS_SCHEMA = 1
ALARMS = ("regression", "improvement")
Say = Callable[[str], None]


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


def size_key(size: float) -> str:
    return f"{size:g}"
