"""The dashboard's coverage page: the catalog's and the compare set's coverage of scheduler_core
per commit in git order (not in the order the maps were made, nor by commit date), the
modules that lag at the newest commit, maps that are not shown and why, and a store without
maps saying so with the command that makes one. Maps are tiny synthetic ones written with
reports.store.coverage's own writer."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from reports.dashboard import build_site
from reports.dashboard.coverage import load_coverage
from reports.store import ORDER_GIT, ORDER_PARENTS, ORDER_UNKNOWN, ingest_paths
from reports.store.coverage import IMPORT_TIME, CoverageMap, GeneratedOrigin, write_map
from tests.reports.dashboard.helpers import broken_links, row_of
from tests.reports.gitrepo import START
from tests.reports.shuffled import MEASURED, Shuffled, make_shuffled

A = "scheduler_core/a.py"      # 20 statements, line 20 in an error branch: 19 outside
B = "scheduler_core/b.py"      # 12 statements, all outside
TINY = "scheduler_core/tiny.py"  # 3 statements: too small to be listed as lagging
PLUGIN = "plugin_pkg/x.py"     # an out-of-tree package mapped too: not scheduler_core
STATEMENTS = {A: range(1, 21), B: range(1, 13), TINY: range(1, 4), PLUGIN: range(1, 6)}
GENERATED = "Generated_1_0/3Nodes"


def coverage_map(commit: str, *, catalog_a: int, created: datetime, dirty: bool = False,
                 include: tuple[str, ...] | None = None,
                 meta: dict[str, object] | None = None) -> CoverageMap:
    """Import time runs a.py 1 and b.py 1; compare's T/cmp runs a.py 2-5; the catalog-only
    T/cat runs a.py 2..catalog_a and b.py 2-7; T/bad (compare, failed) would run b.py
    2-12; a generated scenario runs everything (never counted)."""
    rows = [(IMPORT_TIME, A, 1), (IMPORT_TIME, B, 1), (IMPORT_TIME, PLUGIN, 1)]
    rows += [("T/cmp", A, x) for x in range(2, 6)]
    rows += [("T/cat", A, x) for x in range(2, catalog_a + 1)]
    rows += [("T/cat", B, x) for x in range(2, 8)] + [("T/cat", PLUGIN, x) for x in (2, 3)]
    rows += [("T/bad", B, x) for x in range(2, 13)]
    rows += [(GENERATED, f, x) for f, lines in STATEMENTS.items() for x in lines]
    lines = pl.DataFrame([(w, f, "line", x, None) for w, f, x in rows], orient="row",
                         schema={"workload": pl.String, "file": pl.String, "kind": pl.String,
                                 "line": pl.Int32, "to_line": pl.Int32})
    workloads = pl.DataFrame(
        [("T/cmp", ["integration-test", "compare"], 1.0, "ok", None),
         ("T/cat", ["integration-test"], 1.0, "ok", None),
         ("T/bad", ["integration-test", "compare"], 1.0, "failed", "boom"),
         (GENERATED, ["integration-test", "generated"], 1.0, "ok", None)], orient="row",
        schema={"workload": pl.String, "labels": pl.List(pl.String),
                "cost_seconds": pl.Float64, "status": pl.String, "error": pl.String})
    statements = pl.DataFrame(
        [(f, x, not (f == A and x == 20)) for f, xs in STATEMENTS.items() for x in xs],
        orient="row", schema={"file": pl.String, "line": pl.Int32,
                              "outside_error_branch": pl.Boolean})
    origin = GeneratedOrigin(GENERATED, 1, 0, ("hostPort",),
                             "schedperf generate --seed 1 --count 1", "schedperf run ...")
    return CoverageMap(commit=commit, dirty=dirty, lines=lines, workloads=workloads,
                       statements=statements, include=include,
                       packages=("scheduler_core", "plugin_pkg"),
                       created=created.isoformat(timespec="seconds"),
                       meta={"label_filter": "integration-test", **(meta or {})},
                       generated=(origin,))


CATALOG_A = [6, 8, 10, 12, 19]  # how far T/cat runs in a.py at commit i (git order)


def catalog_percent(i: int) -> float:
    # a.py: 1..CATALOG_A[i] of 19 outside; b.py: 1-7 of 12; tiny.py: 0 of 3
    return 100.0 * (CATALOG_A[i] + 7) / 34


COMPARE_PERCENT = 100.0 * (5 + 1) / 34  # a.py 1-5, b.py 1 (T/bad failed: b.py 2-12 no)


@pytest.fixture(scope="module")
def shuffled_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Shuffled, Path]:
    """The shuffled project's results (parents recorded at ingest) and a map per commit,
    made in the order the commits were measured (c3, c0, c4, c1, c2); c2 also has a
    restricted map, and an extra commit has only a dirty one."""
    base = tmp_path_factory.mktemp("coverage-dash")
    s = make_shuffled(base / "project")
    store = base / "store"
    for k, i in enumerate(MEASURED):
        assert not ingest_paths([s.runs[i]], store, repo=s.repo).errors
        write_map(store, coverage_map(s.commits[i], catalog_a=CATALOG_A[i],
                                      created=START + timedelta(days=40 + k)))
    write_map(store, coverage_map(s.commits[2], catalog_a=19, include=(A,),
                                  created=START + timedelta(days=50)))
    write_map(store, coverage_map("d" * 40, catalog_a=19, dirty=True,
                                  created=START + timedelta(days=51)))
    return s, store


def test_figures_per_commit_in_git_order(shuffled_store: tuple[Shuffled, Path]) -> None:
    s, store = shuffled_store
    history = load_coverage(store)
    assert [p.commit for p in history.points] == s.commits  # not made order, not dates
    assert {p.order for p in history.points} == {ORDER_PARENTS}
    for i, p in enumerate(history.points):
        assert p.catalog == pytest.approx(catalog_percent(i))
        assert p.compare == pytest.approx(COMPARE_PERCENT)
        assert (p.catalog_workloads, p.compare_workloads, p.not_run, p.generated) == (
            2, 1, 1, 1)
        assert p.outside_statements == 34  # plugin_pkg is not scheduler_core
    # all statements: a.py's error-branch line 20 is in the denominator, never covered
    assert history.points[0].catalog_all == pytest.approx(100.0 * (6 + 7) / 35)
    assert history.newest is not None and history.newest.commit == s.commits[-1]
    assert history.skipped == (("d" * 40, "only a map of a dirty working tree (not the "
                                "commit's code exactly)"),)


def test_lagging_modules_of_the_newest_commit(shuffled_store: tuple[Shuffled, Path]) -> None:
    _, store = shuffled_store
    history = load_coverage(store)
    # b.py: compare 1 of 12; a.py: compare 5 of 19; tiny.py is too small to be listed
    assert [(m.module, m.compare_covered, m.statements) for m in history.lowest] == [
        ("scheduler_core.b", 1, 12), ("scheduler_core.a", 5, 19)]
    # at c4 the catalog runs a.py 1-19 (14 more than compare) and b.py 1-7 (6 more)
    assert [(m.module, m.gap_statements) for m in history.gaps] == [
        ("scheduler_core.a", 14), ("scheduler_core.b", 6)]


def test_the_site_shows_coverage(shuffled_store: tuple[Shuffled, Path], tmp_path: Path) -> None:
    s, store = shuffled_store
    summary = build_site(store, tmp_path / "site")
    site = summary.out
    page = (site / "coverage.html").read_text(encoding="utf-8")
    body = page.split("<body>", 1)[1]
    rows = re.findall(r'<code title="mapped [^"]+">([0-9a-f]{12})</code></td>',
                      body.split('id="per-commit"')[1].split('id="lagging"')[0])
    assert rows == [c[:12] for c in s.commits]
    newest = row_of(site / "coverage.html", f">{s.commits[-1][:12]}</code>",
                    after='id="per-commit"')
    assert f"{catalog_percent(4):.1f} %" in newest and f"{COMPARE_PERCENT:.1f} %" in newest
    assert f"{catalog_percent(4) - COMPARE_PERCENT:+.1f} pt" in newest
    assert '<svg class="plot"' in body and "compare set" in body
    lowest = body.split('id="lowest"')[1].split('id="gaps"')[0]
    assert lowest.index("scheduler_core.b") < lowest.index("scheduler_core.a")
    assert "scheduler_core.tiny" not in lowest
    not_shown = body.split('id="not-shown"')[1]
    assert "dddddddddddd" in not_shown and "dirty working tree" in not_shown
    index = (site / "index.html").read_text(encoding="utf-8")
    assert f"At {s.commits[-1][:10]} (newest in git order)" in index
    assert f"{catalog_percent(4):.1f} %" in index and 'href="coverage.html"' in index
    assert summary.coverage.startswith("5 commits mapped; " + s.commits[-1][:10])
    pages = sorted(site.rglob("*.html"))
    assert broken_links(site, pages) == []


def test_a_store_without_maps_says_how_to_make_one(tmp_path: Path) -> None:
    s = make_shuffled(tmp_path / "project")
    store = tmp_path / "store"
    assert not ingest_paths([s.runs[0]], store).errors
    summary = build_site(store, tmp_path / "site")
    wanted = f"No coverage maps in the store: make one with `schedperf coverage --store {store}`"
    for name in ("coverage.html", "index.html"):
        assert wanted in (summary.out / name).read_text(encoding="utf-8")
    assert summary.coverage == "no coverage maps"
    assert "<table" not in (summary.out / "coverage.html").read_text(encoding="utf-8")


def test_maps_alone_are_ordered_by_what_they_recorded_or_by_the_repository(
        tmp_path: Path) -> None:
    s = make_shuffled(tmp_path / "project")
    recorded, bare = tmp_path / "recorded", tmp_path / "bare"
    for k, i in enumerate(MEASURED):
        when = START + timedelta(days=40 + k)
        parents = [s.commits[i - 1]] if i else []
        write_map(recorded, coverage_map(s.commits[i], catalog_a=CATALOG_A[i], created=when,
                                         meta={"commit_date": (START + timedelta(days=90 - i))
                                               .isoformat(), "commit_parents": parents}))
        write_map(bare, coverage_map(s.commits[i], catalog_a=CATALOG_A[i], created=when))
    history = load_coverage(recorded)  # no results at all: the maps' own records
    assert [p.commit for p in history.points] == s.commits
    assert {p.order for p in history.points} == {ORDER_PARENTS}
    unknown = load_coverage(bare)  # nothing recorded, no repository: unknown, no newest
    assert {p.order for p in unknown.points} == {ORDER_UNKNOWN}
    assert unknown.newest is None and unknown.lowest == ()
    assert [p.commit for p in unknown.points] == [s.commits[i] for i in MEASURED]
    with_repo = load_coverage(bare, repo=s.repo)
    assert [p.commit for p in with_repo.points] == s.commits
    assert {p.order for p in with_repo.points} == {ORDER_GIT}
    # a store of maps alone makes a site too
    site = build_site(bare, tmp_path / "site").out
    page = (site / "coverage.html").read_text(encoding="utf-8")
    assert "5 maps of unknown order" in page and "No commit of known order" in page
    assert "The store has no metric values to show" in (site / "index.html").read_text()


def test_unreadable_maps_are_reported_not_hidden(tmp_path: Path) -> None:
    store = tmp_path / "store"
    manifest = write_map(store, coverage_map("a" * 40, catalog_a=6, created=datetime.now(UTC)))
    manifest.write_text("{not json")
    history = load_coverage(store)
    assert history.error is not None and "map.json" in history.error
    site = build_site(store, tmp_path / "site").out
    assert "The coverage maps cannot be read" in (site / "coverage.html").read_text()


def test_the_coverage_page_in_headless_chromium(shuffled_store: tuple[Shuffled, Path],
                                                tmp_path: Path) -> None:
    from tests.reports.dashboard.test_chromium import CHROMIUM, _load_all

    if CHROMIUM is None:
        pytest.skip("no chromium (apt-get install chromium)")
    _, store = shuffled_store
    site = build_site(store, tmp_path / "site").out
    shot = tmp_path / "coverage.png"
    loaded = _load_all({"coverage": site / "coverage.html"}, tmp_path,
                       (site / "coverage.html", shot))
    page = loaded["coverage"]
    assert page.requested == [] and page.console == []  # nothing fetched, no CSP violation
    assert page.dom.count('<svg class="plot"') == 1 and page.dom.count("<table") == 4
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
