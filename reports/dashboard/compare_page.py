"""``compare.html``: the newest measured commit against the previous release tag, per
workload (headline metric), from the values in the store; or why there is nothing to compare.
"""

from __future__ import annotations

import math

from reports.dashboard.compare import Comparisons
from reports.dashboard.layout import SiteContext, empty, esc, page, table, tag, verdict
from reports.render.sections import fmt_change, fmt_ci, fmt_p, fmt_value

__all__ = ["render_compare"]

_ORDER = {"regression": 0, "improvement": 1, "inconclusive": 2, "no change": 3}


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _rows(result: Comparisons) -> list[str]:
    def sort_key(i: int) -> tuple[int, float, str]:
        c = result.rows[i].comparison
        if c is None:
            return (9, 0.0, result.rows[i].workload.name)
        return (_ORDER.get(str(c.verdict), 5), -abs(math.log(c.ratio)),
                result.rows[i].workload.name)

    rows = []
    for i in sorted(range(len(result.rows)), key=sort_key):
        r = result.rows[i]
        w, c, h = r.workload, r.comparison, r.workload.headline
        name = (f'<a href="workloads/{esc(w.page)}">{esc(w.name)}</a>'
                + (tag("uncommon", "uncommon") if w.uncommon else ""))
        cells = [name, esc(w.source), esc(h.metric), esc(r.base.n),
                 esc(fmt_value(r.base.mean, h.unit)), esc(r.head.n),
                 esc(fmt_value(r.head.mean, h.unit))]
        if c is None:
            cells += ["n/a", "n/a", "n/a", "", f'<span class="note">{esc(r.note)}</span>']
        else:
            cells += [esc(fmt_change(c.ratio)),
                      esc(fmt_ci(_num(c.ci_low), _num(c.ci_high))),
                      esc(fmt_p(_num(c.p_adjusted))), verdict(str(c.verdict)),
                      f'<span class="note">{esc(c.note)}</span>']
        rows.append(cells)
    return [table(["workload", "source", "metric", "n BASE", "BASE mean", "n HEAD",
                   "HEAD mean", "change", "CI", "q", "verdict", "note"], rows,
                  numeric=(3, 4, 5, 6, 7, 8, 9))]


def render_compare(ctx: SiteContext, result: Comparisons, *, repo_given: bool) -> str:
    title = "Release comparison"
    body = [f"<h1>{esc(title)}</h1>"]
    s = result.selection
    if not repo_given:
        body.append(empty("No release tag yet: tags come from git; pass --repo PATH (a "
                          "checkout of the project) to compare with the previous release."))
        return page(ctx, f"{title} · {ctx.title}", body, depth=0, here="compare")
    if s.head is not None:
        behind = (f" ({s.head_behind} newer commit{'s' * (s.head_behind != 1)} not measured "
                  "yet)") if s.head_behind else ""
        body.append(f"<p>HEAD: <code>{esc(s.head[:12])}</code>, the newest measured commit of "
                    f"the repository's history{esc(behind)}.</p>")
    if s.base is None:
        body.append(empty(s.reason[:1].upper() + s.reason[1:] + "."))
    else:
        body.append(f"<p>BASE: release <strong>{esc(s.base.tag)}</strong> at "
                    f"<code>{esc(s.base.commit[:12])}</code>.</p>")
    if s.skipped:
        names = ", ".join(f"{r.tag} ({r.commit[:10]})" for r in s.skipped)
        body.append(f'<p class="muted">Release tags without results in the store: '
                    f"{esc(names)}.</p>")
    if s.base is None or s.head is None:
        return page(ctx, f"{title} · {ctx.title}", body, depth=0, here="compare")
    body.append("<p>Per workload, every stored value of the headline metric at BASE against "
                "those at HEAD (rounds of all runs of each commit): Hodges-Lehmann ratio with "
                "its 95 % interval, Mann-Whitney U with Benjamini-Hochberg over the workloads "
                "(q), 3 % minimum effect. One value per side (asv) is always inconclusive.</p>")
    body.append(f"<h2>Workloads measured at both ({len(result.rows)})</h2>")
    if result.rows:
        body += _rows(result)
    else:
        body.append(empty("No workload has values at both commits."))
    if result.missing:
        names = ", ".join(w.name for w in result.missing)
        body.append(f"<h2>Measured at one of them only ({len(result.missing)})</h2>"
                    f"<p>{esc(names)}</p>")
    return page(ctx, f"{title} · {ctx.title}", body, depth=0, here="compare")
