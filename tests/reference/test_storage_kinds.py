"""The storage kinds the reference accepts (PersistentVolume, PersistentVolumeClaim,
StorageClass, CSINode, CSIDriver), as the volume plugins read them: NodeVolumeLimits counts a
node's CSI volumes against its CSINode's allocatable count, VolumeBinding finds a pod's claims
(v1.34 in assume caches fed by informer events, which the reference's world calls itself).
Each case runs on both builds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import make_pod
from tests.reference.cases import Manifest, node
from workloads.reference import ReferenceClient
from workloads.reference.model import Evaluation, Status

DRIVER = "ebs.csi.aws.com"
RELEASES = {"v1.34": "reference_binary", "v1.37": "reference_binary_v137"}


@pytest.fixture(params=sorted(RELEASES))
def reference(request: pytest.FixtureRequest) -> Iterator[ReferenceClient]:
    """A fresh reference process of each build (no config sent yet)."""
    binary = request.getfixturevalue(RELEASES[request.param])
    with ReferenceClient(binary.path, timeout=300) as client:
        assert client.version.kubernetes.startswith(request.param + ".")
        yield client


def csinode(name: str, count: int) -> Manifest:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
            "spec": {"drivers": [{"name": DRIVER, "nodeID": f"{name}-id",
                                  "allocatable": {"count": count}}]}}


def csi_pv(i: int) -> Manifest:
    """pv-<i>: a CSI volume bound to claim-<i> (status Bound, as scheduler_perf sets it with
    UpdateStatus)."""
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{i}"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Retain",
                     "csi": {"driver": DRIVER, "volumeHandle": f"vol-{i}"},
                     "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                  "namespace": "default", "name": f"claim-{i}"}},
            "status": {"phase": "Bound"}}


def bound_claim(i: int) -> Manifest:
    """claim-<i>, bound to pv-<i> (bind-completed, status Bound)."""
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": f"claim-{i}", "namespace": "default",
                         "annotations": {"pv.kubernetes.io/bind-completed": "true"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                     "resources": {"requests": {"storage": "1Gi"}}, "volumeName": f"pv-{i}"},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                       "capacity": {"storage": "1Gi"}}}


def volume_cluster(*, pending_priority: int = 0) -> list[Manifest]:
    """n1 (one attachable ebs volume), pod ``user`` on it with claim-0, pending pod ``p`` with
    claim-1."""
    user = make_pod("user").req(cpu="1").priority(0).node("n1").claim("claim-0").manifest()
    user["status"]["startTime"] = "2025-01-01T00:00:00Z"
    pending = make_pod("p").req(cpu="1").priority(pending_priority).claim("claim-1").manifest()
    return [node("n1").manifest(), csinode("n1", 1), csi_pv(0), csi_pv(1), bound_claim(0),
            bound_claim(1), user, pending]


def _plugin(ev: Evaluation, name: str) -> Any:
    return next(p for p in ev.pre_filter.plugins if p.plugin == name)


def test_node_volume_limits_counts_the_csinode_allocatable(reference):
    reference.config(None)
    applied = reference.apply(*volume_cluster())
    assert [(a.kind, a.action) for a in applied[:6]] == [
        ("Node", "created"), ("CSINode", "created"), ("PersistentVolume", "created"),
        ("PersistentVolume", "created"), ("PersistentVolumeClaim", "created"),
        ("PersistentVolumeClaim", "created")]
    assert applied[4].namespace == "default" and applied[2].namespace == ""
    ev = reference.evaluate("default", "p")
    # VolumeBinding found both claims bound (v1.34: in its assume cache)
    assert _plugin(ev, "VolumeBinding").code == "Success"
    assert ev.pre_filter.status.is_success
    assert ev.filter is not None and ev.filter.feasible == ()
    assert ev.filter.rejected == {"n1": Status("Unschedulable", "NodeVolumeLimits",
                                               ("node(s) exceed max volume count",))}
    assert ev.outcome == "Unschedulable"
    assert "1 node(s) exceed max volume count" in ev.message

    # two attachable volumes: the node fits (an update reaches the listers as well)
    reference.apply(csinode("n1", 2))
    ev = reference.evaluate("default", "p")
    assert ev.filter is not None and ev.filter.feasible == ("n1",)
    assert ev.outcome == "Scheduled"


def test_preemption_frees_a_volume_slot(reference):
    """The probe framework's dry run filters n1 without the victim: NodeVolumeLimits counts
    the victim's volume out (on v1.37 it reads CSINodes through the CSI manager the probe
    framework shares with the scheduler's)."""
    reference.config(None)
    reference.apply(*volume_cluster(pending_priority=100))
    ev = reference.evaluate("default", "p")
    assert ev.filter is not None and ev.filter.rejected["n1"].plugin == "NodeVolumeLimits"
    assert ev.post_filter is not None
    assert ev.post_filter.nominated_node == "n1"
    assert [(v.name, v.node) for v in ev.post_filter.victims] == [("user", "n1")]


def test_a_missing_claim_is_unresolvable_at_prefilter(reference):
    """VolumeBinding's PreFilter refuses a pod whose claim does not exist. In the default
    profile VolumeRestrictions comes first and refuses it with the same words (PreFilter stops
    there), so a second profile without VolumeRestrictions shows VolumeBinding's answer."""
    reference.config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                      "kind": "KubeSchedulerConfiguration",
                      "profiles": [{"schedulerName": "default-scheduler"},
                                   {"schedulerName": "no-restrictions", "plugins": {
                                       "multiPoint": {"disabled": [
                                           {"name": "VolumeRestrictions"}]}}}]})
    pending = make_pod("q").req(cpu="1").claim("missing").manifest()
    other = make_pod("q2").req(cpu="1").claim("missing").manifest()
    other["spec"]["schedulerName"] = "no-restrictions"
    reference.apply(node("n1").manifest(), csinode("n1", 1), pending, other)
    missing = ('persistentvolumeclaim "missing" not found',)

    ev = reference.evaluate("default", "q2")
    assert ev.pre_filter.status == Status("UnschedulableAndUnresolvable", "VolumeBinding",
                                          missing)
    vb = _plugin(ev, "VolumeBinding")
    assert (vb.code, vb.reasons) == ("UnschedulableAndUnresolvable", missing)
    assert ev.filter is None
    assert ev.outcome == "Unschedulable"

    ev = reference.evaluate("default", "q")
    assert ev.pre_filter.status == Status("UnschedulableAndUnresolvable", "VolumeRestrictions",
                                          missing)
    assert ev.filter is None and ev.outcome == "Unschedulable"


def test_storage_class_and_csidriver_are_accepted_and_deleted(reference):
    reference.config(None)
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
          "metadata": {"name": "ebs"}, "provisioner": DRIVER,
          "volumeBindingMode": "WaitForFirstConsumer"}
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
              "metadata": {"name": DRIVER}, "spec": {"attachRequired": True}}
    applied = reference.apply(sc, driver)
    assert [(a.kind, a.namespace, a.action) for a in applied] == [
        ("StorageClass", "", "created"), ("CSIDriver", "", "created")]
    gone = reference.delete(("StorageClass", "", "ebs"), ("CSIDriver", "", DRIVER),)
    assert [a.action for a in gone] == ["deleted", "deleted"]


def test_the_engine_schedules_against_the_volume_limit(reference):
    """engine.create waits until the scheduler's informers hold the storage objects, so the
    pods created next find their claims: one of the two pods binds, the other exceeds the
    node's single attachable volume."""
    reference.request("engine.start", args={"gomaxprocs": 2})
    cluster = volume_cluster()
    reference.request("engine.create", args={"objects": cluster[:6]})
    pods = [make_pod(f"p{i}").req(cpu="1").claim(f"claim-{i}").manifest() for i in range(2)]
    reference.request("engine.create", args={"objects": pods})
    for stage, want in (("Scheduled", 1), ("Attempted", 2)):
        barrier = reference.request("engine.barrier", args={
            "namespaces": {"default": want}, "stage": stage, "timeoutSeconds": 120})
        assert not barrier["timedOut"], barrier
    stats = reference.request("engine.stats", args={"namespaces": ["default"]})
    assert stats["errors"] == []
    assert sorted(p.get("node", "") for p in stats["pods"]) == ["", "n1"]
