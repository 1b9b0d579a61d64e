"""Instruction counts of workloads: the worker run under ``valgrind --tool=cachegrind``.

    count_instructions(spec, *, jobs=2) -> {workload name: measured instructions}
    measure_instructions(spec, *, jobs=2, ...) -> {workload name: InstructionCount}

Each count subtracts two cachegrind totals (``--cache-sim=no``: only ``Ir``, the instructions
executed, is counted): that of a process that ran the start-up and the workload's set-up (the
ops before the first one that collects metrics: createNodes, initial pods, ...) from that of
a process that ran the start-up and the whole workload. ``method="fork"`` (the default) gets
both processes per workload by forking one process per side at the set-up end
(:mod:`bench.measure.forked`), so the start-up is paid once per side;
``method="separate"`` runs two worker processes per workload, ``stop_after="all"`` and
``stop_after="setup"``. Each total is read from the ``summary:`` line of cachegrind's output
file, never from valgrind's stderr text.

What makes the count repeatable (docs/measurement.md has the details and the numbers):

* the worker runs in mode ``instructions``: virtual clock, and nothing that reads or branches
  on wall time (no throughput sampling, no RSS polling, psutil not even imported, no progress
  output, the scheduler's metrics recorder off, the commit read from .git files instead of a
  git subprocess), numpy.random's import-time entropy fixed, no random temporary names;
* ``PYTHONHASHSEED=0`` (str hashes decide set and dict layouts, hence iteration work) and one
  thread for OpenMP / OpenBLAS / MKL / polars;
* forked: every child forked before any runs, after a ``gc.collect()``, and nothing after
  a fork that depends on a pid (see :mod:`bench.measure.forked`);
* a native warm-up run of the same spec first (``warm_up=True``), so that every module's
  bytecode cache is written before the counted runs (a fresh git worktree has none, and
  compiling a module costs far more than running it); when a source file the warm-up
  imported is modified while counting, everything is counted again;
* the worker leaves with ``os._exit``, so freeing the run's objects is never counted;
* each worker runs with ``python -P`` in its own folder with the same relative file names, so
  the command line is the same in every run.

Counts do not depend on machine load, so workloads run ``jobs`` at a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.interrupt import deferred_signals
from bench.measure.children import ChildProcesses, map_stoppable
from bench.measure.launch import (
    DETERMINISTIC_ENV,
    FORKED_KEY,
    FORKED_MODULE,
    HARNESS_ROOT,
    PREIMPORT_FILE,
    WORKER_MODULE,
    child_env,
)
from bench.measure.spec import SpecError, WorkerResult, WorkerSpec, run_problem
from bench.measure.worker import MODULES_OUT, NAMES_SUFFIX

__all__ = [
    "DETERMINISTIC_ENV",
    "CachegrindError",
    "InstructionCount",
    "InstructionCountError",
    "child_env",
    "count_instructions",
    "measure_instructions",
    "parse_cachegrind_total",
    "run_worker",
    "valgrind_available",
]

METHODS = ("fork", "separate")  # measure_instructions(method=...)
CACHEGRIND_FILE = "cachegrind.out"
# forked runs: one output file per process, named by its pid (valgrind expands %p at exit)
FORKED_CACHEGRIND_FILE = "cachegrind.out.%p"
MODULES_FILE = "modules.json"  # what a native warm-up run imported (relative to its folder)
# file systems stamp times from a coarse clock that may lag time.time_ns() by a few ms
EDIT_SLACK_NS = 50_000_000


class CachegrindError(RuntimeError):
    """Cachegrind's output file is missing or has no ``summary:`` total."""


class InstructionCountError(RuntimeError):
    """count_instructions: some workload has no measured count (failed, unsupported, ...)."""

    def __init__(self, failures: Mapping[str, InstructionCount]) -> None:
        self.failures = dict(failures)
        lines = [f"{name}: {c.status}: {c.reason}" for name, c in self.failures.items()]
        super().__init__("no instruction count for " + "; ".join(lines))


@dataclass
class InstructionCount:
    """One workload's counts. ``measured`` = ``total`` - ``setup`` (None unless ``ok``)."""

    name: str
    status: str  # the runner's status of the whole run, or "error"
    reason: str | None = None
    # Ir of a process that ran the start-up and the whole workload (separate: the
    # stop_after="all" worker; fork: G, forked at the set-up end)
    total: int | None = None
    # Ir of a process that ran the start-up and the set-up only (separate: the
    # stop_after="setup" worker; fork: C, which left at the set-up end)
    setup: int | None = None
    measured: int | None = None
    scheduled_pods: int = 0  # in the whole run
    setup_pods: int = 0  # bound when the set-up ended
    measured_pods: int = 0
    # separate: wall and CPU time of the two counted processes, CPU time of the "all" one.
    # fork: wall time from forking C until it ended, and CPU time of C and G (both figures),
    # without the start-up, which the side's process paid once (process_*)
    valgrind_seconds: float = 0.0
    valgrind_cpu_seconds: float = 0.0
    valgrind_all_cpu_seconds: float = 0.0
    # the native warm-up: separate: its whole process; fork: its C and G, as above
    native_seconds: float | None = None
    native_cpu_seconds: float | None = None
    # fork: wall and CPU time of the side's whole counted process (every workload)
    process_seconds: float | None = None
    process_cpu_seconds: float | None = None
    core: dict[str, Any] = field(default_factory=dict)

    @property
    def slowdown(self) -> float | None:
        """CPU time under valgrind over the native warm-up's: separate, of the stop_after="all"
        processes (interpreter start included); fork, of C and G (start-up excluded)."""
        if not self.native_cpu_seconds or not self.valgrind_all_cpu_seconds:
            return None
        return self.valgrind_all_cpu_seconds / self.native_cpu_seconds

    @property
    def per_pod(self) -> float | None:
        if self.measured is None or not self.measured_pods:
            return None
        return self.measured / self.measured_pods


def valgrind_available(valgrind: str = "valgrind") -> bool:
    return shutil.which(valgrind) is not None


def parse_cachegrind_total(path: Path | str, event: str = "Ir") -> int:
    """The ``event`` total of a cachegrind output file (its ``summary:`` line, in the order
    of the ``events:`` line)."""
    events: list[str] | None = None
    summary: list[str] | None = None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("events:"):
                    events = line.split()[1:]
                elif line.startswith("summary:"):
                    summary = line.split()[1:]
    except OSError as exc:
        raise CachegrindError(f"cannot read cachegrind output {path}: {exc}") from None
    if events is None or summary is None:
        raise CachegrindError(f"{path}: no events:/summary: line (cachegrind did not finish?)")
    if event not in events or len(summary) != len(events):
        raise CachegrindError(f"{path}: no {event} total (events: {' '.join(events)})")
    return int(summary[events.index(event)])


@dataclass
class _Run:
    """One worker process: its exit, RESULT.json (when written) and cachegrind total."""

    returncode: int
    seconds: float  # wall time
    cpu_seconds: float  # user + system time of the process (and valgrind, around it)
    result: WorkerResult | None
    instructions: int | None
    log: str
    raw: dict[str, Any] | None = None  # RESULT.json as read (forked runs: its "forked" list)

    def problem(self) -> str | None:
        return run_problem(self.result, self.returncode, self.log)


def run_worker(spec: WorkerSpec, folder: Path, *, python: str | None = None,
               env: Mapping[str, str] | None = None, valgrind: str | None = "valgrind",
               timeout: float | None = None, hash_seed: int | None = 0,
               extra_env: Mapping[str, str] | None = None,
               children: ChildProcesses | None = None) -> _Run:
    """Run the worker once in ``folder`` (created): under cachegrind unless ``valgrind`` is
    None. File names inside the folder are fixed, so every run has the same command line.
    ``children`` registers the process (see bench.measure.children)."""
    run = _run_process(spec, folder, [WORKER_MODULE], CACHEGRIND_FILE, python=python, env=env,
                       valgrind=valgrind, timeout=timeout, hash_seed=hash_seed,
                       extra_env=extra_env, children=children)
    if valgrind is not None and run.returncode == 0:
        run.instructions = parse_cachegrind_total(folder / CACHEGRIND_FILE)
    return run


def _run_process(spec: WorkerSpec, folder: Path, module_args: list[str], out_file: str, *,
                 python: str | None, env: Mapping[str, str] | None, valgrind: str | None,
                 timeout: float | None, hash_seed: int | None,
                 extra_env: Mapping[str, str] | None = None,
                 children: ChildProcesses | None = None) -> _Run:
    """``python -P -m <module_args> --spec spec.json --out result.json`` in ``folder``, under
    cachegrind (output file ``out_file``) unless ``valgrind`` is None. The process runs in a
    session of its own, registered with ``children``; whatever is left of its process group
    (forked runs: a grandchild whose parent was killed) is killed when it ends, and all of it
    when this is interrupted."""
    children = children if children is not None else ChildProcesses()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.json").write_text(spec.to_json(), encoding="utf-8")
    (folder / "result.json").unlink(missing_ok=True)
    for old in folder.glob("cachegrind.out*"):
        old.unlink()
    cmd = [python or sys.executable, "-P", "-m", module_args[0],
           "--spec", "spec.json", "--out", "result.json", *module_args[1:]]
    if valgrind is not None:
        cmd = [valgrind, "--tool=cachegrind", "--cache-sim=no",
               f"--cachegrind-out-file={out_file}", *cmd]
    started = time.perf_counter()
    with open(folder / "worker.log", "wb") as log:
        proc = children.popen(cmd, cwd=folder,
                              env={**child_env(env, hash_seed=hash_seed), **(extra_env or {})},
                              stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            code, cpu = _wait(proc, started + timeout if timeout is not None else None)
        finally:
            children.release(proc)
    seconds = time.perf_counter() - started
    text = (folder / "worker.log").read_text(encoding="utf-8", errors="replace")
    if code == -1:
        text += f"\ntimed out after {timeout:g} s"
    result = None
    raw = None
    if (folder / "result.json").is_file():
        try:
            raw = json.loads((folder / "result.json").read_text(encoding="utf-8"))
            result = WorkerResult.from_dict(raw)
        except (ValueError, TypeError) as exc:
            text += f"\nunreadable result.json: {exc}"
    return _Run(code, seconds, cpu, result, None, text, raw)


def _wait(proc: subprocess.Popen[bytes], deadline: float | None) -> tuple[int, float]:
    """Reap ``proc`` with os.wait4 for its own CPU time (the machine may be loaded: CPU time
    says more about the valgrind slowdown than wall time); (-1, cpu) after killing it at
    ``deadline``."""
    timed_out = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if deadline is not None and time.perf_counter() > deadline and not timed_out:
            proc.kill()
            timed_out = True
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return (-1 if timed_out else proc.returncode), cpu


def _per_workload_configs(spec: WorkerSpec) -> dict[str, list[str]]:
    """For each workload, only the config file that defines it, so a counted worker does not
    parse a whole catalog (slow under valgrind). Falls back to the spec's configs."""
    try:
        from bench.measure.session import resolve_spec_workloads

        chosen = resolve_spec_workloads(spec)
    except (SpecError, ImportError):
        return {name: list(spec.configs) for name in spec.workloads}
    return {w.full_name: [str(tc.source)] for tc, w in chosen}


def measure_instructions(spec: WorkerSpec | Mapping[str, Any], *, jobs: int = 2,
                         python: str | None = None, env: Mapping[str, str] | None = None,
                         valgrind: str = "valgrind", timeout: float | None = None,
                         warm_up: bool = True, workdir: Path | str | None = None,
                         hash_seed: int | None = 0, attempts: int = 2,
                         method: str = "fork", children: ChildProcesses | None = None,
                         ) -> dict[str, InstructionCount]:
    """Count every workload of ``spec`` (a WorkerSpec or SPEC.json's dict; ``mode`` and
    ``stop_after`` are set here). ``python`` is the interpreter binary (default
    sys.executable: not a shell shim such as pyenv's, which valgrind would count instead);
    ``env`` the base environment (its PYTHONPATH decides which scheduler_core runs);
    ``timeout`` wall seconds per valgrind run; ``workdir`` keeps the run folders (spec.json,
    result.json, cachegrind.out, worker.log) instead of a removed temporary folder;
    ``hash_seed`` the PYTHONHASHSEED (None: random, to measure what fixing it buys).

    ``method="fork"`` (the default; "separate" where os.fork is missing) counts the whole
    spec in one valgrind process that forks per workload (:mod:`bench.measure.forked`);
    ``"separate"`` runs two valgrind processes per workload, stop_after "all" and "setup".
    Both give the same measured count up to a small constant (docs/measurement.md).

    When a ``.py`` file the workers import (as the warm-up run lists them; without warm-up,
    any under the scheduler_core and the harness) is modified while counting, a stale
    bytecode cache may have made a counted run compile it (millions of instructions):
    everything is counted again, up to ``attempts`` times in all; after that the workloads
    get status ``error``.

    Every process runs in a process group of its own, registered with ``children`` (one of
    its own by default): all are killed when counting is interrupted or fails."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "fork" and not hasattr(os, "fork"):
        method = "separate"
    if not isinstance(spec, WorkerSpec):
        spec = WorkerSpec.from_dict(spec)
    spec = spec.replace(mode="instructions", timeout=None, stop_after="all")
    if not valgrind_available(valgrind):
        raise FileNotFoundError(f"{valgrind} not found: instruction counts need valgrind")
    configs = _per_workload_configs(spec)
    specs = {name: spec.replace(workloads=(name,), configs=tuple(configs[name]))
             for name in spec.workloads}
    # forked: one process loads only the config files that define the spec's workloads
    files = list(dict.fromkeys(f for name in spec.workloads for f in configs[name]))
    whole = spec.replace(configs=tuple(files))
    children = children if children is not None else ChildProcesses()
    base: Path | None = Path(workdir) if workdir is not None else None
    changed: list[str] = []
    try:
        if base is None:
            with deferred_signals():  # made <=> removed below
                base = Path(tempfile.mkdtemp(prefix="schedperf-ir-"))
        for attempt in range(max(1, attempts)):
            folder = base / f"attempt{attempt}"
            started = time.time_ns() - EDIT_SLACK_NS
            count = _count_forked if method == "fork" else _count_once
            counts = count(whole if method == "fork" else specs, folder, jobs=jobs,
                           python=python, env=env, valgrind=valgrind, timeout=timeout,
                           warm_up=warm_up, hash_seed=hash_seed, children=children)
            sources = _imported_sources(folder) if warm_up else _sources_under(_code_roots(env))
            changed = _modified_since(sources, started)
            if not changed:
                return counts
        for c in counts.values():
            c.status, c.measured = "error", None
            c.reason = (f"source files changed while counting ({max(1, attempts)} attempts, "
                        f"e.g. {changed[0]}): counts discarded")
        return counts
    except BaseException:
        children.stop()
        raise
    finally:
        if workdir is None and base is not None:
            shutil.rmtree(base, ignore_errors=True)


def _count_forked(spec: WorkerSpec, base: Path, *, jobs: int, python: str | None,
                  env: Mapping[str, str] | None, valgrind: str, timeout: float | None,
                  warm_up: bool, hash_seed: int | None,
                  children: ChildProcesses) -> dict[str, InstructionCount]:
    """The whole spec in one forking process under cachegrind (after a native warm-up run of
    the same, in ``base/native``); the counted run is ``base/counted``."""
    counts = {name: InstructionCount(name, "error") for name in spec.workloads}
    args = [FORKED_MODULE, "--jobs", str(max(1, jobs))]
    if timeout is not None:
        args += ["--timeout", repr(float(timeout))]
    kw: dict[str, Any] = {"python": python, "env": env, "timeout": None,
                          "hash_seed": hash_seed, "children": children}
    if warm_up:
        native = _run_process(spec, base / "native", args, FORKED_CACHEGRIND_FILE,
                              valgrind=None, extra_env={MODULES_OUT: MODULES_FILE}, **kw)
        for entry in _forked_entries(native, counts):
            c = counts[entry["name"]]
            c.native_seconds, c.native_cpu_seconds = entry["seconds"], entry["cpu_seconds"]
    folder = base / "counted"
    folder.mkdir(parents=True, exist_ok=True)
    if warm_up:  # what the warm-up's workloads imported: imported before forking
        names: set[str] = set()
        for path in (base / "native").glob("w*.names.json"):
            with contextlib.suppress(OSError, ValueError):
                names.update(json.loads(path.read_text(encoding="utf-8")))
        (folder / PREIMPORT_FILE).write_text(json.dumps(sorted(names)), encoding="utf-8")
    run = _run_process(spec, folder, args, FORKED_CACHEGRIND_FILE, valgrind=valgrind, **kw)
    for entry in _forked_entries(run, counts):
        _fill_forked(counts[entry["name"]], entry, folder, run)
    return counts


def _forked_entries(run: _Run, counts: Mapping[str, InstructionCount]) -> list[dict[str, Any]]:
    """RESULT.json's "forked" entries of a forked run; when there are none (the spec could
    not be run, the process crashed), every workload gets status error with the reason."""
    problem = run.problem()
    entries = (run.raw or {}).get(FORKED_KEY)
    if problem is None and isinstance(entries, list):
        return [e for e in entries if e.get("name") in counts]
    for c in counts.values():
        if c.reason is None:
            c.status = "error"
            c.reason = problem or "the forked worker wrote no per-workload entries"
    return []


def _fill_forked(c: InstructionCount, entry: Mapping[str, Any], folder: Path,
                 run: _Run) -> None:
    c.valgrind_seconds = entry["seconds"]
    c.valgrind_cpu_seconds = c.valgrind_all_cpu_seconds = entry["cpu_seconds"]
    c.process_seconds, c.process_cpu_seconds = run.seconds, run.cpu_seconds
    c.core = run.result.core if run.result is not None else {}
    m = entry.get("measurement")
    if m is not None:
        c.scheduled_pods = m.get("scheduled_pods", 0)
        c.measured_pods = m.get("measured_pods", 0)
    c.setup_pods = entry.get("setup_pods") or 0
    if entry.get("problem") or m is None:
        c.status, c.reason = "error", entry.get("problem") or "no measurement"
        return
    c.status, c.reason = m["status"], m.get("reason")
    if entry.get("full_pid") is None or entry.get("setup_pid") is None:
        return  # failed or unsupported before the set-up ended: nothing was counted
    try:
        c.setup = parse_cachegrind_total(folder / f"cachegrind.out.{entry['setup_pid']}")
        c.total = parse_cachegrind_total(folder / f"cachegrind.out.{entry['full_pid']}")
    except CachegrindError as exc:
        c.status, c.reason = "error", str(exc)
        return
    if c.status == "ok":
        c.measured = c.total - c.setup


def _count_once(specs: Mapping[str, WorkerSpec], base: Path, *, jobs: int, python: str | None,
                env: Mapping[str, str] | None, valgrind: str, timeout: float | None,
                warm_up: bool, hash_seed: int | None,
                children: ChildProcesses) -> dict[str, InstructionCount]:
    names = list(specs)
    counts = {name: InstructionCount(name, "error") for name in names}
    folders = {name: base / f"w{i:03d}" for i, name in enumerate(names)}
    if warm_up:
        native = dict(zip(names, map_stoppable(
            lambda n: run_worker(specs[n], folders[n] / "native", python=python, env=env,
                                 valgrind=None, timeout=timeout, hash_seed=hash_seed,
                                 extra_env={MODULES_OUT: MODULES_FILE}, children=children),
            names, jobs=jobs, children=children), strict=True))
        for name, run in native.items():
            counts[name].native_seconds = run.seconds
            counts[name].native_cpu_seconds = run.cpu_seconds
    if warm_up:  # what the warm-up imported: imported by both counted runs before the workload
        for name in names:
            source = folders[name] / "native" / (MODULES_FILE + NAMES_SUFFIX)
            for stop in ("a", "s"):
                target = folders[name] / stop
                target.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(OSError):
                    (target / PREIMPORT_FILE).write_bytes(source.read_bytes())
    tasks = [(name, stop) for name in names for stop in ("all", "setup")]
    done = dict(zip(tasks, map_stoppable(
        lambda t: run_worker(specs[t[0]].replace(stop_after=t[1]), folders[t[0]] / t[1][0],
                             python=python, env=env, valgrind=valgrind, timeout=timeout,
                             hash_seed=hash_seed, children=children),
        tasks, jobs=jobs, children=children), strict=True))
    for name in names:
        _fill(counts[name], done[(name, "all")], done[(name, "setup")])
    return counts


def _code_roots(env: Mapping[str, str] | None) -> list[Path]:
    """The folders whose .py files the counted workers run: the scheduler_core the child's
    PYTHONPATH selects (else the harness's), and the harness packages."""
    entries = child_env(env)["PYTHONPATH"].split(os.pathsep)
    core = next((Path(e) / "scheduler_core" for e in entries
                 if (Path(e) / "scheduler_core" / "__init__.py").is_file()),
                HARNESS_ROOT / "scheduler_core")
    return [core.resolve(), HARNESS_ROOT / "workloads", HARNESS_ROOT / "bench"]


def _sources_under(roots: list[Path]) -> list[str]:
    out = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            out.extend(os.path.join(folder, f) for f in files if f.endswith(".py"))
    return out


def _imported_sources(folder: Path) -> list[str]:
    """The .py files the native warm-up runs under ``folder`` imported (separate: one per
    workload, w*/native; forked: one, native)."""
    files: set[str] = set()
    for path in [*folder.glob(f"w*/native/{MODULES_FILE}"),
                 *folder.glob(f"native/{MODULES_FILE}")]:
        try:
            files.update(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return sorted(files)


def _modified_since(files: list[str], since_ns: int) -> list[str]:
    """Files modified (or removed) at or after ``since_ns``."""
    out = []
    for f in files:
        try:
            if os.stat(f).st_mtime_ns >= since_ns:
                out.append(f)
        except OSError:
            out.append(f)
    return out


def _fill(c: InstructionCount, full: _Run, setup: _Run) -> None:
    c.valgrind_seconds = full.seconds + setup.seconds
    c.valgrind_cpu_seconds = full.cpu_seconds + setup.cpu_seconds
    c.valgrind_all_cpu_seconds = full.cpu_seconds
    for run in (full, setup):
        problem = run.problem()
        if problem is not None:
            c.status, c.reason = "error", problem
            return
    assert full.result is not None and setup.result is not None
    c.core = full.result.core
    w_full, w_setup = full.result.workloads[0], setup.result.workloads[0]
    c.status, c.reason = w_full.status, w_full.reason
    c.total, c.setup = full.instructions, setup.instructions
    c.scheduled_pods, c.setup_pods = w_full.scheduled_pods, w_setup.scheduled_pods
    c.measured_pods = w_full.measured_pods
    if w_setup.status != "ok":
        c.status, c.reason = w_setup.status, f"setup run: {w_setup.reason}"
    if c.status == "ok" and c.total is not None and c.setup is not None:
        c.measured = c.total - c.setup


def count_instructions(spec: WorkerSpec | Mapping[str, Any], *, jobs: int = 2,
                       **kw: Any) -> dict[str, int]:
    """Measured instructions per workload name (see :func:`measure_instructions` for the
    keywords). Raises InstructionCountError when a workload has no count."""
    counts = measure_instructions(spec, jobs=jobs, **kw)
    failures = {n: c for n, c in counts.items() if c.measured is None}
    if failures:
        raise InstructionCountError(failures)
    return {n: c.measured for n, c in counts.items() if c.measured is not None}
