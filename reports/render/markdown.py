"""A report as GitHub-flavoured Markdown: a PR comment or a job's step summary.

Layout: headline (status word and counts), then, when a side failed, one section per failure
(which side, which workloads, the end of the error in a code block) before anything else;
then, when change-aware selection found blind spots, the blind spots (file:line ranges and
where to start on each) and the workloads it added (with the changed lines that made each be
added); an environment warning when BASE and HEAD ran on different machines, one line of
settings, the change-aware selection when it found no blind spot, then regressions and
improvements (table), accepted regressions, uncommon scenarios, plugin attributions,
inconclusive results, and a collapsed ``<details>`` table of the results with no change.

Size: GitHub refuses comments over 65,536 characters, so the output stays under ``max_bytes``
(60,000 by default) whatever the number of results: every table and list has a row cap and
takes rows only while the budget lasts, and says how many it left out.

Text from results and configs (workload names, labels, notes, reasons) is escaped: HTML
special characters become entities (a ``<script>`` workload shows as text) and Markdown
punctuation, ``|`` included, is backslash-escaped, so a name cannot break a table or a link.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from reports.render.engines import ENGINE_HEADER, ENGINE_INTRO, engine_cells
from reports.render.model import (
    AddedWorkload,
    BlindSpot,
    ChangeSelection,
    Failure,
    Report,
    Result,
)
from reports.render.sections import (
    STATUS_WORDS,
    Counts,
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

__all__ = ["MAX_BYTES", "md_escape", "render_markdown"]

MAX_BYTES = 60_000
NAME_CHARS = 120  # longer names are clipped (the HTML and JSON reports keep them whole)
_RESERVE = 800  # kept back for the closing lines of the document
_SIGNIFICANT_ROWS = 50
_LIST_ROWS = 25
_ATTRIBUTION_ROWS = 10
_NOTES = 10
_FAILURE_GROUPS = 10  # failure sections shown; the rest are counted
_FAILURE_NAMES = 20  # workload names per failure section
_ERROR_LINES = 20  # lines of an error text shown
_ERROR_LINE_CHARS = 300
_SELECTION_ROWS = 30  # blind spots, added workloads
_SUGGESTIONS = 3
_SPANS = 6  # line ranges shown per added workload / import-time summary
_MD_PUNCT = re.compile(r"([\\`*_\[\]|~$])")  # $: GitHub math
_SPACE = re.compile(r"\s+")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")


def md_escape(text: str, *, limit: int | None = NAME_CHARS) -> str:
    """``text`` as literal inline Markdown, on one line, clipped to ``limit`` characters."""
    text = _SPACE.sub(" ", text).strip()
    if limit is not None and len(text) > limit:  # the middle gives way (see plots._clip)
        head = (limit - 1) * 2 // 5
        text = text[:head] + "…" + text[len(text) - (limit - 1 - head):]
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MENTION.sub("@\u2060", text)  # a word joiner: GitHub links no @mention
    return _MD_PUNCT.sub(r"\\\1", text)


def _size(lines: Sequence[str]) -> int:
    return sum(len(line.encode()) + 1 for line in lines)


def _bounded(lines: Iterable[str], *, total: int, budget: int, cap: int,
             more: str) -> tuple[list[str], int]:
    """The lines that fit ``budget`` bytes and ``cap`` lines, then a note on the rest
    (``more`` is formatted with the count left out); and how many lines were kept.
    ``total``: how many lines there are."""
    out: list[str] = []
    used = len(more.encode()) + 16
    for line in lines:
        size = len(line.encode()) + 1
        if len(out) == cap or used + size > budget:
            break
        out.append(line)
        used += size
    shown = len(out)
    if shown < total:
        out.append(more.format(n=total - shown))
    return out, shown


def _listing(lines: Iterable[str], *, total: int, budget: int, cap: int = _LIST_ROWS) -> list[str]:
    return _bounded(lines, total=total, budget=budget, cap=cap,
                    more="- *… {n} more not shown here.*")[0]


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: Sequence[str], rows: Iterable[str], *, total: int, budget: int, cap: int,
           more: str) -> list[str]:
    """A table of the rows that fit (see :func:`_bounded`); only the note when none fits."""
    head = [_row(header), _row("---" for _ in header)]
    body, shown = _bounded(rows, total=total, budget=budget - _size(head), cap=cap, more=more)
    return head + body if shown else [more.format(n=total).strip()]


def _where(r: Result) -> str:
    return f"**{md_escape(r.workload)}** · {md_escape(r.mode)} · {md_escape(r.metric)}"


def _result_cells(report: Report, r: Result, *, verdict: bool, others: bool) -> list[str]:
    cells = [md_escape(r.workload), md_escape(r.metric), md_escape(r.mode),
             f"{fmt_value(r.base.median)} → {fmt_value(r.head.median, md_escape(r.unit))}",
             fmt_change(r.ratio), fmt_ci(r.ci_low, r.ci_high), fmt_p(r.q_value)]
    if verdict:
        word = md_escape(r.verdict)
        cells.append(f"**{word}**" if r.verdict == "regression" else word)
    if others:
        cells.append("; ".join(f"{md_escape(o.mode)}: {o.verdict} ({fmt_change(o.ratio)})"
                               for o in other_modes(report, r)) or "-")
    return cells


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _error_block(text: str) -> list[str]:
    lines = [line if len(line) <= _ERROR_LINE_CHARS else line[:_ERROR_LINE_CHARS - 1] + "…"
             for line in text.strip("\n").splitlines()[-_ERROR_LINES:]]
    body = "\n".join(lines) or "(no error text)"
    fence = _fence(body)
    return [fence + "text", body, fence]


def _failure_lines(report: Report, f: Failure) -> list[str]:
    side = report.head if f.side == "head" else report.base
    names = ", ".join(f"**{md_escape(w)}**" for w in f.workloads[:_FAILURE_NAMES])
    if len(f.workloads) > _FAILURE_NAMES:
        names += f" and {len(f.workloads) - _FAILURE_NAMES} more"
    return [f"#### {md_escape(failure_title(f), limit=200)}", "",
            f"{f.side_word} {_side(side.label, side.commit)} could not be measured on "
            f"{names}: no verdict about them (results marked error). The end of the error:",
            "",
            *_error_block(f.error), ""]


def _failures(report: Report, s: Sections, budget: int) -> list[str]:
    """One section per failure (what the report opens with), within ``budget`` bytes."""
    out: list[str] = []
    for i, f in enumerate(s.failures):
        lines = _failure_lines(report, f)
        if i == _FAILURE_GROUPS or _size(out) + _size(lines) > budget:
            out += [f"*… {len(s.failures) - i} more failures: the HTML and JSON reports list "
                    "every one.*", ""]
            break
        out += lines
    return out


def _header(report: Report, counts: Counts) -> list[str]:
    what = failure_phrase(report)
    spots = blind_spot_phrase(report.selection) if report.selection is not None else ""
    lines = [f"### schedperf: {STATUS_WORDS[report.verdict]} — "
             + (f"{what}; " if what else "") + counts.phrase()
             + (f"; {spots}" if spots else ""), ""]
    return lines


def _spans(spans: Sequence[object], limit: int = _SPANS) -> str:
    shown = ", ".join(md_escape(str(x), limit=200) for x in spans[:limit])
    return shown + (f" and {len(spans) - limit} more" if len(spans) > limit else "")


def _blind_spot_line(b: BlindSpot) -> str:
    count = len(b.lines) or 1
    near = "; ".join(f"**{md_escape(x.workload)}** (line {x.line})"
                     for x in b.suggestions[:_SUGGESTIONS])
    generated = generated_phrase(b)
    return (f"- **{md_escape(str(b.where), limit=200)}** ({count} statement"
            f"{'s' * (count != 1)}): {md_escape(scope_phrase(b.scope))}"
            + (f": {near}" if near else "")
            + (f"; {md_escape(generated, limit=400)}" if generated else ""))


def _blind_spots(sel: ChangeSelection, budget: int) -> list[str]:
    gate = ("They **fail the gate** (`--fail-on-blind-spot`)." if sel.fail_on_blind_spot
            else "They do not fail the gate (`--fail-on-blind-spot` would).")
    label = f" (label {md_escape(sel.label)})" if sel.label else ""
    out = [f"#### Blind spots: {md_escape(blind_spot_phrase(sel))}", "",
           f"> **Warning: no workload of the catalog{label} runs these changed lines of "
           "HEAD**, so no measurement here can see them get slower. " + gate + " Each names "
           "the workloads that run the nearest lines: where a new or changed workload would "
           "start.", ""]
    out += _listing((_blind_spot_line(b) for b in sel.blind_spots),
                    total=len(sel.blind_spots), budget=budget, cap=_SELECTION_ROWS)
    return [*out, ""]


def _added_row(report: Report, a: AddedWorkload) -> str:
    verdicts = "; ".join(
        f"{md_escape(r.mode)}: " + (f"**{r.verdict}**" if r.verdict == "regression"
                                    else r.verdict) + f" {fmt_change(r.ratio)}"
        for r in added_results(report, a.workload)) or "-"
    lines = f"{_spans(a.lines)} ({a.line_count} line{'s' * (a.line_count != 1)})"
    return _row([f"**{md_escape(a.workload)}**", lines, verdicts])


def _selection(report: Report, sel: ChangeSelection, budget: int) -> list[str]:
    """The change-aware selection: its state, or the workloads it added and why."""
    if sel.state == "off":
        return ["Change-aware selection: off (`--no-select-changed`).", ""]
    skipped = skipped_phrase(sel)
    skipped_lines = [md_escape(skipped, limit=1000), ""] if skipped else []
    if sel.state == "no changes":
        return [f"Change-aware selection: HEAD changes no statement line of "
                f"{md_escape(', '.join(sel.packages))}: nothing to add.", "", *skipped_lines]
    if sel.state == "error":
        return [f"**Change-aware selection failed**: {md_escape(sel.error or '', limit=400)}. "
                "The compared sets were measured without it.", ""]
    out = [f"#### Workloads added by change-aware selection ({len(sel.added)})", "",
           md_escape(selection_summary(sel), limit=None), ""]
    if sel.added:
        out += _table(["workload", "added for the changed lines", "result"],
                      (_added_row(report, a) for a in sel.added),
                      total=len(sel.added), budget=budget, cap=_SELECTION_ROWS,
                      more="\n*… {n} more not shown here.*")
        out.append("")
    if sel.import_time:
        out += [f"Import-time only (module level: every workload imports these lines, none "
                f"measures them): {_spans(sel.import_time)}.", ""]
    out += skipped_lines
    if sel.map is not None:
        out += [f"<sub>{md_escape(map_phrase(sel.map))}"
                + (f", label {md_escape(sel.label)}" if sel.label else "") + "</sub>", ""]
    return out


def _context(report: Report) -> list[str]:
    lines: list[str] = []
    if report.environment_differs:
        notes = [md_escape(n, limit=200) for n in report.environment_notes[:_NOTES]]
        if len(report.environment_notes) > _NOTES:
            notes.append(f"{len(report.environment_notes) - _NOTES} more")
        detail = f": {'; '.join(notes)}" if notes else ""
        lines += [f"> **Warning: BASE and HEAD ran in different environments**, so timings "
                  f"may differ for reasons other than the code{detail}.", ""]
    st = report.settings
    parts = [f"BASE {_side(report.base.label, report.base.commit)} vs HEAD "
             f"{_side(report.head.label, report.head.commit)}",
             kind_phrase(report.kind),
             "modes " + ", ".join(md_escape(m) for m in st.modes),
             f"{st.repeat} rounds",
             "min effect " + ", ".join(f"{md_escape(m)} {e * 100:g} %"
                                       for m, e in sorted(st.min_effect.items())),
             f"q {st.q:g}"]
    if st.label:
        parts.append(f"label {md_escape(st.label)}")
    if st.wall_seconds is not None:
        parts.append(f"took {fmt_duration(st.wall_seconds)}")
    lines += [" · ".join(parts), ""]
    skipped = [str(x) for x in st.extra.get("not_compared") or ()]
    if skipped:
        shown = "; ".join(md_escape(x, limit=200) for x in skipped[:_NOTES])
        more = f"; {len(skipped) - _NOTES} more" if len(skipped) > _NOTES else ""
        lines += [f"Not compared ({len(skipped)}): {shown}{more}", ""]
    return lines


def _side(label: str, commit: str | None) -> str:
    return f"**{md_escape(label)}**" + (f" ({md_escape(commit[:12])})" if commit else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _significant(report: Report, s: Sections, budget: int) -> list[str]:
    """Regressions and improvements: one table, within ``budget`` bytes."""
    out = [f"#### Regressions and improvements ({len(s.significant)})", ""]
    if s.significant:
        several_modes = len(report.settings.modes) > 1
        header = ["workload", "metric", "mode", "base → head", "change", "CI", "q", "verdict"]
        header += ["other modes"] if several_modes else []
        out += ["Each verdict comes from the mode in its row; change and CI are HEAD vs BASE "
                "of the metric.", ""]
        out += _table(header, (_row(_result_cells(report, r, verdict=True, others=several_modes))
                               for r in s.significant), total=len(s.significant),
                      budget=budget, cap=_SIGNIFICANT_ROWS, more="\n*… {n} more not shown here.*")
    else:
        out.append("No regressions or improvements.")
    return [*out, ""]


def render_markdown(report: Report, *, max_bytes: int = MAX_BYTES) -> str:
    """The report as Markdown of at most ``max_bytes`` UTF-8 bytes (see the module doc)."""
    s = build_sections(report)
    out = _header(report, s.counts)

    def budget() -> int:
        return max(0, max_bytes - _RESERVE - _size(out))

    out += _failures(report, s, budget() // 3)
    sel = report.selection
    if sel is not None and selection_first(report):
        out += _blind_spots(sel, budget() // 3)
        out += _selection(report, sel, budget() // 3)
    out += _context(report)
    if sel is not None and not selection_first(report):
        out += _selection(report, sel, budget() // 3)

    out += _significant(report, s, budget() * 2 // 3)  # room for the rest

    if s.accepted:
        out += [f"#### Accepted regressions ({len(s.accepted)})", ""]
        out += _listing((f"- {_where(r)}: {fmt_change(r.ratio)} {fmt_ci(r.ci_low, r.ci_high)}"
                         f" — accepted: {md_escape(r.accepted.why, limit=300)}"
                         + (f" ({md_escape(r.accepted.source)})" if r.accepted.source else "")
                         for r in s.accepted if r.accepted is not None),
                        total=len(s.accepted), budget=budget())
        out.append("")

    out += ["#### Uncommon scenarios", ""]
    checked = _plural(len(s.uncommon_checked), "uncommon scenario")
    if not s.uncommon_checked:
        out.append("No uncommon scenarios in this comparison.")
    elif not s.uncommon_flagged:
        out.append(f"{checked} checked: all no change.")
    else:
        out.append(f"{checked} checked; {_plural(len(s.uncommon_flagged), 'result')} changed "
                   "or unsettled:")
        out += _listing((f"- {_where(r)}: {r.verdict}"
                         + (" (accepted)" if r.accepted is not None else "")
                         + f", {fmt_change(r.ratio)} {fmt_ci(r.ci_low, r.ci_high)}"
                         for r in s.uncommon_flagged), total=len(s.uncommon_flagged),
                        budget=budget())
    out.append("")

    if report.engines:
        out += ["#### scheduler_core and the real kube-scheduler", "", ENGINE_INTRO, ""]
        out += _table(ENGINE_HEADER, (_row(md_escape(c) for c in engine_cells(e))
                                      for e in report.engines),
                      total=len(report.engines), budget=budget() // 2, cap=_LIST_ROWS,
                      more="\n*… {n} more not shown (comment size limit); the HTML and JSON "
                           "reports list every row.*")
        out.append("")

    if s.attributions:
        out += ["#### Where the time went", ""]
        out += _listing((f"- **{md_escape(r.workload)}** ({md_escape(r.mode)}, {r.verdict} "
                         f"{fmt_change(r.ratio)}): "
                         + "; ".join(md_escape(a.text, limit=160) for a in attrs)
                         for r, attrs in s.attributions), total=len(s.attributions),
                        budget=budget(), cap=_ATTRIBUTION_ROWS)
        out.append("")

    if s.inconclusive:
        out += [f"#### Inconclusive ({len(s.inconclusive)})", ""]
        out += _listing((f"- {_where(r)}: {fmt_change(r.ratio)} {fmt_ci(r.ci_low, r.ci_high)}"
                         + (f", ~{r.more_rounds} more rounds" if r.more_rounds else "")
                         for r in s.inconclusive), total=len(s.inconclusive), budget=budget())
        out.append("")

    if s.unchanged:
        out += ["<details>",
                f"<summary>No change: {_plural(len(s.unchanged), 'result')}</summary>", ""]
        out += _table(["workload", "metric", "mode", "base → head", "change", "CI", "q"],
                      (_row(_result_cells(report, r, verdict=False, others=False))
                       for r in s.unchanged), total=len(s.unchanged), budget=budget(),
                      cap=len(s.unchanged),
                      more="\n*… {n} more not shown (comment size limit); the HTML and JSON "
                           "reports list every result.*")
        out += ["", "</details>", ""]
    out.append(f"<sub>schedperf report · generated {md_escape(report.generated)}</sub>")
    return "\n".join(out) + "\n"
