"""The comparison report model (``report.json``, ``"schema": 1``) as typed dataclasses.

``schedperf compare`` writes the JSON; :func:`load_report` reads and validates it. Every problem
raises :class:`ReportFileError` naming the file and the field (``results[3].ci_low``), so the
``report`` command can print one line and exit 2.

Reading rules
-------------
* Required fields must be present with the right type; ``null`` is allowed only where the
  schema allows it (commits, paths, p/q-values, ``more_rounds``, ``accepted``, ...).
* ``NaN`` (Python's ``json`` writes it for a missing p-value) is read as ``null`` in the
  nullable number fields and refused elsewhere; infinities are refused everywhere.
* An unknown top-level key is refused (``ReportFileError`` naming it). Inside an object
  (a side, ``settings``, a result, ...) unknown keys are kept in ``extra`` and written back
  by :func:`report_to_dict` (``settings.not_compared``, a result's ``note``, ...), so they
  survive a ``--format json`` round trip. A different ``schema`` number is refused.
* :func:`report_to_dict` gives a stable key order: schema fields in schema order, free-form maps
  (environments, ``min_effect``, breakdowns, histories, extras) sorted by key, lists as given.
* ``failures`` (optional, absent in older reports) lists what a side could not measure. A
  report with failures has verdict ``error``, and verdict ``error`` (of the report or of a
  result) needs at least one failure: a report never says "error" without saying why. A
  failure's mode is one of ``settings.modes``, or ``coverage`` (HEAD's workload failed while
  change-aware selection mapped it).
* ``selection`` (optional; the refs form of ``schedperf compare``): change-aware selection,
  :class:`ChangeSelection` -- the workloads it added with the changed lines that made each
  be added, the blind spots (changed lines no workload runs) with where to start on each,
  the import-time lines, and the coverage map used. Written back only when present.
* ``engines`` (optional): core and kube-scheduler pods/s side by side (reports.render.engines).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from reports.render._json_reader import (
    Invalid,
    Obj,
    fail,
    int_,
    join,
    kind_of,
    num,
    num_map,
    str_list,
)
from reports.render.change_selection import (
    COVERAGE_MODE,
    SELECTION_STATES,
    AddedWorkload,
    BlindSpot,
    ChangedFile,
    ChangeSelection,
    LineSpan,
    SelectionMap,
    Suggestion,
    read_selection,
    selection_dict,
)
from reports.render.engines import EngineRatio, engine_dicts, read_engines
from scheduler_core.inputfile import InputFileError, read_text

__all__ = [
    "COVERAGE_MODE",
    "KINDS",
    "SCHEMA_VERSION",
    "SELECTION_STATES",
    "SIDES",
    "VERDICTS",
    "Accepted",
    "AddedWorkload",
    "Attribution",
    "BlindSpot",
    "Breakdown",
    "ChangePoint",
    "ChangeSelection",
    "ChangedFile",
    "Failure",
    "History",
    "HistoryPoint",
    "Kind",
    "LineSpan",
    "Report",
    "ReportFileError",
    "Result",
    "Sample",
    "SelectionMap",
    "Settings",
    "Side",
    "Suggestion",
    "Verdict",
    "load_report",
    "parse_report",
    "report_to_dict",
    "report_to_json",
]

SCHEMA_VERSION = 1
Verdict = Literal["regression", "improvement", "no change", "inconclusive", "error"]
Kind = Literal["refs", "configs", "results"]
VERDICTS: tuple[Verdict, ...] = ("regression", "improvement", "no change", "inconclusive",
                                 "error")
KINDS: tuple[Kind, ...] = ("refs", "configs", "results")
SIDES = ("base", "head")

Scalar = str | int | float | bool | None
JsonObject = dict[str, Any]


class ReportFileError(ValueError):
    """A report file is unreadable or does not match the schema (bad input: exit 2)."""

    def __init__(self, source: str, field_path: str, problem: str) -> None:
        self.source = source
        self.field = field_path
        self.problem = problem
        where = f"{source}: {field_path}" if field_path else source
        message = f"{where}: {problem}"
        super().__init__(message.replace("\r", " ").replace("\n", " "))  # one line, always


# ---------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class Side:
    """One side of the comparison (BASE or HEAD)."""

    label: str
    commit: str | None = None
    core_path: str | None = None
    config: str | None = None
    environment: Mapping[str, Scalar] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    modes: tuple[str, ...]
    repeat: int
    min_effect: Mapping[str, float]  # mode -> smallest change that counts (0.03 = 3 %)
    q: float  # false discovery rate of the Benjamini-Hochberg adjustment
    seed: int | None = None
    label: str | None = None
    wall_seconds: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Sample:
    """The measurements of one side: ``n`` rounds, their median and (usually) the values."""

    n: int
    median: float | None
    values: tuple[float, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Accepted:
    why: str
    source: str | None = None  # "file:line" of the acceptance entry
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Attribution:
    """A plugin's share of a change (seconds of CPU per pod, BASE and HEAD)."""

    plugin: str
    extension_point: str
    base_per_pod: float | None
    head_per_pod: float | None
    change: float | None  # (head - base) / base; 0.35 = +35 %
    text: str
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    """BASE vs HEAD for one (workload, mode, metric)."""

    workload: str
    mode: str
    metric: str
    higher_is_better: bool
    base: Sample
    head: Sample
    ratio: float | None  # HEAD / BASE of the metric
    ci_low: float | None
    ci_high: float | None
    verdict: Verdict
    unit: str = ""
    uncommon: bool = False
    p_value: float | None = None
    q_value: float | None = None
    more_rounds: int | None = None
    accepted: Accepted | None = None
    attribution: tuple[Attribution, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.workload, self.mode, self.metric)

    @property
    def change(self) -> float | None:
        """``ratio - 1`` (-0.048 = HEAD 4.8 % lower), None without a ratio."""
        return None if self.ratio is None else self.ratio - 1.0

    @property
    def open_regression(self) -> bool:
        """A regression nobody accepted: the ones that fail a gate."""
        return self.verdict == "regression" and self.accepted is None


@dataclass(frozen=True)
class Failure:
    """What one side could not measure: its workloads in a mode failed the same way.

    ``status`` is the workloads' status (``failed``, ``timeout``, ``unsupported``) or ``error``
    (the worker crashed, could not import its code or wrote nothing), ``no data`` (it ran but
    recorded no value of a metric the other side has); ``rounds`` the time-mode rounds it
    happened in (empty when not per round); ``error`` the end of the error text or log."""

    side: str  # "base" | "head"
    mode: str
    workloads: tuple[str, ...]
    error: str
    status: str = "error"
    rounds: tuple[int, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def side_word(self) -> str:
        return self.side.upper()


@dataclass(frozen=True)
class Breakdown:
    """Seconds per pod by ``"<plugin>/<extension point>"``, BASE and HEAD."""

    base: Mapping[str, float]
    head: Mapping[str, float]
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HistoryPoint:
    value: float
    commit: str | None = None
    timestamp: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChangePoint:
    index: int  # the first point of the new level
    commit: str | None
    before: float | None
    after: float | None
    change: float | None  # after / before - 1
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class History:
    metric: str
    unit: str
    points: tuple[HistoryPoint, ...]
    change_points: tuple[ChangePoint, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Report:
    generated: str
    kind: Kind
    base: Side
    head: Side
    environment_differs: bool
    environment_notes: tuple[str, ...]
    settings: Settings
    verdict: Verdict
    results: tuple[Result, ...]
    plugin_breakdown: Mapping[str, Breakdown] = field(default_factory=dict)
    history: Mapping[str, History] = field(default_factory=dict)
    failures: tuple[Failure, ...] = ()
    selection: ChangeSelection | None = None
    engines: tuple[EngineRatio, ...] = ()  # reports.render.engines
    schema: int = SCHEMA_VERSION
    extra: Mapping[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------- reading


def _side(o: Obj) -> Side:
    env = o.optional_child("environment")
    environment: dict[str, Scalar] = {}
    for key, value in (env.data.items() if env is not None else ()):
        if value is not None and not isinstance(value, str | int | float | bool):
            fail(join(o.at("environment"), key), f"expected a plain value, got {kind_of(value)}")
        environment[key] = value
    return Side(label=o.text("label"), commit=o.text("commit", nullable=True, required=False),
                core_path=o.text("core_path", nullable=True, required=False),
                config=o.text("config", nullable=True, required=False),
                environment=environment, extra=o.extra())


def _settings(o: Obj) -> Settings:
    modes = str_list(o.items("modes"), o.at("modes"))
    if not modes:
        fail(o.at("modes"), "empty: at least one mode")
    min_effect = num_map(o.child("min_effect"), positive=True)
    q = o.number("q", positive=True)
    if q >= 1:
        fail(o.at("q"), f"{q:g} is not a rate in (0, 1)")
    return Settings(modes=modes, repeat=o.whole("repeat", minimum=1), min_effect=min_effect,
                    q=q, seed=o.whole("seed", required=False),
                    label=o.text("label", nullable=True, required=False),
                    wall_seconds=o.number("wall_seconds", required=False), extra=o.extra())


def _sample(o: Obj) -> Sample:
    n = o.whole("n", minimum=0)
    values = tuple(num(v, join(o.at("values"), i))
                   for i, v in enumerate(o.items("values", required=False)))
    if values and len(values) != n:
        fail(o.at("values"), f"{len(values)} values but n is {n}")
    return Sample(n=n, median=o.number("median", nullable=True), values=values,
                  extra=o.extra())


def _attribution(o: Obj) -> Attribution:
    return Attribution(plugin=o.text("plugin"), extension_point=o.text("extension_point"),
                       base_per_pod=o.number("base_per_pod", nullable=True),
                       head_per_pod=o.number("head_per_pod", nullable=True),
                       change=o.number("change", nullable=True), text=o.text("text"),
                       extra=o.extra())


def _result(o: Obj, modes: tuple[str, ...]) -> Result:
    workload, mode = o.text("workload"), o.text("mode")
    if mode not in modes:
        fail(o.at("mode"), f"{mode!r} is not in settings.modes ({', '.join(modes)})")
    ratio = o.number("ratio", nullable=True, positive=True)
    ci_low = o.number("ci_low", nullable=True, positive=True)
    ci_high = o.number("ci_high", nullable=True, positive=True)
    if ci_low is not None and ci_high is not None and ci_low > ci_high:
        fail(o.at("ci_low"), f"{ci_low:g} is above ci_high {ci_high:g}")
    acc = o.optional_child("accepted")
    accepted = None if acc is None else Accepted(
        why=acc.text("why"), source=acc.text("source", nullable=True, required=False),
        extra=acc.extra())
    attribution = tuple(_attribution(Obj(a, join(o.at("attribution"), i)))
                        for i, a in enumerate(o.items("attribution", required=False)))
    return Result(
        workload=workload, uncommon=o.flag("uncommon", required=False), mode=mode,
        metric=o.text("metric"), unit=o.text("unit", required=False, default=""),
        higher_is_better=o.flag("higher_is_better"),
        base=_sample(o.child("base")), head=_sample(o.child("head")),
        ratio=ratio, ci_low=ci_low, ci_high=ci_high,
        p_value=o.number("p_value", required=False), q_value=o.number("q_value", required=False),
        verdict=o.choice("verdict", VERDICTS),
        more_rounds=o.whole("more_rounds", required=False, minimum=0),
        accepted=accepted, attribution=attribution, extra=o.extra())


def _failure(o: Obj, modes: tuple[str, ...]) -> Failure:
    side = o.choice("side", SIDES)
    mode = o.text("mode")
    if mode not in modes and mode != COVERAGE_MODE:
        fail(o.at("mode"), f"{mode!r} is not in settings.modes ({', '.join(modes)}) nor "
                           f"{COVERAGE_MODE!r}")
    workloads = str_list(o.items("workloads"), o.at("workloads"))
    if not workloads:
        fail(o.at("workloads"), "empty: a failure names at least one workload")
    rounds = tuple(int_(v, join(o.at("rounds"), i), minimum=1)
                   for i, v in enumerate(o.items("rounds", required=False)))
    return Failure(side=side, mode=mode, workloads=workloads, error=o.text("error"),
                   status=o.text("status", required=False, default="error"), rounds=rounds,
                   extra=o.extra())


def _breakdowns(o: Obj | None) -> dict[str, Breakdown]:
    out: dict[str, Breakdown] = {}
    for workload in (o.data if o is not None else ()):
        assert o is not None
        b = o.child(workload)
        out[workload] = Breakdown(base=num_map(b.child("base")), head=num_map(b.child("head")),
                                  extra=b.extra())
    return out


def _history(o: Obj) -> History:
    points = []
    for i, raw in enumerate(o.items("points")):
        p = Obj(raw, join(o.at("points"), i))
        points.append(HistoryPoint(value=p.number("value"),
                                   commit=p.text("commit", nullable=True, required=False),
                                   timestamp=p.text("timestamp", nullable=True, required=False),
                                   extra=p.extra()))
    change_points = []
    for i, raw in enumerate(o.items("change_points", required=False)):
        c = Obj(raw, join(o.at("change_points"), i))
        index = c.whole("index", minimum=0)
        if index >= len(points):
            fail(c.at("index"), f"{index} is past the last point (there are {len(points)})")
        change_points.append(ChangePoint(
            index=index, commit=c.text("commit", nullable=True, required=False),
            before=c.number("before", nullable=True), after=c.number("after", nullable=True),
            change=c.number("change", nullable=True), extra=c.extra()))
    return History(metric=o.text("metric"), unit=o.text("unit", required=False, default=""),
                   points=tuple(points), change_points=tuple(change_points), extra=o.extra())


def _report(top: Obj) -> Report:
    schema = top.raw("schema")
    if schema != SCHEMA_VERSION:
        fail("schema", f"{schema!r} is not supported: this schedperf reads schema "
                        f"{SCHEMA_VERSION} (render it with the schedperf that wrote it)")
    generated = top.text("generated")
    try:
        dt.datetime.fromisoformat(generated.replace("Z", "+00:00"))
    except ValueError:
        fail("generated", f"{generated!r} is not an ISO 8601 time")
    kind = top.choice("kind", KINDS)
    base, head = _side(top.child("base")), _side(top.child("head"))
    environment_differs = top.flag("environment_differs")
    notes = str_list(top.items("environment_notes", required=False), "environment_notes")
    settings = _settings(top.child("settings"))
    verdict = top.choice("verdict", VERDICTS)
    results: list[Result] = []
    first_of: dict[tuple[str, str, str], int] = {}
    for i, raw in enumerate(top.items("results")):
        result = _result(Obj(raw, join("results", i)), settings.modes)
        if result.key in first_of:
            fail(join("results", i), f"duplicate of results[{first_of[result.key]}] "
                                       "(same workload, mode and metric)")
        first_of[result.key] = i
        results.append(result)
    failures = tuple(_failure(Obj(raw, join("failures", i)), settings.modes)
                     for i, raw in enumerate(top.items("failures", required=False)))
    if failures and verdict != "error":
        fail("verdict", f"{verdict!r}, but failures lists {len(failures)}: a report with "
                        "failures has verdict 'error'")
    if not failures:
        if verdict == "error":
            fail("verdict", "'error', but no failure is listed (failures says which side "
                            "failed and why)")
        for i, result in enumerate(results):
            if result.verdict == "error":
                fail(join(join("results", i), "verdict"),
                     "'error', but the report lists no failures")
    selection_obj = top.optional_child("selection")
    selection = None if selection_obj is None else read_selection(selection_obj,
                                                                   settings.modes)
    breakdown = _breakdowns(top.optional_child("plugin_breakdown"))
    history_obj = top.optional_child("history")
    history: dict[str, History] = {}
    for workload in (history_obj.data if history_obj is not None else ()):
        assert history_obj is not None
        history[workload] = _history(history_obj.child(workload))
    return Report(
        schema=SCHEMA_VERSION, generated=generated, kind=kind, base=base, head=head,
        environment_differs=environment_differs, environment_notes=notes, settings=settings,
        verdict=verdict, results=tuple(results), plugin_breakdown=breakdown, history=history,
        failures=failures, selection=selection,
        engines=read_engines(top.items("engines", required=False)), extra=top.closed())


def parse_report(data: object, *, source: str = "<report>") -> Report:
    """Validate a decoded ``report.json`` and build the :class:`Report`.

    Parameters
    ----------
    data : object
        The decoded JSON document.
    source : str
        Names the input in error messages (usually the file path).

    Raises
    ------
    ReportFileError
        Naming ``source`` and the first offending field.
    """
    try:
        return _report(Obj(data, ""))
    except Invalid as exc:
        raise ReportFileError(source, exc.field, exc.problem) from None


def load_report(path: Path | str) -> Report:
    """Read and validate ``report.json`` at ``path`` (see :func:`parse_report`)."""
    path = Path(path)
    try:
        text = read_text(path, what="a compare report.json")
    except InputFileError as exc:
        line = f"line {exc.line}: " if exc.line else ""
        raise ReportFileError(str(path), "", line + exc.problem) from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise ReportFileError(str(path), "", "not valid JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ReportFileError(str(path), "", f"not valid JSON: line {exc.lineno} column "
                                             f"{exc.colno}: {exc.msg}") from None
    return parse_report(data, source=str(path))


# ---------------------------------------------------------------------------- writing


def _sorted(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: mapping[k] for k in sorted(mapping)}


def _with_extra(known: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    known.update(_sorted(extra))
    return known


def _side_dict(s: Side) -> JsonObject:
    return _with_extra({"label": s.label, "commit": s.commit, "core_path": s.core_path,
                        "config": s.config, "environment": _sorted(s.environment)}, s.extra)


def _sample_dict(s: Sample) -> JsonObject:
    return _with_extra({"n": s.n, "median": s.median, "values": list(s.values)}, s.extra)


def _result_dict(r: Result) -> JsonObject:
    accepted = None
    if r.accepted is not None:
        accepted = _with_extra({"why": r.accepted.why, "source": r.accepted.source},
                               r.accepted.extra)
    attribution = [_with_extra({
        "plugin": a.plugin, "extension_point": a.extension_point,
        "base_per_pod": a.base_per_pod, "head_per_pod": a.head_per_pod, "change": a.change,
        "text": a.text}, a.extra) for a in r.attribution]
    return _with_extra({
        "workload": r.workload, "uncommon": r.uncommon, "mode": r.mode, "metric": r.metric,
        "unit": r.unit, "higher_is_better": r.higher_is_better,
        "base": _sample_dict(r.base), "head": _sample_dict(r.head),
        "ratio": r.ratio, "ci_low": r.ci_low, "ci_high": r.ci_high,
        "p_value": r.p_value, "q_value": r.q_value, "verdict": r.verdict,
        "more_rounds": r.more_rounds, "accepted": accepted, "attribution": attribution,
    }, r.extra)


def _failure_dict(f: Failure) -> JsonObject:
    return _with_extra({"side": f.side, "mode": f.mode, "status": f.status,
                        "workloads": list(f.workloads), "rounds": list(f.rounds),
                        "error": f.error}, f.extra)


def _history_dict(h: History) -> JsonObject:
    points = [_with_extra({"commit": p.commit, "timestamp": p.timestamp, "value": p.value},
                          p.extra) for p in h.points]
    change_points = [_with_extra({"index": c.index, "commit": c.commit, "before": c.before,
                                  "after": c.after, "change": c.change}, c.extra)
                     for c in h.change_points]
    return _with_extra({"metric": h.metric, "unit": h.unit, "points": points,
                        "change_points": change_points}, h.extra)


def report_to_dict(report: Report) -> JsonObject:
    """The report as a JSON-able dict in the stable key order described in the module doc."""
    s = report.settings
    settings = _with_extra({
        "modes": list(s.modes), "repeat": s.repeat, "min_effect": _sorted(s.min_effect),
        "q": s.q, "seed": s.seed, "label": s.label, "wall_seconds": s.wall_seconds,
    }, s.extra)
    breakdown = {w: _with_extra({"base": _sorted(b.base), "head": _sorted(b.head)}, b.extra)
                 for w, b in sorted(report.plugin_breakdown.items())}
    selection = {} if report.selection is None else {
        "selection": selection_dict(report.selection)}  # only when there is one
    engines = {"engines": engine_dicts(report.engines)} if report.engines else {}
    return _with_extra({
        "schema": report.schema, "generated": report.generated, "kind": report.kind,
        "base": _side_dict(report.base), "head": _side_dict(report.head),
        "environment_differs": report.environment_differs,
        "environment_notes": list(report.environment_notes),
        "settings": settings, "verdict": report.verdict,
        "failures": [_failure_dict(f) for f in report.failures],
        **selection, **engines,
        "results": [_result_dict(r) for r in report.results],
        "plugin_breakdown": breakdown,
        "history": {w: _history_dict(h) for w, h in sorted(report.history.items())},
    }, report.extra)


def report_to_json(report: Report) -> str:
    """``report.json`` text: :func:`report_to_dict`, indented, UTF-8 kept, newline-terminated."""
    return json.dumps(report_to_dict(report), indent=2, ensure_ascii=False,
                      allow_nan=False) + "\n"
