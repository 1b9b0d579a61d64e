"""SchedulingThroughput for every window that binds a measured pod (sampled, or the phase
rate when the phase is too short for two samples), thresholds that name why data is missing,
and createPods interleaved with scheduling in virtual-clock mode."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.workloads.test_ops import make_case
from workloads.config import (
    DEFAULT_THRESHOLD_METRIC_SELECTOR,
    MetricsCollectorConfig,
    load_configs,
)
from workloads.config.decode import FrozenDict
from workloads.runner import Run, execute_workload, run_workload
from workloads.runner.clocks import POD_CREATE_COST
from workloads.runner.metrics import MIN_SAMPLES, RunRecorder, Window, apply_threshold

CATALOG = Path(__file__).resolve().parents[2] / "workloads" / "configs"
NO_HISTOGRAMS = MetricsCollectorConfig(FrozenDict())
BUCKETS = ("Average", "Perc50", "Perc90", "Perc95", "Perc99")


class FakeWall:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _window(wall: FakeWall, interval: float = 0.1) -> Window:
    return Window(name="Case/w/ns", namespaces=frozenset({"ns"}), label_selector={},
                  op_index=1, collectors=(), interval=interval, attempts_fn=lambda: 0,
                  now=wall)


def _throughput(w: Window, summary: dict[str, float]) -> dict[str, float] | None:
    items = w.items(summary, RunRecorder(), NO_HISTOGRAMS, scheduled=w.bound, unschedulable={},
                    ignored=0)
    found = [i.data for i in items if i.labels["Metric"] == "SchedulingThroughput"]
    return found[0] if found else None


def _bind(w: Window, wall: FakeWall, pods: int, seconds: float) -> None:
    """``pods`` binds spread over ``seconds`` of wall time, ticking the sampler each time."""
    assert w.throughput is not None
    for _ in range(pods):
        wall.t += seconds / pods
        w.bound += 1
        w.throughput.tick()


def test_a_phase_too_short_for_two_samples_reports_the_phase_rate():
    wall = FakeWall()
    w = _window(wall)
    w.start(RunRecorder())
    _bind(w, wall, 40, 0.05)  # 40 pods in 50 ms: not one full sampling interval
    data = _throughput(w, w.stop())
    assert data is not None
    assert data["Samples"] < MIN_SAMPLES
    assert data["Average"] == pytest.approx(40 / 0.05)
    assert {data[b] for b in BUCKETS} == {data["Average"]}


def test_a_long_phase_keeps_upstreams_sampled_buckets():
    wall = FakeWall()
    w = _window(wall)
    w.start(RunRecorder())
    _bind(w, wall, 200, 2.0)  # 100 pods/s for 2 s, then 300 pods/s for 1 s
    _bind(w, wall, 300, 1.0)
    summary = w.stop()
    data = _throughput(w, summary)
    assert data is not None
    assert data["Samples"] >= MIN_SAMPLES
    assert data["Average"] == summary["Average"]  # upstream's mean of the samples
    assert data["Perc50"] < data["Perc99"]
    phase_rate = 500 / 3.0
    assert data["Average"] != pytest.approx(phase_rate, rel=1e-3)


def test_a_window_that_binds_nothing_has_no_item_and_a_threshold_says_why():
    wall = FakeWall()
    w = _window(wall)
    w.start(RunRecorder())
    w.created = 7
    wall.t += 1.0
    summary = w.stop()
    assert _throughput(w, summary) is None
    items = w.items(summary, RunRecorder(), NO_HISTOGRAMS, scheduled=0,
                    unschedulable={}, ignored=0)
    errors = apply_threshold(items, 100, DEFAULT_THRESHOLD_METRIC_SELECTOR, window=w.name,
                             missing_reason=w.no_throughput_reason())
    assert errors == ['Case/w/ns: no data present for "SchedulingThroughput" metric: no '
                      "measured pod was scheduled in the measured phase (7 created in it)"]


def test_every_small_workload_reports_throughput_whatever_the_speed(tmp_path):
    """However fast the machine, a sampling interval longer than the run leaves upstream's
    collector with no sample: the item is there all the same (the phase rate)."""
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 3},
        {"opcode": "createPods", "count": 5, "collectMetrics": True}],
        workload={"threshold": 1e-6})
    result = run_workload(tc, w, sample_interval=1e9)
    assert (result.status, result.reason) == ("ok", None)
    thr = [d for d in result.data_items if d.labels["Metric"] == "SchedulingThroughput"]
    assert len(thr) == 1
    assert thr[0].data["Samples"] == 0 and thr[0].data["Average"] > 0
    assert thr[0].data["AverageThreshold"] == 1e-6


def test_a_measured_phase_that_schedules_nothing_fails_its_threshold_naming_why(tmp_path):
    unschedulable = ("apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: big-\nspec:\n"
                     "  containers:\n  - name: c\n    image: x\n    resources:\n"
                     "      requests:\n        cpu: '1000'\n")
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "startCollectingMetrics", "name": "m", "namespaces": ["measured"]},
        {"opcode": "createPods", "count": 3, "namespace": "measured",
         "podTemplatePath": "big.yaml", "skipWaitToCompletion": True},
        {"opcode": "sleep", "duration": "1s"},
        {"opcode": "stopCollectingMetrics"}],
        templates={"big.yaml": unschedulable}, workload={"threshold": 10})
    result = run_workload(tc, w)
    assert result.status == "threshold-missed"
    assert result.reason == ('Case/w/m: no data present for "SchedulingThroughput" metric: no '
                             "measured pod was scheduled in the measured phase (3 created in "
                             "it)")


def test_instruction_counting_runs_check_no_threshold(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 3},
        {"opcode": "createPods", "count": 5, "collectMetrics": True}],
        workload={"threshold": 1e12})
    result = run_workload(tc, w, wall_clock_metrics=False)
    assert (result.status, result.reason) == ("ok", None)
    assert not [d for d in result.data_items if d.labels["Metric"] == "SchedulingThroughput"]


# --------------------------------------------------------------------------- interleaving


def _preemption_basic(name: str):
    tc = next(t for t in load_configs(CATALOG / "default_preemption" / "performance-config.yaml")
              if t.name == "PreemptionBasic")
    return tc, next(w for w in tc.workloads if w.name == name)


def _trace_measured(run: Run, log: list[tuple[str, float, int, int]]) -> None:
    """Record (event, virtual time, measured pods created, measured pods bound)."""
    ns = "namespace-2"

    def on_event(ev) -> None:
        pod = ev.new if ev.new is not None else ev.old
        if ev.kind != "Pod" or pod.namespace != ns:
            return
        created = len(run.pods.ns_pods.get(ns, {}))
        bound = run.pods.bound.get(ns, 0)
        if ev.old is None:
            log.append(("created", run.timeline.now(), created, bound))
        elif ev.new is not None and ev.new.node_name and not ev.old.node_name:
            log.append(("bound", run.timeline.now(), created, bound))

    run.cluster.subscribe(on_event)


@pytest.mark.parametrize("name", ["100Nodes", "100Nodes_QueueingHintsEnabled"])
def test_preemptors_bind_while_the_rest_are_still_being_created(name):
    tc, w = _preemption_basic(name)
    log: list[tuple[str, float, int, int]] = []
    result, _run = execute_workload(tc, w, at_setup_end=lambda r: _trace_measured(r, log))
    assert result.status == "ok", result.reason
    total = w.params["measurePods"]
    created_times = [t for kind, t, _, _ in log if kind == "created"]
    binds = [(t, created) for kind, t, created, _ in log if kind == "bound"]
    assert len(created_times) == total and len(binds) == total
    first_bind_time, created_at_first_bind = binds[0]
    assert created_at_first_bind < total  # the first bind comes before the last creation
    assert first_bind_time < created_times[-1]
    # one pod every POD_CREATE_COST of virtual time
    gaps = {round(b - a, 9) for a, b in itertools.pairwise(created_times)}
    assert gaps == {POD_CREATE_COST}
    # steady state: every preemptor is bound before the next one arrives
    bound_before = [bound for kind, _, created, bound in log if kind == "created"]
    assert bound_before == list(range(total))


def test_interleaved_creation_is_deterministic():
    tc, w = _preemption_basic("100Nodes_QueueingHintsEnabled")
    a = run_workload(tc, w, seed=3)
    b = run_workload(tc, w, seed=3)
    assert [(p.pod, p.node, p.attempts) for p in a.placements] == [
        (p.pod, p.node, p.attempts) for p in b.placements]


def test_real_clock_creates_the_pods_of_an_op_at_once(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "createPods", "count": 20, "collectMetrics": True}])
    log: list[tuple[str, float, int, int]] = []

    def trace(run: Run) -> None:
        ns = "namespace-1"

        def on_event(ev) -> None:
            if ev.kind == "Pod" and ev.old is None and ev.new.namespace == ns:
                log.append(("created", 0.0, len(run.pods.ns_pods.get(ns, {})),
                            run.pods.bound.get(ns, 0)))
        run.cluster.subscribe(on_event)

    result, _run = execute_workload(tc, w, clock="real", at_setup_end=trace)
    assert result.status == "ok", result.reason
    assert len(log) == 20 and all(bound == 0 for *_, bound in log)
