"""Paced time measurements: the two sides of a comparison take turns on the CPU.

On a shared machine the speed of the CPU drifts by 10-50 % within seconds (other tenants,
frequency, caches), so two runs one after the other differ by far more than the 2-5 % a
comparison must resolve. Paced runs fix that: both sides run the same workload at the same
time in two fresh worker processes, but only one of them runs at any moment. The running one
hands the turn over after every ``slice`` seconds (default :data:`DEFAULT_SLICE`), at the end
of a scheduling cycle, and blocks until it gets the turn back; so both see the same machine,
slice by slice, and the drift cancels in their ratio. CPU time is unaffected by the waits (a
blocked process uses none); the windows' wall time and throughput samples run on
:meth:`TurnPacer.now`, a clock that stops while the process waits (workloads.runner ``pacer``).

Protocol (one byte at a time over two pipes per worker; the orchestrator relays, so a
worker never needs to know about the other):

* orchestrator -> worker: ``g`` (your turn);
* worker -> orchestrator: ``y`` (slice over, yielding), ``d`` (finished the current workload;
  waiting for ``g`` before the next one, except after the last).

Each workload starts when the orchestrator first gives the turn for it; the pair moves to the
next workload only when both sides finished it, so the two runs of a workload overlap for
their whole length. Which side goes first alternates by workload and round (A B, B A, ...).
"""

from __future__ import annotations

import math
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.measure.children import ChildProcesses
from bench.measure.spec import WorkerResult, WorkerSpec, run_problem

__all__ = [
    "DEFAULT_SLICE",
    "DONE",
    "GO",
    "YIELD",
    "PacedRun",
    "PacingError",
    "TurnPacer",
    "parse_pace",
    "relay_turns",
    "run_paced_pair",
    "start_paced",
]

DEFAULT_SLICE = 0.005  # seconds: ~10-20 scheduling cycles; a hand-over costs ~50 µs
GO, YIELD, DONE = b"g", b"y", b"d"


class PacingError(RuntimeError):
    """The other end of a pacing pipe went away."""


def parse_pace(text: str) -> tuple[int, int]:
    """``"R,W"`` (file descriptors the worker reads its turns from / writes to)."""
    try:
        r, w = (int(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--pace must be two file descriptors R,W, got {text!r}") from None
    if r < 0 or w < 0:
        raise ValueError(f"--pace file descriptors must be >= 0, got {text!r}")
    return r, w


class TurnPacer:
    """The worker's side: ``wait_turn()`` before a workload, ``pacer()`` after every
    scheduling cycle (workloads.runner calls it), ``done()`` after a workload."""

    def __init__(self, read_fd: int, write_fd: int, slice_seconds: float = DEFAULT_SLICE,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        if not slice_seconds > 0:
            raise ValueError(f"slice must be > 0 seconds, got {slice_seconds}")
        self._r, self._w = read_fd, write_fd
        self.slice = slice_seconds
        self._clock = clock
        self.paused = 0.0  # seconds spent waiting for the turn
        self.turns = 0  # hand-overs in the middle of a workload
        self._deadline = math.inf

    def now(self) -> float:
        """Wall-clock seconds, not counting the waits for the turn."""
        return self._clock() - self.paused

    def wait_turn(self) -> None:
        t0 = self._clock()
        if os.read(self._r, 1) != GO:
            raise PacingError("the orchestrator closed the pacing pipe")
        t1 = self._clock()
        self.paused += t1 - t0
        self._deadline = t1 + self.slice

    def __call__(self) -> None:
        if self._clock() >= self._deadline:
            self._send(YIELD)
            self.turns += 1
            self.wait_turn()

    def done(self) -> None:
        self._deadline = math.inf
        self._send(DONE)

    def _send(self, msg: bytes) -> None:
        try:
            os.write(self._w, msg)
        except OSError as exc:
            raise PacingError(f"the orchestrator went away: {exc}") from None


@dataclass
class _Side:
    proc: subprocess.Popen[bytes]
    to_child: int  # we write GO here
    from_child: int  # we read YIELD / DONE here
    finished: int = 0  # workloads this side finished
    alive: bool = True


def relay_turns(procs: Sequence[subprocess.Popen[bytes]], pipes: Sequence[tuple[int, int]],
                workloads: int, first: Callable[[int], int], *,
                deadline: float | None = None,
                clock: Callable[[], float] = time.monotonic) -> list[str]:
    """Run the turn-taking of two paced workers until both finished ``workloads`` workloads,
    or exited, or ``deadline`` (on ``clock``) passed (then both are killed). ``pipes[i]`` is
    (fd we write GO to, fd we read from) for ``procs[i]``; ``first(k)`` the side that starts
    workload ``k``. Returns problems seen (a side that exited early, the deadline)."""
    sides = [_Side(p, w, r) for p, (w, r) in zip(procs, pipes, strict=True)]
    problems: list[str] = []

    def lose(i: int, why: str) -> None:
        s = sides[i]
        if s.alive:
            s.alive = False
            if s.finished < workloads:
                problems.append(f"side {i}: {why} after {s.finished} of {workloads} workloads")
            s.finished = workloads

    def give(i: int) -> bool:
        try:
            os.write(sides[i].to_child, GO)
            return True
        except OSError:
            lose(i, "exited")
            return False

    def pick(holder: int | None, yielded: bool) -> int | None:
        live = [s.finished for s in sides if s.alive and s.finished < workloads]
        if not live:
            return None
        k = min(live)
        ready = [i for i, s in enumerate(sides) if s.alive and s.finished == k]
        if yielded and holder in ready:
            other = 1 - holder
            return other if other in ready else holder
        return ready[0] if len(ready) == 1 else first(k)

    def hand_to(nxt: int | None) -> int | None:
        """Give the turn to ``nxt``, or to whoever is next when it has exited."""
        while nxt is not None and not give(nxt):
            nxt = pick(None, False)
        return nxt

    holder = hand_to(pick(None, False))
    while holder is not None:
        s = sides[holder]
        timeout = None if deadline is None else max(0.0, deadline - clock())
        ready, _, _ = select.select([s.from_child], [], [], timeout)
        if not ready:
            problems.append("timed out: both workers killed")
            for side in sides:
                side.proc.kill()
                side.alive = False
            break
        msg = os.read(s.from_child, 1)
        yielded = msg == YIELD
        if msg == DONE:
            s.finished += 1
        elif not yielded:
            lose(holder, "exited")
        holder = hand_to(pick(holder, yielded))
    return problems


def start_paced(cmd: Sequence[str], folder: Path, env: Mapping[str, str], slice_seconds: float,
                children: ChildProcesses | None = None,
                ) -> tuple[subprocess.Popen[bytes], tuple[int, int]]:
    """Start one paced worker (``cmd`` + ``--pace R,W --slice S``) in ``folder``, output to
    ``worker.log``, in a process group of its own registered with ``children``; returns the
    process and (fd to write GO to, fd to read from)."""
    children = children if children is not None else ChildProcesses()
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    try:
        with open(folder / "worker.log", "wb") as log:
            proc = children.popen(
                [*cmd, "--pace", f"{to_child_r},{from_child_w}", "--slice", f"{slice_seconds}"],
                cwd=folder, env=dict(env), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, pass_fds=(to_child_r, from_child_w))
    except BaseException:
        for fd in (to_child_r, to_child_w, from_child_r, from_child_w):
            os.close(fd)
        raise
    os.close(to_child_r)
    os.close(from_child_w)
    return proc, (to_child_w, from_child_r)


@dataclass
class PacedRun:
    """One side of a paced pair: its exit status, RESULT.json (when written) and log."""

    returncode: int
    result: WorkerResult | None
    log: str

    def problem(self) -> str | None:
        return run_problem(self.result, self.returncode, self.log)


def run_paced_pair(specs: Sequence[WorkerSpec], folders: Sequence[Path],
                   envs: Sequence[Mapping[str, str] | None], *, first: Callable[[int], int],
                   slice_seconds: float = DEFAULT_SLICE, hash_seed: int = 0,
                   python: str | None = None, timeout: float | None = None,
                   children: ChildProcesses | None = None) -> list[PacedRun]:
    """Run two workers (same workloads, in the same order) taking turns; see the module
    docstring. ``first(k)`` is the side (0 or 1) that starts workload ``k``; ``timeout``
    bounds the whole pair (wall seconds). Both get the same PYTHONHASHSEED ``hash_seed``.
    The workers run in process groups of their own (registered with ``children``, so the
    caller can stop them from another thread); both groups are killed when this returns or
    raises."""
    from bench.measure.launch import WORKER_MODULE, child_env

    children = children if children is not None else ChildProcesses()

    if len(specs) != 2 or len(folders) != 2 or len(envs) != 2:
        raise ValueError("a paced pair has exactly two sides")
    if specs[0].workloads != specs[1].workloads:
        raise ValueError("both sides of a paced pair must run the same workloads in order")
    procs: list[subprocess.Popen[bytes]] = []
    pipes: list[tuple[int, int]] = []
    cmd = [python or sys.executable, "-P", "-m", WORKER_MODULE,
           "--spec", "spec.json", "--out", "result.json"]
    try:
        for spec, folder, env in zip(specs, folders, envs, strict=True):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "spec.json").write_text(spec.to_json(), encoding="utf-8")
            (folder / "result.json").unlink(missing_ok=True)
            proc, fds = start_paced(cmd, folder, child_env(env, hash_seed=hash_seed),
                                    slice_seconds, children)
            procs.append(proc)
            pipes.append(fds)
        deadline = None if timeout is None else time.monotonic() + timeout
        problems = relay_turns(procs, pipes, len(specs[0].workloads), first,
                               deadline=deadline)
        for proc in procs:
            left = None if deadline is None else max(1.0, deadline - time.monotonic())
            try:
                proc.wait(left)
            except subprocess.TimeoutExpired:
                children.release(proc)
                problems.append(f"pid {proc.pid} killed: still running at the deadline")
    finally:
        for proc in procs:
            children.release(proc)
        for fds in pipes:
            for fd in fds:
                os.close(fd)
    out = []
    for proc, folder in zip(procs, folders, strict=True):
        log = (folder / "worker.log").read_text(encoding="utf-8", errors="replace")
        if problems:
            log += "\n" + "\n".join(f"pacing: {p}" for p in problems)
        result = None
        if (folder / "result.json").is_file():
            try:
                result = WorkerResult.load(folder / "result.json")
            except (ValueError, TypeError) as exc:
                log += f"\nunreadable result.json: {exc}"
        out.append(PacedRun(proc.returncode, result, log))
    return out
