"""Test setup shared by every test folder.

When a hypothesis test fails, hypothesis' pytest plugin imports ``hypothesis.extra._patching``
(and through it libcst and mypy_extensions) to print a suggested ``@example`` patch. That import
emits a DeprecationWarning, which ``filterwarnings = ["error"]`` in pyproject.toml turns into a
pytest INTERNALERROR that hides the falsifying example. Importing it here once, with the
warning silenced, keeps a failing property test readable.

Hypothesis profiles (``python -m pytest tests/fuzz --hypothesis-profile=NAME``): ``long`` runs
100,000 examples per fuzz target (issue 16's closing run; hours), ``medium`` 5,000 (minutes).
Without one, tests/fuzz runs its short budget (tests/fuzz/support.py).

Fixtures: ``make_scheduler``; ``shared_dir`` and ``upstream_dir`` (``../shared`` found from the
repository root, see tests/shared.py).
"""

from __future__ import annotations

import contextlib
import signal
import warnings
from collections.abc import Callable
from pathlib import Path

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    with contextlib.suppress(ImportError):
        import hypothesis.extra._patching  # noqa: F401

import pytest
from hypothesis import HealthCheck, settings

from scheduler_core.cluster.store import Cluster
from scheduler_core.extender import Extenders
from scheduler_core.framework.config import (
    SchedulerConfig,
    build_frameworks,
    parse_config,
)
from scheduler_core.queue.clock import FakeClock
from scheduler_core.scheduler import Scheduler
from tests.shared import require_shared, require_upstream

_FUZZ_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("long", max_examples=100_000, deadline=None,
                          suppress_health_check=_FUZZ_HEALTH)
settings.register_profile("medium", max_examples=5_000, deadline=None,
                          suppress_health_check=_FUZZ_HEALTH)


def pytest_configure(config: pytest.Config) -> None:
    """SIGINT as a terminal gives it, however the test run was started. A background job of a
    non-interactive shell (`cmd &`, nohup) starts with SIGINT ignored, and schedperf keeps an
    ignored signal ignored (bench/interrupt.py), so the interrupt tests, in this process and
    in the processes it starts (a caught signal is SIG_DFL after exec), need it restored."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def make_scheduler() -> Callable[..., tuple[Cluster, Scheduler]]:
    """make_scheduler(nodes, config=None, seed=0, **kw) -> (cluster, scheduler)."""

    def factory(nodes=(), config: dict | None = None, seed: int = 0, **kw):
        clock = kw.pop("clock", None) or FakeClock()
        cluster = Cluster(clock=clock.now)
        for n in nodes:
            cluster.add_node(n)
        cfg = parse_config(config) if config is not None else SchedulerConfig()
        if cfg.extenders and "extenders" not in kw:
            kw["extenders"] = Extenders(cfg.extenders)
        gw = bool(kw.get("generic_workload", False))
        ta = bool(kw.get("topology_aware", False))
        sched = Scheduler(cluster, lambda h: build_frameworks(cfg, h, generic_workload=gw,
                                                              topology_aware=ta),
                          clock=clock, seed=seed, **kw)
        return cluster, sched

    return factory


@pytest.fixture
def shared_dir() -> Path:
    """``../shared`` beside the repository root (tests/shared.py): skips when absent, fails
    under CI=true."""
    return require_shared()


@pytest.fixture
def upstream_dir() -> Path:
    """``../shared/upstream/scheduler_perf``, the verbatim upstream configs and templates:
    skips when absent, fails under CI=true."""
    return require_upstream()
