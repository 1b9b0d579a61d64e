"""SIGINT and SIGTERM end a schedperf command cleanly: they become an exception.

    with handle_signals():        the CLI's main(): both signals raise :class:`Interrupted`
        ...                       in the main thread, so every ``finally`` and ``except
                                  BaseException`` clean-up runs (worktrees, worker process
                                  groups, temporary files); exit status 128 + the signal
    with deferred_signals():      a short critical section (writing a finished workload's
        ...                       files, registering a worktree): a signal arriving inside it
                                  takes effect when it ends

Without :func:`handle_signals` SIGTERM ends the process at once (Python's default: no clean-up
runs) and SIGINT raises a plain KeyboardInterrupt. Once interrupted, further SIGINT / SIGTERM
are ignored while the clean-up runs (it only kills, removes and renames; SIGKILL still ends
the process at once). A signal the process was started with ignored (``SIG_IGN``, as a
shell does for background jobs) stays ignored.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["SIGNALS", "Interrupted", "deferred_signals", "exit_code_of", "handle_signals",
           "signal_name"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread when SIGINT or SIGTERM arrives (under handle_signals). A
    KeyboardInterrupt, so ``except Exception`` clauses (a workload's error handling) never
    swallow it."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal_name(signum)}")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def exit_code_of(exc: BaseException) -> int:
    """128 + the signal: 130 for SIGINT (a plain KeyboardInterrupt counts as SIGINT), 143 for
    SIGTERM, as shells report a process a signal ended."""
    return 128 + getattr(exc, "signum", signal.SIGINT)


class _State:
    active = False  # handle_signals is in effect
    interrupted: int | None = None  # the signal that interrupted (later ones are ignored)


def _raise_once(signum: int, frame: FrameType | None) -> None:
    if _State.interrupted is not None:
        return  # already cleaning up after the first one
    _State.interrupted = signum
    raise Interrupted(signum)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def handle_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` (once) while the block runs; the previous
    handlers are restored afterwards. A no-op outside the main thread."""
    if not _in_main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    was = (_State.active, _State.interrupted)
    _State.active, _State.interrupted = True, None
    try:
        for s in SIGNALS:
            if previous[s] is not signal.SIG_IGN:
                signal.signal(s, _raise_once)
        yield
    finally:
        for s, handler in previous.items():
            if handler is not None:
                signal.signal(s, handler)
        _State.active, _State.interrupted = was


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT / SIGTERM back while the block runs; one that arrived is delivered to the
    handler in force before (raising Interrupted, KeyboardInterrupt, or ending the process)
    when the block ends. A no-op outside the main thread (signals go to the main thread)."""
    if not _in_main_thread():
        yield
        return
    arrived: list[int] = []
    previous = {s: signal.getsignal(s) for s in SIGNALS}

    def note(signum: int, frame: FrameType | None) -> None:
        arrived.append(signum)

    for s in SIGNALS:
        if previous[s] is not signal.SIG_IGN:
            signal.signal(s, note)
    try:
        yield
    finally:
        for s, handler in previous.items():
            if handler is not None:
                signal.signal(s, handler)
        if arrived:
            signal.raise_signal(arrived[0])
