from __future__ import annotations

from collections.abc import Callable

import pytest

from scheduler_core.cluster.store import Cluster
from scheduler_core.framework.config import SchedulerConfig, build_frameworks, parse_config
from scheduler_core.queue.clock import FakeClock
from scheduler_core.scheduler import Scheduler


@pytest.fixture
def make_scheduler() -> Callable[..., tuple[Cluster, Scheduler]]:
    """make_scheduler(nodes, config=None, seed=0, **kw) -> (cluster, scheduler)."""

    def factory(nodes=(), config: dict | None = None, seed: int = 0, **kw):
        clock = kw.pop("clock", None) or FakeClock()
        cluster = Cluster(clock=clock.now)
        for n in nodes:
            cluster.add_node(n)
        cfg = parse_config(config) if config is not None else SchedulerConfig()
        sched = Scheduler(cluster, lambda h: build_frameworks(cfg, h), clock=clock, seed=seed,
                          **kw)
        return cluster, sched

    return factory
