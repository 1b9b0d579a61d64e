"""A static site built from the results store alone: ``schedperf dashboard``.

    build_site(store, out, ...) -> SiteSummary   index, one page per workload, release
                                                 comparison, coverage, a copy of the asv site

Modules: ``model`` (workloads, metric histories, points), ``load`` (the store query and the
change points), ``release`` (HEAD and the previous release tag from git), ``compare``
(HEAD vs release from stored values), ``coverage`` (the catalog's and the compare set's
coverage per commit from the store's coverage maps, lagging modules), ``charts``
(sparklines, history, small-multiple and coverage SVG), ``layout`` (the page shell),
``index_page`` / ``workload_page`` / ``compare_page`` / ``coverage_page``, ``site`` (the
atomic build). Documented in docs/dashboard.md.
"""

from __future__ import annotations

from reports.dashboard.load import load_workloads, page_name
from reports.dashboard.model import MetricHistory, Point, Workload
from reports.dashboard.release import DEFAULT_TAG_PATTERN, ReleaseGitError
from reports.dashboard.site import (
    DEFAULT_TITLE,
    MARKER,
    DashboardError,
    SiteSummary,
    build_site,
    find_asv_html,
)

__all__ = [
    "DEFAULT_TAG_PATTERN",
    "DEFAULT_TITLE",
    "MARKER",
    "DashboardError",
    "MetricHistory",
    "Point",
    "ReleaseGitError",
    "SiteSummary",
    "Workload",
    "build_site",
    "find_asv_html",
    "load_workloads",
    "page_name",
]
