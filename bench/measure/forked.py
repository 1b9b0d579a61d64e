"""Instruction counting in one process per side: every workload forks off the start-up.

    python -P -m bench.measure.forked --spec SPEC.json --out RESULT.json [--jobs N] [--timeout S]

:mod:`bench.measure.instructions` runs this under ``valgrind --tool=cachegrind
--cachegrind-out-file=cachegrind.out.%p``. Cachegrind's counters live in the process's memory,
so a forked child starts with the count of its parent so far and writes its own output file
(named by its pid) when it exits. The process:

1. starts once: imports, :func:`~bench.measure.worker.fixed_numpy_entropy`, where
   scheduler_core comes from, every workload's config (the spec's mode must be
   ``instructions`` and ``stop_after`` ``all``), then the modules ``preimport.json`` names
   (the orchestrator lists there what the native warm-up's workloads imported, so that no
   counted process imports a module lazily: :func:`bench.measure.preimport.preimport`);
2. forks one child *C* per workload, each after a ``gc.collect()`` and ``gc.freeze()``
   (:func:`bench.measure.preimport.freeze_before_counting`), all before any of them
   runs (so that what a child starts from depends on its index alone, not on which others
   have finished). A child waits for a token on a pipe, so that ``--jobs`` run at a time; the
   parent hands the token on when a child ends. C runs the workload with
   ``wall_clock_metrics=False``. Where ``stop_after="setup"`` would stop
   (``at_setup_end`` of :func:`workloads.runner.execute_workload`), C forks twice:

   * *S* raises an UnsupportedWorkload from the hook, so the runner ends the run there and
     builds its result, as a ``stop_after="setup"`` run does; S writes ``w<k>.setup.json``;
   * *F* returns into the run, goes through the measured section and writes
     ``w<k>.full.json``;
   * C writes both pids to ``w<k>.pids.json``, waits for both, adds how they ended and
     leaves. Nothing C does after the forks is counted anywhere.

   Both S and F leave with ``os._exit``. Ir(S) = start-up + set-up + ending the run, and
   Ir(F) = start-up + set-up + measured section + ending the run: the measured count is
   Ir(F) - Ir(S), the same subtraction as two separate stop_after "all" / "setup" runs. Both
   are forked children of C, so both pay the same after-fork work (``random`` reseeds itself
   in every forked child); F's count also holds the few hundred instructions C runs between
   the two forks. A workload that fails or is unsupported before the set-up ends forks
   nothing: C writes ``w<k>.alone.json``;
3. waits for every C and writes RESULT.json: the usual worker result plus ``forked``, one
   entry per workload in spec order (:data:`FORKED_FIELDS`).

S and F never touch a pid, nor anything else whose value the OS chooses: file names come from
the workload's index.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from bench.measure.preimport import freeze_before_counting, preimport

__all__ = ["FORKED_FIELDS", "main", "run_forked"]

# one entry of RESULT.json's "forked" list
FORKED_FIELDS = {
    "name": "the workload",
    "pid": "pid of C",
    "setup_pid": "pid of S (its cachegrind file: start-up + set-up), null when not forked",
    "full_pid": "pid of F (start-up + set-up + measured section), null when not forked",
    "setup_pods": "pods bound when the set-up ended (null when not forked)",
    "exit_status": "C's exit status (0: it and what it forked exited 0; negative: signal)",
    "setup_status": "S's exit status, null when not forked (negative: killed by a signal)",
    "full_status": "F's exit status, likewise",
    "problem": "why there is no count (crash, signal, timeout), else null",
    "seconds": "wall seconds from C's turn until it was reaped",
    "cpu_seconds": "CPU seconds of C, S and F (start-up excluded: it happened before)",
    "measurement": "the WorkloadMeasurement as F wrote it (C, when not forked)",
}
_KEEP: list[Any] = []  # finished runs, never freed (os._exit skips their teardown)
_EXIT_CRASH = 1  # a child raised
# optional, in the run's folder: module names to import before forking (see preimport)
SETUP_END_REASON = "stopped at the set-up end (the set-up run of an instruction count)"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.measure.forked",
                                description="Count a spec's workloads in one process that "
                                            "forks per workload (docs/measurement.md).")
    p.add_argument("--spec", required=True, help="SPEC.json (mode instructions)")
    p.add_argument("--out", required=True, help="RESULT.json to write (atomically)")
    p.add_argument("--jobs", type=int, default=1, help="workloads run at a time [1]")
    p.add_argument("--timeout", type=float, help="wall seconds per workload")
    return p


def _flush() -> None:
    sys.stdout.flush()
    sys.stderr.flush()


def _write_json(name: str, data: Any) -> None:
    """``name`` (relative, fixed per workload) through ``.<name>.tmp`` and os.replace."""
    tmp = "." + name + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data))
    os.replace(tmp, name)


def _child(k: int, tc: Any, w: Any, spec: Any, execute: Callable[..., Any],
           stop: type[Exception], modules_out: str | None, tokens: int) -> NoReturn:
    """C: wait for a token on the pipe ``tokens``, then run workload ``k``; at the set-up end
    fork S and F (see the module docstring)."""
    code = _EXIT_CRASH
    tag = f"w{k:03d}"
    state: dict[str, Any] = {"role": "alone", "setup_pods": None}
    try:
        if os.read(tokens, 1) != b".":  # the parent is gone
            os._exit(code)
        os.close(os.open(tag + ".started", os.O_WRONLY | os.O_CREAT, 0o644))

        def at_setup_end(run: Any) -> None:
            state["setup_pods"] = run.cluster.bind_count
            _flush()
            setup_pid = os.fork()
            if setup_pid == 0:  # S: end the run here, as stop_after="setup" would
                state["role"] = "setup"
                raise stop(SETUP_END_REASON)
            full_pid = os.fork()
            if full_pid == 0:  # F: return into the run, through the measured section
                state["role"] = "full"
                return
            _supervise(tag, setup_pid, full_pid)  # C: counts nothing from here on

        result, run = execute(tc, w, seed=spec.seed, clock="virtual", timeout=None,
                              sample_interval=spec.sample_interval, wall_clock_metrics=False,
                              plugin_sample_percent=0, stop_after="all",
                              at_setup_end=at_setup_end)
        _KEEP.append((result, run))
        from bench.measure.session import measurement_of

        m = measurement_of(w, result, run)
        role = state["role"]
        _write_json(f"{tag}.{role}.json", {"setup_pods": state["setup_pods"],
                                           "measurement": dict(vars(m))})
        if modules_out:  # native warm-up only: what this process imported
            _write_json(f"{tag}.{role}.modules.json", _imported())
            _write_json(f"{tag}.{role}.names.json", _imported_names())
        code = 0
    except BaseException:
        import traceback

        traceback.print_exc()
        with (contextlib.suppress(OSError),  # the why, for this workload's problem
              open(f"{tag}.{state['role']}.error", "w", encoding="utf-8") as fh):
            fh.write(traceback.format_exc())
    _flush()
    os._exit(code)


def _supervise(tag: str, setup_pid: int, full_pid: int) -> NoReturn:
    """C after forking S and F: record their pids, wait for both, record how they ended and
    leave with status 0 when both exited 0, else 1."""
    info: dict[str, Any] = {"setup_pid": setup_pid, "full_pid": full_pid}
    _write_json(tag + ".pids.json", info)
    for role, pid in (("setup", setup_pid), ("full", full_pid)):
        info[role + "_status"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    _write_json(tag + ".pids.json", info)
    _flush()
    os._exit(0 if info["setup_status"] == info["full_status"] == 0 else 1)


def _imported() -> list[str]:
    files = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
    return sorted(f for f in files if f and f.endswith(".py"))


def _imported_names() -> list[str]:
    """Names of the imported modules that come from files (what :func:`preimport` takes)."""
    return sorted(n for n, m in list(sys.modules.items())
                  if n != "__main__" and getattr(m, "__file__", None))


def _read_json(name: str) -> Any:
    try:
        with open(name, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _kill(pid: int | None) -> None:
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def run_forked(chosen: Sequence[tuple[Any, Any]], spec: Any, *, jobs: int = 1,
               timeout: float | None = None) -> list[dict[str, Any]]:
    """Fork one child per workload (``jobs`` at a time) in the current folder; the entries
    of RESULT.json's ``forked`` list, in ``chosen`` order."""
    from bench.measure.worker import MODULES_OUT
    from workloads.ops.errors import UnsupportedWorkload
    from workloads.runner import execute_workload

    class StopAtSetupEnd(UnsupportedWorkload):
        """Raised by S in the set-up-end hook: the runner ends the run there."""

    modules_out = os.environ.get(MODULES_OUT)
    n = len(chosen)
    # every child is forked here, before any of them runs: the parent's state at the k-th
    # fork (hence the heap layout the child starts from, which decides, for example, the
    # order of sets of objects hashed by address) depends on k alone, never on which child
    # finished first. A child runs once it reads a token from the pipe (``jobs`` of them)
    tokens_r, tokens_w = os.pipe()
    pids = [0] * n
    for k in range(n):
        freeze_before_counting()  # as a separate worker does (bench.measure.preimport)
        _flush()
        pid = os.fork()
        if pid == 0:
            os.close(tokens_w)  # so that the pipe ends (EOF) if the parent dies
            _child(k, chosen[k][0], chosen[k][1], spec, execute_workload, StopAtSetupEnd,
                   modules_out, tokens_r)
        pids[k] = pid
    # the parent keeps the read end open too: a child that exited before being reaped no
    # longer reads, and a token written when every remaining child has exited would
    # otherwise fail with EPIPE (surplus tokens just stay in the pipe)
    os.write(tokens_w, b"." * min(max(1, jobs), n))
    running = {pid: k for k, pid in enumerate(pids)}
    codes = [0] * n
    seconds = [0.0] * n
    cpu = [0.0] * n
    timed_out = [False] * n
    while running:
        if timeout is None:
            pid, status, usage = os.wait4(-1, 0)
        else:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if not pid:
                now = time.time()
                for k in running.values():
                    started = _started(k)
                    if not timed_out[k] and started is not None and now - started > timeout:
                        timed_out[k] = True
                        forked = _read_json(f"w{k:03d}.pids.json") or {}
                        _kill(pids[k])  # first, so that it cannot fork any more
                        _kill(forked.get("setup_pid"))
                        _kill(forked.get("full_pid"))
                time.sleep(0.05)
                continue
        k = running.pop(pid, -1)
        if k < 0:
            continue
        if running:
            os.write(tokens_w, b".")  # its turn goes to the next child
        codes[k] = os.waitstatus_to_exitcode(status)
        started = _started(k)
        seconds[k] = time.time() - started if started is not None else 0.0
        cpu[k] = usage.ru_utime + usage.ru_stime
        if timeout is not None and seconds[k] > timeout:
            # it ended between two polls but over its budget: timed out all the same, so the
            # verdict never depends on how fast the machine finished the workload
            timed_out[k] = True
    os.close(tokens_w)
    os.close(tokens_r)
    return [_entry(k, w.full_name, pids[k], codes[k], timed_out[k] and timeout, seconds[k],
                   cpu[k]) for k, (_tc, w) in enumerate(chosen)]


def _started(k: int) -> float | None:
    """When child ``k`` got its turn (the time stamp of its ``w<k>.started`` file)."""
    try:
        return os.stat(f"w{k:03d}.started").st_mtime
    except OSError:
        return None


def _entry(k: int, name: str, pid: int, code: int, timed_out: float | None, seconds: float,
           cpu: float) -> dict[str, Any]:
    """RESULT.json's ``forked`` entry of workload ``k`` from the files its processes left."""
    tag = f"w{k:03d}"
    forked = _read_json(tag + ".pids.json")
    entry: dict[str, Any] = {
        "name": name, "pid": pid, "setup_pid": None, "full_pid": None, "setup_pods": None,
        "exit_status": code, "setup_status": None, "full_status": None, "problem": None,
        "seconds": seconds, "cpu_seconds": cpu, "measurement": None}
    if forked is not None:
        entry.update(forked)
        full = _read_json(tag + ".full.json")
        setup = _read_json(tag + ".setup.json")
        runs = (("full", full, "the measured run"), ("setup", setup, "the set-up run"))
    else:
        full = setup = _read_json(tag + ".alone.json")
        runs = (("alone", full, "the run"),)
    if full is not None:
        entry["measurement"] = full["measurement"]
        entry["setup_pods"] = full["setup_pods"]
    problems = []
    if timed_out:
        problems.append(f"timed out after {timed_out:g} s (wall time): killed or ended over "
                        "its budget")
    for role, written, what in runs:
        pid_of = entry.get(f"{role}_pid") or pid
        status = entry.get(f"{role}_status", code) if forked is not None else code
        if status is None:
            status = code
        if status != 0:
            problems.append(f"{what} (pid {pid_of}) {_describe(status)}" + _error_tail(tag, role))
        elif written is None:
            problems.append(f"{what} (pid {pid_of}) wrote no measurement")
    if not problems and forked is not None and code != 0:
        problems.append(f"the process that forked them (pid {pid}) {_describe(code)}")
    if problems:
        entry["problem"] = "; ".join(problems)
    return entry


def _error_tail(tag: str, role: str, lines: int = 12) -> str:
    """``:`` and the end of the traceback a crashed child of ``role`` wrote, if any."""
    try:
        with open(f"{tag}.{role}.error", encoding="utf-8", errors="replace") as fh:
            text = fh.read().strip()
    except OSError:
        return ""
    return ":\n" + "\n".join(text.splitlines()[-lines:]) if text else ""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from bench.measure.coreinfo import core_info, harness_info
    from bench.measure.launch import FORKED_KEY, PREIMPORT_FILE
    from bench.measure.session import resolve_spec_workloads, worker_env
    from bench.measure.spec import SpecError, WorkerResult, WorkerSpec, atomic_write_json
    from bench.measure.worker import MODULES_OUT, fixed_numpy_entropy

    result = WorkerResult(core={}, python=sys.version.split()[0], executable=sys.executable,
                          pid=os.getpid(), env={}, spec={})
    try:
        spec = WorkerSpec.load(args.spec)
        if spec.mode != "instructions" or spec.stop_after != "all":
            raise SpecError("bench.measure.forked counts mode instructions with stop_after "
                            f"all, got mode {spec.mode!r}, stop_after {spec.stop_after!r}")
    except SpecError as exc:
        result.error = str(exc)
    else:
        fixed_numpy_entropy()
        import numpy

        result.numpy = numpy.__version__
        result.env = worker_env(spec.mode)
        result.spec = spec.to_dict()
        try:
            result.core = core_info(allow_subprocess=False)
            result.harness = harness_info()
            chosen = resolve_spec_workloads(spec)
            preimport(_read_json(PREIMPORT_FILE) or ())
        except ImportError as exc:
            result.error = f"cannot import scheduler_core: {exc}"
        except SpecError as exc:
            result.error = str(exc)
    data = result.to_dict()
    if result.error is None:
        entries = run_forked(chosen, spec, jobs=args.jobs, timeout=args.timeout)
        data["workloads"] = [e["measurement"] for e in entries if e["measurement"]]
        data[FORKED_KEY] = entries
    atomic_write_json(args.out, data)
    modules_out = os.environ.get(MODULES_OUT)
    if modules_out:
        files = set(_imported())
        for k in range(len(data.get(FORKED_KEY, ()))):
            for role in ("alone", "setup", "full"):
                files.update(_read_json(f"w{k:03d}.{role}.modules.json") or ())
        atomic_write_json(modules_out, sorted(files))
    if result.error is not None:
        print(f"bench.measure.forked: {result.error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    from bench.measure.spec import exit_with

    exit_with(main)
