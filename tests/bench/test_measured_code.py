"""A run records which scheduler_core it measured (path, checkout commit, dirty or not, or
that it is not in a checkout) and warns when that is not the checkout it was started in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.builders import git, tiny_config, two_commit_core_repo
from workloads.output import (
    core_origin,
    environment_fingerprint,
    measured_code_warning,
    named_checkout,
)
from workloads.output.environment import (
    ORIGIN_CHECKOUT,
    ORIGIN_INSTALLED_HEAD,
    ORIGIN_OTHER,
    ORIGIN_SITE_PACKAGES,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return two_commit_core_repo(tmp_path / "repo")


def _installed_copy(prefix: Path, source: Path) -> Path:
    """``source`` (a scheduler_core folder) copied as ``pip install .`` would place it."""
    site = prefix / "lib" / "python3.11" / "site-packages"
    shutil.copytree(source, site / "scheduler_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return site


def test_a_tracked_scheduler_core_records_its_checkout(repo):
    origin = core_origin(repo / "scheduler_core")
    assert origin.origin == ORIGIN_CHECKOUT
    assert origin.checkout == repo.resolve()
    assert origin.commit == git(repo, "rev-parse", "HEAD") and origin.branch == "main"
    assert origin.dirty is False


def test_dirty_means_changed_tracked_files_or_new_files_in_the_package(repo):
    (repo / "notes.txt").write_text("untracked, outside the package\n")
    assert core_origin(repo / "scheduler_core").dirty is False
    (repo / "scheduler_core" / "new_plugin.py").write_text("X = 1\n")
    assert core_origin(repo / "scheduler_core").dirty is True
    (repo / "scheduler_core" / "new_plugin.py").unlink()
    (repo / "scheduler_core" / "__init__.py").write_text("VERSION = 'edited'\n")
    assert core_origin(repo / "scheduler_core").dirty is True


def test_site_packages_is_not_a_checkout_even_inside_one(repo, tmp_path):
    for prefix in (tmp_path / "venv", repo / ".venv"):  # the second: inside the checkout
        site = _installed_copy(prefix, repo / "scheduler_core")
        origin = core_origin(site / "scheduler_core")
        assert (origin.origin, origin.commit, origin.branch, origin.dirty, origin.checkout) == (
            ORIGIN_SITE_PACKAGES, None, None, None, None)


def test_an_installed_copy_of_head_is_that_commit_until_head_moves(repo, tmp_path):
    """``pip install .`` in a checkout, as CI does: the copy is HEAD's code, so HEAD is the
    commit measured; once the checkout moves on, the copy is stale and has no known commit."""
    site = _installed_copy(tmp_path / "venv", repo / "scheduler_core")
    core = site / "scheduler_core"
    origin = core_origin(core, named=repo)
    assert (origin.origin, origin.commit, origin.branch, origin.dirty) == (
        ORIGIN_INSTALLED_HEAD, git(repo, "rev-parse", "HEAD"), "main", False)
    assert measured_code_warning(origin, repo) is None
    assert core_origin(core).origin == ORIGIN_SITE_PACKAGES  # no checkout to compare with
    (repo / "scheduler_core" / "__init__.py").write_text("VERSION = 'three'\n")
    git(repo, "commit", "--quiet", "-am", "three")
    stale = core_origin(core, named=repo)
    assert (stale.origin, stale.commit) == (ORIGIN_SITE_PACKAGES, None)
    assert measured_code_warning(stale, repo) is not None
    git(repo, "checkout", "--quiet", "two")
    assert core_origin(core, named=repo).commit == git(repo, "rev-parse", "two")
    (core / "extra.py").write_text("X = 1\n")  # a file the commit does not have
    assert core_origin(core, named=repo).origin == ORIGIN_SITE_PACKAGES


def test_an_untracked_copy_is_not_a_checkout(repo, tmp_path):
    copy = repo / "vendored" / "scheduler_core"
    shutil.copytree(repo / "scheduler_core", copy)
    assert core_origin(copy).origin == ORIGIN_OTHER
    plain = tmp_path / "plain" / "scheduler_core"
    shutil.copytree(repo / "scheduler_core", plain)
    assert (core_origin(plain).origin, core_origin(plain).commit) == (ORIGIN_OTHER, None)


def test_named_checkout_is_a_schedperf_checkout_holding_the_folder(repo, tmp_path):
    (repo / "docs").mkdir()
    assert named_checkout(repo / "docs") == repo.resolve()
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "--quiet")
    assert named_checkout(other) is None  # a checkout of something else names nothing
    assert named_checkout(tmp_path) is None


def test_warning_names_what_was_measured_instead(repo, tmp_path):
    here = core_origin(repo / "scheduler_core")
    assert measured_code_warning(here, repo) is None
    assert measured_code_warning(here, None) is None
    site = _installed_copy(tmp_path / "venv", repo / "scheduler_core")
    text = measured_code_warning(core_origin(site / "scheduler_core"), repo)
    assert text is not None and "\n" not in text
    head = git(repo, "rev-parse", "HEAD")
    assert str(site / "scheduler_core") in text and ORIGIN_SITE_PACKAGES in text
    assert f"not the checkout {repo} (HEAD {head[:12]})" in text
    assert "results record no commit" in text and f"pip install -e {repo}" in text
    # another checkout's scheduler_core (a second worktree): its commit is recorded
    other = two_commit_core_repo(tmp_path / "other")
    git(other, "checkout", "--quiet", "one")
    text = measured_code_warning(core_origin(other / "scheduler_core"), repo)
    assert text is not None
    assert f"results record commit {git(other, 'rev-parse', 'one')[:12]}" in text


def test_fingerprint_records_the_measured_code_not_the_current_folder(repo, tmp_path):
    env = environment_fingerprint(clock="virtual", seed=0, cwd=repo,
                                  core_dir=repo / "scheduler_core")
    assert env["commit"] == git(repo, "rev-parse", "HEAD") and env["branch"] == "main"
    assert (env["scheduler_core_origin"], env["scheduler_core_dirty"],
            env["scheduler_core_warning"]) == (ORIGIN_CHECKOUT, False, None)
    site = _installed_copy(tmp_path / "venv", repo / "scheduler_core")
    (site / "scheduler_core" / "__init__.py").write_text("VERSION = 'built elsewhere'\n")
    env = environment_fingerprint(clock="virtual", seed=0, cwd=repo,
                                  core_dir=site / "scheduler_core")
    assert (env["commit"], env["branch"], env["scheduler_core_dirty"]) == (None, None, None)
    assert env["scheduler_core_path"] == str(site / "scheduler_core")
    assert env["scheduler_core_origin"] == ORIGIN_SITE_PACKAGES
    assert env["scheduler_core_warning"]


def _schedperf_repo(root: Path) -> Path:
    """A checkout holding a copy of the real scheduler_core, one commit."""
    shutil.copytree(ROOT / "scheduler_core", root / "scheduler_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    git(root, "init", "--quiet", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "one")
    return root


@pytest.mark.parametrize("stale", [False, True], ids=["install-of-head", "stale-install"])
def test_run_with_an_installed_copy(tmp_path, stale):
    """``pip install .`` then ``schedperf run`` in the checkout: the run imports the
    site-packages copy (simulated with PYTHONPATH putting it first, and ``python -P``). A copy
    of HEAD records HEAD silently; after a new commit the copy is stale: one warning, no
    commit recorded."""
    repo = _schedperf_repo(tmp_path / "repo")
    site = _installed_copy(tmp_path / "venv", repo / "scheduler_core")
    if stale:
        init = repo / "scheduler_core" / "__init__.py"
        init.write_text(init.read_text() + "\nNEW = 1\n")
        git(repo, "commit", "--quiet", "-am", "two")
    config = tmp_path / "configs" / "misc" / "performance-config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(tiny_config(("5Nodes", [], 5, 2, 10)))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "bench.cli.main", "run", "--config", str(config.parent),
         "--label", "", "--out", str(out)],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("schedperf: ")]
    row = pl.read_parquet(out / "results.parquet").row(0, named=True)
    assert row["scheduler_core_path"] == str(site / "scheduler_core")
    if not stale:
        assert warnings == []
        assert row["commit"] == git(repo, "rev-parse", "HEAD")
        assert (row["scheduler_core_origin"], row["scheduler_core_dirty"],
                row["scheduler_core_warning"]) == (ORIGIN_INSTALLED_HEAD, False, None)
        return
    assert len(warnings) == 1 and warnings[0].startswith("schedperf: warning: ")
    assert str(site / "scheduler_core") in warnings[0] and str(repo) in warnings[0]
    assert row["scheduler_core_origin"] == ORIGIN_SITE_PACKAGES
    assert row["commit"] is None and row["scheduler_core_dirty"] is None
    assert row["scheduler_core_warning"] == warnings[0].removeprefix("schedperf: warning: ")
