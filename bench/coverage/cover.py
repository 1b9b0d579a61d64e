"""Which workloads to add so that every changed statement line is measured, and which changed
lines no catalog workload executes (blind spots), with where to start on each.

Given the changed statement lines (file -> HEAD lines, :mod:`bench.coverage.changed`), the
statement lines each catalog workload executes (a coverage map), their costs and the
workloads that are measured anyway:

1. a changed line no workload executes but the module's import does (module level: a
   constant, a class body, an import) is **import-time**: every workload imports it, it is no
   blind spot (a ``def`` line is not import-time: it is the line of the workloads that run
   the function's body, see :mod:`bench.coverage.statements`);
2. a changed line no workload executes otherwise is a **blind spot**;
3. the lines the measured workloads execute need nothing more;
4. the rest is covered by a greedy weighted set cover: repeatedly add the workload with the
   lowest cost per newly covered line (ties: the lower name), until every coverable line is
   covered. Each added workload comes with the lines that made it be added (those it newly
   covered when chosen).

Lines are reported as ranges ``file:first-last`` of consecutive statement lines (no other
statement between them; without the file's statements, consecutive line numbers), split where
the function holding them changes. For each blind spot, **suggestions** name the catalog
workloads that execute the lines nearest to it in the same function (else the same file):
where a new or changed workload should start.

When the map also holds **generated scenarios** (``schedperf coverage --generated N``), a
blind spot also gets them: the scenarios that execute lines of it, the one executing the
most first, and its ``command`` (the ``schedperf generate`` command line that writes that
scenario again: same seed, same scenario); when none does, the scenarios executing the lines
nearest to it (same function, else the same file), and the feature ``tags`` every one of
those has and not every other scenario has. Generated scenarios never cover a changed line
nor are added: compare measures catalog workloads only.

Pure functions: no coverage.py, git or files here (:func:`choose_for_change` takes what
:func:`bench.coverage.changed.changed_statements` and a stored or computed map give).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from typing import Any

from bench.coverage.changed import ChangedStatements
from bench.coverage.statements import FileStatements, FunctionSpan
from reports.store.coverage import ORIGIN_GENERATED, CoverageMap, GeneratedOrigin

__all__ = ["AddedWorkload", "BlindSpot", "GeneratedSuggestion", "LineRange", "Selection",
           "Suggestion", "choose", "choose_for_change", "line_ranges"]

# file -> statement lines
Lines = Mapping[str, Set[int]]


@dataclass(frozen=True, order=True)
class LineRange:
    """Statement lines ``first``..``last`` of ``file`` (consecutive statements)."""

    file: str
    first: int
    last: int

    def __str__(self) -> str:
        return f"{self.file}:{self.first}" + (f"-{self.last}" if self.last != self.first else "")


@dataclass(frozen=True)
class AddedWorkload:
    """A workload the set cover added, with the changed lines it newly covered."""

    name: str
    cost: float
    lines: tuple[LineRange, ...]
    count: int  # how many statement lines those ranges hold


@dataclass(frozen=True)
class Suggestion:
    """A catalog workload executing ``line``, ``distance`` lines from a blind spot."""

    workload: str
    line: int
    distance: int

    @property
    def test_case(self) -> str:
        return self.workload.split("/", 1)[0]


@dataclass(frozen=True)
class GeneratedSuggestion:
    """A generated scenario for a blind spot: one executing ``covered`` (lines of the spot;
    ``line`` the first, ``distance`` 0), or, when no scenario executes any, one executing
    ``line``, ``distance`` lines from it (``covered`` empty). ``command`` writes the scenario
    again, ``run_command`` runs it (:class:`reports.store.coverage.GeneratedOrigin`)."""

    workload: str
    seed: int
    index: int
    tags: tuple[str, ...]
    command: str
    run_command: str
    line: int
    distance: int
    covered: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"workload": self.workload, "seed": self.seed, "index": self.index,
                "tags": list(self.tags), "command": self.command,
                "run_command": self.run_command, "line": self.line,
                "distance": self.distance, "covered": list(self.covered)}


@dataclass(frozen=True)
class BlindSpot:
    """Changed statement lines no catalog workload executes."""

    where: LineRange
    lines: tuple[int, ...]
    scope: str  # where suggestions came from: "function <name>", "file", or "none"
    suggestions: tuple[Suggestion, ...]
    # generated scenarios (module docstring): those executing lines of the spot, most first,
    # else the nearest; "covered", "function <name>", "file" or "none" says which
    generated: tuple[GeneratedSuggestion, ...] = ()
    generated_scope: str = "none"
    # the `schedperf generate` command of the scenario executing the most lines of the spot
    # (all of them when covers_all); None when no generated scenario executes any
    command: str | None = None
    covers_all: bool = False
    tags: tuple[str, ...] = ()  # feature tags the listed scenarios share and others lack


@dataclass(frozen=True)
class Selection:
    """The outcome of :func:`choose`."""

    changed: int  # changed statement lines in all
    added: tuple[AddedWorkload, ...]
    measured_cover: tuple[LineRange, ...]  # changed lines the measured workloads execute
    blind_spots: tuple[BlindSpot, ...]
    import_time: tuple[LineRange, ...]  # changed lines only the imports execute

    def to_dict(self) -> dict[str, Any]:
        return {
            "changed_lines": self.changed,
            "added": [{"workload": a.name, "cost": a.cost, "lines": [str(r) for r in a.lines],
                       "line_count": a.count} for a in self.added],
            "measured_cover": [str(r) for r in self.measured_cover],
            "blind_spots": [{"lines": str(b.where), "scope": b.scope,
                             "suggestions": [{"workload": s.workload, "line": s.line,
                                              "distance": s.distance,
                                              "test_case": s.test_case}
                                             for s in b.suggestions],
                             "command": b.command, "covers_all": b.covers_all,
                             "generated_scope": b.generated_scope,
                             "generated": [g.to_dict() for g in b.generated],
                             "tags": list(b.tags)}
                            for b in self.blind_spots],
            "import_time": [str(r) for r in self.import_time],
        }


def _owner(stmts: FileStatements | None, line: int) -> FunctionSpan | None:
    """The function a line belongs to: the one whose header it is, else the innermost whose
    body holds it."""
    if stmts is None:
        return None
    for fn in stmts.functions:
        if line in fn.header:
            return fn
    return stmts.function_at(line)


def line_ranges(file: str, lines: Iterable[int],
                stmts: FileStatements | None = None) -> list[LineRange]:
    """``lines`` of ``file`` as ranges of consecutive statement lines (see the module
    docstring), split where the function holding them changes."""
    ordered = sorted(set(lines))
    if not ordered:
        return []
    index = {line: i for i, line in enumerate(stmts.sorted)} if stmts is not None else {}
    out = []
    first = prev = ordered[0]
    for line in ordered[1:]:
        if line in index and prev in index:
            adjacent = index[line] == index[prev] + 1
        else:
            adjacent = line == prev + 1
        if not adjacent or _owner(stmts, line) != _owner(stmts, prev):
            out.append(LineRange(file, first, prev))
            first = line
        prev = line
    out.append(LineRange(file, first, prev))
    return out


def _ranges(lines: Mapping[str, Set[int]],
            statements: Mapping[str, FileStatements]) -> tuple[LineRange, ...]:
    return tuple(r for f in sorted(lines) for r in line_ranges(f, lines[f], statements.get(f)))


def _executes(workloads: Mapping[str, Lines], file: str, line: int) -> bool:
    return any(line in w.get(file, ()) for w in workloads.values())


def _split(changed: Lines, workloads: Mapping[str, Lines], import_lines: Lines,
           ) -> tuple[set[tuple[str, int]], dict[str, set[int]], dict[str, set[int]]]:
    """(lines some workload executes, import-time lines, blind-spot lines)."""
    coverable: set[tuple[str, int]] = set()
    imported: dict[str, set[int]] = {}
    blind: dict[str, set[int]] = {}
    for file, lines in changed.items():
        for line in lines:
            if _executes(workloads, file, line):
                coverable.add((file, line))
            elif line in import_lines.get(file, ()):
                imported.setdefault(file, set()).add(line)
            else:
                blind.setdefault(file, set()).add(line)
    return coverable, imported, blind


def _greedy(remaining: set[tuple[str, int]], candidates: Mapping[str, set[tuple[str, int]]],
            costs: Mapping[str, float]) -> list[tuple[str, set[tuple[str, int]]]]:
    """Greedy weighted set cover of ``remaining``: (workload, lines it newly covered) in the
    order chosen. Ratios are compared as cost_a * gain_b < cost_b * gain_a (no division)."""
    chosen = []
    remaining = set(remaining)
    while remaining:
        best: tuple[str, set[tuple[str, int]]] | None = None
        for name in sorted(candidates):
            gain = candidates[name] & remaining
            if not gain:
                continue
            if best is None or costs[name] * len(best[1]) < costs[best[0]] * len(gain):
                best = (name, gain)
        if best is None:  # nothing covers the rest (the caller removed blind spots)
            break
        chosen.append(best)
        remaining -= best[1]
    return chosen


def _suggest(file: str, lines: Sequence[int], stmts: FileStatements | None,
             workloads: Mapping[str, Lines], costs: Mapping[str, float],
             limit: int) -> tuple[str, tuple[Suggestion, ...]]:
    owner = _owner(stmts, lines[0])
    scopes: list[tuple[str, Any]] = []
    if owner is not None:
        scopes.append((f"function {owner.name}",
                       lambda x: owner.contains(x) or x in owner.header))
    scopes.append(("file", lambda x: True))
    for scope, inside in scopes:
        found = []
        for name, per_file in workloads.items():
            executed = [x for x in per_file.get(file, ()) if inside(x)]
            if not executed:
                continue
            near = min(executed, key=lambda x: (min(abs(x - y) for y in lines), x))
            found.append((min(abs(near - y) for y in lines), costs.get(name, 0.0), name, near))
        if found:
            found.sort()
            return scope, tuple(Suggestion(n, near, d) for d, _, n, near in found[:limit])
    return "none", ()


def _covering(lines: Sequence[int], file: str, generated: Mapping[str, Lines],
              costs: Mapping[str, float]) -> list[tuple[str, tuple[int, ...]]]:
    """(scenario, the lines of the spot it executes) of every generated scenario executing
    some: the most lines first, then the cheaper, then the lower name."""
    found = []
    for name, per_file in generated.items():
        have = per_file.get(file, ())
        covered = tuple(x for x in lines if x in have)
        if covered:
            found.append((-len(covered), costs.get(name, 0.0), name, covered))
    return [(name, covered) for _, _, name, covered in sorted(found)]


def _hint_tags(listed: Iterable[str], origins: Mapping[str, GeneratedOrigin]) -> tuple[str, ...]:
    """The tags every listed scenario has and not every other scenario has."""
    names = set(listed)
    if not names:
        return ()
    shared = set.intersection(*(set(origins[n].tags) for n in names))
    others = [set(o.tags) for n, o in origins.items() if n not in names]
    if others:
        shared -= set.intersection(*others)
    return tuple(sorted(shared))


def _generated_for(spot: BlindSpot, stmts: FileStatements | None,
                   generated: Mapping[str, Lines], origins: Mapping[str, GeneratedOrigin],
                   costs: Mapping[str, float], limit: int) -> BlindSpot:
    """``spot`` with its generated scenarios (module docstring)."""
    file, lines = spot.where.file, spot.lines
    covering = _covering(lines, file, generated, costs)
    if covering:
        picked = [GeneratedSuggestion(**_origin_fields(origins[n]), line=c[0], distance=0,
                                      covered=c) for n, c in covering[:limit]]
        return replace(spot, generated=tuple(picked), generated_scope="covered",
                       command=picked[0].command,
                       covers_all=len(picked[0].covered) == len(lines),
                       tags=_hint_tags((g.workload for g in picked), origins))
    scope, near = _suggest(file, lines, stmts, generated, costs, limit)
    picked = [GeneratedSuggestion(**_origin_fields(origins[s.workload]), line=s.line,
                                  distance=s.distance) for s in near]
    return replace(spot, generated=tuple(picked), generated_scope=scope,
                   tags=_hint_tags((g.workload for g in picked), origins))


def _origin_fields(o: GeneratedOrigin) -> dict[str, Any]:
    return {"workload": o.workload, "seed": o.seed, "index": o.index, "tags": o.tags,
            "command": o.command, "run_command": o.run_command}


def choose(changed: Lines, workloads: Mapping[str, Lines], costs: Mapping[str, float],
           measured: Iterable[str] = (), *, import_lines: Lines | None = None,
           statements: Mapping[str, FileStatements] | None = None,
           suggestions: int = 3, generated: Mapping[str, Lines] | None = None,
           origins: Mapping[str, GeneratedOrigin] | None = None) -> Selection:
    """The workloads to add to ``measured`` so that every changed line some workload
    executes is executed by a measured or added one; blind spots and import-time lines
    apart (see the module docstring).

    ``changed``: file -> changed statement lines; ``workloads``: workload -> file -> the
    statement lines it executes (the catalog workloads that ran; measured ones among them);
    ``costs``: workload -> cost (>= 0; every workload of ``workloads`` not measured needs
    one); ``import_lines``: file -> lines executed while importing; ``statements``: file ->
    its statements (ranges and the functions for suggestions); ``suggestions``: at most that
    many workloads per blind spot (and as many generated scenarios); ``generated``:
    scenario -> file -> the statement lines it executes, for the generated scenarios of
    the map that ran, each with its ``origins`` entry (suggestions only, see the module
    docstring)."""
    generated = generated or {}
    origins = origins or {}
    missing = sorted(set(generated) - set(origins))
    if missing:
        raise ValueError(f"generated scenarios without an origin: {missing}")
    origins = {n: origins[n] for n in generated}  # the scenarios that ran
    import_lines = import_lines or {}
    statements = statements or {}
    measured = set(measured)
    for name in workloads:
        if name not in measured and (name not in costs or not costs[name] >= 0):
            raise ValueError(f"workload {name!r} has no cost >= 0 (got {costs.get(name)!r})")
    changed = {f: set(v) for f, v in changed.items() if v}
    coverable, imported, blind = _split(changed, workloads, import_lines)
    pairs = {name: {(f, x) for f in changed for x in lines.get(f, ())}
             for name, lines in workloads.items()}
    by_measured = {p for name in measured & set(pairs) for p in pairs[name]} & coverable
    candidates = {n: s for n, s in pairs.items() if n not in measured}
    picked = _greedy(coverable - by_measured, candidates, costs)
    added = []
    for name, gain in picked:
        per_file: dict[str, set[int]] = {}
        for f, x in gain:
            per_file.setdefault(f, set()).add(x)
        added.append(AddedWorkload(name, float(costs[name]), _ranges(per_file, statements),
                                   len(gain)))
    measured_files: dict[str, set[int]] = {}
    for f, x in by_measured:
        measured_files.setdefault(f, set()).add(x)
    spots = []
    for where in _ranges(blind, statements):
        lines = tuple(sorted(x for x in blind[where.file] if where.first <= x <= where.last))
        scope, found = _suggest(where.file, lines, statements.get(where.file), workloads,
                                costs, suggestions)
        spot = BlindSpot(where, lines, scope, found)
        if generated:
            spot = _generated_for(spot, statements.get(where.file), generated, origins, costs,
                                  suggestions)
        spots.append(spot)
    return Selection(sum(len(v) for v in changed.values()), tuple(added),
                     _ranges(measured_files, statements), tuple(spots),
                     _ranges(imported, statements))


def choose_for_change(cmap: CoverageMap, changed: ChangedStatements,
                      measured: Iterable[str] = (), *,
                      workloads: Iterable[str] | None = None,
                      suggestions: int = 3) -> Selection:
    """:func:`choose` for a diff's changed statements and a coverage map of its HEAD: the
    map's catalog workloads that ran (or only ``workloads`` of them), their costs, its
    import-time lines, the HEAD statements of the changed files, and its generated
    scenarios that ran (for the blind spots' suggestions). ValueError when the map is not of
    the diff's HEAD commit (line numbers of another commit mean nothing) or lacks a changed
    file."""
    if cmap.commit != changed.head:
        raise ValueError(f"the coverage map is of commit {cmap.commit[:12]}, the change's "
                         f"HEAD is {changed.head[:12]}: map HEAD first")
    if not cmap.covers_files(changed.lines):
        raise ValueError("the coverage map is restricted to other files than the changed "
                         f"ones: {sorted(set(changed.lines) - set(cmap.include or ()))}")
    names = cmap.workload_names()
    if workloads is not None:
        keep = set(workloads)
        names = [n for n in names if n in keep]
    generated = cmap.workload_names(origin=ORIGIN_GENERATED)
    return choose(changed.lines, cmap.line_sets(names), cmap.costs(), measured,
                  import_lines=cmap.import_lines(), statements=changed.statements,
                  suggestions=suggestions, generated=cmap.line_sets(generated),
                  origins=cmap.origins())
