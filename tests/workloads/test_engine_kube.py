"""The kube-scheduler engine's Python side without Go: which ops it runs, the throughput and
latency items from the engine's bind times, the objects it sends, and the side-by-side rows."""

from __future__ import annotations

import time

import pytest

from bench.cli.engine_summary import comparison_rows
from workloads.config.decode import FrozenDict
from workloads.config.ops import (
    Barrier,
    Churn,
    CreateAny,
    CreateNodes,
    CreatePods,
    DeletePods,
    LabelNodePrepareStrategy,
    UpdateAny,
)
from workloads.config.ops_unsupported import AllocResourceClaims
from workloads.engine.kube import (
    WAIT_LIMIT,
    KubeEngineOptions,
    _barrier,
    _KubeRun,
    throughput,
    unsupported_op,
    window_items,
)
from workloads.engine.manifests import AnyManifests, NameGenerator, NodeManifests, PodManifests
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.result import ENGINE_CORE, ENGINE_KUBE, DataItem, WorkloadResult


def test_ops_the_engine_cannot_run_yet_name_the_op():
    assert unsupported_op(CreatePods(count=1, namespace="a")) is None
    assert unsupported_op(Barrier()) is None
    assert unsupported_op(Barrier(stage_requirement="Attempted",
                                  label_selector=FrozenDict({"a": "b"}))) is None
    assert unsupported_op(DeletePods(namespace="a")) is None
    assert unsupported_op(Churn()) is None
    assert unsupported_op(CreateAny()) is None
    assert unsupported_op(UpdateAny(subresources=("resize",))) is None
    assert "steadyState" in unsupported_op(CreatePods(count=1, namespace="a",
                                                      steady_state=True))
    assert "scale" in unsupported_op(UpdateAny(subresources=("scale",)))
    assert "allocResourceClaims" in unsupported_op(AllocResourceClaims(namespace="a"))


def _template(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_any_manifests_name_and_place_objects_like_the_core(tmp_path):
    svc = _template(tmp_path, "svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n"
                    "  generateName: svc-\nspec:\n  ports: [{port: 80}]\n")
    made = AnyManifests(svc, None, "ns", 2)
    names = NameGenerator()
    objs = [made.make(i, 2, names) for i in range(2)]
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs] == [
        ("ns", "svc-0"), ("ns", "svc-1")]
    assert "generateName" not in objs[0]["metadata"]
    # churn: the engine names the object (no NameGenerator), generateName kept
    assert made.make(0, 1, None)["metadata"]["generateName"] == "svc-"
    # a namespaced kind without a namespace, a cluster-scoped one with one: bad input
    with pytest.raises(WorkloadError, match='namespace not set'):
        AnyManifests(svc, None, "", 1).make(0, 1, names)
    node = _template(tmp_path, "node.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n"
                     "  name: n-{{ .Index }}\n")
    with pytest.raises(WorkloadError, match='has scope "root"'):
        AnyManifests(node, None, "ns", 1).make(0, 1, names)
    assert AnyManifests(node, None, "", 3).make(2, 3, names)["metadata"] == {"name": "n-2"}
    # a kind the engine's fake clientset does not hold: unsupported, naming it
    cm = _template(tmp_path, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                   "  name: c\n")
    with pytest.raises(UnsupportedWorkload, match="kind ConfigMap is not supported by the "
                       "kube-scheduler engine"):
        AnyManifests(cm, None, "ns", 1)


def test_throughput_samples_the_bind_times_like_the_collector():
    # 10 pods/s for 2 s: samples every 0.1 s after the first bind (the baseline)
    binds = [i * 0.1 for i in range(1, 21)]
    data = throughput(binds, 0.0, 2.0, 0.1)
    assert data["Samples"] >= 15
    assert abs(data["Perc50"] - 10.0) < 1e-6
    # two binds in a short window: too few samples, the window's rate
    short = throughput([0.01, 0.02], 0.0, 0.05, 0.1)
    assert (short["Samples"], short["Average"]) == (0.0, 40.0)


def test_window_items_count_only_the_window_and_measure_latency():
    pods = [{"namespace": "n", "name": f"p{i}", "created": 1.0, "bound": 1.5, "node": "x"}
            for i in range(4)]
    pods.append({"namespace": "n", "name": "late", "created": 1.0, "bound": None, "node": ""})
    pods.append({"namespace": "n", "name": "before", "created": 0.1, "bound": 0.2,
                 "node": "x"})
    items = {d.labels["Metric"]: d for d in window_items("T/w/n", pods, 1.0, 2.0, 0.02, 0.1)}
    assert items["schedperf_pods"].data == {"Scheduled": 4.0, "Created": 5.0}
    assert items["schedperf_cpu_seconds"].data["PerScheduledPodMs"] == 5.0
    assert items["scheduler_pod_scheduling_duration_seconds"].unit == "ms"
    assert items["SchedulingThroughput"].data["Average"] > 0


def test_manifests_have_names_labels_and_strategies():
    names = NameGenerator()
    nodes = NodeManifests(CreateNodes(count=3, label_node_prepare_strategy=(
        LabelNodePrepareStrategy(label_key="zone", label_values=("a", "b")))), 0, names)
    made = [nodes.make(i, 3) for i in range(3)]
    assert [n["metadata"]["name"] for n in made] == ["node-0-0", "node-0-1", "node-0-2"]
    assert [n["metadata"]["labels"]["zone"] for n in made] == ["a", "b", "a"]
    assert made[0]["metadata"]["labels"]["kubernetes.io/hostname"] == "node-0-0"
    assert made[0]["status"]["allocatable"] == made[0]["status"]["capacity"]
    assert "generateName" not in made[0]["metadata"]
    pods = PodManifests(CreatePods(count=2, namespace="ns"), names)
    p = [pods.make(i, 2) for i in range(2)]
    assert [(x["metadata"]["namespace"], x["metadata"]["name"]) for x in p] == [
        ("ns", "pod-0"), ("ns", "pod-1")]


def _result(engine: str, pods_s: float, gomaxprocs: int | None = None) -> WorkloadResult:
    r = WorkloadResult("T", "w", "misc", {}, (), engine=engine, engine_gomaxprocs=gomaxprocs)
    r.data_items = [DataItem({"Average": pods_s}, "pods/s",
                             {"Name": "T/w/n", "Metric": "SchedulingThroughput"})]
    return r


def test_comparison_rows_give_the_ratio_per_gomaxprocs():
    rows = comparison_rows([(1, _result(ENGINE_CORE, 3000)), (1, _result(ENGINE_KUBE, 100, 1)),
                            (1, _result(ENGINE_KUBE, 150, 2))])
    (row,) = rows
    assert row["core_pods_per_s"] == 3000
    assert [(k["gomaxprocs"], k["ratio"]) for k in row["kube"]] == [(1, 30.0), (2, 20.0)]
    assert comparison_rows([(1, _result(ENGINE_CORE, 3000))]) == []



class _FakeClient:
    """Records the engine requests; engine.barrier passes, engine.task reports errors."""

    def __init__(self, task_errors: dict[int, list[str]] | None = None) -> None:
        self.sent: list[tuple[str, dict]] = []
        self.task_errors = task_errors or {}

    def request(self, op: str, args: dict | None = None) -> dict:
        self.sent.append((op, dict(args or {})))
        if op == "engine.task":
            return {"errors": self.task_errors.get(args["id"], []), "timedOut": False}
        return {"timedOut": False}


def _kube_run(client: _FakeClient) -> _KubeRun:
    return _KubeRun(None, None, client, None, time.monotonic() + 600)  # type: ignore[arg-type]


def test_barriers_wait_for_upstreams_pods_per_namespace():
    client = _FakeClient()
    run = _kube_run(client)
    run.expected.update({"a": 3, "b": 0})
    _barrier(run, Barrier(stage_requirement="Attempted", label_selector=FrozenDict({"t": "x"})))
    _barrier(run, Barrier(namespaces=("a",), stage_requirement="Scheduled"))
    sent = [args for op, args in client.sent if op == "engine.barrier"]
    assert [(s["namespaces"], s["stage"], s["labelSelector"]) for s in sent] == [
        ({"a": 3, "b": 0}, "Attempted", {"t": "x"}), ({"a": 3}, "Scheduled", {})]
    # a Scheduled barrier forgets its namespaces (an Attempted one does not): "a" is unknown now
    assert run.expected == {"b": 0}
    with pytest.raises(WorkloadError, match="unknown namespace a"):
        _barrier(run, Barrier(namespaces=("a",), stage_requirement="Scheduled"))


def test_a_wait_takes_upstreams_ten_minutes_or_the_time_limit_asked_for():
    # without --timeout-per-workload a wait gives up after upstream's 10 minutes; with one, it
    # may take what is left of it (a slow engine finishing a big workload)
    for timeout, longer in ((None, False), (5400.0, True)):
        client = _FakeClient()
        opts = KubeEngineOptions(binary=None, gomaxprocs=1, timeout=timeout)
        run = _KubeRun(None, None, client, opts,  # type: ignore[arg-type]
                       time.monotonic() + (timeout or 1e9))
        run.wait("ns", 5)
        _barrier(run, Barrier(namespaces=(), stage_requirement="Scheduled"))
        limits = [args["timeoutSeconds"] for op, args in client.sent
                  if op in ("engine.wait", "engine.barrier")]
        assert len(limits) == 2
        if longer:
            assert all(WAIT_LIMIT < limit <= 5400.0 for limit in limits)
        else:
            assert limits == [WAIT_LIMIT, WAIT_LIMIT]


def test_background_errors_are_reported_by_op():
    run = _kube_run(_FakeClient({1: ["unable to delete pod p0: not found"]}))
    run.tasks = [(3, 0), (5, 1)]
    assert run.task_errors() == ["op 5: unable to delete pod p0: not found"]


def test_the_reference_build_is_chosen_by_workload(shared_dir):
    """Pod-group workloads (createPodGroups, or a workload-aware gate v1.34 does not know) run
    on the v1.37 build, everything else on v1.34; createPodGroups is unsupported on v1.34."""
    from bench.selection import load_test_cases
    from workloads.config.ops_groups import CreatePodGroups
    from workloads.engine.release import release_for
    from workloads.reference.build import V1_34, V1_37

    next_dir = shared_dir / "upstream" / "scheduler_perf-next"
    gang = load_test_cases([next_dir / "podgroup" / "gangscheduling"
                            / "performance-config.yaml"])
    assert gang and all(release_for(tc, w) is V1_37 for tc in gang for w in tc.workloads)
    plain = load_test_cases([shared_dir / "upstream" / "scheduler_perf" / "misc"
                             / "performance-config.yaml"])
    assert plain and all(release_for(tc, w) is V1_34 for tc in plain for w in tc.workloads)
    op = CreatePodGroups(count=1, namespace="a")
    assert unsupported_op(op, V1_37) is None
    assert "v1.37.2" in unsupported_op(op, V1_34)
