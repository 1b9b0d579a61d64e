"""Building the reference: the cache key follows every input, a cached binary is reused, an
input change rebuilds, a failed build leaves nothing behind, and a missing ``go`` is one clear
error (exit 2 in the CLI). The last tests build a tiny Go module (seconds) instead of the
reference."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from bench.cli.main import main
from tests.reference.conftest import require_go
from workloads.reference import (
    GoToolMissing,
    ReferenceBuildError,
    ReferenceClient,
    ReferenceSourceMissing,
    ensure_built,
)
from workloads.reference import build as build_mod
from workloads.reference.build import (
    BINARY_NAME,
    V1_34,
    V1_37,
    build_command,
    build_key,
    cache_root,
    release_named,
)

TINY_MAIN = """package main

import "fmt"

func main() { fmt.Println(%s) }
"""


def tiny_module(root: Path, message: str = '"hello"') -> Path:
    """A Go module shaped like reference_scheduler/ (cmd/schedperf-reference), without
    dependencies."""
    (root / "cmd" / "schedperf-reference").mkdir(parents=True)
    (root / "go.mod").write_text("module example.com/tiny\n\ngo 1.22\n")
    (root / "go.sum").write_text("")
    (root / "cmd" / "schedperf-reference" / "main.go").write_text(TINY_MAIN % message)
    return root


def test_the_key_follows_every_input(tmp_path):
    src = tiny_module(tmp_path / "m")
    key = build_key(src, "go version go1.26.8 linux/amd64")
    assert key == build_key(src, "go version go1.26.8 linux/amd64")
    assert key != build_key(src, "go version go1.25.0 linux/amd64")
    main_go = src / "cmd" / "schedperf-reference" / "main.go"
    for path, text in ((main_go, TINY_MAIN % '"bye"'), (src / "go.sum", "x v1 h1:y\n"),
                       (src / "go.mod", "module example.com/tiny\n\ngo 1.23\n")):
        before = path.read_text()
        path.write_text(text)
        assert build_key(src, "go version go1.26.8 linux/amd64") != key, path.name
        path.write_text(before)
    (src / "cmd" / "schedperf-reference" / "extra.go").write_text("package main\n")
    assert build_key(src, "go version go1.26.8 linux/amd64") != key
    (src / "README.md").write_text("not an input\n")
    (src / "cmd" / "schedperf-reference" / "extra.go").unlink()
    assert build_key(src, "go version go1.26.8 linux/amd64") == key


def test_each_release_has_its_own_key_from_its_own_modfile(tmp_path):
    src = tiny_module(tmp_path / "m")
    version = "go version go1.26.8 linux/amd64"
    with pytest.raises(ReferenceSourceMissing, match=r"go\.v1_37\.mod: missing.*v1\.37"):
        build_key(src, version, V1_37)
    (src / "go.v1_37.mod").write_text("module example.com/tiny\n\ngo 1.26\n")
    (src / "go.v1_37.sum").write_text("")
    k34, k37 = build_key(src, version, V1_34), build_key(src, version, V1_37)
    assert k34 != k37
    (src / "go.v1_37.sum").write_text("x v1 h1:y\n")  # the v1.37 sum: only the v1.37 key
    assert build_key(src, version, V1_34) == k34 and build_key(src, version, V1_37) != k37
    (src / "go.sum").write_text("x v1 h1:y\n")  # the v1.34 sum: only the v1.34 key
    assert build_key(src, version, V1_34) != k34
    cmd = build_command("go", tmp_path / "out", V1_37)
    assert "-modfile=go.v1_37.mod" in cmd and "-tags=k8s_1_37" in cmd
    plain = build_command("go", tmp_path, V1_34)
    assert not any(a.startswith(("-modfile", "-tags")) for a in plain)
    assert release_named("1.37") is V1_37 and release_named("v1.34.4") is V1_34
    with pytest.raises(ValueError, match=r"known: v1\.34, v1\.37"):
        release_named("v1.99")


def test_a_cached_binary_is_reused_without_go_build(tmp_path, monkeypatch):
    src = tiny_module(tmp_path / "m")
    version = "go version go1.26.8 linux/amd64"
    monkeypatch.setattr(build_mod, "go_version", lambda: version)

    def no_build(*args, **kw):
        raise AssertionError("go build must not run for a cached binary")

    monkeypatch.setattr(build_mod, "_go_build", no_build)
    folder = tmp_path / "cache" / build_key(src, version)
    folder.mkdir(parents=True)
    (folder / BINARY_NAME).write_bytes(b"binary")
    found = ensure_built(src, tmp_path / "cache")
    assert found.cached and found.path == folder / BINARY_NAME
    assert found.sha256 == hashlib.sha256(b"binary").hexdigest()  # no build.json: hashed


def test_the_cache_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "schedperf" / "reference"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "schedperf" / "reference"


def test_missing_sources_are_named(tmp_path):
    with pytest.raises(ReferenceSourceMissing, match=r"no go\.mod"):
        build_key(tmp_path, "go version x")


def test_missing_go_is_one_clear_error(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(GoToolMissing, match="`go` is not on PATH"):
        ensure_built(tiny_module(tmp_path / "m"), tmp_path / "cache")
    code = main(["reference", "build", "--cache-dir", str(tmp_path / "cache")])
    assert code == 2
    err = capsys.readouterr().err
    assert "`go` is not on PATH" in err and "Traceback" not in err
    assert main(["reference", "version", "--cache-dir", str(tmp_path / "cache")]) == 2
    capsys.readouterr()
    code = main(["reference", "build", "--release", "v1.37", "--cache-dir",
                 str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert code == 2 and "reference v1.37" in err and "`go` is not on PATH" in err


def test_build_reuse_and_rebuild_on_change(tmp_path):
    require_go()
    src = tiny_module(tmp_path / "m")
    cache = tmp_path / "cache"
    first = ensure_built(src, cache, timeout=600)
    assert not first.cached and first.path.is_file() and os.access(first.path, os.X_OK)
    again = ensure_built(src, cache, timeout=600)
    assert again.cached and again.path == first.path and again.sha256 == first.sha256
    assert again.build_seconds == pytest.approx(first.build_seconds, abs=1e-3)
    (src / "cmd" / "schedperf-reference" / "main.go").write_text(TINY_MAIN % '"changed"')
    changed = ensure_built(src, cache, timeout=600)
    assert not changed.cached and changed.key != first.key and changed.sha256 != first.sha256
    assert first.path.is_file()  # the other key's binary is kept


def test_a_failed_build_names_the_error_and_leaves_nothing(tmp_path):
    require_go()
    src = tiny_module(tmp_path / "m", message="undefinedName")
    cache = tmp_path / "cache"
    with pytest.raises(ReferenceBuildError, match="undefined: undefinedName"):
        ensure_built(src, cache, timeout=600)
    assert not list(cache.rglob(BINARY_NAME)) and not list(cache.rglob("*.tmp"))


def test_cli_build_and_version(reference_binary, reference_cache, capsys):
    assert main(["reference", "build", "--release", "v1.34", "--cache-dir",
                 str(reference_cache)]) == 0
    out = capsys.readouterr().out
    assert f"binary:  {reference_binary.path}" in out
    assert f"sha256:  {reference_binary.sha256}" in out
    assert "build:   cached (built earlier in" in out
    assert main(["reference", "version", "--release", "v1.34", "--cache-dir",
                 str(reference_cache)]) == 0
    out = capsys.readouterr().out
    assert "kubernetes: v1.34." in out and reference_binary.sha256 in out


def test_the_v137_build(reference_binary, reference_binary_v137, reference_cache, capsys):
    """The second pinned build: its own key and binary, Kubernetes v1.37.2 inside; `reference
    build` (every release) finds both."""
    b = reference_binary_v137
    assert b.release is V1_37 and b.key != reference_binary.key
    assert b.sha256 != reference_binary.sha256
    with ReferenceClient(b.path, timeout=60) as ref:
        assert ref.version.kubernetes == "v1.37.2"
        assert ref.version.binary_sha256 == b.sha256
    assert main(["reference", "build", "--cache-dir", str(reference_cache)]) == 0
    out = capsys.readouterr().out
    assert "release: v1.34" in out and "release: v1.37 (Kubernetes v1.37.2, go.v1_37.mod)" in out
    assert f"sha256:  {b.sha256}" in out and f"sha256:  {reference_binary.sha256}" in out
    assert out.count("build:   cached") == 2
