"""The worker's session in-process: instructions mode records no timing and does the same
work whatever the clocks say; time mode does not."""

from __future__ import annotations

import itertools
import sys
import time
from collections import Counter
from collections.abc import Callable

import pytest

import scheduler_core.framework.runtime
import scheduler_core.scheduler
import workloads.runner.metrics
import workloads.runner.windows
from bench.measure.session import run_spec
from bench.measure.spec import WorkerResult, WorkerSpec
from tests.bench.measure.helpers import SMALL, SMALLER, write_config

TIMING_FIELDS = ("throughput_avg", "cpu_seconds", "wall_seconds", "measured_seconds",
                 "cpu_per_pod", "extension_point_seconds", "plugin_seconds")


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return write_config(tmp_path_factory.mktemp("cfg"))


def spec(config, mode: str, **kw: object) -> WorkerSpec:
    return WorkerSpec(configs=(str(config),), workloads=(SMALL, SMALLER), mode=mode, **kw)


def test_instructions_mode_schedules_the_same_pods_without_timing(config):
    timed = run_spec(spec(config, "time"))
    counted = run_spec(spec(config, "instructions"))
    assert counted.error is None and counted.env["wall_clock_metrics"] is False
    assert counted.core["dirty"] is None  # no git subprocess in instructions mode
    for t, c in zip(timed.workloads, counted.workloads, strict=True):
        assert c.status == "ok"
        assert (c.scheduled_pods, c.measured_pods, c.attempts, c.measured_attempts) == (
            t.scheduled_pods, t.measured_pods, t.attempts, t.measured_attempts)
        assert c.virtual_seconds == t.virtual_seconds
        assert {f: getattr(c, f) for f in TIMING_FIELDS} == dict.fromkeys(TIMING_FIELDS)


def fake_clock(step: float) -> Callable[[], float]:
    ticks = itertools.count()
    return lambda: next(ticks) * step


def calls_under_clock(monkeypatch: pytest.MonkeyPatch, s: WorkerSpec,
                      step: float) -> tuple[Counter[str], WorkerResult]:
    """Every Python and C function call of a run, counted, with every clock the harness and
    the scheduler read advancing ``step`` seconds per read."""
    clock = fake_clock(step)
    for target in (time, scheduler_core.framework.runtime, scheduler_core.scheduler):
        monkeypatch.setattr(target, "perf_counter", clock)
    monkeypatch.setattr(time, "process_time", clock)
    monkeypatch.setattr(time, "monotonic", clock)
    memory = fake_clock(step * 1e9)
    for target in (workloads.runner.metrics, workloads.runner.windows):
        monkeypatch.setattr(target, "rss_bytes", lambda: int(memory()))
    counts: Counter[str] = Counter()

    def profile(frame, event, arg):
        if event == "call":
            counts[f"{frame.f_code.co_filename}:{frame.f_code.co_name}"] += 1
        elif event == "c_call":
            counts[getattr(arg, "__qualname__", repr(arg))] += 1

    sys.setprofile(profile)
    try:
        result = run_spec(s)
    finally:
        sys.setprofile(None)
    return counts, result


@pytest.mark.parametrize(("mode", "same_work"), [
    pytest.param("instructions", True, id="instructions-mode-ignores-the-clock"),
    pytest.param("time", False, id="time-mode-samples-on-the-clock"),
])
def test_work_done_depends_on_wall_time_only_in_time_mode(monkeypatch, config, mode,
                                                          same_work):
    """A clock that crawls (1 ns per read) and one that races (10 s per read): in
    instructions mode the run calls exactly the same functions the same number of times, so
    nothing branches on time; in time mode throughput sampling and memory polling follow the
    clock (the check can tell)."""
    s = spec(config, mode)
    run_spec(s)  # imports and first-run caches out of the way
    slow, r1 = calls_under_clock(monkeypatch, s, 1e-9)
    fast, r2 = calls_under_clock(monkeypatch, s, 10.0)
    assert [w.status for w in r1.workloads + r2.workloads] == ["ok"] * 4
    assert (slow == fast) is same_work, sorted((slow - fast) + (fast - slow))[:10]


WINDOW_CONFIG = """\
- name: Window
  workloadTemplate:
  - opcode: createNodes
    count: 5
  - opcode: createPods
    count: 5
  - opcode: createPods
    count: 3
    namespace: early
  - opcode: startCollectingMetrics
    name: m
    namespaces: [measured]
  - opcode: createPods
    count: 10
    namespace: measured
  - opcode: stopCollectingMetrics
  workloads:
  - name: w
"""


@pytest.mark.parametrize(("workload", "stop_after", "stopped", "pods", "measured"), [
    pytest.param(SMALL, "setup", 2, 20, 0, id="collectMetrics-createPods-setup"),
    pytest.param(SMALL, "all", None, 70, 50, id="collectMetrics-createPods-all"),
    pytest.param("Window/w", "setup", 3, 8, 0, id="startCollectingMetrics-setup"),
    pytest.param("Window/w", "all", None, 18, 10, id="startCollectingMetrics-all"),
])
def test_setup_ends_at_the_first_op_opening_a_collection(config, tmp_path, workload,
                                                         stop_after, stopped, pods, measured):
    window = tmp_path / "window.yaml"
    window.write_text(WINDOW_CONFIG)
    s = WorkerSpec(configs=(str(config), str(window)), workloads=(workload,),
                   mode="instructions", stop_after=stop_after)
    w = run_spec(s).workloads[0]
    assert (w.status, w.stopped_before_op) == ("ok", stopped)
    assert (w.scheduled_pods, w.measured_pods) == (pods, measured)


@pytest.mark.parametrize(("percent", "has_plugins"), [
    pytest.param(0, False, id="0-no-plugin-timing"),
    pytest.param(10, True, id="10-upstream-sampling-scaled"),
    pytest.param(100, True, id="100-every-cycle"),
])
def test_plugin_sample_percent(config, percent, has_plugins):
    w = run_spec(spec(config, "time", plugin_sample_percent=percent)).workloads[0]
    assert w.status == "ok"
    assert w.extension_point_seconds and "Filter" in w.extension_point_seconds
    if has_plugins:
        assert w.plugin_seconds and "NodeResourcesFit/Filter" in w.plugin_seconds
    else:
        assert w.plugin_seconds is None
