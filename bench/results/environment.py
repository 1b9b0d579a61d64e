"""Environment fingerprint stored with every results row: what machine, code and settings a
number came from, so that numbers from different runs can be compared (or not) knowingly."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["THREAD_VARIABLES", "blas_info", "cpu_model", "environment_fingerprint", "git_info"]

# environment variable -> column
THREAD_VARIABLES = {
    "OMP_NUM_THREADS": "omp_num_threads",
    "OPENBLAS_NUM_THREADS": "openblas_num_threads",
    "POLARS_MAX_THREADS": "polars_max_threads",
}


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip()
    return out if proc.returncode == 0 and out else None


def git_info(cwd: Path | str | None = None) -> tuple[str | None, str | None]:
    """(commit, branch) of the git checkout holding ``cwd`` (default: the current folder);
    (None, None) outside a checkout or without git. A detached HEAD has branch None."""
    where = Path(cwd) if cwd is not None else Path.cwd()
    commit = _git(["rev-parse", "HEAD"], where)
    if commit is None:
        return None, None
    branch = _git(["rev-parse", "--abbrev-ref", "HEAD"], where)
    return commit, (None if branch == "HEAD" else branch)


def cpu_model() -> str:
    """The CPU model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    with (contextlib.suppress(OSError),
          open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh):
        for line in fh:
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Hardware", "cpu model"):
                return value.strip()
    return platform.processor() or platform.machine() or "unknown"


def blas_info() -> str | None:
    """The BLAS numpy uses: threadpoolctl's view when installed (what is loaded), else numpy's
    build configuration (``numpy.show_config``)."""
    if importlib.util.find_spec("threadpoolctl") is not None:
        with contextlib.suppress(Exception):
            from threadpoolctl import threadpool_info

            found = [f"{i.get('internal_api')} {i.get('version')} "
                     f"({i.get('num_threads')} threads)"
                     for i in threadpool_info() if i.get("user_api") == "blas"]
            if found:
                return "; ".join(found)
    with contextlib.suppress(Exception):
        import numpy as np

        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        name = blas.get("name")
        version = blas.get("version")
        if name:
            return f"{name} {version}" if version else str(name)
    return None


def _load_average() -> float | None:
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def environment_fingerprint(*, clock: str, seed: int,
                            cwd: Path | str | None = None) -> dict[str, Any]:
    """Every environment column of ``results.parquet`` (see docs/results-schema.md). Call it
    once at the start of a run: ``load_average_1m`` is the load before the run."""
    import numpy as np

    import scheduler_core

    commit, branch = git_info(cwd)
    env: dict[str, Any] = {
        "commit": commit,
        "branch": branch,
        "machine": platform.node() or None,
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "numpy_version": np.__version__,
        "blas": blas_info(),
    }
    for var, column in THREAD_VARIABLES.items():
        env[column] = os.environ.get(var)
    env["load_average_1m"] = _load_average()
    env["clock"] = clock
    env["seed"] = seed
    env["scheduler_core_path"] = str(Path(scheduler_core.__file__).resolve().parent)
    return env
