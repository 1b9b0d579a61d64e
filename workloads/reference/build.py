"""Build the reference scheduler (the Go module ``reference_scheduler/`` at the repository root)
once per distinct input, and keep the binary in a cache.

The module is built at one of two pinned Kubernetes releases (:data:`RELEASES`): v1.34 from
``go.mod``/``go.sum``, v1.37 from ``go.v1_37.mod``/``go.v1_37.sum`` (``go build -modfile``) with
the build tag ``k8s_1_37`` selecting the few files whose upstream API differs. The same ``.go``
sources serve both.

The cache key is a SHA-256 over every ``.go`` file of the module, the release's modfile and sum
file (their names and contents), its build tags and the output of ``go version``; the binary
lives at ``<cache>/<key>/schedperf-reference`` with a ``build.json`` beside it (the key, the
release, Go version, build seconds, the binary's SHA-256). ``<cache>``
is ``$XDG_CACHE_HOME/schedperf/reference`` (``~/.cache/schedperf/reference`` when unset). The
binary is built to a temporary name in its folder and renamed into place, so a binary that
exists is complete; any change of the inputs gives another key, hence a rebuild.

Go modules come from the module proxy (GOPROXY) on the first build and from Go's own caches
(GOMODCACHE, GOCACHE) afterwards: a cold build takes minutes, a rebuild seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from workloads.reference.errors import (
    GoToolMissing,
    ReferenceBuildError,
    ReferenceSourceMissing,
)

__all__ = [
    "BINARY_NAME",
    "DEFAULT_RELEASE",
    "RELEASES",
    "ReferenceBinary",
    "Release",
    "build_key",
    "cache_root",
    "default_source_dir",
    "ensure_built",
    "go_version",
    "release_named",
]

BINARY_NAME = "schedperf-reference"
PACKAGE = "./cmd/schedperf-reference"
_STDERR_TAIL = 4000


@dataclass(frozen=True, slots=True)
class Release:
    """One pinned build of the reference: its name (``v1.34``), the Kubernetes version its
    modfile pins, the modfile (relative to the module) and the build tags."""

    name: str
    kubernetes: str
    modfile: str
    tags: tuple[str, ...] = ()

    @property
    def sumfile(self) -> str:
        """Go reads the checksums of ``X.mod`` from ``X.sum``."""
        return self.modfile.removesuffix(".mod") + ".sum"


V1_34 = Release("v1.34", "v1.34.4", "go.mod")
V1_37 = Release("v1.37", "v1.37.2", "go.v1_37.mod", ("k8s_1_37",))
RELEASES = (V1_34, V1_37)
DEFAULT_RELEASE = V1_34


def release_named(name: str) -> Release:
    """The release called ``name`` (``v1.37``, ``1.37`` or its Kubernetes version
    ``v1.37.2``); ValueError naming the known ones otherwise."""
    want = name if name.startswith("v") else f"v{name}"
    for r in RELEASES:
        if want in (r.name, r.kubernetes):
            return r
    known = ", ".join(r.name for r in RELEASES)
    raise ValueError(f"unknown reference release {name!r} (known: {known})")


@dataclass(frozen=True, slots=True)
class ReferenceBinary:
    """A built reference binary: where it is, its cache key and SHA-256, the Go version that
    built it, how long that build took (seconds), whether this call found it cached, and the
    release it was built at."""

    path: Path
    key: str
    sha256: str
    go_version: str
    build_seconds: float
    cached: bool
    release: Release = DEFAULT_RELEASE


def default_source_dir() -> Path:
    """``reference_scheduler/`` of the checkout this package belongs to, or else (an installed
    package outside a checkout) of the current folder."""
    beside = Path(__file__).resolve().parents[2] / "reference_scheduler"
    here = Path.cwd() / "reference_scheduler"
    if not (beside / "go.mod").is_file() and (here / "go.mod").is_file():
        return here
    return beside


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/schedperf/reference``, or ``~/.cache/schedperf/reference``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "schedperf" / "reference"


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        raise GoToolMissing(
            "the Go toolchain is missing: `go` is not on PATH (the reference scheduler is "
            "built from Go sources; install Go >= 1.24 from https://go.dev/dl/)")
    return go


def go_version() -> str:
    """The output of ``go version`` (raises GoToolMissing without ``go``)."""
    go = _go()
    try:
        out = subprocess.run([go, "version"], capture_output=True, text=True, check=True,
                             timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GoToolMissing(f"`{go} version` failed: {exc}") from None
    return out.stdout.strip()


def _sources(source: Path, release: Release) -> list[Path]:
    if not (source / "go.mod").is_file():
        raise ReferenceSourceMissing(
            f"{source}: no go.mod: the reference scheduler's Go module (reference_scheduler/ at "
            "the repository root) was not found; run from a schedperf checkout or give its "
            "folder (--source)")
    files = [p for p in source.rglob("*.go") if not any(part.startswith(".") for part in
                                                          p.relative_to(source).parts)]
    if not (source / release.modfile).is_file():
        raise ReferenceSourceMissing(
            f"{source / release.modfile}: missing: the reference scheduler's modfile for "
            f"Kubernetes {release.kubernetes} (release {release.name})")
    files += [source / release.modfile, source / release.sumfile]
    return sorted(set(f for f in files if f.is_file()))


def build_key(source: Path, version: str, release: Release = DEFAULT_RELEASE) -> str:
    """SHA-256 over the module's sources (path and content of each), the release's modfile
    and sum file, its build tags and the ``go version`` line."""
    h = hashlib.sha256()
    h.update(f"go version\0{version}\0".encode())
    h.update(f"modfile\0{release.modfile}\0tags\0{','.join(release.tags)}\0".encode())
    for f in _sources(source, release):
        data = f.read_bytes()
        h.update(f"{f.relative_to(source).as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _cached(folder: Path, key: str, version: str, release: Release) -> ReferenceBinary | None:
    binary = folder / BINARY_NAME
    if not binary.is_file():
        return None
    meta: dict = {}
    with contextlib.suppress(OSError, ValueError):
        meta = json.loads((folder / "build.json").read_text())
    sha = meta.get("sha256") if isinstance(meta.get("sha256"), str) else _file_sha256(binary)
    seconds = meta.get("build_seconds")
    return ReferenceBinary(binary, key, sha, version,
                           float(seconds) if isinstance(seconds, int | float) else 0.0, True,
                           release)


def ensure_built(source: Path | None = None, cache: Path | None = None, *,
                 timeout: float = 3600.0, env: dict[str, str] | None = None,
                 release: Release = DEFAULT_RELEASE) -> ReferenceBinary:
    """The reference binary of ``release`` for the current sources and Go: from the cache, or
    built now.

    ``env`` overrides environment variables of ``go build`` (e.g. GOMODCACHE, GOCACHE).
    Raises GoToolMissing, ReferenceSourceMissing or ReferenceBuildError (with the tail of
    the build's output)."""
    source = (source or default_source_dir()).resolve()
    version = go_version()
    key = build_key(source, version, release)
    folder = (cache or cache_root()) / key
    found = _cached(folder, key, version, release)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{BINARY_NAME}.", suffix=".tmp", dir=folder)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        seconds = _go_build(source, tmp, timeout, env, release)
        sha = _file_sha256(tmp)
        os.chmod(tmp, 0o755)
        os.replace(tmp, folder / BINARY_NAME)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    meta = {"key": key, "go_version": version, "build_seconds": round(seconds, 3),
            "sha256": sha, "source": str(source), "release": release.name,
            "kubernetes": release.kubernetes, "modfile": release.modfile}
    _write_json(folder / "build.json", meta)
    return ReferenceBinary(folder / BINARY_NAME, key, sha, version, seconds, False, release)


def build_command(go: str, out: Path, release: Release = DEFAULT_RELEASE) -> list[str]:
    """The ``go build`` command line of ``release`` (run in the module's folder)."""
    cmd = [go, "build", "-trimpath", "-buildvcs=false"]
    if release.modfile != "go.mod":
        cmd.append(f"-modfile={release.modfile}")
    if release.tags:
        cmd.append(f"-tags={','.join(release.tags)}")
    return [*cmd, "-o", str(out), PACKAGE]


def _go_build(source: Path, out: Path, timeout: float, env: dict[str, str] | None,
              release: Release = DEFAULT_RELEASE) -> float:
    cmd = build_command(_go(), out, release)
    full_env = {**os.environ, **(env or {})}
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=source, env=full_env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        tail = _tail((exc.stderr or b"").decode() if isinstance(exc.stderr, bytes)
                     else (exc.stderr or ""))
        raise ReferenceBuildError(
            f"go build of {source} ({release.name}) did not finish within {timeout:.0f} s"
            f"{tail}") from None
    except OSError as exc:
        raise ReferenceBuildError(
            f"go build of {source} ({release.name}) could not start: {exc}") from None
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise ReferenceBuildError(
            f"go build of {source} ({release.name}) failed (exit {proc.returncode})"
            f"{_tail(proc.stderr + proc.stdout)}")
    return seconds


def _tail(text: str) -> str:
    text = text.strip()
    if not text:
        return ""
    if len(text) > _STDERR_TAIL:
        text = "..." + text[-_STDERR_TAIL:]
    return ":\n" + text


def _write_json(path: Path, data: dict) -> None:
    from workloads.output.dataitems import atomic_write_bytes  # pyarrow only when building

    atomic_write_bytes(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())
