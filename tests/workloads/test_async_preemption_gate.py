"""The SchedulerAsyncPreemption gate in the workload runner: honoured (not unsupported), on by
default as in v1.34, and passed to the scheduler (the behaviour itself:
tests/scheduler/test_async_preemption.py)."""

from __future__ import annotations

import pytest
import yaml

from tests.shared import SHARED_DIR, require_shared
from workloads.catalog.support import support_reason
from workloads.config import load_configs
from workloads.runner.execution import execute
from workloads.runner.gates import ASYNC_PREEMPTION_GATE, FeatureGates
from workloads.runner.options import RunOptions


@pytest.mark.parametrize("folder", ["scheduler_perf", "scheduler_perf-next"])
def test_the_gate_is_honoured_and_on_by_default(folder):
    require_shared()
    path = SHARED_DIR / "upstream" / folder / "default_preemption" / "performance-config.yaml"
    (tc,) = [t for t in load_configs(path) if t.name == "PreemptionAsync"]
    by_name = {w.name: w for w in tc.workloads}
    on = by_name["5000Nodes_AsyncPreemptionEnabled"]
    assert support_reason(tc, on) is None
    assert FeatureGates.of(on).async_preemption is True
    assert ASYNC_PREEMPTION_GATE not in FeatureGates.of(on).ignored
    assert FeatureGates.of(by_name["5000Nodes"]).async_preemption is False
    assert FeatureGates.of(by_name["500Nodes"]).async_preemption is True  # v1.34's default


@pytest.mark.parametrize(("gates", "expected"), [({}, True),
                                                 ({ASYNC_PREEMPTION_GATE: True}, True),
                                                 ({ASYNC_PREEMPTION_GATE: False}, False)])
def test_the_runner_passes_the_gate_to_the_scheduler(tmp_path, gates, expected):
    case = {"name": "Gate", "workloadTemplate": [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "createPods", "count": 2, "collectMetrics": True}],
        "workloads": [{"name": "w", **({"featureGates": gates} if gates else {})}]}
    path = tmp_path / "performance-config.yaml"
    path.write_text(yaml.safe_dump([case], sort_keys=False))
    (tc,) = load_configs(path)
    seen: list[bool] = []
    result, _ = execute(tc, tc.workloads[0], RunOptions(
        at_start=lambda run: seen.append(run.scheduler.async_preemption)))
    assert result.status == "ok", result.reason
    assert seen == [expected]
