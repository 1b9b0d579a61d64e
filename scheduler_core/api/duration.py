"""Go's ``time.ParseDuration``, for the duration fields of configs (a KubeSchedulerConfiguration
extender's ``httpTimeout``, scheduler_perf's ``timeout`` and ``duration`` fields)."""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["MAX_DURATION_NS", "parse_go_duration", "parse_go_duration_ns"]

MAX_DURATION_NS = (1 << 63) - 1

_UNIT_NS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_NUMBER = re.compile(r"([0-9]*)(?:\.([0-9]*))?")
_UNIT = re.compile(r"[^0-9.]*")


def parse_go_duration_ns(text: str) -> int:
    """Go's ``time.ParseDuration``: ``"1h2m3.5s"``, ``"500ms"``, ``"-1.5h"``, ``"0"`` -> ns.

    Raises ValueError with Go's wording (``time: invalid duration "x"``,
    ``time: missing unit in duration "1"``, ``time: unknown unit "d" in duration "1d"``).
    """
    orig = text
    s = text
    negative = False
    if s[:1] in ("-", "+"):
        negative = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(f'time: invalid duration "{orig}"')
    total = Fraction(0)
    while s:
        m = _NUMBER.match(s)
        whole, frac = m.group(1), m.group(2)
        if not whole and not frac:
            raise ValueError(f'time: invalid duration "{orig}"')
        s = s[m.end():]
        unit = _UNIT.match(s).group(0)
        s = s[len(unit):]
        if not unit:
            raise ValueError(f'time: missing unit in duration "{orig}"')
        if unit not in _UNIT_NS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{orig}"')
        value = Fraction(int(whole or "0"))
        if frac:
            value += Fraction(int(frac), 10 ** len(frac))
        total += value * _UNIT_NS[unit]
    ns = int(total)
    if ns > MAX_DURATION_NS + (1 if negative else 0):
        raise ValueError(f'time: invalid duration "{orig}"')
    return -ns if negative else ns


def parse_go_duration(text: str) -> float:
    """Go's ``time.ParseDuration`` in seconds: ``"10s"`` -> 10.0, ``"1m30s"`` -> 90.0."""
    return parse_go_duration_ns(text) / 1e9
