"""Worker processes that can all be ended at once, with whatever they forked.

Every worker ``schedperf compare`` starts (a paced time worker, a valgrind run, the forking
instruction counter) is started through a :class:`ChildProcesses` in a session of its own, so
its process group holds it and every process it forks (valgrind's tool, forked counting
children). :meth:`ChildProcesses.stop` kills every such group with SIGKILL and refuses new
starts: the orchestrator calls it when it is interrupted (SIGINT, SIGTERM: see bench.interrupt)
or fails, before waiting for its threads, which then see their processes end and return.

    children = ChildProcesses()
    results = map_stoppable(one_round, rounds, jobs=2, children=children)
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from bench.interrupt import deferred_signals

__all__ = ["ChildProcesses", "ChildrenStopped", "kill_group", "map_stoppable"]

T = TypeVar("T")
R = TypeVar("R")


class ChildrenStopped(RuntimeError):
    """A worker was to be started after :meth:`ChildProcesses.stop`."""


def kill_group(pgid: int) -> None:
    """SIGKILL to process group ``pgid`` (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class ChildProcesses:
    """Started processes, each leading its own process group, until released."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._groups: set[int] = set()
        self._stopped = False

    @property
    def stopped(self) -> bool:
        return self._stopped

    def popen(self, cmd: Sequence[str], **kw: Any) -> subprocess.Popen[bytes]:
        """``subprocess.Popen(cmd, start_new_session=True, **kw)``, registered; raises
        ChildrenStopped after :meth:`stop`. Signals wait until the process is registered."""
        with deferred_signals(), self._lock:
            if self._stopped:
                raise ChildrenStopped("not starting a worker: the measurement was stopped")
            proc: subprocess.Popen[bytes] = subprocess.Popen(cmd, start_new_session=True, **kw)
            self._groups.add(proc.pid)
            return proc

    def release(self, proc: subprocess.Popen[bytes]) -> None:
        """``proc`` has ended: kill what is left of its group (a grandchild whose parent was
        killed) and forget it. Kills ``proc`` too if it still runs."""
        with self._lock:
            self._groups.discard(proc.pid)
        kill_group(proc.pid)
        if proc.returncode is None:
            with contextlib.suppress(OSError):
                proc.kill()
            proc.wait()

    def stop(self) -> None:
        """Kill every registered process group and refuse new starts."""
        with self._lock:
            self._stopped = True
            groups = list(self._groups)
        for pgid in groups:
            kill_group(pgid)


def map_stoppable(fn: Callable[[T], R], items: Iterable[T], *, jobs: int,
                  children: ChildProcesses) -> list[R]:
    """``list(map(fn, items))`` on ``jobs`` threads. If the caller's thread is interrupted
    (or a call fails) while waiting, ``children`` are stopped and the threads' pending calls
    cancelled before the threads are joined, so the exception leaves at once instead of after
    every started measurement has run to its end."""
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        return list(pool.map(fn, items))
    except BaseException:
        children.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
