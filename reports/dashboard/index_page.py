"""``index.html``: every workload with its latest headline value, the change against the
previous version, a trend sparkline and its change points, grouped by topic; links to the
per-workload pages, the release comparison and the asv site."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from reports.dashboard.charts import sparkline_svg
from reports.dashboard.layout import SiteContext, empty, esc, page, table, tag
from reports.dashboard.model import Workload
from reports.render.sections import fmt_change, fmt_value

__all__ = ["cp_change", "group_ids", "group_of", "render_index"]

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
                     f"{esc(fmt_value(latest.mean, h.unit))}</span>")
    change = h.change_vs_previous
    cells.append(esc(fmt_change(change)) if change is not None
                 else '<span class="muted">-</span>')
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
    last = h.points[-1] if h.points else None
    cells.append(tag(last.problems, "problem") if last and last.problems else "ok")
    return cells


def _link_text(w: Workload, anchor: str, text: str) -> str:
    return f'<a href="workloads/{esc(w.page)}{esc(anchor)}">{esc(text)}</a>'


def _recent(workloads: Sequence[Workload]) -> list[str]:
    found = []
    for w in workloads:
        for cp in w.headline.change_points:
            p = w.headline.points[cp.index]
            found.append((p.timestamp.isoformat() if p.timestamp else "", w, cp))
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
                     esc(f"{p.timestamp:%Y-%m-%d}" if p.timestamp else "-"),
                     esc(fmt_value(cp.before_mean, h.unit)),
                     esc(fmt_value(cp.after_mean, h.unit)),
                     esc(cp_change(cp.magnitude))])
    out.append(table(["workload", "metric", "from version", "date", "before", "after",
                      "change"], rows, numeric=(4, 5, 6)))
    if len(found) > RECENT_CHANGES:
        out.append(f'<p class="muted">{len(found) - RECENT_CHANGES} older change points are '
                   "on the workload pages.</p>")
    return out


def _summary(workloads: Sequence[Workload]) -> str:
    sources = sorted({w.source for w in workloads})
    versions = {p.version: p for w in workloads for p in w.headline.points}
    latest = max((p for p in versions.values() if p.timestamp), key=lambda p: p.timestamp,
                 default=None)
    text = (f"{len(workloads)} workload{'s' * (len(workloads) != 1)} from "
            f"{', '.join(sources)}; {len(versions)} version{'s' * (len(versions) != 1)}")
    if latest is not None and latest.timestamp is not None:
        text += f"; newest: {latest.label} ({latest.timestamp:%Y-%m-%d %H:%M} UTC)"
    return f"<p>{esc(text)}.</p>"


def render_index(ctx: SiteContext, workloads: Sequence[Workload]) -> str:
    body = [f"<h1>{esc(ctx.title)}</h1>"]
    if not workloads:
        body.append(empty("The store has no metric values to show (only status rows or "
                          "buckets without a default)."))
        return page(ctx, ctx.title, body, here="index")
    body.append(_summary(workloads))
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
    body.append(f'<p class="toc">Topics: {toc}<a href="#recent">recent change points</a>'
                '<a href="#asv">asv</a></p>')
    body.append('<h2 id="asv">asv</h2>')
    if ctx.asv:
        body.append('<p>The asv site (benchmarks over commits, made by <code>asv publish'
                    '</code>): <a href="asv/index.html">asv/index.html</a>.</p>')
    else:
        body.append(empty("No asv HTML: run `asv publish` (it writes .asv/html) or pass "
                          "--asv-html DIR."))
    body += _recent(workloads)
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
    body.append('<p class="muted">latest: mean of the newest version\'s values; vs previous: '
                "against the version before it; change points: E-divisive means over the "
                "versions (at least 5 on each side).</p>")
    return page(ctx, ctx.title, body, here="index")
