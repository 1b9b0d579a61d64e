"""``workloads/<page>.html``: one workload's headline metric over versions with the change
points marked, the table of its points (anchors ``#p-<index>``, change points ``#cp-<n>``),
and its other metrics as small multiples with their latest values."""

from __future__ import annotations

from reports.dashboard.charts import history_svg, small_multiples_svg
from reports.dashboard.index_page import cp_change, group_of
from reports.dashboard.layout import SiteContext, empty, esc, page, table, tag
from reports.dashboard.load import MIN_SIZE
from reports.dashboard.model import MetricHistory, Workload
from reports.render.sections import fmt_change, fmt_p, fmt_value

__all__ = ["render_workload"]


def _meta(w: Workload) -> str:
    last = w.headline.points[-1] if w.headline.points else None
    items = [("source", w.source), ("topic", group_of(w)), ("machine", w.machine or "-"),
             ("labels", ", ".join(w.labels) or "-"),
             ("metric", f"{w.headline.metric} ({w.headline.bucket}"
                        + (f", {w.headline.unit})" if w.headline.unit else ")")),
             ("newest version", last.version if last else "-")]
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items)
    return f'<dl class="meta">{rows}</dl>'


def _history(w: Workload) -> list[str]:
    h = w.headline
    finite = h.finite_points
    out = [f"<h2>{esc(h.metric)} over versions</h2>"]
    if not finite:
        out.append(empty(f"No version has a {h.metric} value (see the statuses below)."))
        return out
    if len(finite) == 1:
        out.append(empty("Only one version so far: no history to plot yet."))
    else:
        out.append(history_svg(w.name, h, id_prefix="history-"))
    if len(finite) < 2 * MIN_SIZE:
        out.append(empty(f"{len(finite)} version{'s' * (len(finite) != 1)} with a value: "
                         f"change points need at least {2 * MIN_SIZE}."))
    return out


def _change_points(h: MetricHistory) -> list[str]:
    out = ["<h2>Change points</h2>"]
    if len(h.finite_points) < 2 * MIN_SIZE:
        out.append(empty("Too few versions to look for change points."))
        return out
    if not h.change_points:
        out.append(empty("No change point: the series has one level (permutation test at "
                         "p <= 0.01)."))
        return out
    rows = []
    for n, cp in enumerate(h.change_points, 1):
        p = h.points[cp.index]
        rows.append([f'<a id="cp-{n}" href="#p-{cp.index}">{esc(p.label)}</a>',
                     esc(f"{p.timestamp:%Y-%m-%d %H:%M}" if p.timestamp else "-"),
                     esc(fmt_value(cp.before_mean, h.unit)),
                     esc(fmt_value(cp.after_mean, h.unit)), esc(cp_change(cp.magnitude)),
                     esc(fmt_p(cp.p_value))])
    out.append(table(["first version of the new level", "date", "mean before", "mean after",
                      "change", "p"], rows, numeric=(2, 3, 4, 5)))
    return out


def _points(h: MetricHistory) -> list[str]:
    out = [f"<h2>Versions ({len(h.points)})</h2>"]
    cps = h.change_point_indices
    rows, classes = [], []
    previous = None
    for i, p in enumerate(h.points):
        change = p.mean / previous if p.mean is not None and previous else None
        commit = (f'<a id="p-{i}"></a><span title="{esc(p.version)}">{esc(p.label)}</span>'
                  + (tag("change point", "cp") if i in cps else ""))
        rows.append([commit, esc(p.branch or "-"),
                     esc(f"{p.timestamp:%Y-%m-%d %H:%M}" if p.timestamp else "-"),
                     esc(p.runs), esc(p.n), esc(fmt_value(p.mean)), esc(fmt_value(p.min)),
                     esc(fmt_value(p.max)),
                     esc(fmt_change(change)) if change is not None else "-",
                     tag(p.problems, "problem") if p.problems else ""])
        classes.append("cp" if i in cps else "")
        if p.mean is not None:
            previous = p.mean
    out.append(table(["version", "branch", "date", "runs", "n", f"mean ({h.unit or '-'})",
                      "min", "max", "vs previous", "problems"], rows,
                     numeric=(3, 4, 5, 6, 7, 8), row_classes=classes))
    return out


def _others(w: Workload) -> list[str]:
    out = ["<h2>Other metrics</h2>"]
    h = w.headline
    if not w.others:
        out.append(empty("No other metrics for this workload."))
    else:
        marks = {h.points[cp.index].version for cp in h.change_points}
        if marks:
            out.append(f'<p class="muted">Dashed: the change points of {esc(h.metric)}.</p>')
        svg = small_multiples_svg(w.others, mark_versions=marks)
        out.append(svg or empty("None of the other metrics has a value."))
        rows = []
        for o in w.others:
            latest = o.latest
            change = o.change_vs_previous
            rows.append([esc(o.metric), esc(o.bucket),
                         esc(fmt_value(latest.mean, o.unit)) if latest else "n/a",
                         esc(fmt_change(change)) if change is not None else "-",
                         esc(len(o.points))])
        out.append(table(["metric", "bucket", "latest", "vs previous", "versions"], rows,
                         numeric=(2, 3, 4)))
    if w.not_shown:
        out.append(f'<p class="muted">Not shown (several items per round, e.g. per plugin): '
                   f"{esc(', '.join(w.not_shown))}.</p>")
    return out


def render_workload(ctx: SiteContext, w: Workload) -> str:
    heading = esc(w.name) + (tag("uncommon", "uncommon") if w.uncommon else "")
    body = [f'<h1 class="name">{heading}</h1>', _meta(w), *_history(w),
            *_change_points(w.headline), *_points(w.headline), *_others(w)]
    return page(ctx, f"{w.name} · {ctx.title}", body, depth=1)
