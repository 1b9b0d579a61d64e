"""Where the tests find ``../shared`` (upstream scheduler_perf configs and reference material
kept beside the project) and what a test does when it is not there.

``../shared`` is resolved from this file -- the repository root is the parent of ``tests/`` --
never from an absolute path or the working directory, so a clone anywhere finds the copy beside
it. A test that needs it and cannot find it skips with a message naming the path it looked at;
under ``CI=true`` it fails instead, so CI never passes with the upstream-compatibility tests
silently left out.

Tests ask for it through the ``shared_dir`` / ``upstream_dir`` fixtures of tests/conftest.py;
:func:`upstream_params` builds parameter lists at collection time (one placeholder when the
configs are absent, so the test still runs and its fixture reports why).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

__all__ = ["REPO_ROOT", "SHARED_DIR", "UPSTREAM_DIR", "in_ci", "require_shared",
           "require_upstream", "upstream_params"]

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"
UPSTREAM_DIR = SHARED_DIR / "upstream" / "scheduler_perf"
UPSTREAM_CONFIGS = "*/performance-config*.yaml"


def in_ci() -> bool:
    """Whether the tests run in CI (the environment variable ``CI`` is ``true``)."""
    return os.environ.get("CI") == "true"


def _missing(message: str) -> None:
    if in_ci():
        pytest.fail(f"{message} (CI=true: failing instead of skipping)", pytrace=False)
    pytest.skip(message)


def require_shared(path: Path | None = None) -> Path:
    """``path`` (a file or folder under ``../shared``; default ``../shared`` itself) if it
    exists; otherwise skip the calling test naming it, or fail it under ``CI=true``."""
    path = SHARED_DIR if path is None else path
    if not path.exists():
        _missing(f"{path} is absent: tests reading ../shared expect it beside the "
                 f"repository root {REPO_ROOT}")
    return path


def require_upstream(folder: Path | None = None) -> Path:
    """The upstream scheduler_perf folder (``../shared/upstream/scheduler_perf``) if it holds
    ``<topic>/performance-config*.yaml`` files; otherwise skip, or fail under ``CI=true``."""
    folder = UPSTREAM_DIR if folder is None else folder
    require_shared(folder)
    if not any(folder.glob(UPSTREAM_CONFIGS)):
        _missing(f"{folder} holds no {UPSTREAM_CONFIGS}: the upstream scheduler_perf "
                 "configs are missing from ../shared")
    return folder


def upstream_params(make: Callable[[Path], Sequence[Any]], width: int = 1,
                    folder: Path | None = None) -> list[Any]:
    """Parameters for ``pytest.mark.parametrize`` made from the upstream folder by ``make``;
    when the folder is absent or ``make`` finds nothing, one placeholder of ``width`` Nones
    (id ``upstream-absent``). A test using it must request the ``upstream_dir`` fixture,
    which then skips it or, under ``CI=true``, fails it."""
    folder = UPSTREAM_DIR if folder is None else folder
    params = list(make(folder)) if folder.is_dir() else []
    return params or [pytest.param(*([None] * width), id="upstream-absent")]
