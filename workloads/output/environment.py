"""Environment fingerprint stored with every results row: what machine, code and settings a
number came from, so that numbers from different runs can be compared (or not) knowingly.

The code measured is the ``scheduler_core`` package Python imported, wherever it came from:
:func:`core_origin` says where that is, which git checkout tracks it (its HEAD commit and
branch, whether its working tree was dirty) or that it is not in one (``pip install .``
copies it into site-packages). An installed copy whose files are exactly those of the HEAD
commit of the checkout the run was started in (``pip install .`` of that commit, as CI does)
is recorded as that commit; any other installed copy has no known commit.
:func:`measured_code_warning` is the one-line warning for a run started in a schedperf
checkout that measures other code.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ORIGIN_CHECKOUT", "ORIGIN_INSTALLED_HEAD", "ORIGIN_OTHER", "ORIGIN_SITE_PACKAGES",
           "THREAD_VARIABLES", "CoreOrigin", "blas_info", "core_origin", "cpu_model",
           "environment_fingerprint", "git_info", "measured_code_warning", "named_checkout"]

CORE_PACKAGE = "scheduler_core"
ORIGIN_CHECKOUT = "git checkout"
ORIGIN_INSTALLED_HEAD = "site-packages, same files as commit"
ORIGIN_SITE_PACKAGES = "not a git checkout: site-packages"
ORIGIN_OTHER = "not a git checkout"
_INSTALL_FOLDERS = ("site-packages", "dist-packages")

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


def _toplevel(folder: Path) -> Path | None:
    top = _git(["rev-parse", "--show-toplevel"], folder) if folder.is_dir() else None
    return Path(top).resolve() if top else None


@dataclass(frozen=True)
class CoreOrigin:
    """Where the imported scheduler_core package came from."""

    path: Path  # its folder, symlinks resolved
    origin: str  # ORIGIN_CHECKOUT, ORIGIN_INSTALLED_HEAD, ORIGIN_SITE_PACKAGES, ORIGIN_OTHER
    # top folder of the git checkout tracking it (ORIGIN_INSTALLED_HEAD: whose HEAD it copies)
    checkout: Path | None = None
    commit: str | None = None  # that checkout's HEAD
    branch: str | None = None  # its branch (None on a detached HEAD)
    dirty: bool | None = None  # the code measured differs from commit (None: no commit)

    def describe(self) -> str:
        if self.checkout is None or self.commit is None:
            return self.origin
        return f"commit {self.commit[:12]}{', dirty' if self.dirty else ''}"


def _dirty(top: Path, core_rel: str) -> bool | None:
    """Tracked files of the working tree differ from HEAD, or the package folder holds
    untracked files (Python would import a new module there too; .gitignore'd ones aside)."""
    out = _git(["status", "--porcelain", "--untracked-files=normal"], top)
    if out is None:
        return False if _git(["rev-parse", "HEAD"], top) else None
    for line in out.splitlines():
        if not line.startswith("??"):
            return True
        if line[3:].strip('"').startswith(core_rel + "/"):
            return True
    return False


def _installed_files(folder: Path) -> dict[str, Path]:
    """The files of an installed package folder (bytecode caches aside), by relative path."""
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def _copies_head(installed: Path, top: Path) -> bool:
    """Whether ``installed`` holds exactly the scheduler_core of ``top``'s HEAD commit: every
    file it has is in that commit with the same content, and every module of the commit is
    there (``git hash-object`` of each file against ``git ls-tree HEAD``)."""
    listing = _git(["ls-tree", "-r", "--full-tree", "HEAD", "--", CORE_PACKAGE + "/"], top)
    if not listing:
        return False
    tracked: dict[str, str] = {}
    for line in listing.splitlines():
        meta, _, name = line.partition("\t")
        tracked[name.removeprefix(CORE_PACKAGE + "/")] = meta.split()[-1]
    files = _installed_files(installed)
    if set(files) - set(tracked) or {n for n in tracked if n.endswith(".py")} - set(files):
        return False
    try:
        proc = subprocess.run(["git", "hash-object", "--no-filters", "--stdin-paths"],
                              cwd=top, input="\n".join(str(p) for p in files.values()),
                              capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    hashes = proc.stdout.split()
    return (proc.returncode == 0 and len(hashes) == len(files)
            and all(tracked[name] == h for name, h in zip(files, hashes, strict=True)))


def core_origin(core_dir: Path | str | None = None, *,
                named: Path | None = None) -> CoreOrigin:
    """Where ``core_dir`` (default: the imported scheduler_core's folder) comes from. It is
    in a checkout when a git checkout tracks its ``__init__.py`` (a copy inside a checkout's
    ignored virtualenv is not). An installed copy is compared with the HEAD of the checkout
    ``named`` (see :func:`named_checkout`): when it has exactly that commit's files, that is
    the commit measured."""
    if core_dir is None:
        import scheduler_core

        core_dir = Path(scheduler_core.__file__).parent
    path = Path(core_dir).resolve()
    installed = any(part in _INSTALL_FOLDERS for part in path.parts)
    top = None if installed else _toplevel(path)
    if top is not None:
        rel = path.relative_to(top).as_posix() if path.is_relative_to(top) else None
        tracked = rel is not None and _git(
            ["ls-files", "--full-name", "--", f"{rel}/__init__.py"], top) is not None
        if tracked and rel is not None:
            commit, branch = git_info(top)
            return CoreOrigin(path, ORIGIN_CHECKOUT, top, commit, branch, _dirty(top, rel))
    if installed and named is not None and _copies_head(path, named.resolve()):
        commit, branch = git_info(named)
        return CoreOrigin(path, ORIGIN_INSTALLED_HEAD, named.resolve(), commit, branch, False)
    return CoreOrigin(path, ORIGIN_SITE_PACKAGES if installed else ORIGIN_OTHER)


def named_checkout(cwd: Path | str | None = None) -> Path | None:
    """The checkout a run started in ``cwd`` names: the top folder of the git checkout holding
    ``cwd`` when it has a scheduler_core package (a schedperf checkout), else None."""
    top = _toplevel(Path(cwd) if cwd is not None else Path.cwd())
    if top is None or not (top / CORE_PACKAGE / "__init__.py").is_file():
        return None
    return top


def measured_code_warning(core: CoreOrigin, named: Path | None) -> str | None:
    """Why the results do not describe the checkout ``named`` (see :func:`named_checkout`),
    or None when they do (or none is named)."""
    if named is None or core.checkout == named.resolve():
        return None
    head = git_info(named)[0]
    at = f" (HEAD {head[:12]})" if head else ""
    recorded = f"commit {core.commit[:12]}" if core.commit else "no commit"
    return (f"this run measures {core.path} ({core.describe()}), not the checkout {named}{at} "
            f"it was started in; results record {recorded}. To measure the working tree, "
            f"pip install -e {named} (or run python -m bench.cli.main from it)")


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


def environment_fingerprint(*, clock: str, seed: int, cwd: Path | str | None = None,
                            core_dir: Path | str | None = None) -> dict[str, Any]:
    """Every environment column of ``results.parquet`` (see docs/results-schema.md). Call it
    once at the start of a run: ``load_average_1m`` is the load before the run. ``commit``
    and ``branch`` are those of the checkout the imported scheduler_core (``core_dir`` in
    tests) comes from, ``scheduler_core_warning`` says when that is not the checkout ``cwd``
    (default: the current folder) is in."""
    import numpy as np

    named = named_checkout(cwd)
    core = core_origin(core_dir, named=named)
    commit, branch = core.commit, core.branch
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
    env["scheduler_core_path"] = str(core.path)
    env["scheduler_core_origin"] = core.origin
    env["scheduler_core_dirty"] = core.dirty
    env["scheduler_core_warning"] = measured_code_warning(core, named)
    return env
