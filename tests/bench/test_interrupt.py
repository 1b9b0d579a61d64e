"""bench.interrupt (signals become an exception, clean-up is not cut short) and
bench.measure.children (worker process groups ended at once). Signals are sent by the test
itself at a known point, never after a delay."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import psutil
import pytest

from bench.interrupt import Interrupted, deferred_signals, exit_code_of, handle_signals
from bench.measure.children import ChildProcesses, ChildrenStopped, map_stoppable


def _kill_self(signum: int) -> None:
    os.kill(os.getpid(), signum)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_raises_interrupted_and_handlers_are_restored(signum, code):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(Interrupted) as caught, handle_signals():
        _kill_self(signum)
    assert caught.value.signum == signum
    assert caught.value.exit_code == exit_code_of(caught.value) == code
    assert isinstance(caught.value, KeyboardInterrupt)  # `except Exception` does not catch it
    assert {s: signal.getsignal(s) for s in before} == before


def test_second_signal_is_ignored_while_cleaning_up():
    cleaned = []
    with pytest.raises(Interrupted), handle_signals():
        try:
            _kill_self(signal.SIGTERM)
        finally:
            _kill_self(signal.SIGINT)  # a second one during clean-up: ignored
            cleaned.append(True)
    assert cleaned == [True]


def test_deferred_signal_arrives_when_the_block_ends():
    steps = []
    with pytest.raises(Interrupted) as caught, handle_signals():
        with deferred_signals():
            _kill_self(signal.SIGTERM)
            steps.append("after the signal, inside")
        steps.append("after the block")  # never reached
    assert steps == ["after the signal, inside"]
    assert caught.value.signum == signal.SIGTERM


def test_deferred_signals_without_handle_signals_keeps_python_behaviour():
    done = []
    with pytest.raises(KeyboardInterrupt) as caught, deferred_signals():
        _kill_self(signal.SIGINT)
        done.append(True)
    assert done == [True]
    assert not isinstance(caught.value, Interrupted)


def test_an_ignored_signal_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with handle_signals():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            _kill_self(signal.SIGINT)  # nothing happens
    finally:
        signal.signal(signal.SIGINT, previous)


def _sleeper_that_forks() -> list[str]:
    """A process that forks a grandchild, prints both pids on one line, and sleeps (both)."""
    code = ("import os, time\n"
            "child = os.fork()\n"
            "if child:\n"
            "    print(os.getpid(), child, flush=True)\n"
            "time.sleep(3600)\n")
    return [sys.executable, "-c", code]


def _all_gone(pids: list[int]) -> bool:
    """Every pid has ended (a zombie whose parent has not reaped it yet counts as ended)."""
    procs = []
    for pid in pids:
        try:
            procs.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            continue
    # SIGKILL was sent: wait for the kernel to finish them (not a delay: it returns as soon
    # as they are gone; the limit only keeps a broken kill from hanging the suite)
    _, alive = psutil.wait_procs(procs, timeout=60)
    return all(p.status() == psutil.STATUS_ZOMBIE for p in alive)


def test_stop_kills_whole_process_groups_and_refuses_new_starts():
    children = ChildProcesses()
    with children.popen(_sleeper_that_forks(), stdout=subprocess.PIPE) as proc:
        try:
            assert proc.stdout is not None
            pids = [int(pid) for pid in proc.stdout.readline().split()]
            assert pids[0] == proc.pid and len(pids) == 2
        finally:
            children.stop()
        proc.wait()
    assert _all_gone(pids)
    with pytest.raises(ChildrenStopped):
        children.popen([sys.executable, "-c", "pass"])
    children.release(proc)


def test_interrupted_map_stops_workers_and_does_not_wait_for_them():
    """The caller is interrupted while its threads wait for workers that would never end: the
    exception leaves once the workers are killed, and the queued calls start no worker."""
    children = ChildProcesses()
    started: list[int] = []
    running = threading.Semaphore(0)

    def measure(i: int) -> int:
        proc = children.popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        started.append(proc.pid)
        running.release()
        try:
            return proc.wait()
        finally:
            children.release(proc)

    def interrupt_once_two_run() -> None:
        running.acquire()
        running.acquire()
        _kill_self(signal.SIGTERM)  # handled in the main thread, waiting in map_stoppable

    sender = threading.Thread(target=interrupt_once_two_run)
    with pytest.raises(Interrupted), handle_signals():
        sender.start()
        try:
            map_stoppable(measure, range(5), jobs=2, children=children)
        finally:
            sender.join()
    assert len(started) == 2
    assert children.stopped
    assert _all_gone(started)
