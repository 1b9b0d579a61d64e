"""The process that runs workloads under coverage.py, started by :mod:`bench.coverage.collect`::

    python -P -m bench.coverage.child SPEC.json RESULT.json

Nothing but the standard library and coverage.py is imported before the tracer starts, so
that every line of the mapped packages is seen from their import on. Then, in order:

1. coverage starts (``branch=True``; ``source_pkgs`` = the spec's packages, or ``include`` =
   the spec's files only, found through ``importlib.util.find_spec`` of their top-level
   package, which locates it without running it);
2. every module of the packages is imported, in the empty context: module-level lines are
   import-time, never a workload's (a module a workload imported lazily would otherwise have
   its module-level lines attributed to that workload);
3. the configs are loaded and the workloads selected (context ``schedperf:load``) as
   ``schedperf run`` selects them; they must be the spec's ``names``; then the same for
   each of the spec's ``extra`` selections (generated scenarios, written by the parent);
4. each workload runs as ``schedperf run`` runs it (``run_workload``, the spec's seed and
   wall-time limit, the virtual clock) in a context of its own, named
   ``<test case>/<workload>``; its cost is the process's CPU seconds over the run. A workload
   that fails is an outcome (its status and reason); an exception out of the harness is
   status ``error`` with its cause;
5. coverage stops and saves its data file; RESULT.json (written after every workload too, so
   that a crash leaves what finished) lists the outcomes, where each package was imported
   from and the modules that failed to import.

Exit status: 0 RESULT.json written with every workload's outcome; 2 the spec could not be run
(RESULT.json has ``error``); 1 a crash.

This process is never a measurement: ``schedperf run`` and compare's workers never import
this module, and the tracer lives and dies with this process.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import coverage

__all__ = ["LOAD_CONTEXT", "main"]

LOAD_CONTEXT = "schedperf:load"  # loading configs: outside every workload (no "/" in it)
_GLOB_SPECIAL = "*?[]"


def _write_json(path: str, data: dict[str, Any]) -> None:
    # imported here, not before the tracer starts (see the module doc); stdlib only
    from bench.measure.spec import atomic_write_json

    atomic_write_json(path, data)


def package_roots(packages: list[str]) -> dict[str, str]:
    """{package: the sys.path folder its top-level package is found in}, without running
    any of them (``find_spec`` of a top-level name only locates it)."""
    roots = {}
    for pkg in packages:
        top = pkg.split(".")[0]
        spec = importlib.util.find_spec(top)
        if spec is None or spec.origin is None:
            raise LookupError(f"package {pkg!r} cannot be found on sys.path")
        origin = Path(spec.origin).resolve()
        roots[pkg] = str(origin.parents[1] if spec.submodule_search_locations else
                         origin.parent)
    return roots


def _coverage(spec: dict[str, Any], roots: dict[str, str]) -> coverage.Coverage:
    include = spec.get("include")
    common = {"data_file": spec["data_file"], "branch": True, "config_file": False}
    if include is None:
        return _with_contexts(coverage.Coverage(source_pkgs=list(spec["packages"]), **common))
    root_of = {pkg.split(".")[0]: root for pkg, root in roots.items()}
    patterns = []
    for key in include:
        root = root_of.get(key.split("/")[0])
        if root is None or any(c in _GLOB_SPECIAL for c in root + key):
            raise ValueError(f"include file {key!r}: not under a mapped package's folder, "
                             "or its path holds one of * ? [ ]")
        patterns.append(os.path.join(root, key))
    return _with_contexts(coverage.Coverage(include=patterns, **common))


def _with_contexts(cov: coverage.Coverage) -> coverage.Coverage:
    # the C tracer supports dynamic contexts (sys.monitoring does not); coverage.py falls
    # back to its Python tracer, which does too, where the C one is missing
    cov.set_option("run:core", "ctrace")
    return cov


def _import_all(packages: list[str]) -> list[dict[str, str]]:
    import pkgutil

    failed = []

    def note(name: str) -> None:
        failed.append({"module": name, "error": f"{type(sys.exc_info()[1]).__name__}: "
                                                 f"{sys.exc_info()[1]}"})

    for pkg in packages:
        try:
            module = importlib.import_module(pkg)
        except Exception:
            note(pkg)
            continue
        path = getattr(module, "__path__", None)
        if path is None:
            continue
        for info in pkgutil.walk_packages(path, pkg + ".", onerror=note):
            try:
                importlib.import_module(info.name)
            except Exception:
                note(info.name)
    return failed


def _select(spec: dict[str, Any]) -> list[Any]:
    """The spec's selection, then each of its ``extra`` selections (generated scenarios:
    configs, label_filter, name_regex, names of their own), in that order."""
    from bench.selection import load_test_cases, select_workloads

    chosen = []
    for part in (spec, *spec.get("extra", ())):
        found = select_workloads(load_test_cases([Path(p) for p in part["configs"]]),
                                 part["label_filter"], part["name_regex"])
        names = [w.full_name for _, w in found]
        if names != list(part["names"]):
            raise ValueError(f"the selection here ({len(names)} workloads) is not the one "
                             f"asked for ({len(part['names'])}): the configs changed in "
                             "between?")
        chosen += found
    return chosen


def _cause(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)
    at = f" (at {where[-1].filename}:{where[-1].lineno})" if where else ""
    return f"{type(exc).__name__}: {exc}{at}"


def _run_all(cov: coverage.Coverage, chosen: list[Any], spec: dict[str, Any],
             result: dict[str, Any], out: str) -> None:
    from workloads.runner import run_workload

    for i, (tc, w) in enumerate(chosen, 1):
        result["running"] = w.full_name
        _write_json(out, result)
        cov.switch_context(w.full_name)
        started, wall = time.process_time(), time.perf_counter()
        try:
            run = run_workload(tc, w, seed=int(spec["seed"]), timeout=spec.get("timeout"))
            status, error = run.status, run.reason
        except Exception as exc:  # the harness raised: an outcome, with its cause
            status, error = "error", _cause(exc)
        cost = time.process_time() - started
        cov.switch_context("")
        result["workloads"].append({"name": w.full_name, "status": status, "error": error,
                                    "cost_seconds": cost,
                                    "wall_seconds": time.perf_counter() - wall})
        result["running"] = None
        _write_json(out, result)
        if spec.get("progress"):
            print(f"coverage [{i}/{len(chosen)}] {w.full_name}: {status} "
                  f"({cost:.1f} s CPU)", file=sys.stderr, flush=True)


def run(spec: dict[str, Any], out: str) -> int:
    result: dict[str, Any] = {"workloads": [], "roots": {}, "import_errors": [],
                              "coverage_version": coverage.__version__,
                              "python": sys.version.split()[0], "error": None,
                              "running": None}
    try:
        roots = package_roots(list(spec["packages"]))
        cov = _coverage(spec, roots)
    except (LookupError, ValueError, coverage.CoverageException) as exc:
        result["error"] = str(exc)
        _write_json(out, result)
        return 2
    result["roots"] = roots
    cov.start()
    try:
        result["import_errors"] = _import_all(list(spec["packages"]))
        cov.switch_context(LOAD_CONTEXT)
        try:
            chosen = _select(spec)
        except Exception as exc:  # BadInput, a config error: the spec cannot be run
            result["error"] = f"selecting the workloads: {exc}"
            return 2
        cov.switch_context("")
        _run_all(cov, chosen, spec, result, out)
    finally:
        cov.stop()
        cov.save()
        core = sys.modules.get("scheduler_core")
        where = getattr(core, "__file__", None)
        result["core_file"] = str(Path(where).resolve()) if where else None
        _write_json(out, result)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -P -m bench.coverage.child SPEC.json RESULT.json", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as fh:
        spec = json.load(fh)
    return run(spec, args[1])


if __name__ == "__main__":
    sys.exit(main())
