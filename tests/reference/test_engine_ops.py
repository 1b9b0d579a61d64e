"""The ops beyond createNodes/createPods on the kube-scheduler engine (createPodSets, createAny,
updateAny, deletePods, barrier with labelSelector / stageRequirement Attempted, churn): tiny
workloads run through :func:`run_kube_workload`, or the engine ops driven directly, with the
outcome asserted (what was bound, deleted, created). Nothing here depends on speed: waits end
on the op's own completion (a barrier, a task's ticks), with generous limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from workloads.config import load_configs
from workloads.engine.kube import KubeEngineOptions, run_kube_workload
from workloads.reference import ReferenceBinary, ReferenceClient
from workloads.result import WorkloadResult

LIMIT = 300.0  # seconds a workload may take before it is reported timed out

SMALL_NODE = """apiVersion: v1
kind: Node
metadata:
  generateName: small-
status:
  capacity: {pods: "4", cpu: "4", memory: 32Gi}
"""


def _pod(name: str, labels: str = "", extra_meta: str = "", spec: str = "") -> str:
    return (f"apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: {name}-\n{labels}"
            f"{extra_meta}spec:\n{spec}  containers:\n  - name: c\n    image: i\n")


def _run(tmp_path: Path, binary: ReferenceBinary, ops: str, files: dict[str, str] | None = None,
         ) -> WorkloadResult:
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    if "collectMetrics" not in ops:  # a test case needs an op that collects metrics
        ops += "  - opcode: createPods\n    count: 1\n    namespace: measured\n" \
               "    collectMetrics: true\n"
    (folder / "performance-config.yaml").write_text(
        "- name: T\n  labels: [performance]\n  workloadTemplate:\n" + ops
        + "  workloads:\n  - name: w\n")
    (tc,) = load_configs(folder.parent)
    return run_kube_workload(tc, tc.workloads[0],
                             KubeEngineOptions(binary=binary, gomaxprocs=2, timeout=LIMIT))


def _by_ns(result: WorkloadResult) -> dict[str, list]:
    out: dict[str, list] = {}
    for p in result.placements:
        out.setdefault(p.namespace, []).append(p)
    return out


def test_create_pod_sets_schedule_every_set_in_its_namespace(tmp_path, reference_binary):
    result = _run(tmp_path, reference_binary, """\
  - opcode: createNodes
    count: 2
  - opcode: createPodSets
    count: 3
    namespacePrefix: set
    createPodsOp:
      opcode: createPods
      count: 2
  - opcode: createPods
    count: 4
    collectMetrics: true
""")
    assert result.status == "ok", result.reason
    pods = _by_ns(result)
    assert {ns: len(ps) for ns, ps in pods.items()} == {
        "set-0": 2, "set-1": 2, "set-2": 2, "namespace-4": 4}
    assert all(p.node for ps in pods.values() for p in ps)


def test_create_any_and_update_any_reach_the_scheduler(tmp_path, reference_binary):
    # a PriorityClass from createAny (the pods naming it are refused without it), a Service
    # updated by updateAny (an update of a missing object fails), and nodes created
    # unschedulable that updateAny makes schedulable: the pods waiting on them get bound
    files = {
        "pc.yaml": "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n"
                   "  name: high\nvalue: 1000\n",
        "svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n"
                    "  selector: {app: a}\n  ports: [{port: 80}]\n",
        "node.yaml": "apiVersion: v1\nkind: Node\nmetadata:\n  name: n-{{ .Index }}\n"
                     "spec:\n  unschedulable: true\n"
                     "status:\n  capacity: {pods: \"10\", cpu: \"4\", memory: 32Gi}\n",
        "node-open.yaml": "apiVersion: v1\nkind: Node\nmetadata:\n  name: n-{{ .Index }}\n"
                          "  labels: {kubernetes.io/hostname: n-{{ .Index }}}\n"
                          "status:\n  capacity: {pods: \"10\", cpu: \"4\", memory: 32Gi}\n",
        "pod-high.yaml": _pod("high", spec="  priorityClassName: high\n"),
    }
    result = _run(tmp_path, reference_binary, """\
  - opcode: createAny
    templatePath: pc.yaml
  - opcode: createAny
    templatePath: svc.yaml
    namespace: svc-ns
  - opcode: updateAny
    templatePath: svc.yaml
    namespace: svc-ns
  - opcode: createAny
    templatePath: node.yaml
    count: 2
  - opcode: createPods
    count: 3
    namespace: waiting
    podTemplatePath: pod-high.yaml
    skipWaitToCompletion: true
  - opcode: barrier
    stageRequirement: Attempted
  - opcode: updateAny
    templatePath: node-open.yaml
    count: 2
    updatePerSecond: 1000
  - opcode: barrier
""", files)
    assert result.status == "ok", result.reason
    waiting = _by_ns(result)["waiting"]
    assert len(waiting) == 3 and {p.node for p in waiting} <= {"n-0", "n-1"}
    assert all(p.node for p in waiting)


def test_update_any_of_a_missing_object_fails_and_an_unheld_kind_is_unsupported(
        tmp_path, reference_binary):
    files = {"svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: nowhere\n"
                         "spec:\n  ports: [{port: 80}]\n",
             "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"}
    failed = _run(tmp_path / "a", reference_binary, """\
  - opcode: updateAny
    templatePath: svc.yaml
    namespace: ns
""", files)
    assert failed.status == "failed"
    assert "Failed to update object" in failed.reason and "not found" in failed.reason
    unsupported = _run(tmp_path / "b", reference_binary, """\
  - opcode: createAny
    templatePath: cm.yaml
    namespace: ns
""", files)
    assert unsupported.status == "unsupported"
    assert "kind ConfigMap is not supported by the kube-scheduler engine" in unsupported.reason


def test_delete_pods_deletes_as_the_api_server_does(tmp_path, reference_binary):
    # pods with terminationGracePeriodSeconds 0 are removed once bound; pods with finalizers
    # only get a deletionTimestamp (bound or not), as upstream's SchedulingDeletedPodsWith-
    # Finalizers expects; the paced deletion (deletePodsPerSecond) ends before the op does
    files = {"light.yaml": _pod("light", spec="  terminationGracePeriodSeconds: 0\n"),
             "fin.yaml": _pod("fin", extra_meta="  finalizers: [test.k8s.io/finalizer]\n")}
    result = _run(tmp_path, reference_binary, """\
  - opcode: createNodes
    count: 2
  - opcode: createPods
    count: 4
    namespace: light
    podTemplatePath: light.yaml
  - opcode: deletePods
    namespace: light
  - opcode: createPods
    count: 5
    namespace: fin
    podTemplatePath: fin.yaml
    skipWaitToCompletion: true
  - opcode: deletePods
    namespace: fin
    deletePodsPerSecond: 1000
  - opcode: createPods
    count: 3
    namespace: after
    collectMetrics: true
""", files)
    assert result.status == "ok", result.reason
    pods = _by_ns(result)
    assert [p.reason for p in pods["light"]] == [
        "deleted after it was bound (a preemption victim, or deleted by an op)"] * 4
    assert len(pods["fin"]) == 5
    for p in pods["fin"]:  # still stored: bound, or terminating before it was scheduled
        assert (p.node and p.reason is None) or (
            p.reason == "terminating (deletionTimestamp set): not scheduled"), p
    assert all(p.node for p in pods["after"])


def test_barriers_with_a_label_selector_and_attempted(tmp_path, reference_binary):
    # EventHandlingPodDelete's pattern: 4 blockers fill the only node (room for 4 pods: the 3
    # labelled pods and the measured one once the blockers are gone), the labelled pods are
    # attempted (PodScheduled=False, written by the scheduler through the fake clientset),
    # the blockers are deleted by label, and the labelled pods get scheduled; gated pods count
    # as attempted from their creation (PodScheduled=False/SchedulingGated)
    files = {"small.yaml": SMALL_NODE,
             "blocker.yaml": _pod("blocker", labels="  labels: {type: blocker}\n",
                                  spec="  terminationGracePeriodSeconds: 0\n"),
             "unsched.yaml": _pod("unsched", labels="  labels: {type: unsched}\n"),
             "gated.yaml": _pod("gated", spec="  schedulingGates: [{name: test.k8s.io/hold}]\n")}
    result = _run(tmp_path, reference_binary, """\
  - opcode: createNodes
    count: 1
    nodeTemplatePath: small.yaml
  - opcode: createPods
    count: 4
    namespace: ns
    podTemplatePath: blocker.yaml
  - opcode: createPods
    count: 4
    namespace: gated
    podTemplatePath: gated.yaml
    skipWaitToCompletion: true
  - opcode: createPods
    count: 3
    namespace: ns
    podTemplatePath: unsched.yaml
    skipWaitToCompletion: true
  - opcode: barrier
    stageRequirement: Attempted
  - opcode: barrier
    namespaces: [ns]
    stageRequirement: Attempted
    labelSelector: {type: unsched}
  - opcode: deletePods
    namespace: ns
    labelSelector: {type: blocker}
    deletePodsPerSecond: 1000
    skipWaitToCompletion: true
  - opcode: barrier
    namespaces: [ns]
    labelSelector: {type: unsched}
""", files)
    assert result.status == "ok", result.reason
    pods = _by_ns(result)
    unsched = [p for p in pods["ns"] if p.pod.startswith("unsched-")]
    assert len(unsched) == 3 and all(p.node for p in unsched)
    assert not any(p.node for p in pods["gated"])


def test_a_barrier_on_an_unknown_namespace_fails(tmp_path, reference_binary):
    result = _run(tmp_path, reference_binary, """\
  - opcode: barrier
    namespaces: [nowhere]
""")
    assert result.status == "failed" and "unknown namespace nowhere" in result.reason


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _ns(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "churn-"},
       "spec": {"containers": [{"name": "c", "image": "i"}]}}


def test_churn_create_and_recreate_on_the_engine(reference_binary):
    with ReferenceClient(reference_binary.path, timeout=120, env={"GOMAXPROCS": "2"}) as ref:
        ref.request("engine.start", args={"gomaxprocs": 2})
        ref.request("engine.create", args={"objects": [_node("n0"), _ns("c"), _ns("r")]})
        # mode create, number 3: three pods, then the task is done; they all get bound
        task = ref.request("engine.churn", args={
            "mode": "create", "number": 3, "intervalMilliseconds": 5,
            "objects": [{**POD, "metadata": {**POD["metadata"], "namespace": "c"}}]})
        done = ref.request("engine.task", args={"id": task["id"], "timeoutSeconds": LIMIT})
        assert (done["done"], done["ticks"], done["created"], done["errors"]) == (
            True, 3, 3, [])
        barrier = ref.request("engine.barrier", args={
            "namespaces": {"c": 3}, "stage": "Scheduled", "timeoutSeconds": LIMIT})
        assert not barrier["timedOut"]
        stats = ref.request("engine.stats", args={"namespaces": ["c"]})
        assert len(stats["pods"]) == 3 and all(p["name"].startswith("churn-")
                                               for p in stats["pods"])
        # mode recreate, one slot per template: create, delete, create, delete, ...
        service = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"generateName": "svc-", "namespace": "r"},
                   "spec": {"ports": [{"port": 80}]}}
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"generateName": "cn-"},
                "status": {"capacity": {"pods": "0"}}}
        pod = {**POD, "metadata": {**POD["metadata"], "namespace": "r"}}
        task = ref.request("engine.churn", args={
            "mode": "recreate", "number": 1, "intervalMilliseconds": 5,
            "objects": [service, node, pod]})
        seen = ref.request("engine.task", args={"id": task["id"], "ticks": 4,
                                                "timeoutSeconds": LIMIT})
        ticks = seen["ticks"]
        assert not seen["timedOut"] and not seen["done"] and ticks >= 4
        assert seen["created"] == 3 * ((ticks + 1) // 2)
        assert seen["deleted"] == 3 * (ticks // 2)
        assert seen["errors"] == []
        bad = ref.request("engine.stats")
        assert bad["errors"] == []


def test_paced_delete_pods_is_a_task(reference_binary):
    with ReferenceClient(reference_binary.path, timeout=120, env={"GOMAXPROCS": "2"}) as ref:
        ref.request("engine.start", args={"gomaxprocs": 2})
        ref.request("engine.create", args={"objects": [_node("n0"), _ns("d")]})
        pods = [{**POD, "metadata": {"name": f"p{i}", "namespace": "d",
                                     "labels": {"k": "v" if i % 2 else "w"}}}
                for i in range(6)]
        ref.request("engine.create", args={"objects": pods})
        task = ref.request("engine.deletePods", args={
            "namespace": "d", "labelSelector": {"k": "v"}, "perSecond": 500})
        done = ref.request("engine.task", args={"id": task["id"], "timeoutSeconds": LIMIT})
        assert (done["done"], done["deleted"], done["errors"]) == (True, 3, [])
        stats = ref.request("engine.stats", args={"namespaces": ["d"]})
        gone = sorted(p["name"] for p in stats["pods"] if p.get("deleted")
                      or p.get("terminating"))
        assert gone == ["p1", "p3", "p5"]


@pytest.mark.parametrize("mode", ["create", "recreate"])
def test_churn_runs_beside_a_workload(tmp_path, reference_binary, mode):
    # SchedulingWithMixedChurn's pattern: nodes, pods and services churned in the background
    # while the measured pods are scheduled; the churn never stops the workload
    files = {"node.yaml": "apiVersion: v1\nkind: Node\nmetadata:\n  generateName: cn-\n"
                          "status:\n  capacity: {pods: \"0\"}\n",
             "svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  generateName: s-\n"
                         "spec:\n  ports: [{port: 80}]\n",
             "pod.yaml": _pod("big", spec="  priority: 10\n")}
    result = _run(tmp_path, reference_binary, f"""\
  - opcode: createNodes
    count: 2
  - opcode: churn
    mode: {mode}
    number: 2
    intervalMilliseconds: 5
    templatePaths: [node.yaml, svc.yaml, pod.yaml]
  - opcode: createPods
    count: 6
    collectMetrics: true
""", files)
    assert result.status == "ok", result.reason
    measured = _by_ns(result)["namespace-2"]
    assert len(measured) == 6 and all(p.node for p in measured)


def test_a_background_deletion_that_fails_is_recorded(reference_binary):
    with ReferenceClient(reference_binary.path, timeout=120, env={"GOMAXPROCS": "2"}) as ref:
        ref.request("engine.start", args={"gomaxprocs": 2})
        ref.request("engine.create", args={"objects": [_ns("d")]})
        pods = [{**POD, "metadata": {"name": f"p{i}", "namespace": "d"}} for i in range(2)]
        ref.request("engine.create", args={"objects": pods})
        # the paced op lists both pods now; the one at once deletes them before its first tick
        paced = ref.request("engine.deletePods", args={"namespace": "d", "perSecond": 2})
        now = ref.request("engine.deletePods", args={"namespace": "d"})
        assert (now["done"], now["deleted"]) == (True, 2)
        seen = ref.request("engine.task", args={"id": paced["id"], "ticks": 1,
                                                "timeoutSeconds": LIMIT})
        assert seen["deleted"] == 0 and "unable to delete pod p0" in seen["errors"][0]
        assert ref.request("engine.stats")["errors"][0] == seen["errors"][0]


def test_update_any_resize_shrinks_a_bound_pod(tmp_path, reference_binary):
    # EventHandlingPodUpdate's scale-down: a bound blocker's requests shrink through the
    # resize subresource, and the pod waiting for its room gets scheduled
    files = {"node.yaml": "apiVersion: v1\nkind: Node\nmetadata:\n  generateName: n-\n"
                          "status:\n  capacity: {pods: \"10\", cpu: \"1\", memory: 32Gi}\n",
             "blocker.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: blocker\n"
                             "spec:\n  containers:\n  - name: c\n    image: i\n"
                             "    resources: {requests: {cpu: {{ .CPU }}}}\n",
             "waiting.yaml": _pod("waiting", spec="").replace(
                 "image: i\n", "image: i\n    resources: {requests: {cpu: 500m}}\n")}
    result = _run(tmp_path, reference_binary, """\
  - opcode: createNodes
    count: 1
    nodeTemplatePath: node.yaml
  - opcode: createPods
    count: 1
    namespace: b
    podTemplatePath: blocker.yaml
    templateParams: {CPU: 900m}
  - opcode: createPods
    count: 1
    namespace: w
    podTemplatePath: waiting.yaml
    skipWaitToCompletion: true
  - opcode: barrier
    stageRequirement: Attempted
  - opcode: updateAny
    templatePath: blocker-small.yaml
    namespace: b
    subresources: [resize]
  - opcode: barrier
  - opcode: createPods
    count: 1
    namespace: measured
    collectMetrics: true
""", {**files, "blocker-small.yaml": files["blocker.yaml"].replace("{{ .CPU }}", "100m")})
    assert result.status == "ok", result.reason
    pods = _by_ns(result)
    assert pods["w"][0].node and pods["b"][0].node == pods["w"][0].node


PV_CSI = """apiVersion: v1
kind: PersistentVolume
spec:
  accessModes: [ReadWriteOnce]
  capacity: {storage: 1Gi}
  csi: {driver: ebs.csi.aws.com}
"""
PVC_BOUND = """apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  annotations: {pv.kubernetes.io/bind-completed: "true"}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""


def test_volume_templates_and_csi_nodes_reach_the_scheduler(tmp_path, reference_binary):
    # 2 nodes whose CSINodes allow 2 volumes each: 4 of the 5 pods with their own volume fit
    result = _run(tmp_path, reference_binary, """\
  - opcode: createNodes
    count: 2
    nodeAllocatableStrategy:
      csiNodeAllocatable:
        ebs.csi.aws.com: {count: 2}
  - opcode: createPods
    count: 5
    namespace: vols
    podTemplatePath: pod.yaml
    persistentVolumeTemplatePath: pv.yaml
    persistentVolumeClaimTemplatePath: pvc.yaml
    skipWaitToCompletion: true
  - opcode: createPods
    count: 1
    namespace: measured
    collectMetrics: true
""", {"pod.yaml": _pod("vol"), "pv.yaml": PV_CSI, "pvc.yaml": PVC_BOUND})
    assert result.status == "ok", result.reason
    vols = _by_ns(result)["vols"]
    placed = [p.node for p in vols if p.node]
    assert len(vols) == 5 and len(placed) == 4
    assert sorted(placed.count(n) for n in set(placed)) == [2, 2]
