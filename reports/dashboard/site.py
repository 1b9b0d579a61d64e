"""Build the static site: read the store, render every page into a temporary folder beside
``out``, then swap it into place, so a failed build never leaves a half site.

    out/index.html               every workload, grouped by topic
    out/workloads/<page>.html    one per workload
    out/compare.html             newest measured commit vs the previous release tag
    out/coverage.html            statement coverage of the catalog and the compare set per
                                 commit, the modules that lag (the store's coverage maps)
    out/asv/                     a copy of the asv site (``asv publish`` output), if any
    out/.nojekyll                GitHub Pages: serve the files as they are
    out/.schedperf-dashboard     marks the folder as ours: only such a folder (or an empty
                                 one) is ever replaced
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from reports.dashboard.compare import Comparisons, compare_release
from reports.dashboard.compare_page import render_compare
from reports.dashboard.coverage import CoverageHistory, load_coverage
from reports.dashboard.coverage_page import render_coverage
from reports.dashboard.engines import load_engine_rows, render_engines
from reports.dashboard.index_page import render_index
from reports.dashboard.layout import SiteContext
from reports.dashboard.load import load_workloads, version_ranks
from reports.dashboard.release import (
    DEFAULT_TAG_PATTERN,
    ReleaseGitError,
    Selection,
    read_git,
    select_commits,
)
from reports.dashboard.workload_page import render_workload
from reports.store import GitError as StoreGitError
from reports.store import StoreError, load_graph, order_note, store_files, store_folder_problem
from reports.store.coverage import list_maps

__all__ = ["DEFAULT_TITLE", "MARKER", "DashboardError", "SiteSummary", "build_site",
           "find_asv_html"]

DEFAULT_TITLE = "schedperf dashboard"
MARKER = ".schedperf-dashboard"


class DashboardError(Exception):
    """Bad input: a missing or empty store, an --out that is not ours, a bad --asv-html or
    --repo. The message is one line naming the path."""


@dataclass(frozen=True)
class SiteSummary:
    out: Path
    workloads: int
    pages: int
    asv: Path | None  # the asv site copied, if any
    comparison: str  # one line: what compare.html shows
    coverage: str = ""  # one line: what coverage.html shows


def find_asv_html(store: Path) -> Path | None:
    """The asv site of the store's project: the first folder above the store holding
    ``asv.conf.json`` or ``.git`` is the project; its ``html_dir`` (asv.conf.json, default
    ``.asv/html``) when it holds an index.html."""
    for parent in Path(store).resolve().parents:
        conf = parent / "asv.conf.json"
        if not conf.is_file() and not (parent / ".git").exists():
            continue
        html_dir = ".asv/html"
        try:
            setting = json.loads(conf.read_text(encoding="utf-8")).get("html_dir")
            html_dir = setting if isinstance(setting, str) and setting else html_dir
        except (OSError, ValueError, AttributeError):
            pass
        found = parent / html_dir
        return found if (found / "index.html").is_file() else None
    return None


def _check_store(store: Path) -> None:
    problem = store_folder_problem(store)
    if problem:
        raise DashboardError(f"store {store}: {problem}")
    if not store_files(store) and not _has_maps(store):
        raise DashboardError(f"store {store} holds no results yet: add some with "
                             "`schedperf ingest PATH` (or a coverage map with `schedperf "
                             f"coverage --store {store}`)")


def _has_maps(store: Path) -> bool:
    try:
        return bool(list_maps(store))
    except StoreError:
        return True  # there are maps; the coverage page says why they cannot be read


def _check_out(out: Path) -> None:
    if not out.exists():
        return
    if not out.is_dir():
        raise DashboardError(f"--out {out}: exists and is not a folder")
    if (out / MARKER).is_file() or not any(out.iterdir()):
        return
    raise DashboardError(f"--out {out}: exists and is not a schedperf dashboard (no {MARKER}); "
                         "remove it or choose another folder")


def _replace(tmp: Path, out: Path) -> None:
    """Put ``tmp`` where ``out`` is: two renames in one folder (the old site, if any, is
    moved aside first and deleted after)."""
    if not out.exists():
        os.replace(tmp, out)
        return
    old = out.with_name(f".{out.name}.old-{uuid.uuid4().hex[:8]}")
    os.replace(out, old)
    try:
        os.replace(tmp, out)
    except OSError:
        os.replace(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _comparison_line(result: Comparisons, repo: Path | None) -> str:
    s = result.selection
    if repo is None:
        return "no release tag yet (no --repo)"
    if s.base is None or s.head is None:
        return s.reason
    return (f"{s.head[:10]} vs {s.base.tag} ({s.base.commit[:10]}): "
            f"{len(result.rows)} workloads compared")


def _coverage_line(history: CoverageHistory) -> str:
    if history.error is not None:
        return f"coverage maps unreadable: {history.error}"
    newest = history.newest
    if newest is None:
        return (f"{len(history.points)} commits mapped, none of known order" if history.points
                else "no coverage maps")
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f} %"

    return (f"{len(history.points)} commit{'s' * (len(history.points) != 1)} mapped; "
            f"{newest.commit[:10]}: catalog {pct(newest.catalog)}, compare "
            f"{pct(newest.compare)}")


def build_site(store: Path | str, out: Path | str, *, title: str = DEFAULT_TITLE,
               asv_html: Path | str | None = None, repo: Path | str | None = None,
               ref: str = "HEAD", tag_pattern: str = DEFAULT_TAG_PATTERN,
               now: datetime | None = None) -> SiteSummary:
    """Build the site of ``store`` into ``out`` (replacing a previous dashboard there).

    Raises :class:`DashboardError` for bad input; nothing is written then.
    """
    store, out = Path(store), Path(out)
    if out.is_symlink():
        out = out.resolve()
    _check_store(store)
    _check_out(out)
    asv_dir = Path(asv_html) if asv_html is not None else find_asv_html(store)
    if asv_html is not None and not (asv_dir / "index.html").is_file():
        raise DashboardError(f"--asv-html {asv_html}: no index.html (give the folder "
                             "`asv publish` writes, html_dir in asv.conf.json)")
    repo_path = Path(repo) if repo is not None else None
    try:
        git = read_git(repo_path, ref, tag_pattern) if repo_path is not None else None
    except ReleaseGitError as exc:
        raise DashboardError(str(exc)) from exc
    try:
        graph = load_graph(store, repo_path)
        workloads = load_workloads(store, graph=graph)
    except pl.exceptions.PolarsError as exc:
        raise DashboardError(f"store {store}: {str(exc).splitlines()[0]}") from exc
    except StoreGitError as exc:
        raise DashboardError(f"--repo {exc}") from exc
    except StoreError as exc:
        raise DashboardError(str(exc)) from exc
    ranks = version_ranks(workloads, graph)
    note = order_note([p.order for w in workloads for p in w.headline.points], graph)
    measured = {p.commit for w in workloads for p in w.headline.points
                if p.commit and p.n}
    selection = (select_commits(git, measured) if git is not None
                 else Selection(reason="no release tag yet"))
    comparisons = compare_release(workloads, selection)
    try:
        coverage = load_coverage(store, repo=repo_path)
        engines = load_engine_rows(store)
    except pl.exceptions.PolarsError as exc:
        raise DashboardError(f"store {store}: {str(exc).splitlines()[0]}") from exc
    except StoreGitError as exc:
        raise DashboardError(f"--repo {exc}") from exc
    except StoreError as exc:
        raise DashboardError(str(exc)) from exc

    generated = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    ctx = SiteContext(title=title, generated=generated, store=str(store),
                      asv=asv_dir is not None)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        (tmp / MARKER).write_text("schedperf dashboard: this folder is replaced on every "
                                  "build\n", encoding="utf-8")
        (tmp / ".nojekyll").write_text("", encoding="utf-8")
        (tmp / "workloads").mkdir()
        for w in workloads:
            (tmp / "workloads" / w.page).write_text(render_workload(ctx, w), encoding="utf-8")
        (tmp / "index.html").write_text(render_index(ctx, workloads, ranks=ranks,
                                                     order_note=note, coverage=coverage),
                                        encoding="utf-8")
        (tmp / "coverage.html").write_text(render_coverage(ctx, coverage), encoding="utf-8")
        (tmp / "engines.html").write_text(render_engines(ctx, engines), encoding="utf-8")
        (tmp / "compare.html").write_text(
            render_compare(ctx, comparisons, repo_given=repo_path is not None),
            encoding="utf-8")
        if asv_dir is not None:
            shutil.copytree(asv_dir, tmp / "asv")
        tmp.chmod(0o755)  # mkdtemp makes it private; a web server must read the site
        _replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return SiteSummary(out=out, workloads=len(workloads), pages=len(workloads) + 4,
                       asv=asv_dir, comparison=_comparison_line(comparisons, repo_path),
                       coverage=_coverage_line(coverage))
