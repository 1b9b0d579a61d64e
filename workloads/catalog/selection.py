"""Workload selection by label filter, as scheduler_perf's ``-perf-scheduling-label-filter``.

A filter is a comma-separated list of labels, GitHub style: ``x`` or ``+x`` means the workload
must have label ``x``, ``-x`` that it must not. An empty filter selects everything. A workload's
labels are its test case's labels plus its own. Upstream's defaults are ``performance`` for
benchmarks and ``integration-test,-performance`` for integration tests; ``go test -short``
appends ``,+short``.

Deviation: blanks around entries are ignored (``"performance, short"``); upstream would look
for a label named ``" short"`` and select nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from workloads.config import TestCase, Workload

__all__ = [
    "BENCHMARK_DEFAULT_FILTER",
    "TEST_DEFAULT_FILTER",
    "SelectionError",
    "matches",
    "parse_filter",
    "select",
]

BENCHMARK_DEFAULT_FILTER = "performance"
TEST_DEFAULT_FILTER = "integration-test,-performance"


class SelectionError(ValueError):
    """A label filter / name pattern is malformed or selects no workload."""


def parse_filter(label_filter: str | None) -> list[tuple[str, bool]]:
    """``"+a,b,-c"`` -> ``[("a", True), ("b", True), ("c", False)]`` (label, must have)."""
    terms = []
    for raw in (label_filter or "").split(","):
        term = raw.strip()
        if not term:
            continue
        must_have = term[0] != "-"
        label = term[1:] if term[0] in "+-" else term
        if not label:
            raise SelectionError(f"label filter {label_filter!r}: {raw.strip()!r} names no label")
        terms.append((label, must_have))
    return terms


def matches(label_filter: str | None, labels: Iterable[str]) -> bool:
    """Upstream ``enabled(labelFilter, labels...)``."""
    have = set(labels)
    return all((label in have) == must for label, must in parse_filter(label_filter))


def select(test_cases: Iterable[TestCase], label_filter: str | None,
           name_regex: str | None = None) -> list[tuple[TestCase, Workload]]:
    """The (test case, workload) pairs whose labels pass ``label_filter`` and whose
    ``<test case>/<workload>`` name contains a match of ``name_regex`` (``re.search``).

    Raises :class:`SelectionError` if nothing is selected, naming the filter (and pattern).
    """
    terms = parse_filter(label_filter)
    try:
        pattern = re.compile(name_regex) if name_regex else None
    except re.error as err:
        raise SelectionError(f"--name {name_regex!r} is not a valid regular expression: "
                             f"{err}") from err
    chosen = []
    for tc in test_cases:
        for w in tc.workloads:
            have = set(w.labels)
            if not all((label in have) == must for label, must in terms):
                continue
            if pattern is not None and not pattern.search(w.full_name):
                continue
            chosen.append((tc, w))
    if not chosen:
        what = f"label filter {label_filter or ''!r}"
        if name_regex:
            what += f" and --name {name_regex!r}"
        raise SelectionError(f"no workload matches {what}")
    return chosen
