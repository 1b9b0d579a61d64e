"""The ``selection`` object of ``report.json``: what change-aware selection did in ``schedperf
compare BASE HEAD`` (bench.compare.changes) -- typed, read with the field path in every
error, and written back in a stable key order (see :mod:`reports.render.model`).

    {"state": "applied", "base": "<sha>", "head": "<sha>", "packages": ["scheduler_core"],
     "label": "integration-test", "fail_on_blind_spot": false, "error": null,
     "seconds": 95.2,
     "map": {"commit": "<sha>", "source": "computed", "scope": "files-...", "workloads": 72,
             "seconds": 94.0, "processes": 2, "store": ".schedperf/store",
             "files": ["scheduler_core/queue/scheduling_queue.py"]},
     "changed_lines": 12, "measured_lines": 8, "import_time_lines": 1,
     "files": [{"file": "...", "lines": 12}], "deleted": [],
     "skipped": {}, "measured_cover": [{"file": "...", "first": 10, "last": 14}],
     "added": [{"workload": "...", "cost": 1.2, "lines": [{"file": ..., "first": ...,
                "last": ...}], "line_count": 3, "modes": ["instructions", "time"]}],
     "blind_spots": [{"file": "...", "first": 120, "last": 134, "lines": [120, 131, 134],
                      "scope": "function requeue", "suggestions": [{"workload": "...",
                      "line": 118, "distance": 2}],
                      // with a map holding generated scenarios (schedperf coverage
                      // --generated) also: "command", "covers_all", "generated_scope",
                      // "tags", "generated": [{"workload", "command", "line", "distance",
                      // "covered"}]
                      }],
     "import_time": [...]}

Rules: ``state`` is one of :data:`SELECTION_STATES`; ``error`` needs a text; ``first`` <=
``last``, both >= 1; an added workload's modes are among ``settings.modes``. Unknown keys are
kept (``extra``) as everywhere in the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reports.render._json_reader import Obj, fail, int_, join, str_list

__all__ = ["COVERAGE_MODE", "SELECTION_STATES", "AddedWorkload", "BlindSpot", "ChangeSelection",
           "ChangedFile", "GeneratedHint", "LineSpan", "SelectionMap", "Suggestion",
           "read_selection", "selection_dict"]

COVERAGE_MODE = "coverage"  # a failure of HEAD under coverage (change-aware selection)
SELECTION_STATES = ("off", "no changes", "applied", "error")


@dataclass(frozen=True)
class LineSpan:
    """Statement lines ``first``..``last`` of ``file`` (a file of HEAD, as git names it)."""

    file: str
    first: int
    last: int
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.file}:{self.first}" + (f"-{self.last}" if self.last != self.first else "")


@dataclass(frozen=True)
class AddedWorkload:
    """A workload change-aware selection added to the modes ``modes``, for the changed lines
    ``lines`` (``line_count`` statement lines) that no compared workload runs; ``cost``: CPU
    seconds of its run under coverage (what made it the cheapest)."""

    workload: str
    lines: tuple[LineSpan, ...]
    line_count: int
    modes: tuple[str, ...]
    cost: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Suggestion:
    """A workload executing ``line``, ``distance`` lines from a blind spot."""

    workload: str
    line: int
    distance: int
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GeneratedHint:
    """A generated scenario of the map for a blind spot (``schedperf coverage --generated``):
    one executing ``covered`` lines of it, or the one executing ``line``, ``distance`` lines
    away; ``command`` writes it again."""

    workload: str
    command: str
    line: int
    distance: int
    covered: tuple[int, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BlindSpot:
    """Changed statement lines (``where``; ``lines`` the statements in it) no workload of the
    catalog runs; ``scope`` where the suggestions come from (``function <name>``, ``file``,
    ``none``)."""

    where: LineSpan
    lines: tuple[int, ...]
    scope: str
    suggestions: tuple[Suggestion, ...] = ()
    # from a map with generated scenarios (all absent otherwise): the `schedperf generate`
    # command of the scenario executing the most lines of the spot (all: covers_all), the
    # scenarios listed, and the feature tags they share and the others lack
    command: str | None = None
    covers_all: bool = False
    generated_scope: str | None = None
    tags: tuple[str, ...] = ()
    generated: tuple[GeneratedHint, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChangedFile:
    file: str
    lines: int  # changed statement lines
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SelectionMap:
    """The coverage map of HEAD the selection used: ``source`` ``stored`` (reused) or
    ``computed`` (in ``seconds`` by ``processes`` coverage processes); ``files`` the files it
    is restricted to (None: all)."""

    commit: str
    source: str
    scope: str
    workloads: int
    seconds: float | None = None
    processes: int | None = None
    store: str | None = None
    files: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChangeSelection:
    """Change-aware selection (``schedperf compare BASE HEAD``): ``state`` ``off``, ``no
    changes`` (no changed statement of ``packages``), ``applied`` or ``error`` (``error``
    says why; HEAD's failure under coverage is in the report's failures)."""

    state: str
    packages: tuple[str, ...] = ()
    base: str | None = None
    head: str | None = None
    label: str | None = None  # the workloads mapped and that could be added
    fail_on_blind_spot: bool = False
    error: str | None = None
    seconds: float | None = None
    map: SelectionMap | None = None
    changed_lines: int = 0
    measured_lines: int = 0  # changed lines the compared workloads run
    import_time_lines: int = 0  # changed lines only imports run
    files: tuple[ChangedFile, ...] = ()
    deleted: tuple[str, ...] = ()
    skipped: Mapping[str, str] = field(default_factory=dict)
    measured_cover: tuple[LineSpan, ...] = ()
    added: tuple[AddedWorkload, ...] = ()
    blind_spots: tuple[BlindSpot, ...] = ()
    import_time: tuple[LineSpan, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def gate_fails(self) -> bool:
        """Blind spots with --fail-on-blind-spot: compare exited 1 for them."""
        return self.fail_on_blind_spot and bool(self.blind_spots)


# ---------------------------------------------------------------------------- reading


def _objects(o: Obj, key: str) -> list[Obj]:
    return [Obj(raw, join(o.at(key), i)) for i, raw in enumerate(o.items(key, required=False))]


def _span(o: Obj, *, flat_extra: bool = True) -> LineSpan:
    first, last = o.whole("first", minimum=1), o.whole("last", minimum=1)
    if first > last:
        fail(o.at("first"), f"{first} is after last ({last})")
    return LineSpan(file=o.text("file"), first=first, last=last,
                    extra=o.extra() if flat_extra else {})


def _added(o: Obj, modes: tuple[str, ...]) -> AddedWorkload:
    added_modes = str_list(o.items("modes"), o.at("modes"))
    for i, mode in enumerate(added_modes):
        if mode not in modes:
            fail(join(o.at("modes"), i), f"{mode!r} is not in settings.modes "
                                         f"({', '.join(modes)})")
    return AddedWorkload(workload=o.text("workload"),
                         lines=tuple(_span(x) for x in _objects(o, "lines")),
                         line_count=o.whole("line_count", minimum=0), modes=added_modes,
                         cost=o.number("cost", required=False), extra=o.extra())


def _blind_spot(o: Obj) -> BlindSpot:
    where = _span(o, flat_extra=False)
    lines = tuple(int_(v, join(o.at("lines"), i), minimum=1)
                  for i, v in enumerate(o.items("lines", required=False)))
    suggestions = tuple(Suggestion(workload=s.text("workload"), line=s.whole("line", minimum=1),
                                   distance=s.whole("distance", minimum=0), extra=s.extra())
                        for s in _objects(o, "suggestions"))
    generated = tuple(GeneratedHint(
        workload=g.text("workload"), command=g.text("command"), line=g.whole("line", minimum=1),
        distance=g.whole("distance", minimum=0),
        covered=tuple(int_(v, join(g.at("covered"), i), minimum=1)
                      for i, v in enumerate(g.items("covered", required=False))),
        extra=g.extra()) for g in _objects(o, "generated"))
    return BlindSpot(where=where, lines=lines, scope=o.text("scope"), suggestions=suggestions,
                     command=o.text("command", nullable=True, required=False),
                     covers_all=o.flag("covers_all", required=False),
                     generated_scope=o.text("generated_scope", nullable=True, required=False),
                     tags=str_list(o.items("tags", required=False), o.at("tags")),
                     generated=generated, extra=o.extra())


def _map(o: Obj | None) -> SelectionMap | None:
    if o is None:
        return None
    files = o.raw("files", required=False)
    return SelectionMap(
        commit=o.text("commit"), source=o.text("source"), scope=o.text("scope"),
        workloads=o.whole("workloads", minimum=0), seconds=o.number("seconds", required=False),
        processes=o.whole("processes", required=False, minimum=1),
        store=o.text("store", nullable=True, required=False),
        files=None if files is None else str_list(o.items("files"), o.at("files")),
        extra=o.extra())


def read_selection(o: Obj, modes: tuple[str, ...]) -> ChangeSelection:
    """The ``selection`` object (see the module docstring); Invalid names the field."""
    state = o.choice("state", SELECTION_STATES)
    error = o.text("error", nullable=True, required=False)
    if state == "error" and not error:
        fail(o.at("error"), "state 'error' needs the error text")
    skipped_obj = o.optional_child("skipped")
    skipped = {k: skipped_obj.text(k) for k in skipped_obj.data} if skipped_obj else {}
    return ChangeSelection(
        state=state, packages=str_list(o.items("packages", required=False), o.at("packages")),
        base=o.text("base", nullable=True, required=False),
        head=o.text("head", nullable=True, required=False),
        label=o.text("label", nullable=True, required=False),
        fail_on_blind_spot=o.flag("fail_on_blind_spot", required=False), error=error,
        seconds=o.number("seconds", required=False), map=_map(o.optional_child("map")),
        changed_lines=o.whole("changed_lines", required=False, minimum=0) or 0,
        measured_lines=o.whole("measured_lines", required=False, minimum=0) or 0,
        import_time_lines=o.whole("import_time_lines", required=False, minimum=0) or 0,
        files=tuple(ChangedFile(f.text("file"), f.whole("lines", minimum=0), f.extra())
                    for f in _objects(o, "files")),
        deleted=str_list(o.items("deleted", required=False), o.at("deleted")),
        skipped=skipped,
        measured_cover=tuple(_span(x) for x in _objects(o, "measured_cover")),
        added=tuple(_added(x, modes) for x in _objects(o, "added")),
        blind_spots=tuple(_blind_spot(x) for x in _objects(o, "blind_spots")),
        import_time=tuple(_span(x) for x in _objects(o, "import_time")),
        extra=o.extra())


# ---------------------------------------------------------------------------- writing


def _sorted(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: mapping[k] for k in sorted(mapping)}


def _with_extra(known: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    known.update(_sorted(extra))
    return known


def _span_dict(r: LineSpan) -> dict[str, Any]:
    return _with_extra({"file": r.file, "first": r.first, "last": r.last}, r.extra)


def _blind_spot_dict(b: BlindSpot) -> dict[str, Any]:
    out = {"file": b.where.file, "first": b.where.first, "last": b.where.last,
           "lines": list(b.lines), "scope": b.scope,
           "suggestions": [_with_extra({"workload": s.workload, "line": s.line,
                                        "distance": s.distance}, s.extra)
                           for s in b.suggestions]}
    if b.generated or b.command is not None:  # written as the producer writes them
        out.update({"command": b.command, "covers_all": b.covers_all,
                    "generated_scope": b.generated_scope, "tags": list(b.tags),
                    "generated": [_with_extra({"workload": g.workload, "command": g.command,
                                               "line": g.line, "distance": g.distance,
                                               "covered": list(g.covered)}, g.extra)
                                  for g in b.generated]})
    return _with_extra(out, b.extra)


def selection_dict(sel: ChangeSelection) -> dict[str, Any]:
    """``sel`` as JSON: schema fields in schema order, ``skipped`` sorted, lists as given."""
    m = sel.map
    map_dict = None if m is None else _with_extra({
        "commit": m.commit, "source": m.source, "scope": m.scope, "workloads": m.workloads,
        "seconds": m.seconds, "processes": m.processes, "store": m.store,
        "files": None if m.files is None else list(m.files)}, m.extra)
    return _with_extra({
        "state": sel.state, "base": sel.base, "head": sel.head, "packages": list(sel.packages),
        "label": sel.label, "fail_on_blind_spot": sel.fail_on_blind_spot, "error": sel.error,
        "seconds": sel.seconds, "map": map_dict, "changed_lines": sel.changed_lines,
        "measured_lines": sel.measured_lines, "import_time_lines": sel.import_time_lines,
        "files": [_with_extra({"file": f.file, "lines": f.lines}, f.extra) for f in sel.files],
        "deleted": list(sel.deleted), "skipped": _sorted(sel.skipped),
        "measured_cover": [_span_dict(r) for r in sel.measured_cover],
        "added": [_with_extra({"workload": a.workload, "cost": a.cost,
                               "lines": [_span_dict(r) for r in a.lines],
                               "line_count": a.line_count, "modes": list(a.modes)}, a.extra)
                  for a in sel.added],
        "blind_spots": [_blind_spot_dict(b) for b in sel.blind_spots],
        "import_time": [_span_dict(r) for r in sel.import_time],
    }, sel.extra)
