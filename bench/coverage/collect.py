"""Compute a coverage map: run a selection of workloads under coverage.py in a child process
(:mod:`bench.coverage.child`) and turn its data into a :class:`CoverageMap`
(:mod:`bench.coverage.attribute`).

The tracer only ever runs in that child: this process (``schedperf coverage``, or compare
when it maps a commit) starts it with ``python -P -m bench.coverage.child`` in a fresh
interpreter and a session of its own (killed with its group when interrupted), and never
imports coverage.py's tracer itself. A measuring process (``schedperf run``, compare's workers)
never imports this package.

The child imports scheduler_core from ``core_root`` (default: where this process imported it
from), first on its PYTHONPATH, and must report that same package folder back. ``core_root``
may be a folder holding only a link named ``scheduler_core`` (compare's side entries,
bench.compare.worktrees.core_path_entry): the child then imports that checkout's
scheduler_core and this harness, and files are still named relative to the checkout
(coverage.py resolves links).
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from bench.coverage import DEFAULT_LABEL
from bench.coverage.attribute import Outcome, build_map
from bench.coverage.generated import GeneratedPart, prepare_generated
from bench.interrupt import deferred_signals
from bench.measure.children import ChildProcesses
from bench.measure.launch import child_env
from bench.selection import load_test_cases, select_workloads
from reports.store.coverage import CoverageMap, read_map, write_map
from reports.store.gitinfo import GitError, commit_details
from workloads.output.environment import core_origin

__all__ = ["CHILD_MODULE", "DEFAULT_LABEL", "DEFAULT_PACKAGES", "CoverageRunError", "MapRequest",
           "MapResult", "code_version", "collect_map", "load_or_collect"]

CHILD_MODULE = "bench.coverage.child"
DEFAULT_PACKAGES = ("scheduler_core",)
_TAIL = 20  # lines of the child's stderr kept for an error message
_SCRUBBED = ("COVERAGE_PROCESS_START", "COVERAGE_RCFILE", "COVERAGE_CORE", "COVERAGE_FILE",
             "COVERAGE_DEBUG")


class CoverageRunError(RuntimeError):
    """The coverage child could not run the selection (a crash, a bad spec, the code not
    importing); the message says why, with the end of its output."""


@dataclass(frozen=True)
class MapRequest:
    """What to map: the selection (as ``schedperf run``'s ``--config``/``--label``/``--name``),
    the packages whose files are mapped (scheduler_core first, then out-of-tree plugin
    packages), optionally only some files of them (keys such as
    ``scheduler_core/plugins/node_ports.py``), the seed of the runs, a wall-time limit per
    workload, and how many generated scenarios of which generator seed to map too."""

    configs: tuple[Path, ...] = ()
    label_filter: str | None = DEFAULT_LABEL
    name_regex: str | None = None
    packages: tuple[str, ...] = DEFAULT_PACKAGES
    include: tuple[str, ...] | None = None
    seed: int = 0
    timeout: float | None = None  # wall seconds per workload (under coverage), as run's
    generated: int = 0  # also map this many generated scenarios (bench.coverage.generated)
    generated_seed: int = 0  # ... those of `schedperf generate --seed generated_seed`


@dataclass(frozen=True)
class MapResult:
    """A computed map and what went wrong on the way without stopping it."""

    cmap: CoverageMap
    import_errors: list[dict[str, str]] = field(default_factory=list)  # modules, why
    unparsed: dict[str, str] = field(default_factory=dict)  # file key -> why no statements
    seconds: float = 0.0  # wall time of the whole computation


def code_version(core_dir: Path | None = None) -> tuple[str, bool, Path]:
    """(commit, dirty, checkout folder) of the scheduler_core package at ``core_dir``
    (default: the imported one); CoverageRunError when no git checkout tracks it (a map is
    stored per commit)."""
    core = core_origin(core_dir)
    if core.commit is None or core.checkout is None:
        raise CoverageRunError(f"scheduler_core at {core.path} is {core.origin}: a coverage map "
                               "belongs to a commit; run from a git checkout (pip install -e)")
    return core.commit, bool(core.dirty), core.checkout


def _core_root() -> Path:
    import scheduler_core

    return Path(scheduler_core.__file__).resolve().parents[1]


def _env(core_root: Path) -> dict[str, str]:
    env = child_env()
    for var in _SCRUBBED:
        env.pop(var, None)
    env["PYTHONPATH"] = os.pathsep.join([str(core_root), env["PYTHONPATH"]])
    return env


def _relay(stream: IO[bytes], tail: collections.deque[str], echo: bool) -> None:
    for raw in stream:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        tail.append(line)
        if echo and line.startswith("coverage ["):
            print(line, file=sys.stderr, flush=True)


def _run_child(spec: dict[str, Any], folder: Path, *, core_root: Path, progress: bool,
               children: ChildProcesses, python: str) -> tuple[dict[str, Any], int, str]:
    spec_path, out = folder / "spec.json", folder / "result.json"
    spec_path.write_text(json.dumps(spec, indent=1), encoding="utf-8")
    tail: collections.deque[str] = collections.deque(maxlen=_TAIL)
    proc = relay = None
    try:
        with deferred_signals():  # an interrupt now still finds the process to kill
            proc = children.popen([python, "-P", "-m", CHILD_MODULE, str(spec_path), str(out)],
                                  cwd=folder, env=_env(core_root), stderr=subprocess.PIPE)
            relay = threading.Thread(target=_relay, args=(proc.stderr, tail, progress),
                                     daemon=True)
            relay.start()
        code = proc.wait()
    except BaseException:
        children.stop()
        raise
    finally:
        if proc is not None:
            children.release(proc)
            if relay is not None:
                relay.join(timeout=10)  # the pipe ends with the process group
            if proc.stderr is not None:
                proc.stderr.close()
    try:
        result = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        result = {}
    return result, code, "\n".join(tail)


def _outcomes(chosen: Sequence[Any], result: dict[str, Any]) -> list[Outcome]:
    done = {w["name"]: w for w in result.get("workloads", [])}
    out = []
    for _, w in chosen:
        got = done.get(w.full_name)
        if got is None:
            out.append(Outcome(w.full_name, tuple(w.labels), "error",
                               "not run: the coverage process ended before it", 0.0))
        else:
            out.append(Outcome(w.full_name, tuple(w.labels), str(got["status"]),
                               got.get("error"), float(got.get("cost_seconds") or 0.0)))
    return out


def _check(result: dict[str, Any], code: int, stderr: str, core_root: Path) -> None:
    if code != 0 or result.get("error") or not result:
        running = result.get("running")
        why = result.get("error") or (f"it crashed while running {running}" if running else
                                      f"exit status {code}")
        raise CoverageRunError(f"the coverage process failed: {why}"
                               + (f"\n{stderr}" if stderr.strip() else ""))
    root = result.get("roots", {}).get("scheduler_core")
    # core_root may hold a link to the package (compare's side entries): the package
    # folders, resolved, must be the same
    if root is not None and ((Path(root) / "scheduler_core").resolve()
                             != (core_root / "scheduler_core").resolve()):
        raise CoverageRunError(f"the coverage process imported scheduler_core from {root}, "
                               f"not from {core_root}")


def _commit_meta(core_root: Path, commit: str) -> dict[str, Any]:
    """The commit's committer date and parents, as ingest records them for results (the
    dashboard orders maps by them without --repo); nothing when git cannot tell."""
    try:
        details = commit_details(core_root, [commit])
    except GitError:
        return {}
    if commit not in details:
        return {}
    when, parents = details[commit]
    return {"commit_date": when.isoformat(), "commit_parents": list(parents)}


def _spec(request: MapRequest, chosen: Sequence[Any], packages: tuple[str, ...],
          folder: Path, progress: bool, extra: GeneratedPart | None) -> dict[str, Any]:
    return {"configs": [str(Path(c).resolve()) for c in request.configs],
            "label_filter": request.label_filter, "name_regex": request.name_regex,
            "names": [w.full_name for _, w in chosen], "packages": list(packages),
            "include": None if request.include is None else sorted(request.include),
            "seed": request.seed, "timeout": request.timeout,
            "data_file": str(folder / "coverage.sqlite"), "progress": progress,
            "extra": [extra.spec] if extra is not None else []}


def collect_map(request: MapRequest, *, commit: str, dirty: bool, core_root: Path | None = None,
                progress: bool = False, children: ChildProcesses | None = None,
                python: str | None = None) -> MapResult:
    """Map ``request``'s workloads for ``commit`` (the commit of the scheduler_core under
    ``core_root``; ``dirty``: its working tree differs), and ``request.generated`` generated
    scenarios after them (:mod:`bench.coverage.generated`). Raises bench.selection.BadInput
    for a selection that is bad or empty, CoverageRunError when the child fails as a whole;
    a workload that fails is in the map with its status and error."""
    started = time.perf_counter()
    packages = tuple(dict.fromkeys(("scheduler_core", *request.packages)))
    chosen = select_workloads(load_test_cases(request.configs), request.label_filter,
                              request.name_regex)
    core_root = core_root or _core_root()
    children = children or ChildProcesses()
    with tempfile.TemporaryDirectory(prefix="schedperf-coverage-") as tmp:
        folder = Path(tmp)
        extra = (prepare_generated(folder / "generated", seed=request.generated_seed,
                                   count=request.generated, run_seed=request.seed,
                                   taken=[w.full_name for _, w in chosen])
                 if request.generated else None)
        spec = _spec(request, chosen, packages, folder, progress, extra)
        result, code, stderr = _run_child(spec, folder, core_root=core_root, progress=progress,
                                          children=children, python=python or sys.executable)
        _check(result, code, stderr, core_root)
        meta = {"label_filter": request.label_filter, "name_regex": request.name_regex,
                "configs": spec["configs"], "seed": request.seed,
                "coverage_version": result.get("coverage_version"),
                "python": result.get("python"), "core_root": str(core_root),
                "import_errors": result.get("import_errors", []),
                **_commit_meta((core_root / "scheduler_core").resolve().parent, commit)}
        if extra is not None:
            meta["generated"] = {"seed": request.generated_seed, "count": request.generated}
        everything = [*chosen, *(extra.chosen if extra is not None else [])]
        cmap, unparsed = build_map(
            folder / "coverage.sqlite", roots=result["roots"], packages=packages,
            include=request.include, outcomes=_outcomes(everything, result), commit=commit,
            dirty=dirty, meta=meta)
    if extra is not None:
        cmap = replace(cmap, generated=extra.origins)
    return MapResult(cmap, list(result.get("import_errors", [])), unparsed,
                     time.perf_counter() - started)


def _has_generated(cmap: CoverageMap, request: MapRequest) -> bool:
    """Whether ``cmap`` holds the generated scenarios ``request`` asks for, run as asked."""
    have = {(g.seed, g.index) for g in cmap.generated}
    return (cmap.meta.get("seed") == request.seed
            and all((request.generated_seed, i) in have for i in range(request.generated)))


def load_or_collect(store: Path, request: MapRequest, *, commit: str, dirty: bool,
                    core_root: Path | None = None,
                    collect: Callable[..., MapResult] = collect_map,
                    **collect_kw: Any) -> tuple[CoverageMap, MapResult | None]:
    """The map of ``commit`` for ``request``: the stored one when it will do (a clean map of
    that very commit, of the request's packages and files and every selected workload), else a new
    one, computed and stored. A dirty working tree is always mapped anew: what it was when a
    map was stored is not known. Returns (map, the MapResult when computed, else None)."""
    if not dirty:
        names = [w.full_name for _, w in select_workloads(load_test_cases(request.configs),
                                                          request.label_filter,
                                                          request.name_regex)]
        stored = read_map(store, commit, files=request.include, workloads=names)
        packages = {"scheduler_core", *request.packages}
        if (stored is not None and packages <= set(stored.packages)
                and (not request.generated or _has_generated(stored, request))):
            return stored, None
    result = collect(request, commit=commit, dirty=dirty, core_root=core_root, **collect_kw)
    write_map(store, result.cmap)
    return result.cmap, result
