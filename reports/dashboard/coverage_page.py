"""``coverage.html``: statement coverage of scheduler_core by the catalog and by the compare
set per commit in git order (a plot and a table), the modules that lag at the newest commit,
and the maps not shown; or, without maps, the command that makes one. Also the index's short
coverage section (:func:`coverage_summary`)."""

from __future__ import annotations

from reports.dashboard.charts import coverage_svg
from reports.dashboard.coverage import (
    COMPARE_LABEL,
    MIN_STATEMENTS,
    CoverageHistory,
    CoveragePoint,
    ModuleLag,
)
from reports.dashboard.layout import SiteContext, empty, esc, page, table
from reports.store.order import ORDER_UNKNOWN

__all__ = ["coverage_summary", "no_maps_text", "render_coverage"]


def no_maps_text(ctx: SiteContext) -> str:
    return (f"No coverage maps in the store: make one with `schedperf coverage --store "
            f"{ctx.store}` (maps the catalog at the checkout's commit; add --generated N "
            "for generated scenarios too).")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} %"


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f} pt"


def _newest_line(p: CoveragePoint) -> str:
    return (f"At {p.commit[:10]} (newest in git order): the catalog executes "
            f"{_pct(p.catalog)} of scheduler_core's statements outside error-raising "
            f"branches ({p.catalog_workloads} workloads), the compare set {_pct(p.compare)} "
            f"({p.compare_workloads} workloads labelled {COMPARE_LABEL}); gap "
            f"{_points(p.gap)}.")


def coverage_summary(ctx: SiteContext, history: CoverageHistory) -> list[str]:
    """The index's coverage section: the newest figures and a link, or why there are none."""
    out = ['<h2 id="coverage">Coverage</h2>']
    if history.error is not None:
        out.append(empty(f"The coverage maps cannot be read: {history.error}"))
    elif not history.points:
        out.append(empty(no_maps_text(ctx) if not history.skipped else
                         f"No full, clean coverage map in the store ({len(history.skipped)} "
                         "not shown, see the coverage page)."))
    elif history.newest is None:
        out.append(empty(f"{len(history.points)} commits mapped, none of known order (build "
                         "with --repo PATH)."))
    else:
        out.append(f"<p>{esc(_newest_line(history.newest))}</p>")
    out.append('<p><a href="coverage.html">Coverage per commit and the modules that lag'
               "</a>.</p>")
    return out


def _share(value: float | None, workloads: int) -> str:
    return (f"{esc(_pct(value))}<br><span class=\"muted spread\">{workloads} "
            f"workload{'s' * (workloads != 1)}</span>")


def _commit_rows(points: tuple[CoveragePoint, ...]) -> list[list[str]]:
    rows = []
    for p in points:
        mapped = p.created[:16].replace("T", " ") or "unknown"
        rows.append([f'<code title="mapped {esc(mapped)}">{esc(p.commit[:12])}</code>',
                     esc(f"{p.commit_date:%Y-%m-%d}" if p.commit_date else "-"), esc(p.order),
                     esc(p.label_filter if p.label_filter is not None else "(all)"),
                     _share(p.catalog, p.catalog_workloads),
                     _share(p.compare, p.compare_workloads), esc(_points(p.gap)),
                     esc(f"{_pct(p.catalog_all)} / {_pct(p.compare_all)}"),
                     esc(p.not_run or "-"), esc(p.generated or "-")])
    return rows


def _lag_rows(modules: tuple[ModuleLag, ...]) -> list[list[str]]:
    return [[f"<code>{esc(m.module)}</code>", esc(m.statements), esc(_pct(m.compare)),
             esc(m.statements - m.compare_covered), esc(_pct(m.catalog)),
             esc(m.gap_statements), esc(_points(m.catalog - m.compare))] for m in modules]


_LAG_HEADERS = ["module", "statements", "compare", "compare misses", "catalog",
                "catalog only", "gap"]


def _lagging(history: CoverageHistory) -> list[str]:
    newest = history.newest
    out = ['<h2 id="lagging">Modules that lag</h2>']
    if newest is None:
        out.append(empty("No commit of known order: no newest commit to look at (build with "
                         "--repo PATH, or map commits whose dates the map records)."))
        return out
    out.append(f"<p>At <code>{esc(newest.commit[:12])}</code>, modules with at least "
               f"{MIN_STATEMENTS} statements outside error-raising branches. compare misses: "
               "statements the compare set does not execute; catalog only: those the "
               "catalog executes and the compare set does not (adding a catalog workload to "
               "the compare set would measure them).</p>")
    out.append('<h3 id="lowest">Lowest compare-set coverage</h3>')
    out.append(table(_LAG_HEADERS, _lag_rows(history.lowest), numeric=(1, 2, 3, 4, 5, 6))
               if history.lowest else empty("No module that large."))
    out.append('<h3 id="gaps">Biggest gap between the catalog and the compare set</h3>')
    out.append(table(_LAG_HEADERS, _lag_rows(history.gaps), numeric=(1, 2, 3, 4, 5, 6))
               if history.gaps else empty("The compare set executes every statement the "
                                          "catalog executes."))
    return out


def _skipped(history: CoverageHistory) -> list[str]:
    if not history.skipped:
        return []
    rows = [[f"<code>{esc(c[:12])}</code>", esc(why)] for c, why in history.skipped]
    return ['<h2 id="not-shown">Maps not shown</h2>',
            table(["commit", "why"], rows)]


def render_coverage(ctx: SiteContext, history: CoverageHistory) -> str:
    title = "Coverage"
    body = [f"<h1>{esc(title)}</h1>",
            "<p>How much of <code>scheduler_core</code> the harness can see: the share of its "
            "statements outside error-raising branches that the catalog's workloads execute, "
            f"and that the compare set executes (the workloads labelled <code>{COMPARE_LABEL}"
            "</code>, what <code>schedperf compare</code> measures by default). From the "
            "coverage maps in the store (<code>schedperf coverage</code>, docs/coverage.md): "
            "a commit's full map of a clean checkout; generated scenarios are not counted. A "
            "line executed is not a line measured well, but a line not executed is never "
            "measured.</p>"]
    if history.error is not None:
        body.append(empty(f"The coverage maps cannot be read: {history.error}"))
        return page(ctx, f"{title} · {ctx.title}", body, here="coverage")
    if not history.points:
        body.append(empty(no_maps_text(ctx)))
        body += _skipped(history)
        return page(ctx, f"{title} · {ctx.title}", body, here="coverage")
    if history.newest is not None:
        body.append(f"<p>{esc(_newest_line(history.newest))}</p>")
    ordered = tuple(p for p in history.points if p.order != ORDER_UNKNOWN)
    unknown = len(history.points) - len(ordered)
    body.append('<h2 id="per-commit">Per commit</h2>')
    svg = coverage_svg(ordered, id_prefix="cov-")
    body.append(svg or empty("Fewer than two mapped commits of known order: no history to "
                             "plot yet."))
    if unknown:
        body.append(empty(f"{unknown} map{'s' * (unknown != 1)} of unknown order (no commit "
                          "date or parents recorded; build with --repo PATH): listed last, "
                          "not plotted, never the newest."))
    body.append(table(["commit", "committed", "order", "selection", "catalog", "compare",
                       "gap", "all statements", "not run", "generated"],
                      _commit_rows(history.points), numeric=(4, 5, 6, 7, 8, 9)))
    body.append('<p class="muted">In git order, oldest first. catalog, compare: statements '
                "outside error-raising branches executed (import-time lines count), and by "
                "how many workloads; gap: catalog minus compare; all statements: the same "
                "over every statement, catalog / compare; selection: the map's --label; not "
                "run: catalog workloads that failed under coverage (their lines do not "
                "count); generated: generated scenarios in the map (not counted).</p>")
    body += _lagging(history)
    body += _skipped(history)
    return page(ctx, f"{title} · {ctx.title}", body, here="coverage")
