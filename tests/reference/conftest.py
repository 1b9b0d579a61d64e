"""Fixtures of the reference-scheduler tests.

The reference scheduler is built from Go sources: without the ``go`` tool the tests that need
the binary skip with a message naming what is missing, except under ``CI=true``, where they
fail (as tests/shared.py does for ../shared). It is built once per test session into a
temporary cache folder that lives for the session (Go's own module and build caches make that
a rebuild of seconds once Go has built it on this machine).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.shared import in_ci
from workloads.reference import ReferenceBinary, ReferenceClient, ensure_built
from workloads.reference.build import V1_37


def require_go() -> str:
    """The path of ``go``; skip the calling test when it is missing (fail under CI=true)."""
    go = shutil.which("go")
    if go is None:
        message = ("the Go toolchain is missing: `go` is not on PATH, so the reference "
                   "scheduler (reference_scheduler/) cannot be built")
        if in_ci():
            pytest.fail(f"{message} (CI=true: failing instead of skipping)", pytrace=False)
        pytest.skip(message)
    return go


@pytest.fixture(scope="session")
def reference_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reference-cache")


@pytest.fixture(scope="session")
def reference_binary(reference_cache: Path) -> ReferenceBinary:
    """The reference binary, built once per session."""
    require_go()
    return ensure_built(cache=reference_cache, timeout=3600)


@pytest.fixture(scope="session")
def reference_binary_v137(reference_cache: Path) -> ReferenceBinary:
    """The reference binary of the v1.37 build (go.v1_37.mod), built once per session."""
    require_go()
    return ensure_built(cache=reference_cache, timeout=3600, release=V1_37)


@pytest.fixture
def shared_cache(reference_cache: Path, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG_CACHE_HOME pointing at the session's builds (ask for ``reference_binary`` /
    ``reference_binary_v137`` to have them built), so `schedperf run` finds them."""
    require_go()
    home = tmp_path / "xdg"
    (home / "schedperf").mkdir(parents=True)
    (home / "schedperf" / "reference").symlink_to(reference_cache)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


@pytest.fixture
def reference(reference_binary: ReferenceBinary) -> Iterator[ReferenceClient]:
    """A fresh reference process (no config sent yet)."""
    with ReferenceClient(reference_binary.path, timeout=300) as client:
        yield client
