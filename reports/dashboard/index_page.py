"""``index.html``: every workload with its latest headline value (n and spread), the change
against the previous version (highlighted only when the project's statistics call it
significant), a trend sparkline and its change points, grouped by topic; links to the
per-workload pages, the release comparison and the asv site. Versions are in git order."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from reports.dashboard.charts import sparkline_svg
from reports.dashboard.coverage import CoverageHistory
from reports.dashboard.coverage_page import coverage_summary
from reports.dashboard.layout import SiteContext, empty, esc, page, table, tag
from reports.dashboard.model import MetricHistory, Point, Workload
from reports.render.sections import fmt_change, fmt_value
from reports.store import ONE_VALUE

__all__ = ["cp_change", "group_ids", "group_of", "render_index", "spread_text", "step_cell"]

_NO_TOPIC = {"asv": "asv benchmarks", "pytest-benchmark": "pytest-benchmark",
             "dataitems": "DataItems files without a topic", "run": "runs without a topic"}
_ID = re.compile(r"[^A-Za-z0-9_-]+")
RECENT_CHANGES = 15


def group_of(w: Workload) -> str:
    return w.topic or _NO_TOPIC.get(w.source, f"{w.source} (no topic)")


def group_ids(groups: Sequence[str]) -> dict[str, str]:
    """An anchor id per group name, unique even where the names slug alike."""
    ids: dict[str, str] = {}
    used: set[str] = set()
    for g in groups:
        base = "topic-" + (_ID.sub("-", g).strip("-").lower() or "none")
        candidate, n = base, 1
        while candidate in used:
            n += 1
            candidate = f"{base}-{n}"
        used.add(candidate)
        ids[g] = candidate
    return ids


def cp_change(magnitude: float) -> str:
    return fmt_change(1 + magnitude) if math.isfinite(magnitude) else "n/a"


def spread_text(p: Point) -> str:
    """``n=5, 790 to 812`` (min to max of the values); ``n=1: no spread``."""
    if p.n <= 1 or p.min is None or p.max is None:
        return f"n={p.n}: no spread" if p.n == 1 else f"n={p.n}"
    return f"n={p.n}, {fmt_value(p.min)} to {fmt_value(p.max)}"


def step_cell(h: MetricHistory, p: Point | None) -> str:
    """The change of ``p`` against the version it is compared with, and the verdict:
    highlighted (``step-regression``/``step-improvement``) only when significant; n=1 and
    other steps that were not judged say so."""
    before = h.previous_of(p) if p is not None else None
    if p is None or before is None or p.mean is None or not before.mean:
        return '<span class="muted">-</span>'
    change = esc(fmt_change(p.mean / before.mean))
    s = p.step
    title = f' title="vs {esc(before.label)}: {esc(s.note)}"' if s is not None else ""
    if s is not None and s.significant:
        return f'<span class="step-{esc(s.verdict)}"{title}>{change} {esc(s.verdict)}</span>'
    why = (s.note if s is not None and s.verdict == "not judged" and s.note == ONE_VALUE
           else s.verdict if s is not None else "not judged")
    return f'<span class="muted"{title}>{change} · {esc(why)}</span>'


def _link(w: Workload, anchor: str = "") -> str:
    return f'<a href="workloads/{esc(w.page)}{esc(anchor)}">{esc(w.name)}</a>'


def _name_cell(w: Workload) -> str:
    return _link(w) + (tag("uncommon", "uncommon") if w.uncommon else "")


def _row(w: Workload, *, sources: bool, machines: bool) -> list[str]:
    h = w.headline
    latest = h.latest
    cells = [_name_cell(w)]
    cells += [esc(w.source)] if sources else []
    cells += [esc(w.machine or "-")] if machines else []
    cells.append(esc(h.metric if h.bucket in ("Average", "Value") else f"{h.metric} {h.bucket}"))
    if latest is None:
        cells.append('<span class="muted">no value</span>')
    else:
        cells.append(f'<span title="{esc(latest.version)}">'
                     f"{esc(fmt_value(latest.mean, h.unit))}</span>"
                     f'<br><span class="muted spread">{esc(spread_text(latest))}</span>')
    cells.append(step_cell(h, latest))
    cells.append(sparkline_svg(h) or '<span class="muted">-</span>')
    cells.append(esc(len(h.points)))
    if h.change_points:
        cp = h.change_points[-1]
        cells.append(f"{len(h.change_points)}: "
                     + _link_text(w, f"#p-{cp.index}",
                                  f"{cp_change(cp.magnitude)} at "
                                  f"{h.points[cp.index].label}"))
    else:
        cells.append('<span class="muted">-</span>')
    ordered = [p for p in h.points if p.ordered]
    last = ordered[-1] if ordered else (h.points[-1] if h.points else None)
    cells.append(tag(last.problems, "problem") if last and last.problems else "ok")
    return cells


def _link_text(w: Workload, anchor: str, text: str) -> str:
    return f'<a href="workloads/{esc(w.page)}{esc(anchor)}">{esc(text)}</a>'


def _recent(workloads: Sequence[Workload], ranks: Mapping[str, int]) -> list[str]:
    found = []
    for w in workloads:
        for cp in w.headline.change_points:
            p = w.headline.points[cp.index]
            found.append((ranks.get(p.version, -1), w, cp))
    out = ["<h2 id=\"recent\">Recent change points</h2>"]
    if not found:
        out.append(empty("No change points found: a workload needs at least 10 versions with "
                         "a value before a change can be detected."))
        return out
    found.sort(key=lambda t: t[0], reverse=True)
    rows = []
    for _, w, cp in found[:RECENT_CHANGES]:
        h = w.headline
        p = h.points[cp.index]
        rows.append([_name_cell(w), esc(h.metric), _link_text(w, f"#p-{cp.index}", p.label),
                     esc(f"{p.commit_date:%Y-%m-%d}" if p.commit_date else "-"),
                     esc(fmt_value(cp.before_mean, h.unit)),
                     esc(fmt_value(cp.after_mean, h.unit)),
                     esc(cp_change(cp.magnitude))])
    out.append(table(["workload", "metric", "from version", "committed", "before", "after",
                      "change"], rows, numeric=(4, 5, 6)))
    if len(found) > RECENT_CHANGES:
        out.append(f'<p class="muted">{len(found) - RECENT_CHANGES} older change points are '
                   "on the workload pages.</p>")
    return out


def _summary(workloads: Sequence[Workload], ranks: Mapping[str, int], order_note: str) -> str:
    sources = sorted({w.source for w in workloads})
    versions = {p.version: p for w in workloads for p in w.headline.points}
    newest = max((v for v in versions if v in ranks), key=ranks.__getitem__, default=None)
    text = (f"{len(workloads)} workload{'s' * (len(workloads) != 1)} from "
            f"{', '.join(sources)}; {len(versions)} version{'s' * (len(versions) != 1)}")
    if newest is not None:
        p = versions[newest]
        when = f" (committed {p.commit_date:%Y-%m-%d %H:%M} UTC)" if p.commit_date else ""
        text += f"; newest in git order: {p.label}{when}"
    elif versions:
        text += "; newest: unknown (no version of known order)"
    out = f'<p id="summary">{esc(text)}.</p>'
    if order_note:
        out += f'<p class="muted" id="order">{esc(order_note)}.</p>'
    return out


def render_index(ctx: SiteContext, workloads: Sequence[Workload], *,
                 ranks: Mapping[str, int] | None = None, order_note: str = "",
                 coverage: CoverageHistory | None = None) -> str:
    """The index page; ``ranks``: versions in git order across workloads
    (:func:`reports.dashboard.load.version_ranks`), ``order_note``: how they were ordered;
    ``coverage``: the coverage figures (a short section linking coverage.html)."""
    ranks = ranks or {}
    body = [f"<h1>{esc(ctx.title)}</h1>"]
    cover = coverage_summary(ctx, coverage) if coverage is not None else []
    if not workloads:
        body.append(empty("The store has no metric values to show (only status rows or "
                          "buckets without a default)."))
        return page(ctx, ctx.title, body + cover, here="index")
    body.append(_summary(workloads, ranks, order_note))
    uncommon = sum(w.uncommon for w in workloads)
    if uncommon:
        body.append(f"<p>{uncommon} uncommon scenario{'s' * (uncommon != 1)} (label "
                    f"<code>uncommon</code>), flagged {tag('uncommon', 'uncommon')}.</p>")
    groups: dict[str, list[Workload]] = {}
    for w in workloads:
        groups.setdefault(group_of(w), []).append(w)
    ids = group_ids(list(groups))
    toc = "".join(f'<a href="#{ids[g]}">{esc(g)} ({len(ws)})</a>'
                  for g, ws in groups.items())
    cover_link = '<a href="#coverage">coverage</a>' if cover else ""
    body.append(f'<p class="toc">Topics: {toc}<a href="#recent">recent change points</a>'
                f'<a href="#asv">asv</a>{cover_link}</p>')
    body += cover
    body.append('<h2 id="asv">asv</h2>')
    if ctx.asv:
        body.append('<p>The asv site (benchmarks over commits, made by <code>asv publish'
                    '</code>): <a href="asv/index.html">asv/index.html</a>.</p>')
    else:
        body.append(empty("No asv HTML: run `asv publish` (it writes .asv/html) or pass "
                          "--asv-html DIR."))
    body += _recent(workloads, ranks)
    sources = len({w.source for w in workloads}) > 1
    machines = len({w.machine for w in workloads}) > 1
    headers = ["workload", *(["source"] if sources else []),
               *(["machine"] if machines else []), "metric", "latest", "vs previous",
               "trend", "versions", "change points", "status"]
    first_num = 2 + sources + machines
    for group, ws in groups.items():
        body.append(f'<h2 id="{ids[group]}">{esc(group)} ({len(ws)})</h2>')
        rows = [_row(w, sources=sources, machines=machines) for w in ws]
        body.append(table(headers, rows, numeric=(first_num, first_num + 1, first_num + 3),
                          row_classes=["uncommon" if w.uncommon else "" for w in ws]))
    body.append('<p class="muted">latest: mean of the values of the newest version in git '
                "order, with their number n and range (min to max); vs previous: against the "
                "previous measured commit on its first-parent line, highlighted only when "
                "significant (Mann-Whitney U, 3 % minimum effect, Benjamini-Hochberg per "
                f"commit pair); {esc(ONE_VALUE)} (one value says nothing about noise); "
                "change points: E-divisive means over the versions of the first-parent line "
                "(at least 5 on each side).</p>")
    return page(ctx, ctx.title, body, here="index")
