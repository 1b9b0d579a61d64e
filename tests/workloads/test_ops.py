"""Each scheduler_perf op run by the workload runner on tiny clusters (virtual clock)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from workloads.config import TestCase, Workload, load_configs
from workloads.result import WorkloadResult
from workloads.runner import Run, execute_workload
from workloads.runner.clocks import POD_CREATE_COST

NODE = """\
apiVersion: v1
kind: Node
metadata:
  generateName: n-
  labels:
    zone: z{{ Mod .Index 2 }}
status:
  capacity:
    pods: "110"
    cpu: "{{ AddInt .Index 1 }}"
    memory: 8Gi
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  generateName: p-
  labels:
    app: web
spec:
  containers:
  - name: c
    image: pause
    resources:
      requests:
        cpu: 100m
        memory: 100Mi
"""
BIG_POD = POD.replace("generateName: p-", "generateName: big-").replace(
    "cpu: 100m", "cpu: \"64\"")
GATED_POD = POD.replace("generateName: p-", "generateName: gated-").replace(
    "spec:\n", "spec:\n  schedulingGates:\n  - name: example.com/hold\n")
LIGHT_POD = POD.replace("spec:\n", "spec:\n  terminationGracePeriodSeconds: 0\n")
SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  generateName: svc-
spec:
  selector:
    app: web
"""
MEASURE = {"opcode": "createPods", "count": 2, "collectMetrics": True}


def make_case(tmp_path: Path, ops: list[dict[str, Any]], *, params: dict[str, Any] | None = None,
              templates: dict[str, str] | None = None, case: dict[str, Any] | None = None,
              workload: dict[str, Any] | None = None) -> tuple[TestCase, Workload]:
    """A one-test-case config file in tmp_path (templates beside it) and its workload."""
    for name, text in (templates or {}).items():
        (tmp_path / name).write_text(text)
    tc = {"name": "Case", "workloadTemplate": ops,
          "workloads": [{"name": "w", "params": params or {}, **(workload or {})}],
          **(case or {})}
    path = tmp_path / "performance-config.yaml"
    path.write_text(yaml.safe_dump([tc], sort_keys=False))
    test_case = load_configs(path)[0]
    return test_case, test_case.workloads[0]


def execute(tc: TestCase, w: Workload, **kw: Any) -> tuple[WorkloadResult, Run]:
    result, run = execute_workload(tc, w, **kw)
    assert run is not None, result.reason
    return result, run


def nodes(run: Run) -> dict[str, Any]:
    table = run.cluster.table
    return {table.node(s).name: table.node(s) for s in table.order().tolist()}


def placements(result: WorkloadResult) -> list[tuple[str, str, str | None, int]]:
    return [(p.namespace, p.pod, p.node, p.attempts) for p in result.placements]


# --------------------------------------------------------------------------- createNodes


def test_create_nodes_builtin_node_names_and_hostname(tmp_path):
    tc, w = make_case(tmp_path, [{"opcode": "createNodes", "count": 3}, MEASURE])
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    got = nodes(run)
    assert list(got) == ["node-0-0", "node-0-1", "node-0-2"]
    n = got["node-0-1"]
    assert n.labels == {"kubernetes.io/hostname": "node-0-1"}
    assert n.allocatable == {"pods": 110, "cpu": 4000, "memory": 32 * 2**30}


def test_create_nodes_template_rendered_with_index_and_count(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 3, "nodeTemplatePath": "node.yaml"}, MEASURE],
        templates={"node.yaml": NODE})
    _, run = execute(tc, w)
    got = nodes(run)
    assert [(n.name, n.allocatable["cpu"], n.labels["zone"]) for n in got.values()] == [
        ("n-0", 1000, "z0"), ("n-1", 2000, "z1"), ("n-2", 3000, "z0")]
    assert all(n.labels["kubernetes.io/hostname"] == n.name for n in got.values())


@pytest.mark.parametrize(("strategy", "want"), [
    ({"labelNodePrepareStrategy": {"labelKey": "rack", "labelValues": ["a", "b"]}},
     ["a", "b", "a", "b", "a"]),
    ({"uniqueNodeLabelStrategy": {"labelKey": "rack"}},
     ["node-0-0-0", "node-0-1-1", "node-0-2-2", "node-0-3-3", "node-0-4-4"]),
], ids=["label-round-robin", "unique-label"])
def test_create_nodes_label_strategies(tmp_path, strategy, want):
    tc, w = make_case(tmp_path, [{"opcode": "createNodes", "count": 5, **strategy}, MEASURE])
    _, run = execute(tc, w)
    assert [n.labels["rack"] for n in nodes(run).values()] == want


def test_create_nodes_allocatable_strategy_adds_allocatable(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 2,
         "nodeAllocatableStrategy": {"nodeAllocatable": {"example.com/gpu": "2"}}}, MEASURE])
    _, run = execute(tc, w)
    assert all(n.allocatable["example.com/gpu"] == 2 and n.allocatable["cpu"] == 4000
               for n in nodes(run).values())


# --------------------------------------------------------------------------- createNamespaces


def test_create_namespaces_from_template(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "createNamespaces", "prefix": "team", "count": 2,
         "namespaceTemplatePath": "ns.yaml"},
        {"opcode": "createPods", "count": 1, "namespace": "team-1", "collectMetrics": True}],
        templates={"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  labels:\n"
                              "    team: devops\n"})
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    assert {n: ns.labels for n, ns in run.cluster.namespaces.items()} == {
        "team-0": {"team": "devops"}, "team-1": {"team": "devops"}}


# --------------------------------------------------------------------------- createPods


def test_create_pods_namespaces_templates_and_waiting(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "createPods", "count": 3},  # test case default template
        {"opcode": "createPods", "count": 2, "podTemplatePath": "big.yaml",
         "skipWaitToCompletion": True},
        {"opcode": "createPods", "count": 2, "namespace": "mine", "collectMetrics": True}],
        templates={"pod.yaml": POD, "big.yaml": BIG_POD},
        case={"defaultPodTemplatePath": "pod.yaml"})
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    got = {(p[0], p[1]): p for p in placements(result)}
    assert [k for k in got if k[0] == "namespace-1"] == [
        ("namespace-1", "p-0"), ("namespace-1", "p-1"), ("namespace-1", "p-2")]
    # skipWaitToCompletion: created, never waited for; the next op's wait schedules them
    big = [p for p in result.placements if p.namespace == "namespace-2"]
    assert [(p.pod, p.node, p.attempts) for p in big] == [("big-0", None, 1), ("big-1", None, 1)]
    assert big[0].reason.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert run.pods.known_ns == {"namespace-1": 0, "namespace-2": 2, "mine": 0}
    pod = run.cluster.pods["namespace-1/p-0"]
    assert pod.labels == {"app": "web", "signature": "signature-label-0"}
    assert run.cluster.pods["mine/p-1"].labels["signature"] == "signature-label-1"
    assert result.unschedulable_pods == 2
    assert result.unschedulable_reasons == {big[0].reason: 2}
    names = {d.labels["Name"] for d in result.data_items}
    assert names == {"Case/w/mine"}


def test_create_pods_builtin_pod(tmp_path):
    tc, w = make_case(tmp_path, [{"opcode": "createNodes", "count": 1}, MEASURE])
    _, run = execute(tc, w)
    pod = run.cluster.pods["namespace-1/pod-0"]
    assert pod.labels == {}  # no signature label on the built-in pod
    assert pod.spec.requests == {"cpu": 100, "memory": 500 * 2**20}


def test_create_pod_sets_are_unrolled(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "createPodSets", "count": 2, "namespacePrefix": "set",
         "createPodsOp": {"opcode": "createPods", "count": 1}},
        MEASURE])
    result, _ = execute(tc, w)
    assert result.status == "ok", result.reason
    assert [(p.namespace, p.pod) for p in result.placements] == [
        ("set-0", "pod-0"), ("set-1", "pod-0"), ("namespace-3", "pod-0"),
        ("namespace-3", "pod-1")]


def test_same_seed_same_placements_and_attempts(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 6},
        {"opcode": "createPods", "count": 40},
        {"opcode": "churn", "mode": "create", "number": 5, "intervalMilliseconds": 5,
         "templatePaths": ["big.yaml"]},
        {"opcode": "createPods", "count": 40, "collectMetrics": True}],
        templates={"big.yaml": BIG_POD})
    first = execute_workload(tc, w, seed=7)[0]
    second = execute_workload(tc, w, seed=7)[0]
    assert first.status == second.status == "ok"
    assert placements(first) == placements(second)
    assert first.attempts == second.attempts
    assert first.virtual_seconds == second.virtual_seconds


# --------------------------------------------------------------------------- steadyState


def test_steady_state_keeps_count_pods_in_flight_for_duration(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "createPods", "count": 3, "steadyState": True, "duration": "1s",
         "podTemplatePath": "pod.yaml", "collectMetrics": True}],
        templates={"pod.yaml": POD})
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    # 1 ms of virtual time per attempt: 1000 attempts in 1 s, each binds a pod that is then
    # deleted (grace period 0) and replaced
    assert result.attempts == 1000
    assert result.virtual_seconds == pytest.approx(1.0)
    pods = [p for p in run.cluster.pods.values() if p.namespace == "namespace-1"]
    assert len(pods) == 3
    window = {d.labels["Metric"]: d for d in result.data_items}
    assert window["schedperf_pods"].data["Scheduled"] == 1000


def test_steady_state_without_any_scheduled_pod_fails(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "createPods", "count": 2, "steadyState": True, "duration": "2s",
         "podTemplatePath": "big.yaml", "collectMetrics": True}],
        templates={"big.yaml": BIG_POD})
    result = execute_workload(tc, w)[0]
    assert result.status == "failed"
    assert result.reason == ("op 1: no pod at all got scheduled, either because of a problem "
                             "or because the test interval was too small")


# --------------------------------------------------------------------------- deletePods


def _delete_case(tmp_path: Path, skip: bool, then: list[dict[str, Any]]):
    return make_case(tmp_path, [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "createPods", "count": 10, "namespace": "victims",
         "podTemplatePath": "light.yaml"},
        {"opcode": "createPods", "count": 2, "namespace": "victims",
         "podTemplatePath": "pod.yaml", "skipWaitToCompletion": True},
        {"opcode": "deletePods", "namespace": "victims", "deletePodsPerSecond": 10,
         "labelSelector": {"kind": "light"}, "skipWaitToCompletion": skip},
        *then, MEASURE],
        templates={"light.yaml": LIGHT_POD.replace("app: web", "kind: light"),
                   "pod.yaml": POD})


def test_delete_pods_rate_in_virtual_time(tmp_path):
    tc, w = _delete_case(tmp_path, False, [])
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    left = sorted(p.name for p in run.cluster.pods.values() if p.namespace == "victims")
    assert left == ["p-10", "p-11"]  # the selector spared them
    # 10 init pods created 2 ms apart, each scheduled in the 1 ms after it (19 ms); 2 more
    # created 2 ms apart (the op returns once both exist: 2 ms); 10 deletions at 10/s: the op
    # lasts 1 s of virtual time (the 2 other pods are scheduled meanwhile); then the 2
    # measured pods, 2 ms apart, the last scheduled 1 ms after its creation
    assert POD_CREATE_COST == 0.002
    assert result.virtual_seconds == pytest.approx(0.019 + 0.002 + 1.0 + 0.003)


def test_delete_pods_in_background_while_sleeping(tmp_path):
    tc, w = _delete_case(tmp_path, True, [{"opcode": "sleep", "duration": "500ms"}])
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    light = [p for p in run.cluster.pods.values() if p.labels.get("kind") == "light"]
    assert len(light) == 5  # ticks at 0.1 .. 0.5 s deleted five


def test_delete_pods_with_grace_period_keeps_bound_pods_terminating(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "createPods", "count": 2, "namespace": "a", "podTemplatePath": "pod.yaml"},
        {"opcode": "deletePods", "namespace": "a"},
        MEASURE], templates={"pod.yaml": POD})
    _, run = execute(tc, w)
    pods = [p for p in run.cluster.pods.values() if p.namespace == "a"]
    assert len(pods) == 2 and all(p.deletion_timestamp is not None for p in pods)


# --------------------------------------------------------------------------- churn


@pytest.mark.parametrize(("mode", "number", "sleep", "want"), [
    ("create", 3, "1s", {"nodes": 3, "pods": 3, "services": 3}),
    ("create", 0, "250ms", {"nodes": 2, "pods": 2, "services": 2}),
    ("recreate", 1, "350ms", {"nodes": 1, "pods": 1, "services": 1}),
    ("recreate", 1, "450ms", {"nodes": 0, "pods": 0, "services": 0}),
    ("recreate", 2, "250ms", {"nodes": 2, "pods": 2, "services": 2}),
    ("recreate", 2, "350ms", {"nodes": 1, "pods": 1, "services": 1}),
], ids=["create-3", "create-unlimited", "recreate-odd", "recreate-even", "recreate-ring-2",
     "recreate-ring-2-wraps"])
def test_churn_modes(tmp_path, mode, number, sleep, want):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "churn", "mode": mode, "number": number, "intervalMilliseconds": 100,
         "templatePaths": ["node.yaml", "big.yaml", "svc.yaml"]},
        {"opcode": "sleep", "duration": sleep},
        {"opcode": "createPods", "count": 1, "namespace": "m", "collectMetrics": True}],
        templates={"node.yaml": NODE.replace("{{ Mod .Index 2 }}", "x").replace(
            "{{ AddInt .Index 1 }}", "0"), "big.yaml": BIG_POD, "svc.yaml": SERVICE})
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    c = run.cluster
    got = {"nodes": c.table.num_nodes - 1,
           "pods": sum(1 for p in c.pods.values() if p.namespace == "namespace-1"),
           "services": len(c.services)}
    assert got == want


# --------------------------------------------------------------------------- barrier / sleep


def test_barrier_attempted_counts_gated_and_failed_pods(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "createPods", "count": 3, "podTemplatePath": "gated.yaml",
         "skipWaitToCompletion": True},
        {"opcode": "createPods", "count": 2, "podTemplatePath": "big.yaml",
         "skipWaitToCompletion": True},
        {"opcode": "barrier", "stageRequirement": "Attempted"},
        MEASURE], templates={"gated.yaml": GATED_POD, "big.yaml": BIG_POD})
    result = execute(tc, w)[0]
    assert result.status == "ok", result.reason
    gated = [p for p in result.placements if p.namespace == "namespace-1"]
    assert {(p.attempts, p.reason) for p in gated} == {
        (0, "waiting for scheduling gates: [example.com/hold]")}
    big = [p for p in result.placements if p.namespace == "namespace-2"]
    assert [p.attempts for p in big] == [1, 1]


def test_barrier_scheduled_times_out_on_unschedulable_pods(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "createPods", "count": 1, "podTemplatePath": "big.yaml",
         "skipWaitToCompletion": True},
        {"opcode": "barrier"},
        MEASURE], templates={"big.yaml": BIG_POD})
    result = execute_workload(tc, w)[0]
    assert result.status == "failed"
    assert result.reason == (
        'op 2: error waiting for pods in namespace "namespace-1": at least pod '
        "namespace-1/big-0 is not scheduled: want 1 pods scheduled, got 0: timed out after "
        "600 s of virtual time")


def test_barrier_unknown_namespace(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "barrier", "namespaces": ["nope"]}, MEASURE])
    result = execute_workload(tc, w)[0]
    assert (result.status, result.reason) == ("failed", "op 1: unknown namespace nope")


def test_sleep_advances_virtual_time(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "sleep", "durationParam": "$pause"}, MEASURE], params={"pause": "2.5s"})
    result = execute_workload(tc, w)[0]
    # the 2 measured pods are created 2 ms apart; the last is scheduled 1 ms later
    assert result.virtual_seconds == pytest.approx(2.5 + POD_CREATE_COST + 0.001)


# --------------------------------------------------------------------------- metrics ops


def test_start_stop_collecting_metrics_scope_and_name(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "startCollectingMetrics", "name": "web", "namespaces": ["a", "b"],
         "labelSelector": {"app": "web"}},
        {"opcode": "createPods", "count": 4, "namespace": "a", "podTemplatePath": "pod.yaml"},
        {"opcode": "createPods", "count": 3, "namespace": "b"},
        {"opcode": "createPods", "count": 2, "namespace": "c", "podTemplatePath": "pod.yaml"},
        {"opcode": "stopCollectingMetrics"}], templates={"pod.yaml": POD})
    result = execute_workload(tc, w)[0]
    assert result.status == "ok", result.reason
    items = {d.labels["Metric"]: d for d in result.data_items}
    assert {d.labels["Name"] for d in result.data_items} == {"Case/w/web"}
    assert items["schedperf_pods"].data["Scheduled"] == 4  # only labelled pods in a and b
    assert items["schedperf_pods"].data["Attempts"] == 9
    keys = {frozenset(d.labels) for d in result.data_items}
    assert len(keys) == 1  # every item carries every label key
    assert items["SchedulingThroughput"].labels["extension_point"] == "not applicable"


# --------------------------------------------------------------------------- createAny / updateAny


def test_create_any_kinds(tmp_path):
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: high\n" \
         "value: 1000\n"
    pdb = ("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: budget\n"
           "spec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app: web\n")
    bound = POD.replace("generateName: p-", "name: fixed-{{ .Index }}").replace(
        "spec:\n", "spec:\n  nodeName: node-0-0\n")
    prio = POD.replace("spec:\n", "spec:\n  priorityClassName: high\n")
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "createAny", "templatePath": "pc.yaml"},
        {"opcode": "createAny", "templatePath": "ns.yaml"},
        {"opcode": "createAny", "templatePath": "svc.yaml", "namespace": "web"},
        {"opcode": "createAny", "templatePath": "pdb.yaml", "namespace": "web"},
        {"opcode": "createAny", "templatePath": "node.yaml", "count": 2},
        {"opcode": "createAny", "templatePath": "bound.yaml", "namespace": "web", "count": 2},
        {"opcode": "createAny", "templatePath": "prio.yaml", "namespace": "web"},
        MEASURE],
        templates={"pc.yaml": pc, "ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n"
                   "  name: extra\n", "svc.yaml": SERVICE, "pdb.yaml": pdb, "node.yaml": NODE,
                   "bound.yaml": bound, "prio.yaml": prio})
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    c = run.cluster
    assert set(c.priority_classes) == {"high"}
    assert {"extra", "web"} <= set(c.namespaces)
    assert set(c.services) == {"web/svc-0"} and set(c.pdbs) == {"web/budget"}
    assert {"n-0", "n-1"} <= set(nodes(run))
    assert "kubernetes.io/hostname" not in nodes(run)["n-0"].labels  # createAny adds nothing
    assert c.pods["web/fixed-1"].node_name == "node-0-0"
    assert c.pods["web/p-0"].priority == 1000
    # pods created bound never went through the scheduler
    assert [(p.namespace, p.pod) for p in result.placements if p.namespace == "web"] == [
        ("web", "p-0")]


def test_create_any_cluster_scoped_kind_with_namespace_fails(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createAny", "templatePath": "node.yaml", "namespace": "x"}, MEASURE],
        templates={"node.yaml": NODE})
    result = execute_workload(tc, w)[0]
    assert result.status == "failed"
    assert 'but "Node" has scope "root"' in result.reason


def test_update_any_node_and_pod_unblock_pods(tmp_path):
    cordoned = ("apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{{ .Index }}\n"
                "spec:\n  unschedulable: true\nstatus:\n  capacity:\n    cpu: '4'\n"
                "    memory: 8Gi\n    pods: '10'\n")
    pod = POD.replace("generateName: p-", "name: p-{{ .Index }}")
    relabelled = pod.replace("app: web", "app: db")
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 2, "nodeTemplatePath": "cordoned.yaml"},
        {"opcode": "createPods", "count": 3, "namespace": "x", "podTemplatePath": "pod.yaml",
         "skipWaitToCompletion": True},
        {"opcode": "barrier", "stageRequirement": "Attempted"},
        {"opcode": "updateAny", "count": 3, "namespace": "x", "templatePath": "db.yaml",
         "updatePerSecond": 10},
        {"opcode": "updateAny", "count": 2, "templatePath": "open.yaml"},
        {"opcode": "barrier"},
        MEASURE], templates={"cordoned.yaml": cordoned, "pod.yaml": pod, "db.yaml": relabelled,
                             "open.yaml": cordoned.replace("  unschedulable: true\n", "")})
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    pods = [p for p in run.cluster.pods.values() if p.namespace == "x"]
    assert {p.labels["app"] for p in pods} == {"db"} and all(p.node_name for p in pods)
    assert result.virtual_seconds >= 0.3  # three updates at 10/s


# --------------------------------------------------------------------------- feature gates


def test_queueing_hints_off_changes_attempt_counts(tmp_path):
    small = NODE.replace("{{ AddInt .Index 1 }}", "1").replace("generateName: n-",
                                                               "generateName: small-")
    ops = [
        {"opcode": "createNodes", "count": 1, "nodeTemplatePath": "small.yaml"},
        {"opcode": "createPods", "count": 5, "podTemplatePath": "big.yaml",
         "skipWaitToCompletion": True},
        {"opcode": "barrier", "stageRequirement": "Attempted"},
        {"opcode": "createNodes", "count": 5, "nodeTemplatePath": "small.yaml"},
        {"opcode": "createPods", "count": 3, "collectMetrics": True},
        {"opcode": "sleep", "duration": "15s"}]
    runs = {}
    for qh in (True, False):
        tc, w = make_case(tmp_path, ops, templates={"small.yaml": small, "big.yaml": BIG_POD},
                          workload={"featureGates": {"SchedulerQueueingHints": qh,
                                                     "SchedulerAsyncAPICalls": False}})
        runs[qh] = execute_workload(tc, w)[0]
        assert runs[qh].status == "ok", runs[qh].reason
        assert runs[qh].ignored_feature_gates == ("SchedulerAsyncAPICalls",)
    big = {qh: [p.attempts for p in r.placements if p.namespace == "namespace-1"]
           for qh, r in runs.items()}
    # hints on: a node too small for the pods does not requeue them; off: every node add does
    assert big[True] == [1] * 5
    assert all(a > 1 for a in big[False])
    assert runs[False].attempts > runs[True].attempts


def test_update_any_namespace_service_and_pdb(tmp_path):
    ns = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n  labels:\n    tier: {t}\n"
    svc = SERVICE.replace("generateName: svc-", "name: front").replace("app: web", "app: {t}")
    pdb = ("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: budget\n"
           "spec:\n  minAvailable: {t}\n")
    tc, w = make_case(tmp_path, [
        {"opcode": "createAny", "templatePath": "ns.yaml"},
        {"opcode": "createAny", "templatePath": "svc.yaml", "namespace": "team"},
        {"opcode": "createAny", "templatePath": "pdb.yaml", "namespace": "team"},
        {"opcode": "updateAny", "templatePath": "ns2.yaml"},
        {"opcode": "updateAny", "templatePath": "svc2.yaml", "namespace": "team"},
        {"opcode": "updateAny", "templatePath": "pdb2.yaml", "namespace": "team"},
        {"opcode": "createNodes", "count": 1}, MEASURE],
        templates={"ns.yaml": ns.format(t="a"), "ns2.yaml": ns.format(t="b"),
                   "svc.yaml": svc.format(t="a"), "svc2.yaml": svc.format(t="b"),
                   "pdb.yaml": pdb.format(t=1), "pdb2.yaml": pdb.format(t=2)})
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    c = run.cluster
    assert c.namespaces["team"].labels == {"tier": "b"}
    assert c.services["team/front"].selector == {"app": "b"}
    assert c.pdbs["team/budget"].min_available == 2


def test_update_any_missing_object_fails(tmp_path):
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "updateAny", "templatePath": "svc.yaml", "namespace": "x"}, MEASURE],
        templates={"svc.yaml": SERVICE.replace("generateName: svc-", "name: ghost")})
    result = execute_workload(tc, w)[0]
    assert result.status == "failed"
    assert result.reason.startswith('op 1: Failed to update object: ')
    assert "ghost" in result.reason
