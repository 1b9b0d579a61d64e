"""Change-aware selection for the refs form of ``schedperf compare`` (docs/coverage.md,
"Change-aware selection in compare").

Once BASE and HEAD are checked out, before anything is measured:

1. ``git diff BASE...HEAD`` gives the changed and added statement lines of HEAD under
   ``scheduler_core/`` and under the folders of the ``--cover-package`` packages
   (bench.coverage.changed; a git failure is bad input);
2. without such lines nothing more happens (no map is needed);
3. otherwise the coverage map of HEAD's commit is taken from the store when a clean map of
   that commit holds the changed files and every workload of the ``--coverage-label``
   selection, else computed: HEAD's scheduler_core (through the same PYTHONPATH entry its
   measurement workers use) run under coverage.py in child processes (up to ``--jobs`` at
   once, bench.coverage.shards), restricted to the changed files, and stored;
4. the changed lines the compared workloads execute need nothing; for the rest, the cheapest
   workloads of the selection that execute them are added to every mode's set (greedy
   weighted set cover, bench.coverage.cover); changed lines only imports run are
   import-time; changed lines no workload runs are blind spots.

A workload that fails under coverage, or a coverage process that fails as a whole, is a
failure of HEAD (mode ``coverage``): the report says ERROR and compare exits 2; the selection
is made from the workloads that ran. The tracer only ever runs in the coverage children,
never in a measurement process.

bench.coverage (and coverage.py with it) is imported only when a selection is made, so that
``schedperf compare`` without one never imports coverage.py.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.compare.choose import Choice, widen
from bench.coverage import DEFAULT_LABEL
from bench.selection import BadInput, load_test_cases, select_workloads
from reports.store.problems import StoreError
from reports.store.schema import DEFAULT_STORE
from workloads.config import TestCase, Workload

if TYPE_CHECKING:
    from bench.coverage.changed import ChangedStatements
    from bench.coverage.cover import BlindSpot, LineRange, Selection
    from reports.store.coverage import CoverageMap

__all__ = ["COVERAGE_MODE", "HARNESS_PACKAGES", "ChangeOptions", "ChangeStep", "CoverPackage",
           "HeadSide", "blind_spot_gate", "cover_packages", "select_changes", "side_links"]

CORE = "scheduler_core"
# the harness's own top-level packages: both sides import them from this checkout
HARNESS_PACKAGES = ("bench", "workloads", "reports", "tests")
COVERAGE_MODE = "coverage"  # the mode of a failure under coverage in the report
_IMPORT_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


@dataclass(frozen=True)
class CoverPackage:
    """An out-of-tree package (``--cover-package``): its import path and top-level name."""

    name: str

    @property
    def top(self) -> str:
        return self.name.split(".")[0]

    def locate(self, checkout: Path) -> tuple[str, Path] | None:
        """(its path as git names it, the top-level package or module to link) in
        ``checkout``; None when the checkout does not have it."""
        parts = self.name.split(".")
        folder = checkout.joinpath(*parts)
        if (folder / "__init__.py").is_file():
            path = "/".join(parts)
        elif folder.with_suffix(".py").is_file():
            path = "/".join(parts) + ".py"
        else:
            return None
        top = checkout / self.top
        return path, top if top.is_dir() else top.with_suffix(".py")


def cover_packages(names: Sequence[str]) -> tuple[CoverPackage, ...]:
    """The ``--cover-package`` values, checked (BadInput): import paths, not scheduler_core's
    (mapped anyway: left out) nor the harness's (both sides run this checkout's copy, so
    their changes are never measured)."""
    out: list[CoverPackage] = []
    for name in names:
        if not _IMPORT_PATH.fullmatch(name):
            raise BadInput(f"--cover-package {name!r}: expected an import path such as "
                           "my_plugins or my_plugins.filters")
        pkg = CoverPackage(name)
        if pkg.top in HARNESS_PACKAGES:
            raise BadInput(
                f"--cover-package {name}: part of the harness package {pkg.top!r}, which both "
                "sides import from this checkout, so BASE and HEAD run the same copy and its "
                "changes are never measured; give a package of its own (each side imports it "
                "from its worktree)")
        if pkg.top != CORE and pkg not in out:
            out.append(pkg)
    return tuple(out)


@dataclass(frozen=True)
class ChangeOptions:
    """``--select-changed/--no-select-changed``, ``--coverage-store``, ``--coverage-label``
    (the workloads that may be added, and mapped), ``--cover-package``,
    ``--fail-on-blind-spot``."""

    enabled: bool = True
    store: Path = DEFAULT_STORE
    label: str | None = DEFAULT_LABEL
    packages: tuple[CoverPackage, ...] = ()
    fail_on_blind_spot: bool = False


@dataclass
class ChangeStep:
    """What the selection did: ``state`` is ``off``, ``no changes`` (the diff changes no
    statement line of the covered packages), ``applied`` or ``error`` (no map: ``error``
    says why, and ``failure_rows`` hold HEAD's coverage failure)."""

    state: str
    options: ChangeOptions
    base: str | None = None
    head: str | None = None
    changed: ChangedStatements | None = None
    selection: Selection | None = None
    added: tuple[tuple[TestCase, Workload], ...] = ()
    modes: tuple[str, ...] = ()
    map_info: dict[str, Any] | None = None
    failure_rows: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    @property
    def blind_spots(self) -> int:
        return len(self.selection.blind_spots) if self.selection is not None else 0

    def widened(self, choice: Choice) -> Choice:
        return widen(choice, self.added) if self.added else choice

    def report(self) -> dict[str, Any]:
        """The report's ``selection`` object (reports.render.model.ChangeSelection)."""
        out: dict[str, Any] = {"state": self.state, "base": self.base, "head": self.head,
                               "packages": [CORE, *(p.name for p in self.options.packages)],
                               "label": self.options.label,
                               "fail_on_blind_spot": self.options.fail_on_blind_spot,
                               "error": self.error, "seconds": self.seconds,
                               "map": self.map_info}
        if self.changed is not None:
            out.update(_changed_dict(self.changed))
        if self.selection is not None:
            out.update(_selection_dict(self.selection, self.modes))
            if self.changed is not None:
                out["measured_lines"] = _count(self.selection.measured_cover, self.changed)
                out["import_time_lines"] = _count(self.selection.import_time, self.changed)
        return out


def _count(ranges: Sequence[LineRange], changed: ChangedStatements) -> int:
    """How many changed statement lines ``ranges`` hold."""
    return sum(sum(1 for x in changed.lines.get(r.file, ()) if r.first <= x <= r.last)
               for r in ranges)


def _span(r: LineRange) -> dict[str, Any]:
    return {"file": r.file, "first": r.first, "last": r.last}


def _changed_dict(changed: ChangedStatements) -> dict[str, Any]:
    return {"changed_lines": changed.count,
            "files": [{"file": f, "lines": len(v)} for f, v in sorted(changed.lines.items())],
            "deleted": list(changed.deleted), "skipped": dict(sorted(changed.skipped.items()))}


def _selection_dict(selection: Selection, modes: Sequence[str]) -> dict[str, Any]:
    return {
        "measured_cover": [_span(r) for r in selection.measured_cover],
        "added": [{"workload": a.name, "cost": a.cost, "lines": [_span(r) for r in a.lines],
                   "line_count": a.count, "modes": list(modes)} for a in selection.added],
        "blind_spots": [_blind_spot_dict(b) for b in selection.blind_spots],
        "import_time": [_span(r) for r in selection.import_time],
    }


def _blind_spot_dict(b: BlindSpot) -> dict[str, Any]:
    out = {**_span(b.where), "lines": list(b.lines), "scope": b.scope,
           "suggestions": [{"workload": s.workload, "line": s.line, "distance": s.distance}
                           for s in b.suggestions]}
    if b.generated:  # from a map with generated scenarios (schedperf coverage --generated)
        out.update({"command": b.command, "covers_all": b.covers_all,
                    "generated_scope": b.generated_scope, "tags": list(b.tags),
                    "generated": [{"workload": g.workload, "command": g.command,
                                   "line": g.line, "distance": g.distance,
                                   "covered": list(g.covered)} for g in b.generated]})
    return out


def _mappable(path: str) -> bool:
    """Whether coverage.py can be restricted to a changed file: a .py file whose path holds
    no glob character (``* ? [ ]``: coverage.py's include patterns would read them as
    patterns). The lines of any other changed file are executed by no mapped workload."""
    return path.endswith(".py") and not any(c in path for c in "*?[]")


def _failure_rows(cmap: CoverageMap, names: set[str]) -> list[dict[str, Any]]:
    from reports.store.coverage import RAN

    rows = cmap.workloads.filter(~cmap.workloads["status"].is_in(list(RAN)))
    return [{"side": "head", "mode": COVERAGE_MODE, "workload": w, "round": None,
             "status": s, "error": f"under coverage: {e or s}"}
            for w, s, e in rows.select("workload", "status", "error").iter_rows() if w in names]


@dataclass(frozen=True)
class HeadSide:
    """HEAD as the selection sees it: the repository, the commits, and the PYTHONPATH entry
    its measurement workers import scheduler_core (and the cover packages) through."""

    root: Path
    base: str
    head: str
    entry: Path


def _map(head: HeadSide, changed: ChangedStatements, configs: Sequence[Path],
         names: list[str], settings: Any, progress: Callable[[str], None],
         ) -> tuple[CoverageMap | None, dict[str, Any] | None]:
    """HEAD's map of the changed files, stored or computed (CoverageRunError when the child
    fails as a whole); (None, None) when no changed file can be mapped."""
    from bench.coverage.collect import MapRequest, load_or_collect
    from bench.coverage.shards import collect_sharded

    options: ChangeOptions = settings.changes
    include = tuple(sorted(f for f in changed.lines if _mappable(f)))
    if not include:
        progress("change-aware selection: no changed file can be mapped (glob characters "
                 "in every name): their lines are blind spots")
        return None, None
    request = MapRequest(configs=tuple(configs), label_filter=options.label,
                         packages=(CORE, *(p.name for p in options.packages)),
                         include=include, seed=settings.seed, timeout=settings.timeout)
    progress(f"change-aware selection: {changed.count} changed line(s) in "
             f"{len(changed.lines)} file(s); coverage map of HEAD {head.head[:12]} "
             f"({len(names)} workloads, label {options.label!r})")
    try:
        cmap, computed = load_or_collect(options.store, request, commit=head.head, dirty=False,
                                         core_root=head.entry, collect=collect_sharded,
                                         jobs=settings.jobs, progress=True)
    except (StoreError, OSError) as exc:
        raise BadInput(f"--coverage-store {options.store}: {exc}") from exc
    info = {"commit": cmap.commit, "source": "stored" if computed is None else "computed",
            "scope": cmap.scope, "files": None if cmap.include is None else list(cmap.include),
            "workloads": len(names), "store": str(options.store),
            "seconds": None if computed is None else computed.seconds,
            "processes": cmap.meta.get("processes") if computed is not None else None}
    progress(f"coverage map of HEAD: computed in {computed.seconds:.0f} s "
             f"({info['processes']} process(es)), stored in {options.store}"
             if computed is not None else f"coverage map of HEAD: reused from {options.store}")
    return cmap, info


def select_changes(head: HeadSide, configs: Sequence[Path], choice: Choice, settings: Any,
                   progress: Callable[[str], None]) -> ChangeStep:
    """The change-aware selection of the module docstring for HEAD ``head``: which workloads
    to add to ``choice`` and what the report says of it. BadInput when git fails or the
    store cannot be read or written."""
    from bench.coverage.collect import CoverageRunError
    from bench.coverage.diff import DiffError

    options: ChangeOptions = settings.changes
    started = time.perf_counter()
    step = ChangeStep("no changes", options, head.base, head.head, modes=choice.modes)
    folders = [CORE, *(_package_paths(options.packages, head))]
    try:
        step.changed = _changed_statements(head, folders)
    except DiffError as exc:
        raise BadInput(f"change-aware selection cannot read git diff "
                       f"{head.base[:12]}...{head.head[:12]}: {exc} (--no-select-changed "
                       "compares without it)") from exc
    if not step.changed.lines:
        step.seconds = time.perf_counter() - started
        progress("change-aware selection: HEAD changes no statement of "
                 f"{', '.join(folders)}: nothing to add")
        return step
    mappable = select_workloads(load_test_cases(configs), options.label)
    names = [w.full_name for _, w in mappable]
    try:
        cmap, step.map_info = _map(head, step.changed, configs, names, settings, progress)
    except CoverageRunError as exc:
        step.state, step.error = "error", str(exc)
        step.failure_rows = [{"side": "head", "mode": COVERAGE_MODE, "workload": n,
                              "round": None, "status": "error", "error": str(exc)}
                             for n in names]
        step.seconds = time.perf_counter() - started
        return step
    _apply(step, cmap, mappable, choice)
    step.seconds = time.perf_counter() - started
    _say(step, progress)
    return step


def _apply(step: ChangeStep, cmap: CoverageMap | None,
           mappable: Sequence[tuple[TestCase, Workload]], choice: Choice) -> None:
    """Choose the workloads to add from ``cmap`` (None: no changed file could be mapped,
    every changed line is a blind spot) for ``step.changed``."""
    from bench.coverage.cover import choose

    assert step.changed is not None
    wanted = {w.full_name for _, w in mappable}
    measured = {w for sel in choice.selections.values() for w in sel.workloads}
    if cmap is None:
        step.selection = choose(step.changed.lines, {}, {}, measured,
                                statements=step.changed.statements)
    else:
        from reports.store.coverage import ORIGIN_GENERATED

        ran = [n for n in cmap.workload_names() if n in wanted]
        # a stored map's generated scenarios (schedperf coverage --generated) only suggest
        # where to start on a blind spot: they are never added
        generated = cmap.line_sets(cmap.workload_names(origin=ORIGIN_GENERATED))
        step.selection = choose(step.changed.lines, cmap.line_sets(ran), cmap.costs(),
                                measured, import_lines=cmap.import_lines(),
                                statements=step.changed.statements, generated=generated,
                                origins=cmap.origins())
        step.failure_rows = _failure_rows(cmap, wanted)
    by_name = {w.full_name: (tc, w) for tc, w in mappable}
    step.added = tuple(by_name[a.name] for a in step.selection.added)
    step.state = "applied"


def _package_paths(packages: Sequence[CoverPackage], head: HeadSide) -> list[str]:
    """The cover packages' paths in HEAD's checkout (BadInput for one HEAD does not have)."""
    paths = []
    worktree = (head.entry / CORE).resolve().parent
    for pkg in packages:
        found = pkg.locate(worktree)
        if found is None:
            raise BadInput(f"--cover-package {pkg.name}: HEAD has no package or module "
                           f"{pkg.name.replace('.', '/')} at the top of the repository")
        paths.append(found[0])
    return paths


def _changed_statements(head: HeadSide, folders: Sequence[str]) -> ChangedStatements:
    from bench.coverage.changed import changed_statements

    return changed_statements(head.root, head.base, head.head, folders)


def _say(step: ChangeStep, progress: Callable[[str], None]) -> None:
    sel = step.selection
    assert sel is not None
    added = ", ".join(a.name for a in sel.added) or "none"
    progress(f"change-aware selection: added {len(sel.added)} workload(s) to "
             f"{', '.join(step.modes)}: {added}; {len(sel.blind_spots)} blind spot(s)"
             + (f"; {len(step.failure_rows)} workload(s) failed under coverage"
                if step.failure_rows else ""))


def side_links(packages: Sequence[CoverPackage], worktree: Path) -> list[Path]:
    """The top-level packages (or modules) of ``packages`` in ``worktree`` that a side's
    PYTHONPATH entry links besides scheduler_core (those the checkout has)."""
    links: dict[str, Path] = {}
    for pkg in packages:
        found = pkg.locate(worktree)
        if found is not None:
            links[found[1].name] = found[1]
    return list(links.values())


def blind_spot_gate(report: Mapping[str, Any]) -> bool:
    """Whether ``report``'s selection fails the gate: blind spots and --fail-on-blind-spot."""
    sel = report.get("selection") or {}
    return bool(sel.get("fail_on_blind_spot") and sel.get("blind_spots"))
