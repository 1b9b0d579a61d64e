"""Which scheduler_core a worker imported, and its git commit.

The commit is read from the repository files (``.git/HEAD``, loose refs, ``packed-refs``,
``.git`` files of linked worktrees) instead of running ``git rev-parse HEAD``: a subprocess
would put pipe reads, whose number depends on timing, into instruction counts. ``git`` is
run only when those files cannot be understood (e.g. a reftable repository) and, for the
``dirty`` flag, only when the caller allows subprocesses (time mode).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["core_info", "git_dirty", "git_head", "harness_info"]

_HEX = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _git_dir(folder: Path) -> Path | None:
    """The git directory of the checkout holding ``folder`` (a linked worktree's own one)."""
    for d in (folder, *folder.parents):
        dotgit = d / ".git"
        if dotgit.is_dir():
            return dotgit
        if dotgit.is_file():
            text = _read(dotgit) or ""
            if text.startswith("gitdir:"):
                return (d / text[len("gitdir:"):].strip()).resolve()
            return None
    return None


def _ref(gitdir: Path, common: Path, ref: str) -> str | None:
    for where in (gitdir, common):
        value = _read(where / ref)
        if value is not None:
            return value
    packed = _read(common / "packed-refs")
    if packed:
        for line in packed.splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and _HEX.fullmatch(sha):
                return sha
    return None


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def git_head(folder: Path | str, *, allow_subprocess: bool = True) -> str | None:
    """``git rev-parse HEAD`` of the checkout holding ``folder``; None outside one."""
    folder = Path(folder)
    gitdir = _git_dir(folder)
    if gitdir is None:
        return None
    common_text = _read(gitdir / "commondir")
    common = (gitdir / common_text).resolve() if common_text else gitdir
    head = _read(gitdir / "HEAD")
    for _ in range(8):  # symbolic refs may chain
        if head is None:
            break
        if _HEX.fullmatch(head):
            return head
        if not head.startswith("ref:"):
            break
        head = _ref(gitdir, common, head[len("ref:"):].strip())
    if allow_subprocess:  # a layout this reader does not know
        out = _git(["rev-parse", "HEAD"], folder)
        return out if out and _HEX.fullmatch(out) else None
    return None


def git_dirty(folder: Path | str) -> bool | None:
    """True when tracked files under ``folder`` differ from HEAD (``git status``); None when
    unknown (no checkout, no git)."""
    out = _git(["status", "--porcelain", "--untracked-files=no", "--", "."], Path(folder))
    return None if out is None else bool(out)


def core_info(*, allow_subprocess: bool = True) -> dict[str, Any]:
    """Where the imported scheduler_core lives. ``import_path`` is its folder as imported
    (through sys.path / PYTHONPATH); ``path`` the same with symlinks resolved, whose checkout
    gives ``commit``. ``warning`` is set when the first PYTHONPATH entry holding a
    scheduler_core is not the one imported (the current folder, which ``python -m`` puts
    before PYTHONPATH, shadowed it)."""
    import scheduler_core

    imported = Path(os.path.abspath(scheduler_core.__file__)).parent
    resolved = imported.resolve()
    info: dict[str, Any] = {
        "path": str(resolved),
        "import_path": str(imported),
        "commit": git_head(resolved.parent, allow_subprocess=allow_subprocess),
        "dirty": git_dirty(resolved) if allow_subprocess else None,
        "warning": None,
    }
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if not entry:
            continue
        candidate = Path(os.path.abspath(entry)) / "scheduler_core"
        if (candidate / "__init__.py").is_file():
            if candidate.resolve() != resolved:
                info["warning"] = (f"PYTHONPATH names {candidate} but {imported} was imported "
                                   f"(sys.path[0] = {sys.path[0]!r} came first: run the worker "
                                   "with python -P or from another folder)")
            break
    return info


def harness_info() -> dict[str, str]:
    """Folders of the harness packages (workloads/, bench/) the worker imported."""
    import bench
    import workloads

    return {"workloads": str(Path(workloads.__file__).resolve().parent),
            "bench": str(Path(bench.__file__).resolve().parent)}
