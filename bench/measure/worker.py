"""The measurement worker, started in a fresh process by ``schedperf compare``::

    python -P -m bench.measure.worker --spec SPEC.json --out RESULT.json

Runs the spec's workloads in this fresh process (see :mod:`bench.measure.session`) and writes
RESULT.json atomically. scheduler_core is imported through ``sys.path`` like any module, so
the first PYTHONPATH entry holding one wins; ``-P`` keeps ``python -m`` from putting the
current folder before PYTHONPATH (RESULT.json's ``core`` records which one ran, with a
``warning`` when PYTHONPATH's was shadowed).

Exit status: 0 when RESULT.json was written with every workload's outcome (a failed workload
is an outcome, see its ``status``); 2 when the spec could not be run (RESULT.json then has
``error`` set and no workloads, when it could be written at all); 1 for a crash. In time mode
RESULT.json is rewritten after every workload, so after a crash it holds the workloads that
finished before it.

The process ends with ``os._exit`` after flushing: the interpreter's teardown (freeing every
pod, node and module) is skipped, so it costs nothing in instruction counts.

In mode ``instructions`` the worker also fixes the entropy numpy.random draws when it is
imported (it seeds a global legacy RandomState from the OS: converting those random words
takes a number of instructions that depends on their values, a few thousand up or down per
process); see :func:`fixed_numpy_entropy`. Seeded generators, such as the scheduler's, are not
affected.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["MODULES_OUT", "NAMES_SUFFIX", "fixed_numpy_entropy", "main"]

# environment variable: when set, the worker also writes there the JSON list of the Python
# source files it imported (bench.measure.instructions asks native warm-up runs for it)
MODULES_OUT = "SCHEDPERF_MODULES_OUT"
NAMES_SUFFIX = ".names"  # beside MODULES_OUT's file: the imported modules' names

_KEEP: list[Any] = []  # instructions mode: finished runs, never freed (see run_spec)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.measure.worker",
                                description="Run workloads in this process and write "
                                            "RESULT.json (docs/measurement.md).")
    p.add_argument("--spec", required=True, help="SPEC.json")
    p.add_argument("--out", required=True, help="RESULT.json to write (atomically)")
    p.add_argument("--pace", metavar="R,W", help="paced run: file descriptors to read turns "
                   "from and write hand-overs to (bench.measure.pacing; time mode)")
    p.add_argument("--slice", type=float, metavar="S",
                   help="paced run: seconds per turn [default: pacing.DEFAULT_SLICE]")
    return p


def fixed_numpy_entropy() -> bool:
    """Import numpy.random with ``SystemRandom.getrandbits`` (where numpy's SeedSequence takes
    entropy from, directly or through ``secrets``) returning fixed bits, so that the legacy
    global RandomState created at import is seeded the same in every run. Returns False when
    numpy.random was already imported (too late to change anything)."""
    if "numpy.random" in sys.modules:
        return False
    import random

    original = random.SystemRandom.getrandbits

    def fixed(self: random.SystemRandom, k: int) -> int:
        return random.Random(k).getrandbits(k)

    random.SystemRandom.getrandbits = fixed  # type: ignore[method-assign]
    try:
        import numpy.random  # noqa: F401 - binds numpy's entropy source now
    finally:
        random.SystemRandom.getrandbits = original  # type: ignore[method-assign]
    return True


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from bench.measure.session import run_spec
    from bench.measure.spec import SpecError, WorkerResult, WorkerSpec, atomic_write_json

    try:
        spec = WorkerSpec.load(args.spec)
    except SpecError as exc:
        print(f"bench.measure.worker: {exc}", file=sys.stderr)
        atomic_write_json(args.out, WorkerResult(
            core={}, python=sys.version.split()[0], executable=sys.executable,
            pid=os.getpid(), env={}, spec={}, error=str(exc)).to_dict())
        return 2
    counting = spec.mode == "instructions"
    if counting:
        fixed_numpy_entropy()
        import gc

        # the start-up's garbage is collected now, not inside some workload's measured
        # section (as a forked count does: bench.measure.forked collects before each fork;
        # bench.measure.session also freezes what survives before each counted workload)
        gc.collect()
    pacer = None
    if args.pace is not None:
        from bench.measure.pacing import DEFAULT_SLICE, TurnPacer, parse_pace

        if counting:
            print("bench.measure.worker: --pace is for time mode only", file=sys.stderr)
            return 2
        pacer = TurnPacer(*parse_pace(args.pace),
                          args.slice if args.slice is not None else DEFAULT_SLICE)
    # time mode: RESULT.json after every workload, so a crash keeps the finished ones (never
    # when counting: writing between workloads would be counted)
    partial = None if counting else (lambda r: atomic_write_json(args.out, r.to_dict()))
    result = run_spec(spec, keep_alive=_KEEP if counting else None, pacer=pacer,
                      on_workload=partial)
    atomic_write_json(args.out, result.to_dict())
    modules_out = os.environ.get(MODULES_OUT)
    if modules_out:
        files = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
        atomic_write_json(modules_out, sorted(f for f in files if f and f.endswith(".py")))
        # and their names, which a counted run imports before its workload (preimport)
        atomic_write_json(modules_out + NAMES_SUFFIX, sorted(
            n for n, m in list(sys.modules.items())
            if n != "__main__" and getattr(m, "__file__", None)))
    if result.error is not None:
        print(f"bench.measure.worker: {result.error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    from bench.measure.spec import exit_with

    exit_with(main)
