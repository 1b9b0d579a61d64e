"""A report as one self-contained HTML file: inline CSS, inline SVG plots, no scripts.

Sections: header (verdict; when a side failed, one box per failure first: which side, which
workloads, the end of the error; when change-aware selection found blind spots, a box of them
and the workloads it added; BASE/HEAD with commits and environments, the environment
warning, settings, and change-aware selection when it found no blind spot), the tables of
the Markdown report (regressions and improvements, accepted, uncommon scenarios,
attributions, inconclusive), a forest plot per mode,
per-plugin time bars of the regressed workloads, throughput history with change points, and
every result. A section without data says so.

Nothing is fetched: no scripts, stylesheets, fonts or images from anywhere, and a
Content-Security-Policy (``default-src 'none'``) makes a browser refuse any that slipped in.
Every string from results or configs goes through :func:`html.escape`; plot text is escaped by
matplotlib's SVG writer (see :mod:`reports.render.plots`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from reports.render.engines import ENGINE_HEADER, ENGINE_INTRO, ENGINE_NUMERIC, engine_cells
from reports.render.model import ChangeSelection, Failure, Report, Result, Side
from reports.render.sections import (
    STATUS_WORDS,
    Sections,
    added_results,
    blind_spot_phrase,
    build_sections,
    failure_phrase,
    failure_title,
    fmt_change,
    fmt_ci,
    fmt_duration,
    fmt_p,
    fmt_per_pod,
    fmt_value,
    generated_phrase,
    kind_phrase,
    map_phrase,
    other_modes,
    scope_phrase,
    selection_first,
    selection_summary,
    skipped_phrase,
)

__all__ = ["CSP", "render_html"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;
 margin:0 auto;max-width:1200px;padding:0 24px 48px}
h1{font-size:24px;margin:24px 0 4px}h2{font-size:19px;margin:32px 0 8px;
 border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:20px 0 6px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums;
 white-space:nowrap}
tr.diff td{background:#fff4e0}
.name{overflow-wrap:anywhere;min-width:16em;max-width:32em}
.wide{overflow-x:auto;max-width:100%}
.v{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-weight:600;
 white-space:nowrap}
.v-regression{background:#c62828}.v-improvement{background:#2e7d32}
.v-inconclusive{background:#e08600}.v-no-change{background:#757575}
.v-accepted{background:#7b1fa2}.v-error{background:#000}
.fail{border:2px solid #c62828;background:#fdecea;padding:8px 12px;border-radius:4px;
 margin:12px 0}.fail h2{margin-top:4px;border:0}
pre.err{background:#fff;border:1px solid #e0b4b4;padding:8px;overflow-x:auto;
 white-space:pre-wrap;font-size:12px}
.badge{font-size:20px;padding:2px 10px;vertical-align:middle}
.warn{border:1px solid #e0a800;background:#fff8e1;padding:8px 12px;border-radius:4px;
 margin:12px 0}
.muted{color:#666}.empty{color:#666;font-style:italic}
svg.plot{max-width:100%;height:auto;display:block;margin:8px 0}
details summary{cursor:pointer;font-weight:600}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _verdict(verdict: str, *, accepted: bool = False, big: bool = False) -> str:
    cls = "accepted" if accepted else verdict.replace(" ", "-")
    text = f"{verdict} (accepted)" if accepted else verdict
    return f'<span class="v v-{cls}{" badge" if big else ""}">{_e(text)}</span>'


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], *,
           numeric: Iterable[int] = (), row_classes: Sequence[str] | None = None) -> str:
    """A table of cells that are already HTML; ``numeric`` column indices align right."""
    numeric = set(numeric)
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        cells = "".join(f'<td class="num">{c}</td>' if j in numeric
                        else f'<td class="name">{c}</td>' if j == 0 else f"<td>{c}</td>"
                        for j, c in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return (f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _empty(text: str) -> str:
    return f'<p class="empty">{_e(text)}</p>'


def _medians(r: Result) -> list[str]:
    return [_e(fmt_value(r.base.median)), _e(fmt_value(r.head.median)), _e(r.unit)]


def _side_rows(base: Side, head: Side) -> tuple[list[list[str]], list[str]]:
    rows = [["label", _e(base.label), _e(head.label)],
            ["commit", _e(base.commit or "-"), _e(head.commit or "-")],
            ["core path", _e(base.core_path or "-"), _e(head.core_path or "-")],
            ["config", _e(base.config or "-"), _e(head.config or "-")]]
    keys = list(base.environment) + [k for k in head.environment if k not in base.environment]
    for key in keys:
        b, h = base.environment.get(key, "-"), head.environment.get(key, "-")
        rows.append([_e(key), _e(b), _e(h)])
    classes = ["diff" if row[1] != row[2] and i >= 4 else "" for i, row in enumerate(rows)]
    return rows, classes


def _failure(report: Report, f: Failure) -> str:
    side = report.head if f.side == "head" else report.base
    commit = f" ({_e(side.commit[:12])})" if side.commit else ""
    names = ", ".join(f"<strong>{_e(w)}</strong>" for w in f.workloads)
    return (f'<div class="fail" role="alert"><h2>{_e(failure_title(f))}</h2>'
            f"<p>{_e(f.side_word)} <strong>{_e(side.label)}</strong>{commit} could not be "
            f"measured on {names}: no verdict about them (results marked error). The end of "
            "the error:</p>"
            f'<pre class="err">{_e(f.error)}</pre></div>')


def _blind_spots(sel: ChangeSelection) -> list[str]:
    gate = ("They fail the gate (--fail-on-blind-spot)." if sel.fail_on_blind_spot
            else "They do not fail the gate (--fail-on-blind-spot would).")
    rows = [[_e(b.where), _e(len(b.lines)), _e(scope_phrase(b.scope)),
             "<br>".join(f"{_e(x.workload)} (line {x.line}, {x.distance} away)"
                         for x in b.suggestions) or "-", _e(generated_phrase(b) or "-")]
            for b in sel.blind_spots]
    label = f" (label {sel.label})" if sel.label else ""
    return ['<div class="warn" role="alert">',
            f"<h2>Blind spots: {_e(blind_spot_phrase(sel))}</h2>",
            f"<p><strong>No workload of the catalog{_e(label)} runs these changed lines of "
            "HEAD</strong>, so no measurement here can see them get slower. "
            f"{_e(gate)} Each names the workloads that run the nearest lines: where a new or "
            "changed workload would start.</p>",
            _table(["changed lines", "statements", "where the suggestions come from",
                    "nearest workloads", "generated scenarios"], rows, numeric=(1,)),
            "</div>"]


def _spans(spans: Sequence[object]) -> str:
    return "<br>".join(_e(x) for x in spans) or "-"


def _selection(report: Report, sel: ChangeSelection) -> list[str]:
    """Change-aware selection: its state, or the workloads it added and why."""
    title = f"<h2>Workloads added by change-aware selection ({len(sel.added)})</h2>"
    if sel.state == "off":
        return [title, _empty("Change-aware selection was off (--no-select-changed).")]
    skipped = [f"<p>{_e(skipped_phrase(sel))}</p>"] if sel.skipped else []
    if sel.state == "no changes":
        return [title, _empty(f"HEAD changes no statement line of {', '.join(sel.packages)}: "
                              "nothing to add."), *skipped]
    if sel.state == "error":
        return [title, f'<p><strong>Change-aware selection failed</strong>: {_e(sel.error)}. '
                       "The compared sets were measured without it.</p>"]
    out = [title, f"<p>{_e(selection_summary(sel))}</p>"]
    if sel.added:
        rows = [[_e(a.workload), _e(", ".join(a.modes)), _spans(a.lines), _e(a.line_count),
                 _e("-" if a.cost is None else f"{a.cost:.2f} s"),
                 "<br>".join(f"{_e(r.mode)}: {_verdict(r.verdict)} {_e(fmt_change(r.ratio))}"
                             for r in added_results(report, a.workload)) or "-"]
                for a in sel.added]
        out.append(_table(["workload", "added to", "for the changed lines", "statements",
                           "CPU under coverage", "result"], rows, numeric=(3, 4)))
    for title_text, spans in (("Changed lines the compared workloads run", sel.measured_cover),
                              ("Changed lines only imports run (import time: measured by "
                               "none)", sel.import_time)):
        if spans:
            out.append(f"<details><summary>{_e(title_text)} ({len(spans)} ranges)</summary>"
                       f"<p>{_spans(spans)}</p></details>")
    out += skipped
    if sel.map is not None:
        out.append(f'<p class="muted">{_e(map_phrase(sel.map))}'
                   + (f", label {_e(sel.label)}" if sel.label else "") + "</p>")
    return out


def _header(report: Report, s: Sections) -> list[str]:
    what = failure_phrase(report)
    spots = blind_spot_phrase(report.selection) if report.selection is not None else ""
    out = [f"<h1>schedperf comparison {_verdict(report.verdict, big=True)}</h1>",
           f"<p><strong>{_e(STATUS_WORDS[report.verdict])}</strong>: "
           + (f"{_e(what)}; " if what else "") + f"{_e(s.counts.phrase())}"
           + (f"; {_e(spots)}" if spots else "")
           + f' <span class="muted">({s.counts.total} results; {_e(kind_phrase(report.kind))};'
           f" generated {_e(report.generated)})</span></p>"]
    out += [_failure(report, f) for f in s.failures]
    sel = report.selection
    if sel is not None and selection_first(report):
        out += [*_blind_spots(sel), *_selection(report, sel)]
    if report.environment_differs:
        notes = "".join(f"<li>{_e(n)}</li>" for n in report.environment_notes)
        out.append('<div class="warn" role="alert"><strong>BASE and HEAD ran in different '
                   "environments</strong>: timings may differ for reasons other than the code."
                   + (f"<ul>{notes}</ul>" if notes else "") + "</div>")
    rows, classes = _side_rows(report.base, report.head)
    out += ["<h2>Compared</h2>", _table(["", "BASE", "HEAD"], rows, row_classes=classes)]
    st = report.settings
    settings = [["modes", _e(", ".join(st.modes))], ["rounds per side", _e(st.repeat)],
                ["min effect", _e(", ".join(f"{m} {e * 100:g} %"
                                            for m, e in sorted(st.min_effect.items())))],
                ["q (false discovery rate)", _e(f"{st.q:g}")],
                ["seed", _e("-" if st.seed is None else st.seed)],
                ["label", _e(st.label or "-")], ["wall time", _e(fmt_duration(st.wall_seconds))]]
    skipped = [str(x) for x in st.extra.get("not_compared") or ()]
    if skipped:
        settings.append(["not compared", _e("; ".join(skipped))])
    out += ["<h3>Settings</h3>", _table(["setting", "value"], settings)]
    if sel is not None and not selection_first(report):
        out += _selection(report, sel)
    return out


def _results_table(report: Report, results: Sequence[Result], *, others: bool) -> str:
    headers = ["workload", "metric", "mode", "BASE median", "HEAD median", "unit", "change",
               "CI", "q", "verdict"] + (["other modes"] if others else [])
    rows = []
    for r in results:
        row = [_e(r.workload), _e(r.metric), _e(r.mode), *_medians(r), _e(fmt_change(r.ratio)),
               _e(fmt_ci(r.ci_low, r.ci_high)), _e(fmt_p(r.q_value)),
               _verdict(r.verdict, accepted=r.accepted is not None)]
        if others:
            row.append("<br>".join(f"{_e(o.mode)}: {_verdict(o.verdict)} "
                                   f"{_e(fmt_change(o.ratio))}"
                                   for o in other_modes(report, r)) or "-")
        rows.append(row)
    return _table(headers, rows, numeric=(3, 4, 6, 7, 8))


def _tables(report: Report, s: Sections) -> list[str]:
    others = len(report.settings.modes) > 1
    out = [f"<h2>Regressions and improvements ({len(s.significant)})</h2>"]
    if s.significant:
        out += ["<p>Each verdict comes from the mode in its row; change and CI are HEAD vs "
                "BASE of the metric.</p>", _results_table(report, s.significant, others=others)]
    else:
        out.append(_empty("No regressions or improvements."))

    out.append(f"<h2>Accepted regressions ({len(s.accepted)})</h2>")
    if s.accepted:
        out.append(_table(
            ["workload", "metric", "mode", "change", "CI", "why", "accepted in"],
            [[_e(r.workload), _e(r.metric), _e(r.mode), _e(fmt_change(r.ratio)),
              _e(fmt_ci(r.ci_low, r.ci_high)), _e(r.accepted.why if r.accepted else ""),
              _e((r.accepted.source if r.accepted else None) or "-")] for r in s.accepted],
            numeric=(3, 4)))
    else:
        out.append(_empty("No accepted regressions."))

    out.append("<h2>Uncommon scenarios</h2>")
    checked = len(s.uncommon_checked)
    if not checked:
        out.append(_empty("No uncommon scenarios in this comparison."))
    else:
        names = ", ".join(_e(n) for n in s.uncommon_checked)
        out.append(f"<p>{checked} uncommon scenario{'s' * (checked != 1)} checked: {names}.</p>")
        if s.uncommon_flagged:
            out.append(_results_table(report, s.uncommon_flagged, others=others))
        else:
            out.append(_empty("All no change."))

    out.append("<h2>Where the time went</h2>")
    rows = [[_e(r.workload), _e(r.mode), _verdict(r.verdict, accepted=r.accepted is not None),
             _e(a.plugin), _e(a.extension_point), _e(fmt_per_pod(a.base_per_pod)),
             _e(fmt_per_pod(a.head_per_pod)),
             _e("n/a" if a.change is None else fmt_change(1 + a.change)), _e(a.text)]
            for r in (*s.significant, *s.accepted) for a in r.attribution]
    if rows:
        out.append(_table(["workload", "mode", "verdict", "plugin", "extension point",
                           "BASE per pod", "HEAD per pod", "change", "summary"], rows,
                          numeric=(5, 6, 7)))
    else:
        out.append(_empty("No plugin attributions (none of the changed results has one)."))

    if report.engines:
        out += ["<h2>scheduler_core and the real kube-scheduler</h2>",
                f"<p>{_e(ENGINE_INTRO.replace('`', ''))}</p>",
                _table(ENGINE_HEADER, [[_e(c) for c in engine_cells(e)] for e in report.engines],
                       numeric=ENGINE_NUMERIC)]

    out.append(f"<h2>Inconclusive ({len(s.inconclusive)})</h2>")
    if s.inconclusive:
        out.append(_table(
            ["workload", "metric", "mode", "change", "CI", "more rounds needed"],
            [[_e(r.workload), _e(r.metric), _e(r.mode), _e(fmt_change(r.ratio)),
              _e(fmt_ci(r.ci_low, r.ci_high)),
              _e(f"~{r.more_rounds}" if r.more_rounds else "-")] for r in s.inconclusive],
            numeric=(3, 4, 5)))
    else:
        out.append(_empty("No inconclusive results."))
    return out


def _plots(report: Report, s: Sections, *, max_history: int, max_breakdowns: int) -> list[str]:
    # matplotlib only when HTML is asked for; from the module itself, not the package, whose
    # __init__ imports this module (reports.render <-> reports.render.html was a cycle)
    from reports.render.plots import breakdown_svg, forest_svg, history_svg

    out = ["<h2>Ratio per workload</h2>",
           "<p>HEAD/BASE of each metric with its confidence interval; the grey band is the "
           "minimum effect (smaller changes never count), colours are the verdicts.</p>"]
    modes = list(report.settings.modes)
    for i, mode in enumerate(modes):
        total = sum(1 for r in report.results if r.mode == mode and r.ratio is not None)
        out.append(f"<h3>{_e(mode)}</h3>")
        if not total:
            out.append(_empty(f"No results with a ratio in mode {mode}."))
            continue
        svg, shown = forest_svg(report.results, mode=mode,
                                min_effect=report.settings.min_effect.get(mode),
                                id_prefix=f"forest{i}-")
        if shown < total:
            out.append(f'<p class="muted">Showing {shown} of {total} results: every changed '
                       "one, then the largest effects.</p>")
        out.append(svg)

    out.append("<h2>Per-plugin time of regressed workloads</h2>")
    regressed = {r.workload for r in report.results if r.verdict == "regression"}
    names = sorted(report.plugin_breakdown, key=lambda w: (w not in regressed, w))
    if not names:
        out.append(_empty("No per-plugin breakdown in this report."))
    for i, workload in enumerate(names[:max_breakdowns]):
        out.append(breakdown_svg(workload, report.plugin_breakdown[workload],
                                 id_prefix=f"breakdown{i}-"))
    if len(names) > max_breakdowns:
        out.append(f'<p class="muted">{len(names) - max_breakdowns} more breakdowns are in '
                   "the JSON report.</p>")

    out.append("<h2>History</h2>")
    changed = {r.workload for r in s.significant} | {r.workload for r in s.accepted}
    names = sorted((w for w, h in report.history.items() if h.points),
                   key=lambda w: (w not in changed, w))
    if not names:
        out.append(_empty("No history in this report."))
    for i, workload in enumerate(names[:max_history]):
        out.append(history_svg(workload, report.history[workload],
                               id_prefix=f"history{i}-"))
    if len(names) > max_history:
        out.append(f'<p class="muted">{len(names) - max_history} more histories are in the '
                   "JSON report.</p>")
    return out


def _all_results(report: Report) -> list[str]:
    headers = ["workload", "uncommon", "metric", "mode", "n BASE", "BASE median", "n HEAD",
               "HEAD median", "unit", "change", "CI", "p", "q", "verdict", "more rounds"]
    rows = [[_e(r.workload), "yes" if r.uncommon else "", _e(r.metric), _e(r.mode),
             _e(r.base.n), _e(fmt_value(r.base.median)), _e(r.head.n),
             _e(fmt_value(r.head.median)), _e(r.unit), _e(fmt_change(r.ratio)),
             _e(fmt_ci(r.ci_low, r.ci_high)), _e(fmt_p(r.p_value)), _e(fmt_p(r.q_value)),
             _verdict(r.verdict, accepted=r.accepted is not None),
             _e(r.more_rounds if r.more_rounds else "")] for r in report.results]
    out = [f"<h2>All results ({len(rows)})</h2>"]
    if not rows:
        return [*out, _empty("The report has no results.")]
    return [*out, _table(headers, rows, numeric=(4, 5, 6, 7, 9, 10, 11, 12, 14))]


def render_html(report: Report, *, max_history: int = 30, max_breakdowns: int = 20) -> str:
    """The report as one self-contained HTML document (see the module doc)."""
    s = build_sections(report)
    title = (f"schedperf: {STATUS_WORDS[report.verdict]} — {report.base.label} vs "
             f"{report.head.label}")
    body = [*_header(report, s), *_tables(report, s),
            *_plots(report, s, max_history=max_history, max_breakdowns=max_breakdowns),
            *_all_results(report),
            f'<p class="muted">schedperf report · schema {report.schema}</p>']
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        *body, "</body>", "</html>", ""])
