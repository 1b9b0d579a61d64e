"""``schedperf dashboard``: exit status and messages, and the atomic replacement of --out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli.dashboard import dashboard
from reports.dashboard import MARKER, DashboardError, build_site
from tests.reports.dashboard.conftest import Project


def _invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(dashboard, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def small_store(one_commit: Project, tmp_path: Path) -> Path:
    return Path(shutil.copytree(one_commit.store, tmp_path / "store"))


def test_builds_and_reports(tmp_path: Path, one_commit: Project) -> None:
    out = tmp_path / "site"
    code, stdout, _ = _invoke("--store", one_commit.store, "--out", out, "--repo",
                              one_commit.repo, "--title", "Nightly")
    assert code == 0
    assert stdout == (f"wrote {out / 'index.html'}: 4 workloads, 8 pages; comparison: no "
                      "release tag yet; coverage: no coverage maps\n")
    assert "<title>Nightly</title>" in (out / "index.html").read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no temporary folder left


@pytest.mark.parametrize(("make", "expected"), [
    (lambda tmp: tmp / "missing", "store {store}: no such folder"),
    (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty",
     "store {store} holds no results yet"),
], ids=["missing", "empty"])
def test_missing_or_empty_store_exits_2(tmp_path: Path, make, expected: str) -> None:
    store = make(tmp_path)
    code, stdout, stderr = _invoke("--store", store, "--out", tmp_path / "site")
    assert code == 2
    assert expected.format(store=store) in stderr
    assert len(stderr.strip().splitlines()) == 1 and stdout == ""
    assert not (tmp_path / "site").exists()


def test_store_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(DashboardError, match=r"^store .*file: not a folder$"):
        build_site(tmp_path / "file", tmp_path / "site")


@pytest.mark.parametrize(("args", "expected"), [
    (["--repo", "{tmp}"], "--repo {tmp}: git rev-parse failed:"),
    (["--repo", "{repo}", "--ref", "nosuchbranch"],
     "--repo {repo}: 'nosuchbranch' does not name a commit"),
    (["--repo", "{repo}", "--tag-pattern", "("], "--tag-pattern '(' is not a valid"),
    (["--asv-html", "{tmp}"], "--asv-html {tmp}: no index.html"),
], ids=["not-a-repo", "unknown-ref", "bad-pattern", "asv-without-index"])
def test_bad_options_exit_2(small_store: Path, tmp_path: Path, project: Project,
                            args: list[str], expected: str) -> None:
    fill = {"tmp": tmp_path / "plain", "repo": project.repo}
    (tmp_path / "plain").mkdir()
    code, _, stderr = _invoke("--store", small_store, "--out", tmp_path / "site",
                              *[a.format(**fill) for a in args])
    assert code == 2
    assert expected.format(**fill) in stderr
    assert not (tmp_path / "site").exists()


def test_refuses_to_replace_a_foreign_folder(small_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    code, _, stderr = _invoke("--store", small_store, "--out", out)
    assert code == 2 and "is not a schedperf dashboard" in stderr
    assert (out / "precious.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "store"]


def test_rebuild_replaces_the_previous_site(small_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert _invoke("--store", small_store, "--out", out)[0] == 0
    (out / "stale.html").write_text("old")
    assert _invoke("--store", small_store, "--out", out, "--title", "Second")[0] == 0
    assert not (out / "stale.html").exists() and (out / MARKER).is_file()
    assert "<title>Second</title>" in (out / "index.html").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "store"]


def test_failed_build_keeps_the_old_site(small_store: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    assert _invoke("--store", small_store, "--out", out)[0] == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def explode(*_: object, **__: object) -> str:
        raise RuntimeError("disk full")

    monkeypatch.setattr("reports.dashboard.site.render_compare", explode)
    result = CliRunner().invoke(dashboard, ["--store", str(small_store), "--out", str(out)])
    assert isinstance(result.exception, RuntimeError)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "store"]  # no temp left


def test_command_name_and_options() -> None:
    """The command is a click command named ``dashboard`` (the lead registers it)."""
    assert dashboard.name == "dashboard"
    params = {p.name for p in dashboard.params}
    assert {"store", "out", "asv_html", "title", "repo", "ref", "tag_pattern"} <= params
