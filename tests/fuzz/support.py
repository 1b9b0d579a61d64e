"""Shared pieces of the fuzz tests (issue 16).

Budget: each target runs ``SHORT`` examples in the default suite (tests/fuzz stays well under a
minute on a busy 2-core machine) and the profile's ``max_examples`` under
``--hypothesis-profile=long`` (>= 100,000 per target; profiles are registered in
tests/conftest.py). No deadline: a slow machine must not fail a test. A hang is caught instead
by :func:`no_hang`, an alarm far beyond any honest parse (:data:`HANG_SECONDS`).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = ["HANG_SECONDS", "SHORT", "Hang", "fuzz_settings", "no_hang", "yaml_values"]

SHORT = 50  # examples per target in the default suite
HANG_SECONDS = 60  # one example taking this long is a hang, whatever the machine's load


def _budget(short: int) -> int:
    """``short`` in the default suite; the profile's own budget when one larger than
    hypothesis' default (100) is loaded (``--hypothesis-profile=long``)."""
    current = settings.default.max_examples
    return current if current > 100 else short


def fuzz_settings(short: int = SHORT) -> settings:
    return settings(max_examples=_budget(short), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


class Hang(Exception):
    """One example ran longer than HANG_SECONDS."""


@contextlib.contextmanager
def no_hang(seconds: int = HANG_SECONDS) -> Iterator[None]:
    """Raise :class:`Hang` when the body runs longer than ``seconds`` (SIGALRM; main thread)."""

    def ring(signum: int, frame: object) -> None:
        raise Hang(f"no result after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
            | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20))


def yaml_values(keys: st.SearchStrategy[str] | None = None, *, max_leaves: int = 25
                ) -> st.SearchStrategy[object]:
    """Nested mappings / lists / scalars as a YAML or JSON loader returns them; mapping keys
    from ``keys`` (field names of the format under test mixed with random text)."""
    key = st.text(max_size=12) if keys is None else (keys | st.text(max_size=12))
    return st.recursive(
        _scalars,
        lambda children: st.lists(children, max_size=4)
        | st.dictionaries(key, children, max_size=5),
        max_leaves=max_leaves)
