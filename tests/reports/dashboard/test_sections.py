"""Sections without data say so: one commit only, no release tag, no repository, no asv
site; and the asv site is copied and linked when there is one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reports.dashboard import build_site, page_name
from reports.store import ingest_paths
from tests.reports.dashboard.conftest import (
    STEP_NAME,
    Project,
    html_pages,
    make_repo,
    write_runs,
)
from tests.reports.dashboard.helpers import broken_links


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_one_commit_only(one_commit: Project, tmp_path: Path) -> None:
    site = build_site(one_commit.store, tmp_path / "site").out
    index = _text(site / "index.html")
    assert "No change points found" in index
    assert "No asv HTML" in index and 'href="asv/' not in index
    page = _text(site / "workloads" / page_name("run", STEP_NAME, "ci"))
    assert "Only one version so far: no history to plot yet." in page
    assert "Too few versions to look for change points." in page
    assert "<svg class=\"plot\"" not in page  # no history plot, only the small multiples
    assert "No release tag yet" in _text(site / "compare.html")
    assert broken_links(site, html_pages(site)) == []


@pytest.mark.parametrize(("tags", "expected"), [
    ({}, "No release tag yet."),
    ({"experiment": 0}, "No release tag yet."),
], ids=["no-tags", "no-release-tags"])
def test_repository_without_release(tmp_path: Path, tags: dict[str, int],
                                    expected: str) -> None:
    commits = make_repo(tmp_path / "repo", n=3, tags=tags)
    store = tmp_path / "store"
    assert not ingest_paths([write_runs(tmp_path / "runs", commits, rounds=1)], store).errors
    site = build_site(store, tmp_path / "site", repo=tmp_path / "repo").out
    html = _text(site / "compare.html")
    assert expected in html
    assert commits[-1][:12] in html  # HEAD is still named
    assert "<table" not in html


def test_release_tag_on_head_only(tmp_path: Path) -> None:
    commits = make_repo(tmp_path / "repo", n=2, tags={"v1.0": 1})
    store = tmp_path / "store"
    assert not ingest_paths([write_runs(tmp_path / "runs", commits, rounds=1)], store).errors
    html = _text(build_site(store, tmp_path / "site", repo=tmp_path / "repo").out
                 / "compare.html")
    assert "No release tag yet before HEAD (v1.0 is HEAD itself)." in html


def test_asv_site_is_copied_and_linked(one_commit: Project, tmp_path: Path) -> None:
    asv = tmp_path / "html"
    (asv / "graphs").mkdir(parents=True)
    (asv / "index.html").write_text("<html>asv</html>", encoding="utf-8")
    (asv / "graphs" / "x.json").write_text("{}", encoding="utf-8")
    summary = build_site(one_commit.store, tmp_path / "site", asv_html=asv)
    site = summary.out
    assert summary.asv == asv
    assert _text(site / "asv" / "index.html") == "<html>asv</html>"
    assert (site / "asv" / "graphs" / "x.json").is_file()
    assert 'href="asv/index.html"' in _text(site / "index.html")
    assert 'href="../asv/index.html"' in _text(site / "workloads" /
                                                page_name("run", STEP_NAME, "ci"))
    assert broken_links(site, html_pages(site)) == []


def test_asv_site_found_beside_the_store(one_commit: Project, tmp_path: Path) -> None:
    """A project folder (asv.conf.json with html_dir) holding the store: its asv site."""
    project = tmp_path / "project"
    (project / "out" / "asv-html").mkdir(parents=True)
    (project / "out" / "asv-html" / "index.html").write_text("asv", encoding="utf-8")
    (project / "asv.conf.json").write_text(json.dumps({"html_dir": "out/asv-html"}))
    store = project / ".schedperf" / "store"
    store.parent.mkdir()
    shutil.copytree(one_commit.store, store)
    summary = build_site(store, tmp_path / "site")
    assert summary.asv == project / "out" / "asv-html"
    assert (summary.out / "asv" / "index.html").is_file()


def test_store_of_status_rows_only(tmp_path: Path) -> None:
    """Rows but no metric to show: the index says so instead of failing."""
    from workloads.output.parquet import write_results_parquet
    from workloads.result import WorkloadResult

    runs = tmp_path / "runs"
    write_results_parquet(runs / "results.parquet",
                          [WorkloadResult("T", "w", "misc", {}, (), status="unsupported")],
                          {"commit": "a" * 40}, run_id="r")
    store = tmp_path / "store"
    assert not ingest_paths([runs], store).errors
    site = build_site(store, tmp_path / "site").out
    # the extra metrics (null values) still make a workload; it has no value to show
    assert "no value" in _text(site / "index.html")
    assert broken_links(site, html_pages(site)) == []
