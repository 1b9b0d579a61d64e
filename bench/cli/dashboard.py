"""``schedperf dashboard``: a static site (index, one page per workload, release comparison)
built from the results store alone. Documented in docs/dashboard.md."""

from __future__ import annotations

from pathlib import Path

import click

from bench.cli.ingest import store_option
from bench.cli.output import warn_unreadable_parts
from bench.selection import BadInput
from reports.dashboard import DEFAULT_TAG_PATTERN, DEFAULT_TITLE, DashboardError, build_site

__all__ = ["dashboard"]


@click.command()
@store_option
@click.option("--out", type=click.Path(path_type=Path), default=Path("site"),
              show_default=True, metavar="DIR",
              help="Where the site goes; a previous dashboard there is replaced (only a "
                   "folder made by this command, or an empty one).")
@click.option("--asv-html", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR",
              help="An `asv publish` site to copy to OUT/asv and link [default: the "
                   "project's .asv/html when it exists].")
@click.option("--title", default=DEFAULT_TITLE, show_default=True, help="Site title.")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="PATH",
              help="A git checkout of the project: its history orders the versions "
                   "[default: the parents and dates recorded at ingest] and its tags give "
                   "the previous release to compare with (without it the comparison page "
                   "says there is none).")
@click.option("--ref", default="HEAD", show_default=True,
              help="With --repo: the branch whose newest measured commit is compared.")
@click.option("--tag-pattern", default=DEFAULT_TAG_PATTERN, show_default=True,
              metavar="REGEX", help="With --repo: which tags are releases.")
def dashboard(store: Path, out: Path, asv_html: Path | None, title: str, repo: Path | None,
              ref: str, tag_pattern: str) -> None:
    """Build a static site from the results store: every workload's latest value (n, spread),
    trend and change points in git order, a page per workload, HEAD vs the previous
    release, and the catalog's and compare set's coverage per commit (coverage maps).
    Self-contained (inline CSS and SVG, nothing fetched): open index.html or publish the
    folder.

    Exit status: 0 written; 2 bad input (missing or empty store, --out not a dashboard).
    """
    warn_unreadable_parts(store)
    try:
        summary = build_site(store, out, title=title, asv_html=asv_html, repo=repo, ref=ref,
                             tag_pattern=tag_pattern)
    except DashboardError as exc:
        raise BadInput(str(exc)) from exc
    asv = f"; asv site from {summary.asv}" if summary.asv else ""
    click.echo(f"wrote {summary.out / 'index.html'}: {summary.workloads} workloads, "
               f"{summary.pages} pages{asv}; comparison: {summary.comparison}; coverage: "
               f"{summary.coverage}")
