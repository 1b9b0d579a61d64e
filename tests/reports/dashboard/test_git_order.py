"""The dashboard in git order: "newest", the plotted order and "vs previous" follow ancestry,
not measurement time or commit date; every point shows n and spread; only a step the
project's statistics call significant is highlighted, never one at n=1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reports.dashboard import build_site, load_workloads, page_name
from reports.store import ONE_VALUE, ORDER_GIT, ORDER_PARENTS, ORDER_UNKNOWN, ingest_paths
from tests.reports.dashboard.helpers import row_of
from tests.reports.shuffled import FLAT, MEASURED, ONE, STEP, Shuffled, make_shuffled


def _store(s: Shuffled, store: Path, *, repo: bool) -> Path:
    for i in MEASURED:  # ingested in measurement order, one file at a time
        assert not ingest_paths([s.runs[i]], store, repo=s.repo if repo else None).errors
    return store


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Shuffled, Path, Path]:
    """(project, store with recorded parents, its site built without --repo)."""
    base = tmp_path_factory.mktemp("git-order")
    s = make_shuffled(base / "project")
    store = _store(s, base / "store", repo=True)
    site = build_site(store, base / "site").out
    return s, store, site


def _page(site: Path, name: str) -> Path:
    return site / "workloads" / page_name("run", name, "ci")


def _body(path: Path) -> str:
    """The page without its style sheet (which names every class)."""
    return path.read_text(encoding="utf-8").split("<body>", 1)[1]


def test_points_are_in_git_order_and_compared_with_their_parent(
        built: tuple[Shuffled, Path, Path]) -> None:
    s, store, _ = built
    workloads = {w.name: w for w in load_workloads(store)}
    for name in (STEP, FLAT, ONE):
        points = workloads[name].headline.points
        assert [p.commit for p in points] == s.commits
        assert [p.previous for p in points] == [None, 0, 1, 2, 3]
        assert {p.order for p in points} == {ORDER_PARENTS}
        assert workloads[name].headline.latest.commit == s.commits[-1]


def test_index_names_head_newest(built: tuple[Shuffled, Path, Path]) -> None:
    s, _, site = built
    html = (site / "index.html").read_text(encoding="utf-8")
    summary = html.split('id="summary">')[1].split("</p>")[0]
    assert f"newest in git order: {s.commits[-1][:10]}" in summary
    assert "order: parent commits recorded at ingest" in html


def test_index_highlights_only_the_significant_step(built: tuple[Shuffled, Path, Path]) -> None:
    _, _, site = built
    index = site / "index.html"

    def cells(name: str) -> list[str]:
        row = row_of(index, f'href="workloads/{_page(site, name).name}"', after='id="topic-')
        return re.findall(r"<td[^>]*>(.*?)</td>", row)

    step, flat, one = cells(STEP), cells(FLAT), cells(ONE)
    assert 'class="step-regression"' in step[3] and re.search(r"-19\.\d %", step[3])
    assert "n=6, " in step[2]
    for other in (flat, one):
        assert "step-" not in other[3] and 'class="muted"' in other[3]
    assert f"· {ONE_VALUE}" in one[3] and "n=1: no spread" in one[2]


def test_workload_page_rows(built: tuple[Shuffled, Path, Path]) -> None:
    s, _, site = built
    step = _page(site, STEP)
    assert _body(step).count('<tr class="step">') == 1
    head = row_of(step, 'id="p-4"')
    assert head.startswith('<tr class="step">') and "step-regression" in head
    assert s.commits[-1][:10] in head and '<a href="#p-3">' in head
    for k in range(1, 4):  # each version against its parent, none highlighted
        assert f'<a href="#p-{k - 1}">{s.commits[k - 1][:10]}</a>' in row_of(step, f'id="p-{k}"')
    one = _body(_page(site, ONE))
    assert 'class="step"' not in one and "step-" not in one
    assert f"{ONE_VALUE}: every version has a single value" in one
    assert one.split("<h2>Other metrics")[0].count(f"· {ONE_VALUE}") == 4
    flat = _body(_page(site, FLAT))
    assert 'class="step"' not in flat and "step-" not in flat


def test_repo_orders_a_store_without_recorded_commits(tmp_path: Path) -> None:
    s = make_shuffled(tmp_path / "project")
    store = _store(s, tmp_path / "store", repo=False)
    html = _body(build_site(store, tmp_path / "blind").out / "index.html")
    assert "newest: unknown (no version of known order)" in html
    assert "order unknown for 15 of 15 versions" in html and "pass --repo PATH" in html
    assert "step-regression" not in html
    assert {p.order for w in load_workloads(store) for p in w.headline.points} == {
        ORDER_UNKNOWN}
    site = build_site(store, tmp_path / "site", repo=s.repo).out
    html = _body(site / "index.html")
    assert f"newest in git order: {s.commits[-1][:10]}" in html
    assert "step-regression" in html
    workloads = load_workloads(store, repo=s.repo)
    assert {p.order for w in workloads for p in w.headline.points} == {ORDER_GIT}
    assert [p.commit for p in workloads[0].headline.points] == s.commits
