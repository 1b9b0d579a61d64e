"""What the measurement processes agree on before any of them starts: environment variable
and file names, the module names a worker is started as, the worker's environment and the
the worker's environment. The lowest module of ``bench.measure``: it imports nothing of bench, so
the orchestrators (instructions, pacing) and the workers (worker, forked) can all use it
without importing each other."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "DETERMINISTIC_ENV",
    "FORKED_KEY",
    "FORKED_MODULE",
    "HARNESS_ROOT",
    "PREIMPORT_FILE",
    "WORKER_MODULE",
    "child_env",
]

FORKED_KEY = "forked"  # RESULT.json's list of per-workload entries (forked runs)
PREIMPORT_FILE = "preimport.json"
DETERMINISTIC_ENV = {
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "POLARS_MAX_THREADS": "1",
}
# variables that would change what the child Python does before or besides the worker
_DROPPED_ENV = ("PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONDEVMODE", "PYTHONTRACEMALLOC",
                "PYTHONPROFILEIMPORTTIME", "PYTHONDONTWRITEBYTECODE", "PYTHONWARNINGS",
                "PYTHONBREAKPOINT", "PYTHONMALLOC")
HARNESS_ROOT = Path(__file__).resolve().parents[2]  # the folder holding bench/ and workloads/
WORKER_MODULE = "bench.measure.worker"
FORKED_MODULE = "bench.measure.forked"


def child_env(env: Mapping[str, str] | None = None, *,
              hash_seed: int | None = 0) -> dict[str, str]:
    """The worker's environment: ``env`` (default os.environ) with DETERMINISTIC_ENV set, the
    variables that alter the interpreter removed, and the harness root appended to PYTHONPATH
    (entries already there, such as a worktree's scheduler_core, keep their precedence).
    ``hash_seed=None`` leaves str hashing randomised (only to measure what that costs)."""
    out = dict(os.environ if env is None else env)
    for var in _DROPPED_ENV:
        out.pop(var, None)
    out.update(DETERMINISTIC_ENV)
    if hash_seed is None:
        out["PYTHONHASHSEED"] = "random"
    else:
        out["PYTHONHASHSEED"] = str(hash_seed)
    entries = [e for e in out.get("PYTHONPATH", "").split(os.pathsep) if e]
    if not any(Path(e).resolve() == HARNESS_ROOT for e in entries):
        entries.append(str(HARNESS_ROOT))
    out["PYTHONPATH"] = os.pathsep.join(entries)
    return out
