"""``workloads/<page>.html``: one workload's headline metric over versions (git order) with the
change points marked, the table of its points (n and spread of each, the step from the
version it is compared with and its verdict; anchors ``#p-<index>``, change points
``#cp-<n>``), and its other metrics as small multiples with their latest values."""

from __future__ import annotations

from reports.dashboard.charts import history_svg, small_multiples_svg
from reports.dashboard.index_page import cp_change, group_of, spread_text, step_cell
from reports.dashboard.layout import SiteContext, empty, esc, page, table, tag
from reports.dashboard.load import MIN_SIZE
from reports.dashboard.model import MetricHistory, Workload
from reports.render.sections import fmt_p, fmt_value
from reports.store import ONE_VALUE

__all__ = ["render_workload"]


def _meta(w: Workload) -> str:
    last = w.headline.latest
    items = [("source", w.source), ("topic", group_of(w)), ("machine", w.machine or "-"),
             ("labels", ", ".join(w.labels) or "-"),
             ("metric", f"{w.headline.metric} ({w.headline.bucket}"
                        + (f", {w.headline.unit})" if w.headline.unit else ")")),
             ("newest version", f"{last.version} ({spread_text(last)})" if last
              else "unknown (no version of known order with a value)")]
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
    line = h.mainline_points
    if len(line) < 2 * MIN_SIZE:
        out.append(empty(f"{len(line)} version{'s' * (len(line) != 1)} with a value on the "
                         f"first-parent line: change points need at least {2 * MIN_SIZE}."))
    if h.single_valued:
        out.append(empty(f"{ONE_VALUE}: every version has a single value, so no step "
                         "between two versions is judged (one value says nothing about "
                         "the noise). Measure with more rounds (--repeat)."))
    if h.unordered:
        out.append(empty(f"{len(h.unordered)} version{'s' * (len(h.unordered) != 1)} of "
                         "unknown order (no commit date or parents recorded; build with "
                         "--repo): listed last below, not plotted, not compared."))
    return out


def _change_points(h: MetricHistory) -> list[str]:
    out = ["<h2>Change points</h2>"]
    if len(h.mainline_points) < 2 * MIN_SIZE:
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
                     esc(f"{p.commit_date:%Y-%m-%d %H:%M}" if p.commit_date else "-"),
                     esc(fmt_value(cp.before_mean, h.unit)),
                     esc(fmt_value(cp.after_mean, h.unit)), esc(cp_change(cp.magnitude)),
                     esc(fmt_p(cp.p_value))])
    out.append(table(["first version of the new level", "committed", "mean before",
                      "mean after", "change", "p"], rows, numeric=(2, 3, 4, 5)))
    return out


def _points(h: MetricHistory) -> list[str]:
    out = [f"<h2>Versions ({len(h.points)})</h2>",
           '<p class="muted">In git order, oldest first. vs: the previous measured commit on '
           "the first-parent line; the step is highlighted only when the project's statistics "
           "call it significant (Mann-Whitney U, 3 % minimum effect, Benjamini-Hochberg per "
           f"commit pair); {esc(ONE_VALUE)}.</p>"]
    cps = h.change_point_indices
    rows, classes = [], []
    for i, p in enumerate(h.points):
        commit = (f'<a id="p-{i}"></a><span title="{esc(p.version)}">{esc(p.label)}</span>'
                  + (tag("change point", "cp") if i in cps else ""))
        before = h.previous_of(p)
        rows.append([commit, esc(p.branch or "-"),
                     esc(f"{p.commit_date:%Y-%m-%d %H:%M}" if p.commit_date else "-"),
                     esc(f"{p.timestamp:%Y-%m-%d %H:%M}" if p.timestamp else "-"),
                     esc(p.order), esc(p.runs), esc(p.n), esc(fmt_value(p.mean)),
                     esc(fmt_value(p.min)), esc(fmt_value(p.max)),
                     f'<a href="#p-{p.previous}">{esc(before.label)}</a>' if before else "-",
                     step_cell(h, p),
                     tag(p.problems, "problem") if p.problems else ""])
        significant = p.step is not None and p.step.significant
        classes.append("cp" if i in cps else "step" if significant else "")
    out.append(table(["version", "branch", "committed", "measured", "order", "runs", "n",
                      f"mean ({h.unit or '-'})", "min", "max", "vs", "change", "problems"],
                     rows, numeric=(5, 6, 7, 8, 9), row_classes=classes))
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
            rows.append([esc(o.metric), esc(o.bucket),
                         esc(fmt_value(latest.mean, o.unit)) if latest else "n/a",
                         esc(spread_text(latest)) if latest else "-",
                         step_cell(o, latest), esc(len(o.points))])
        out.append(table(["metric", "bucket", "latest", "n, spread", "vs previous",
                          "versions"], rows, numeric=(2, 5)))
    if w.not_shown:
        out.append(f'<p class="muted">Not shown (several items per round, e.g. per plugin): '
                   f"{esc(', '.join(w.not_shown))}.</p>")
    return out


def render_workload(ctx: SiteContext, w: Workload) -> str:
    heading = esc(w.name) + (tag("uncommon", "uncommon") if w.uncommon else "")
    body = [f'<h1 class="name">{heading}</h1>', _meta(w), *_history(w),
            *_change_points(w.headline), *_points(w.headline), *_others(w)]
    return page(ctx, f"{w.name} · {ctx.title}", body, depth=1)
