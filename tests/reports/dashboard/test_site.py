"""The site built from the project store: pages, links, change points, escaping, no external
resources, the uncommon flag, the release comparison."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from reports.dashboard import MARKER, load_workloads, page_name
from tests.reports.dashboard.conftest import (
    COMMITS,
    RELEASE_AT,
    SCRIPT,
    SCRIPT_NAME,
    STEP_AT,
    STEP_NAME,
    UNCOMMON_NAME,
    Project,
    html_pages,
)
from tests.reports.dashboard.helpers import broken_links, parse, row_of

RUN_NAMES = [STEP_NAME, "Affinity/100Nodes", UNCOMMON_NAME, SCRIPT_NAME]


def _page(site: Path, name: str, source: str = "run", machine: str = "ci") -> Path:
    return site / "workloads" / page_name(source, name, machine)


def test_every_page_exists(site: Path, project: Project) -> None:
    workloads = load_workloads(project.store)
    assert {w.name for w in workloads} >= set(RUN_NAMES)
    assert (site / "index.html").is_file() and (site / "compare.html").is_file()
    assert (site / MARKER).is_file() and (site / ".nojekyll").is_file()
    expected = {site / "workloads" / w.page for w in workloads}
    assert set((site / "workloads").iterdir()) == expected
    index = (site / "index.html").read_text(encoding="utf-8")
    for w in workloads:
        assert f'href="workloads/{w.page}"' in index


def test_links_and_anchors_resolve(site: Path) -> None:
    pages = html_pages(site)
    assert len(pages) >= 2 + len(RUN_NAMES)
    assert broken_links(site, pages) == []


def test_ids_are_unique_per_page(site: Path) -> None:
    for page in html_pages(site):
        dupes = [i for i, n in Counter(parse(page).ids).items() if n > 1]
        assert dupes == [], page.name


def test_step_change_point_is_marked(site: Path, project: Project) -> None:
    page = _page(site, STEP_NAME)
    html = page.read_text(encoding="utf-8")
    step_label = project.commits[STEP_AT][:10]
    # the history plot marks it (matplotlib text), the table lists it, its row is flagged
    assert html.count('<svg class="plot"') == 1  # the history; small multiples besides
    assert html.count('<svg class="panel"') == 7  # cpu, wall, harness, attempts, 3 counts
    assert re.search(r"-19\.\d %", html)
    cp_row = row_of(page, 'id="cp-1"')
    assert step_label in cp_row and "800" not in cp_row
    assert f'href="#p-{STEP_AT}"' in cp_row
    point_row = row_of(page, f'id="p-{STEP_AT}"')
    assert "change point" in point_row and 'class="cp"' in point_row
    assert html.count('class="cp"') == 1  # only the step, none among the other versions
    # on the index: the workload's row and the recent change points
    index = site / "index.html"
    row = row_of(index, f'href="workloads/{page.name}"', after='id="topic-misc"')
    assert f"1: <a href=\"workloads/{page.name}#p-{STEP_AT}\">" in row
    recent = index.read_text(encoding="utf-8").split('id="recent"')[1].split("<h2")[0]
    assert step_label in recent and STEP_NAME in recent


@pytest.mark.parametrize("name", [n for n in RUN_NAMES if n != STEP_NAME])
def test_flat_workloads_have_no_change_point(site: Path, name: str) -> None:
    html = _page(site, name).read_text(encoding="utf-8")
    assert "No change point: the series has one level" in html
    assert 'class="cp"' not in html


def test_store_strings_are_escaped(site: Path) -> None:
    pages = html_pages(site)
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert "<script" not in html.lower(), page.name
        assert "<perf>" not in html, page.name  # the title
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "Evil/&lt;script&gt;alert(1)&lt;/script&gt;" in index
    assert "Nightly &lt;perf&gt; &amp; co" in index
    own = _page(site, SCRIPT_NAME)
    assert own.name.startswith("Evil-script-alert-1-script-")
    text = "".join(parse(own).text)
    assert SCRIPT in text  # shown as text, not markup


def test_nothing_external(site: Path) -> None:
    for page in html_pages(site):
        doc = parse(page)
        assert not [u for u in doc.links if re.match(r"(?i)[a-z][a-z0-9+.-]*:", u)], page.name
        assert {"script", "link", "img", "iframe", "object", "embed"}.isdisjoint(doc.tags)
        html = page.read_text(encoding="utf-8")
        html = html.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
            'xmlns:xlink="http://www.w3.org/1999/xlink"', "")
        assert "http://" not in html and "https://" not in html, page.name
        assert "Content-Security-Policy" in html


def test_index_groups_by_topic_and_flags_uncommon(site: Path) -> None:
    index = site / "index.html"
    html = index.read_text(encoding="utf-8")
    headings = re.findall(r'<h2 id="(topic-[^"]+)">([^<]+)</h2>', html)
    assert [h[1] for h in headings] == ["affinity (1)", "misc (2)", "uncommon (1)",
                                       "asv benchmarks (6)"]
    assert 'class="tag tag-uncommon">uncommon' in row_of(
        index, f'href="workloads/{page_name("run", UNCOMMON_NAME, "ci")}"')
    for name in (STEP_NAME, "Affinity/100Nodes", SCRIPT_NAME):
        assert "tag-uncommon" not in row_of(index, f'href="workloads/'
                                                   f'{page_name("run", name, "ci")}"')
    assert "1 uncommon scenario" in html


@pytest.mark.parametrize(("name", "source", "machine", "metric", "latest"), [
    (STEP_NAME, "run", "ci", "SchedulingThroughput", "pods/s"),
    ("bench_scheduling/nodes=500", "asv", "ci-runner", "track_pods_per_second", "944.4 pods/s"),
    ("bench_nodetable", "asv", "ci-runner", "time_add_nodes", "0.039 s"),
], ids=["run-throughput", "asv-track-rate", "asv-time-fallback"])
def test_index_row_shows_headline_metric(site: Path, name: str, source: str, machine: str,
                                         metric: str, latest: str) -> None:
    row = row_of(site / "index.html", f'href="workloads/{page_name(source, name, machine)}"',
                 after='id="topic-')
    assert f"<td>{metric}</td>" in row
    assert latest in row
    assert "<svg" in row  # the sparkline


def test_step_workload_trend_and_change_vs_previous(site: Path, project: Project) -> None:
    row = row_of(site / "index.html", f'href="workloads/{page_name("run", STEP_NAME, "ci")}"',
                 after='id="topic-')
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells[7] == str(COMMITS)  # versions
    # vs previous: both after the step, noise: shown, judged, not highlighted
    assert re.fullmatch(r'<span class="muted" title="vs [0-9a-f]{10}: [^"]+">[+-]\d\.\d+ % · '
                        r"(no change|inconclusive)</span>", cells[5])


def test_compare_against_release(site: Path, project: Project) -> None:
    html = (site / "compare.html").read_text(encoding="utf-8")
    assert "v0.1.0" in html and project.commits[RELEASE_AT][:12] in html
    assert project.commits[-1][:12] in html
    assert "experiment" not in html  # not a release tag
    step = row_of(site / "compare.html", STEP_NAME)
    assert "v-regression" in step and re.search(r"-19\.\d %", step)
    for name in ("Affinity/100Nodes", UNCOMMON_NAME):
        assert "v-no-change" in row_of(site / "compare.html", name)
    assert "Workloads measured at both (4)" in html  # asv commits are not in the repo
