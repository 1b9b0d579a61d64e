"""Workload ops that create storage: createNodes' CSINode strategy, createPods with volume and
claim templates, createAny of the storage kinds (upstream scheduler_perf semantics)."""

from __future__ import annotations

from workloads.runner import execute_workload

from .test_ops import MEASURE, POD, execute, make_case

PV_CSI = """\
apiVersion: v1
kind: PersistentVolume
spec:
  accessModes: [ReadOnlyMany]
  capacity:
    storage: 1Gi
  csi:
    driver: ebs.csi.aws.com
  persistentVolumeReclaimPolicy: Retain
"""
PV_AWS = """\
apiVersion: v1
kind: PersistentVolume
spec:
  accessModes: [ReadOnlyMany]
  awsElasticBlockStore:
    volumeID: <volume-id>
  capacity:
    storage: 1Gi
"""
PVC = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  annotations:
    pv.kubernetes.io/bind-completed: "true"
spec:
  accessModes: [ReadOnlyMany]
  resources:
    requests:
      storage: 1Gi
"""
CSI_NODES = {"opcode": "createNodes", "count": 2, "nodeAllocatableStrategy": {
    "nodeAllocatable": {"attachable-volumes-csi-ebs.csi.aws.com": "2"},
    "csiNodeAllocatable": {"ebs.csi.aws.com": {"count": 2}},
    "migratedPlugins": ["kubernetes.io/aws-ebs"]}}


def _pods_with_volumes(count: int, pv: str = "pv.yaml") -> dict:
    return {"opcode": "createPods", "count": count, "podTemplatePath": "pod.yaml",
            "persistentVolumeTemplatePath": pv, "persistentVolumeClaimTemplatePath": "pvc.yaml",
            "namespace": "ns", "skipWaitToCompletion": True}


TEMPLATES = {"pod.yaml": POD, "pv.yaml": PV_CSI, "pv-aws.yaml": PV_AWS, "pvc.yaml": PVC}


def test_csi_node_strategy_creates_a_csi_node_per_node(tmp_path):
    tc, w = make_case(tmp_path, [CSI_NODES, MEASURE])
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    csi = run.cluster.csi_nodes
    assert sorted(csi) == sorted(run.cluster.table.slot_of)
    for name, node in csi.items():
        assert node.limits() == {"ebs.csi.aws.com": 2}
        assert [d.node_id for d in node.drivers] == [name]
        assert node.migrated_plugins == {"kubernetes.io/aws-ebs"}


def test_every_pod_gets_its_own_bound_volume_and_claim(tmp_path):
    tc, w = make_case(tmp_path, [CSI_NODES, _pods_with_volumes(3), MEASURE],
                      templates=TEMPLATES)
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    c = run.cluster
    assert sorted(c.pvs) == ["ns-vol-0", "ns-vol-1", "ns-vol-2"]
    assert sorted(c.pvcs) == ["ns/pvc-0", "ns/pvc-1", "ns/pvc-2"]
    pv, pvc = c.pvs["ns-vol-1"], c.pvcs["ns/pvc-1"]
    assert (pv.source.driver, pv.source.ident) == ("ebs.csi.aws.com", "vol-1")
    assert pv.claim_ref == ("ns", "pvc-1") and pv.phase == "Bound"
    assert pvc.volume_name == "ns-vol-1" and pvc.fully_bound
    pods = [p for p in c.pods.values() if p.namespace == "ns"]
    assert sorted(v.claim for p in pods for v in p.spec.volumes) == ["pvc-0", "pvc-1", "pvc-2"]
    assert all(p.node_name for p in pods)


def test_attach_limits_leave_the_pods_beyond_them_pending(tmp_path):
    # 2 nodes x 2 CSI attachments: the fifth pod with its own volume fits nowhere
    tc, w = make_case(tmp_path, [CSI_NODES, _pods_with_volumes(5), MEASURE],
                      templates=TEMPLATES)
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    pods = [p for p in run.cluster.pods.values() if p.namespace == "ns"]
    assert sum(1 for p in pods if p.node_name) == 4
    per_node: dict[str, int] = {}
    for p in pods:
        if p.node_name:
            per_node[p.node_name] = per_node.get(p.node_name, 0) + 1
    assert sorted(per_node.values()) == [2, 2]


def test_migrated_in_tree_volumes_count_against_the_csi_limit(tmp_path):
    tc, w = make_case(tmp_path, [CSI_NODES, _pods_with_volumes(5, "pv-aws.yaml"), MEASURE],
                      templates=TEMPLATES)
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    assert run.cluster.pvs["ns-vol-3"].source.ident == "vol-3"
    pods = [p for p in run.cluster.pods.values() if p.namespace == "ns"]
    assert sum(1 for p in pods if p.node_name) == 4


def test_without_migration_in_tree_volumes_are_not_counted(tmp_path):
    nodes = {**CSI_NODES, "nodeAllocatableStrategy": {
        "csiNodeAllocatable": {"ebs.csi.aws.com": {"count": 2}}}}
    tc, w = make_case(tmp_path, [nodes, _pods_with_volumes(5, "pv-aws.yaml"), MEASURE],
                      templates=TEMPLATES)
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    pods = [p for p in run.cluster.pods.values() if p.namespace == "ns"]
    assert all(p.node_name for p in pods)


def test_create_any_makes_storage_objects(tmp_path):
    sc = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: late\n"
          "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n")
    tc, w = make_case(tmp_path, [
        {"opcode": "createNodes", "count": 1},
        {"opcode": "createAny", "templatePath": "sc.yaml"}, MEASURE], templates={"sc.yaml": sc})
    result, run = execute(tc, w)
    assert result.status == "ok", result.reason
    assert run.cluster.storage_classes["late"].wait_for_first_consumer


def test_a_volume_template_without_a_claim_template_is_bad_input(tmp_path):
    op = {"opcode": "createPods", "count": 1, "persistentVolumeTemplatePath": "pv.yaml"}
    tc, w = make_case(tmp_path, [{"opcode": "createNodes", "count": 1}, op, MEASURE],
                      templates=TEMPLATES)
    result = execute_workload(tc, w)[0]
    assert result.status == "failed"
    assert "persistentVolumeTemplatePath and persistentVolumeClaimTemplatePath must be set " \
           "together" in result.reason


def test_an_unmodelled_volume_source_is_reported_not_dropped(tmp_path):
    pv = PV_CSI.replace("  csi:\n    driver: ebs.csi.aws.com\n",
                        "  vsphereVolume:\n    volumePath: x\n")
    tc, w = make_case(tmp_path, [{"opcode": "createNodes", "count": 1},
                                 _pods_with_volumes(1), MEASURE],
                      templates={**TEMPLATES, "pv.yaml": pv})
    result = execute_workload(tc, w)[0]
    assert result.status == "failed"
    assert "spec.vsphereVolume: volume source vsphereVolume is not modelled" in result.reason


def test_a_volume_template_whose_spec_is_not_a_mapping_is_bad_input(tmp_path):
    tc, w = make_case(tmp_path, [{"opcode": "createNodes", "count": 1},
                                 _pods_with_volumes(1), MEASURE],
                      templates={**TEMPLATES, "pv.yaml": "kind: PersistentVolume\nspec: [1]\n"})
    result = execute_workload(tc, w)[0]
    assert result.status == "failed"
    assert result.reason.endswith("pv.yaml: spec: expected a mapping")
