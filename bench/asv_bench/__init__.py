"""schedperf's asv (airspeed velocity) suite: see docs/benchmarks.md.

Modules: ``scheduling`` (per-workload throughput and attempts per pod, peak memory of a large
workload), ``plugins`` (each default plugin's vectorised Filter and Score), ``snapshot`` (node
table updates) and ``requeue`` (the queue's event-driven requeue). Each module imports only
what its benchmarks need; the workload runner is imported when a workload actually runs.

asv imports this package by name from ``benchmark_dir``, without the repository root on
``sys.path``. In an asv-built environment the project under test is installed, and its code
must come from there (the commit being measured). With ``--python=same`` (nothing installed)
the working tree is put on ``sys.path`` instead.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _ensure_project_importable() -> None:
    if importlib.util.find_spec("scheduler_core") is not None:
        return
    root = Path(__file__).resolve().parents[2]
    if (root / "scheduler_core").is_dir() and str(root) not in sys.path:
        sys.path.insert(0, str(root))


_ensure_project_importable()
