"""run_workload as a whole: statuses, thresholds, timeout, decisions, clocks, DataItems, and
every upstream scheduler_perf test case at its integration-test size."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from scheduler_core.plugins.registry import IN_TREE
from tests.shared import upstream_params
from tests.workloads.test_ops import BIG_POD, MEASURE, POD, make_case, placements
from workloads.config import load_configs
from workloads.runner import (
    ProgressEvent,
    clocks,
    execute_workload,
    execution,
    loop,
    run_workload,
    windows,
)
from workloads.runner import run as run_module
from workloads.runner.clocks import ATTEMPT_COST

SCHEDULER_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: PrioritySort
      - name: NodeUnschedulable
      - name: NodeAffinity
        weight: 2
      - name: NodeResourcesFit
        weight: 1
      - name: TaintToleration
        weight: 3
      - name: DefaultBinder
      disabled:
      - name: '*'
"""
# n-0: 1 CPU (too small), n-1: 4 CPU, n-2: 8 CPU with a PreferNoSchedule taint
THREE_NODES = """\
apiVersion: v1
kind: Node
metadata:
  name: n-{{ .Index }}
spec:
{{- if eq .Index 2 }}
  taints:
  - key: spot
    effect: PreferNoSchedule
{{- end }}
  unschedulable: false
status:
  capacity:
    pods: "10"
    cpu: "{{ if eq .Index 0 }}1{{ else }}{{ MultiplyInt .Index 4 }}{{ end }}"
    memory: 8Gi
"""
TWO_CPU_POD = POD.replace("cpu: 100m", 'cpu: "2"').replace("memory: 100Mi", "memory: 1Gi")


def basic(tmp_path: Path, nodes: int, pods: int, **kw):
    return make_case(tmp_path, [
        {"opcode": "createNodes", "countParam": "$nodes"},
        {"opcode": "createPods", "countParam": "$pods", "collectMetrics": True}],
        params={"nodes": nodes, "pods": pods}, **kw)


# --------------------------------------------------------------------------- decisions


def test_decision_rows_for_three_nodes(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 3, "nodeTemplatePath": "node.yaml"},
        {"opcode": "createPods", "count": 1, "podTemplatePath": "pod.yaml",
         "collectMetrics": True}],
        templates={"sched.yaml": SCHEDULER_CONFIG, "node.yaml": THREE_NODES,
                   "pod.yaml": TWO_CPU_POD},
        case={"schedulerConfigPath": "sched.yaml"})
    result = run_workload(tc, w, record_decisions=True)
    assert result.status == "ok", result.reason
    assert {(d.namespace, d.pod, d.attempt) for d in result.decisions} == {
        ("namespace-1", "p-0", 1)}
    rows = [(d.node, d.extension_point, d.plugin, d.code, d.reason, d.score,
             d.normalized_score, d.weighted_score, d.selected) for d in result.decisions]
    fit, taint, affinity, unsched = ("NodeResourcesFit", "TaintToleration", "NodeAffinity",
                                     "NodeUnschedulable")
    ok = "Success"
    assert rows == [
        (None, "PreFilter", affinity, "Skip", None, None, None, None, False),
        (None, "PreFilter", fit, ok, None, None, None, None, False),
        ("n-0", "Filter", unsched, ok, None, None, None, None, False),
        # n-0 has 1 CPU in all for a 2-CPU pod: UnschedulableAndUnresolvable (v1.34)
        ("n-0", "Filter", fit, "UnschedulableAndUnresolvable", "Insufficient cpu", None, None,
         None, False),
        ("n-1", "Filter", unsched, ok, None, None, None, None, True),
        ("n-1", "Filter", fit, ok, None, None, None, None, True),
        ("n-1", "Filter", taint, ok, None, None, None, None, True),
        ("n-2", "Filter", unsched, ok, None, None, None, None, False),
        ("n-2", "Filter", fit, ok, None, None, None, None, False),
        ("n-2", "Filter", taint, ok, None, None, None, None, False),
        (None, "PreScore", affinity, "Skip", None, None, None, None, False),
        (None, "PreScore", fit, ok, None, None, None, None, False),
        (None, "PreScore", taint, ok, None, None, None, None, False),
        # LeastAllocated: cpu (4000-2000)*100/4000 = 50, memory (8Gi-1Gi)*100/8Gi = 87 -> 68
        ("n-1", "Score", fit, ok, None, 68, 68, 68, True),
        ("n-1", "Score", taint, ok, None, 0, 100, 300, True),
        # cpu (8000-2000)*100/8000 = 75 -> (75 + 87) / 2 = 81; one PreferNoSchedule taint
        ("n-2", "Score", fit, ok, None, 81, 81, 81, False),
        ("n-2", "Score", taint, ok, None, 1, 0, 0, False),
    ]
    assert [(p.node, p.attempts) for p in result.placements] == [("n-1", 1)]


def test_decisions_off_by_default(tmp_path):
    tc, w = basic(tmp_path, 2, 2)
    assert run_workload(tc, w).decisions is None


# --------------------------------------------------------------------------- thresholds


def test_threshold_miss_sets_status_and_keeps_data(tmp_path):
    tc, w = basic(tmp_path, 10, 400, workload={"threshold": 1e9})
    result = run_workload(tc, w, sample_interval=0.002)
    assert result.status == "threshold-missed"
    thr = next(d for d in result.data_items if d.labels["Metric"] == "SchedulingThroughput")
    got = thr.data["Average"]
    assert result.reason == (f"Case/w/namespace-1: expected SchedulingThroughput Average to be "
                             f"higher: got {got:.2f}, want 1e+09")
    assert thr.data["AverageThreshold"] == 1e9
    assert result.scheduled_pods == 400 and len(result.placements) == 400
    assert any(d.labels["Metric"] == "scheduler_scheduling_attempt_duration_seconds"
               for d in result.data_items)


def test_threshold_selector_expect_lower_on_a_histogram(tmp_path):
    selector = {"name": "scheduler_scheduling_attempt_duration_seconds",
                "labels": {"result": "scheduled"}, "dataBucket": "Perc99",
                "expectLower": True}
    tc, w = basic(tmp_path, 3, 20, workload={"threshold": 1e-9,
                                             "thresholdMetricSelector": selector})
    result = run_workload(tc, w)
    assert result.status == "threshold-missed"
    assert result.reason.startswith("Case/w/namespace-1: expected "
                                    "scheduler_scheduling_attempt_duration_seconds Perc99 to be "
                                    "lower: got ")
    assert result.reason.endswith(", want 1e-09")


def test_threshold_met_is_ok(tmp_path):
    tc, w = basic(tmp_path, 10, 300, workload={"threshold": 0.001})
    result = run_workload(tc, w, sample_interval=0.002)
    assert (result.status, result.reason) == ("ok", None)


# --------------------------------------------------------------------------- statuses


class SteppingWallClock:
    """Stands in for the runner's ``time`` module: ``perf_counter`` moves 1 ms per call, so a
    wall-clock budget runs out after a fixed amount of work, however fast the machine is."""

    def __init__(self) -> None:
        self.t = 0.0

    def perf_counter(self) -> float:
        self.t += 0.001
        return self.t

    def __getattr__(self, name: str):
        return getattr(time, name)


def test_timeout_stops_and_reports(tmp_path, monkeypatch):
    clock = SteppingWallClock()
    for module in (clocks, execution, loop, run_module, windows):  # the runner's wall time
        monkeypatch.setattr(module, "time", clock)
    tc, w = basic(tmp_path, 50, 100_000)
    result = run_workload(tc, w, timeout=0.2)
    assert result.status == "timeout"
    assert result.reason.startswith("timed out after 0.2 s of wall time in op 1 createPods "
                                    "(workloadTemplate[1])")
    assert result.wall_seconds < 5
    # the open collection window is closed and reported (no threshold applied)
    assert any(d.labels["Metric"] == "SchedulingThroughput" for d in result.data_items)


def test_unsupported_op_reason_from_test_case(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createResourceClaims", "namespace": "x", "templatePath": "claim.yaml"},
        MEASURE], templates={"claim.yaml": "kind: ResourceClaim\n"})
    result = run_workload(tc, w)
    assert result.status == "unsupported"
    assert result.reason == tc.unsupported_reason
    assert "not modelled" in result.reason


def test_parameter_error_fails(tmp_path):
    tc, w = make_case(tmp_path, [{"opcode": "createNodes", "countParam": "$nodes"}, MEASURE],
                      params={"nodes": "many"})
    result = run_workload(tc, w)
    assert result.status == "failed"
    assert "parameter $nodes has the wrong type string" in result.reason


def test_bad_template_fails_with_its_error(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "createPods", "count": 1, "podTemplatePath": "bad.yaml",
         "collectMetrics": True}], templates={"bad.yaml": "kind: Pod\nmetadata: [\n"})
    result = run_workload(tc, w)
    assert result.status == "failed"
    assert result.reason.startswith("op 1 createPods (workloadTemplate[1]): ")
    assert "invalid YAML" in result.reason


def test_unknown_scheduler_name_pods_are_ignored_and_explained(tmp_path):
    other = POD.replace("spec:\n", "spec:\n  schedulerName: other\n")
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "createPods", "count": 2, "podTemplatePath": "other.yaml",
         "skipWaitToCompletion": True},
        MEASURE], templates={"other.yaml": other})
    result = run_workload(tc, w)
    assert result.status == "ok", result.reason
    assert result.ignored_pods == 2
    ignored = [p for p in result.placements if p.namespace == "namespace-1"]
    assert {(p.node, p.attempts, p.reason) for p in ignored} == {
        (None, 0, 'no scheduler profile for schedulerName "other": the pod stays pending')}


def test_invalid_arguments_raise():
    with pytest.raises(ValueError, match="clock must be one of virtual, real"):
        run_workload(None, None, clock="fast")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- clocks


def test_real_clock_runs_background_work_by_wall_time(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "churn", "mode": "create", "number": 2, "intervalMilliseconds": 20,
         "templatePaths": ["big.yaml"]},
        {"opcode": "sleep", "duration": "100ms"},
        MEASURE], templates={"big.yaml": BIG_POD})
    result, run = execute_workload(tc, w, clock="real")
    assert result.status == "ok", result.reason
    assert result.clock == "real" and result.virtual_seconds == 0.0
    assert result.wall_seconds >= 0.1
    churned = [p for p in run.cluster.pods.values() if p.namespace == "namespace-1"]
    assert len(churned) == 2


def test_virtual_clock_is_independent_of_machine_speed(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 4},
        {"opcode": "churn", "mode": "recreate", "number": 1, "intervalMilliseconds": 7,
         "templatePaths": ["big.yaml"]},
        {"opcode": "createPods", "count": 60},
        {"opcode": "deletePods", "namespace": "namespace-2", "deletePodsPerSecond": 300,
         "skipWaitToCompletion": True},
        {"opcode": "createPods", "count": 60, "collectMetrics": True}],
        templates={"big.yaml": BIG_POD})
    runs = [run_workload(tc, w, seed=3) for _ in range(2)]
    assert runs[0].status == "ok", runs[0].reason
    assert placements(runs[0]) == placements(runs[1])
    assert runs[0].attempts == runs[1].attempts == 120 + sum(
        p.attempts for p in runs[0].placements if p.namespace == "namespace-1")
    # virtual time follows the documented rules only: 1 ms per attempt, pods created 2 ms
    # apart, timers; never how fast the machine ran
    assert runs[0].virtual_seconds == runs[1].virtual_seconds
    assert runs[0].virtual_seconds >= runs[0].attempts * ATTEMPT_COST


def test_progress_callback(tmp_path, monkeypatch):
    # only the events forced at each op start: a slow machine must not add periodic ones
    monkeypatch.setattr("workloads.runner.run.PROGRESS_EVERY", float("inf"))
    tc, w = basic(tmp_path, 2, 5)
    events: list[ProgressEvent] = []
    run_workload(tc, w, progress=events.append)
    assert [(e.op_index, e.opcode) for e in events] == [(0, "createNodes"), (1, "createPods")]
    assert events[-1].op_count == 2 and events[-1].test_case == "Case"


# --------------------------------------------------------------------------- result contents


def test_result_fields_and_data_items(tmp_path):
    tc, w = basic(tmp_path, 4, 30, workload={"featureGates": {"SchedulerQueueingHints": True,
                                                              "Foo": False}})
    result = run_workload(tc, w, seed=5)
    assert (result.status, result.seed, result.clock) == ("ok", 5, "virtual")
    assert result.feature_gates == {"SchedulerQueueingHints": True, "Foo": False}
    assert result.ignored_feature_gates == ("Foo",)
    assert result.scheduled_pods == result.attempts == 30
    assert result.measured_seconds > 0 and result.cpu_seconds > 0
    assert result.peak_rss_bytes > 0 and result.wall_seconds >= result.measured_seconds
    assert result.extra["attempts_per_scheduled_pod"] == 1.0
    metrics = {d.labels["Metric"] for d in result.data_items}
    assert {"SchedulingThroughput", "SchedulingDuration",
            "scheduler_framework_extension_point_duration_seconds",
            "scheduler_scheduling_attempt_duration_seconds",
            "scheduler_pod_scheduling_duration_seconds",
            "scheduler_plugin_execution_duration_seconds",
            "schedperf_attempts_per_scheduled_pod", "schedperf_pods", "schedperf_cpu_seconds",
            "schedperf_wall_seconds", "schedperf_rss_memory"} <= metrics
    keys = {frozenset(d.labels) for d in result.data_items}
    assert keys == {frozenset({"Name", "Metric", "extension_point", "result", "plugin"})}
    filter_item = next(d for d in result.data_items
                       if d.labels["Metric"] == "scheduler_framework_extension_point_duration_"
                       "seconds" and d.labels["extension_point"] == "Filter")
    assert set(filter_item.data) == {"Perc50", "Perc90", "Perc95", "Perc99", "Average"}
    assert filter_item.unit == "ms" and filter_item.labels["plugin"] == "not applicable"
    assert [len(s) for s in result.progress_samples.values()] == [
        len(result.progress_samples["Case/w/namespace-1"])]


# --------------------------------------------------------------------------- upstream configs


def _upstream_cases(folder: Path):
    out = []
    for path in sorted(folder.glob("*/performance-config*.yaml")):
        for tc in load_configs(path):
            for w in tc.workloads:
                if "integration-test" in w.labels:
                    out.append(pytest.param(
                        tc, w, id=f"{path.parent.name}/{path.stem}/{tc.name}/{w.name}"))
    return out


@pytest.mark.parametrize(("tc", "w"), upstream_params(_upstream_cases, width=2))
def test_upstream_integration_workloads(tc, w, upstream_dir):
    result = run_workload(tc, w, timeout=60)
    if (result.status == "failed" and "DefaultPreemption" not in IN_TREE
            and tc.name.startswith("Preemption")):
        pytest.xfail("DefaultPreemption is not registered in scheduler_core's IN_TREE yet")
    assert result.status in ("ok", "unsupported"), result.reason
    if result.status == "unsupported":
        assert "not modelled" in result.reason
    else:
        assert result.scheduled_pods > 0
        assert any(d.labels["Metric"] == "SchedulingThroughput" for d in result.data_items)


def test_preemption_victims_are_reported_as_deleted_after_binding():
    catalog = Path(__file__).resolve().parents[2] / "workloads" / "configs"
    tc = next(t for t in load_configs(catalog / "default_preemption" / "performance-config.yaml")
              if t.name == "PreemptionBasic")
    w = next(w for w in tc.workloads if "integration-test" in w.labels)
    result, run = execute_workload(tc, w, seed=1)
    assert result.status == "ok", result.reason
    assert run is not None
    victims = [p for p in result.placements if p.reason and p.reason.startswith("deleted after")]
    assert victims and all(p.node for p in victims)
    for p in victims:  # really gone from the cluster
        assert f"{p.namespace}/{p.pod}" not in run.cluster.pods
    for p in result.placements:
        if p.node and p.reason is None:  # bound and still there
            assert run.cluster.pods[f"{p.namespace}/{p.pod}"].node_name == p.node
