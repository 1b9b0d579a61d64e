"""What goes where in a rendered report, and how numbers read: shared by Markdown and HTML.

A report is split into sections (:func:`build_sections`):

* ``failures``      what a side could not measure (the report's ``failures``): rendered first,
                    before anything else, with the side, the workloads and the end of the error
* ``errors``        results of failed workloads (verdict ``error``): not judged
* ``significant``   open regressions (worst first), then improvements (best first)
* ``accepted``      regressions that ``.schedperf/accepted.yaml`` accepts (listed with the why)
* ``inconclusive``  CI straddles the min-effect boundary (with the rounds estimate)
* ``unchanged``     everything else ("no change")
* ``uncommon_*``    the uncommon scenarios: names checked, and those whose verdict is not
                    "no change"
* ``attributions``  the leading plugin attributions of the significant and accepted results,
                    in the order ``schedperf compare`` ranked them

The change-aware selection (``report.selection``) is no list of results: its blind spots open
the report when there are any (after a side's failures), with the workloads it added and the
lines that made each be added; without blind spots that part follows the settings line
(:func:`selection_first`, :func:`added_results`, :func:`scope_phrase`).

Every result belongs to exactly one of ``errors`` and the four after it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from reports.render.model import (
    COVERAGE_MODE,
    Attribution,
    BlindSpot,
    ChangeSelection,
    Failure,
    Report,
    Result,
    SelectionMap,
)

__all__ = [
    "STATUS_WORDS",
    "Counts",
    "Sections",
    "added_results",
    "blind_spot_phrase",
    "build_sections",
    "failure_phrase",
    "failure_title",
    "fmt_change",
    "fmt_ci",
    "fmt_duration",
    "fmt_p",
    "fmt_per_pod",
    "fmt_rounds",
    "fmt_value",
    "generated_phrase",
    "kind_phrase",
    "map_phrase",
    "other_modes",
    "scope_phrase",
    "selection_first",
    "selection_summary",
    "skipped_phrase",
]

STATUS_WORDS = {"regression": "REGRESSION", "improvement": "IMPROVEMENT",
                "no change": "NO CHANGE", "inconclusive": "INCONCLUSIVE", "error": "ERROR"}
_SEVERITY = {"error": 4, "regression": 3, "improvement": 2, "inconclusive": 1, "no change": 0}
_KIND_PHRASES = {"refs": "git refs", "configs": "scheduler configurations",
                 "results": "recorded results"}


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


@dataclass(frozen=True)
class Counts:
    regressions: int  # open ones; accepted regressions are counted apart
    accepted: int
    improvements: int
    inconclusive: int
    no_change: int
    errors: int = 0  # results of failed workloads

    @property
    def total(self) -> int:
        return (self.regressions + self.accepted + self.improvements + self.inconclusive
                + self.no_change + self.errors)

    def phrase(self) -> str:
        """``2 regressions, 1 improvement, 0 inconclusive, 14 no change; 1 accepted``
        (``1 error, `` first when results of failed workloads were not judged)."""
        parts = [_plural(self.errors, "error")] if self.errors else []
        text = ", ".join([*parts, _plural(self.regressions, "regression"),
                          _plural(self.improvements, "improvement"),
                          f"{self.inconclusive} inconclusive", f"{self.no_change} no change"])
        if self.accepted:
            text += f"; {_plural(self.accepted, 'accepted regression')}"
        return text


@dataclass(frozen=True)
class Sections:
    failures: tuple[Failure, ...]
    errors: tuple[Result, ...]
    significant: tuple[Result, ...]
    accepted: tuple[Result, ...]
    inconclusive: tuple[Result, ...]
    unchanged: tuple[Result, ...]
    uncommon_checked: tuple[str, ...]
    uncommon_flagged: tuple[Result, ...]
    attributions: tuple[tuple[Result, tuple[Attribution, ...]], ...]
    counts: Counts


def _log_effect(r: Result) -> float:
    return abs(math.log(r.ratio)) if r.ratio is not None else 0.0


def build_sections(report: Report, *, top_attributions: int = 3) -> Sections:
    """Split ``report.results`` into the sections listed in the module docstring."""
    results = report.results
    regressions = sorted((r for r in results if r.open_regression), key=_log_effect,
                         reverse=True)
    improvements = sorted((r for r in results if r.verdict == "improvement"), key=_log_effect,
                          reverse=True)
    accepted = tuple(sorted((r for r in results
                             if r.verdict == "regression" and r.accepted is not None),
                            key=_log_effect, reverse=True))
    inconclusive = tuple(r for r in results if r.verdict == "inconclusive")
    unchanged = tuple(r for r in results if r.verdict == "no change")
    significant = (*regressions, *improvements)
    attributions = []
    for r in (*significant, *accepted):
        if r.attribution:
            attributions.append((r, r.attribution[:top_attributions]))
    uncommon = [r for r in results if r.uncommon]
    errors = tuple(r for r in results if r.verdict == "error")
    return Sections(
        failures=tuple(report.failures),
        errors=errors,
        significant=significant, accepted=accepted, inconclusive=inconclusive,
        unchanged=unchanged,
        uncommon_checked=tuple(sorted({r.workload for r in uncommon})),
        uncommon_flagged=tuple(sorted((r for r in uncommon if r.verdict != "no change"),
                                      key=lambda r: (-_SEVERITY[r.verdict], r.key))),
        attributions=tuple(attributions),
        counts=Counts(regressions=len(regressions), accepted=len(accepted),
                      improvements=len(improvements), inconclusive=len(inconclusive),
                      no_change=len(unchanged), errors=len(errors)))


def other_modes(report: Report, result: Result) -> list[Result]:
    """The same workload's results in the other modes, one per mode: the most telling metric
    (highest verdict severity, then the largest effect)."""
    return _most_telling_per_mode(report, result.workload, skip_mode=result.mode)


def failure_phrase(report: Report) -> str:
    """``HEAD failed on 2 workloads`` (``BASE failed on 1 workload, HEAD ...``); empty when
    nothing failed."""
    parts = []
    for side in ("base", "head"):
        names = {w for f in report.failures if f.side == side for w in f.workloads}
        if names:
            parts.append(f"{side.upper()} failed on {_plural(len(names), 'workload')}")
    return ", ".join(parts)


def fmt_rounds(rounds: tuple[int, ...]) -> str:
    """``round 3``, ``rounds 1-10``, ``rounds 1, 4, 7``; empty without rounds."""
    if not rounds:
        return ""
    if len(rounds) == 1:
        return f"round {rounds[0]}"
    if list(rounds) == list(range(rounds[0], rounds[-1] + 1)):
        return f"rounds {rounds[0]}-{rounds[-1]}"
    return "rounds " + ", ".join(map(str, rounds))


def failure_title(f: Failure) -> str:
    """``HEAD failed: 2 workloads, time mode, rounds 1-10 (error)`` (``..., under coverage
    (failed)`` for change-aware selection's map)."""
    mode = "under coverage" if f.mode == COVERAGE_MODE else f"{f.mode} mode"
    where = ", ".join(x for x in (_plural(len(f.workloads), "workload"), mode,
                                  fmt_rounds(f.rounds)) if x)
    return f"{f.side_word} failed: {where} ({f.status})"


def kind_phrase(kind: str) -> str:
    return _KIND_PHRASES.get(kind, kind)


# ---------------------------------------------------------------------------- selection


def selection_first(report: Report) -> bool:
    """Whether the change-aware selection opens the report: it found blind spots."""
    return report.selection is not None and bool(report.selection.blind_spots)


def blind_spot_phrase(sel: ChangeSelection) -> str:
    """``2 blind spots (5 changed lines no workload runs)``, ``; they fail the gate`` added
    with --fail-on-blind-spot; empty without blind spots."""
    if not sel.blind_spots:
        return ""
    lines = sum(len(b.lines) or 1 for b in sel.blind_spots)
    text = (f"{_plural(len(sel.blind_spots), 'blind spot')} "
            f"({_plural(lines, 'changed line')} no workload runs)")
    return text + (", failing the gate" if sel.fail_on_blind_spot else "")


def scope_phrase(scope: str) -> str:
    """Where a blind spot's suggestions come from, for a sentence."""
    if scope.startswith("function "):
        return f"nearest lines run in {scope}"
    if scope == "file":
        return "nearest lines run in the same file"
    return "no workload runs any line of this file"


def added_results(report: Report, workload: str) -> list[Result]:
    """The results of ``workload``, one per mode (the most telling metric), in mode order."""
    return _most_telling_per_mode(report, workload)


def _most_telling_per_mode(report: Report, workload: str, *,
                           skip_mode: str | None = None) -> list[Result]:
    """Per mode (in mode order, ``skip_mode`` left out), the result of ``workload`` with the
    highest verdict severity, then the largest effect."""
    best: dict[str, Result] = {}
    for r in report.results:
        if r.workload != workload or r.mode == skip_mode:
            continue
        current = best.get(r.mode)
        if current is None or ((_SEVERITY[r.verdict], _log_effect(r))
                               > (_SEVERITY[current.verdict], _log_effect(current))):
            best[r.mode] = r
    return [best[m] for m in report.settings.modes if m in best]


def map_phrase(m: SelectionMap) -> str:
    """``coverage map of HEAD 1a2b3c4d5e6f computed in 95 s by 2 processes (72 workloads,
    1 file)`` or ``... reused from .schedperf/store (...)``."""
    how = (f"computed in {fmt_duration(m.seconds)}"
           + (f" by {_plural(m.processes, 'process', 'processes')}" if m.processes else "")
           if m.source == "computed" else f"reused from {m.store or 'the store'}")
    scope = "all files" if m.files is None else _plural(len(m.files), "file")
    return (f"coverage map of HEAD {m.commit[:12]} {how} "
            f"({_plural(m.workloads, 'workload')}, {scope})")


# ---------------------------------------------------------------------------- numbers


def fmt_change(ratio: float | None) -> str:
    """HEAD/BASE as a signed percent change: 0.952 -> ``-4.8 %``; None -> ``n/a``."""
    if ratio is None:
        return "n/a"
    change = (ratio - 1.0) * 100.0
    digits = 2 if abs(change) < 1 else 1
    text = f"{change:+.{digits}f} %"
    return "0.0 %" if text in ("+0.00 %", "-0.00 %") else text


def fmt_ci(low: float | None, high: float | None) -> str:
    """The confidence interval of the ratio as percent changes: ``[-6.9 %, -3.0 %]``."""
    if low is None or high is None:
        return "n/a"
    return f"[{fmt_change(low)}, {fmt_change(high)}]"


def fmt_p(p: float | None) -> str:
    if p is None:
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_value(value: float | None, unit: str = "") -> str:
    """4 significant digits and the unit: ``812 pods/s``, ``0.0001234 s``."""
    if value is None:
        return "n/a"
    text = f"{value:,.0f}" if abs(value) >= 10_000 else f"{value:.4g}"
    return f"{text} {unit}".rstrip()


def fmt_per_pod(seconds: float | None) -> str:
    """Seconds per pod in a readable unit: ``120 µs``."""
    if seconds is None:
        return "n/a"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def selection_summary(sel: ChangeSelection) -> str:
    """``HEAD changes 12 statement lines in 2 files of scheduler_core: 8 run by the compared
    workloads; 3 by the 1 workload below, added to the instructions and time sets; 1 only
    at import time.`` (plain text)."""
    modes = [m for m in ("instructions", "time") if any(m in a.modes for a in sel.added)]
    modes += sorted({m for a in sel.added for m in a.modes} - set(modes))
    parts = [f"{sel.measured_lines} run by the compared workloads"]
    if sel.added:
        added = sum(a.line_count for a in sel.added)
        parts.append(f"{added} by the {_plural(len(sel.added), 'workload')} below, added to "
                     f"the {' and '.join(modes)} set{'s' * (len(modes) != 1)}")
    if sel.import_time_lines:
        parts.append(f"{sel.import_time_lines} only at import time")
    if sel.blind_spots:
        parts.append(f"{sum(len(b.lines) for b in sel.blind_spots)} by none (blind spots)")
    return (f"HEAD changes {_plural(sel.changed_lines, 'statement line')} in "
            f"{_plural(len(sel.files), 'file')} of {', '.join(sel.packages)}: "
            + "; ".join(parts) + ".")


def skipped_phrase(sel: ChangeSelection, limit: int = 5) -> str:
    """``Changed files with no statement line to map: a.yaml (not a Python file)``; empty
    when none."""
    if not sel.skipped:
        return ""
    items = [f"{f} ({why})" for f, why in list(sel.skipped.items())[:limit]]
    more = f"; {len(sel.skipped) - limit} more" if len(sel.skipped) > limit else ""
    return "Changed files with no statement line to map: " + "; ".join(items) + more + "."


def generated_phrase(b: BlindSpot) -> str:
    """What a map's generated scenarios say of a blind spot: ``a generated scenario runs all
    of it: schedperf generate ...``, or the tags the nearest ones share; empty without."""
    if b.command:
        return (f"a generated scenario runs {'all' if b.covers_all else 'some'} of it: "
                f"{b.command}")
    if b.tags:
        return f"the nearest generated scenarios share the tags {', '.join(b.tags)}"
    return ""
