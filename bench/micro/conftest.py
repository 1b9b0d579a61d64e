"""pytest-benchmark settings for the hot-path micro-benchmarks (see docs/benchmarks.md).

Run from the repository root (pyproject's pytest settings apply; ``testpaths`` keeps this
folder out of the unit-test run)::

    python -m pytest bench/micro --benchmark-json out.json

Unless given on the command line, ``--benchmark-min-rounds`` is raised from pytest-benchmark's
5 to :data:`MIN_ROUNDS`: the slowest cases (scores over 15000 nodes, the 10000-pod requeue) take
milliseconds to a quarter second per round, and 5 rounds give no usable spread. The
fixed-round cases (pedantic: state restored before each round) use the same number as a
floor.

pytest >= 9.2 no longer has the private ``Node._nodeid`` that pytest-benchmark (<= 5.3) reads
when it builds the ``benchmark`` fixture (ionelmc/pytest-benchmark#321):
:func:`pytest_collection_modifyitems` aliases the public ``nodeid`` under that name when it is
missing (a no-op on older pytest). Drop it once pytest-benchmark reads ``node.nodeid``.
"""

from __future__ import annotations

import pytest

MIN_ROUNDS = 20


def _given(config: pytest.Config, option: str) -> bool:
    return any(arg == option or arg.startswith(option + "=")
               for arg in config.invocation_params.args)


def pytest_configure(config: pytest.Config) -> None:
    # runs before pytest-benchmark's own pytest_configure (trylast), which reads the options
    if hasattr(config.option, "benchmark_min_rounds") and not _given(
            config, "--benchmark-min-rounds"):
        config.option.benchmark_min_rounds = MIN_ROUNDS
    # if every benchmark errored, pytest-benchmark warns at session end; with pyproject's
    # filterwarnings=error that would bury the real errors under an INTERNALERROR
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Not saving anything:pytest_benchmark.logger.PytestBenchmarkWarning")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not hasattr(item, "_nodeid"):
            item._nodeid = item.nodeid  # type: ignore[attr-defined]


@pytest.fixture
def min_rounds(request: pytest.FixtureRequest) -> int:
    """The effective ``--benchmark-min-rounds`` (for the pedantic, fixed-round cases)."""
    return int(request.config.getoption("benchmark_min_rounds"))
