"""Pod groups on the kube-scheduler engine (the reference's v1.37 build): upstream's
podgroup/gangscheduling integration-test workloads run on the real scheduler and place every
pod, the results say which build ran them, and the scheduler's pod-group cycle really holds a
gang back until it is complete. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from bench.cli.main import main
from workloads.reference import ReferenceBinary, ReferenceClient, ReferenceRequestError

GANG = Path("upstream/scheduler_perf-next/podgroup/gangscheduling/performance-config.yaml")


def test_gang_scheduling_integration_workloads_place_every_pod(
        shared_dir, reference_binary_v137: ReferenceBinary, shared_cache, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", "--engine", "kube-scheduler", "--gomaxprocs", "1",
                 "--config", str(shared_dir / GANG), "--label", "integration-test",
                 "--out", str(out), "--format", "json"])
    capsys.readouterr()
    assert code == 0
    rows = pl.read_parquet(out / "results.parquet")
    assert set(rows["status"]) == {"ok"}
    assert set(rows["workload"]) == {"10Nodes_3Gangs", "100Nodes_10Gangs",
                                     "100Nodes_10Gangs_CompositePodGroupEnabled"}
    assert set(rows["kubernetes_version"]) == {"v1.37.2"}
    assert set(rows["reference_sha256"]) == {reference_binary_v137.sha256}
    placed = pl.read_parquet(out / "placements.parquet")
    counts = dict(placed.group_by("workload").len().iter_rows())
    assert counts == {"10Nodes_3Gangs": 9, "100Nodes_10Gangs": 30,
                      "100Nodes_10Gangs_CompositePodGroupEnabled": 30}
    assert placed["node"].null_count() == 0


def _pod(name: str, group: str) -> dict:
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "g"},
            "spec": {"schedulingGroup": {"podGroupName": group},
                     "containers": [{"name": "c", "image": "i",
                                     "resources": {"requests": {"cpu": "100m"}}}]}}


def test_a_gang_waits_until_it_is_complete(reference_binary_v137: ReferenceBinary):
    with ReferenceClient(reference_binary_v137.path, timeout=120,
                         env={"GOMAXPROCS": "1"}) as ref:
        ref.request("engine.start", args={"gomaxprocs": 1,
                                          "featureGates": {"GenericWorkload": True}})
        ref.request("engine.create", args={"objects": [
            {"kind": "Node", "apiVersion": "v1", "metadata": {"name": f"n{i}"},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
            for i in range(2)]})
        ref.request("engine.create", args={"objects": [
            {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "g"}},
            {"kind": "PodGroup", "apiVersion": "scheduling.k8s.io/v1beta1",
             "metadata": {"name": "gang", "namespace": "g"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}}]})
        ref.request("engine.create", args={"objects": [_pod("p0", "gang"), _pod("p1", "gang")]})
        # two of the three members: the pod-group cycle binds none of them
        short = ref.request("engine.wait", args={"namespace": "g", "count": 1,
                                                 "timeoutSeconds": 3})
        assert short["timedOut"] and short["bound"] == 0
        ref.request("engine.create", args={"objects": [_pod("p2", "gang")]})
        full = ref.request("engine.wait", args={"namespace": "g", "count": 3,
                                                "timeoutSeconds": 120})
        assert (full["bound"], full["timedOut"]) == (3, False)


def test_the_v137_world_accepts_pod_groups(reference_binary, reference_binary_v137):
    """The lockstep oracle's world takes PodGroup objects at v1.37 (with the gate on, its
    probe framework included); v1.34 refuses the kind as unsupported."""
    group = {"kind": "PodGroup", "apiVersion": "scheduling.k8s.io/v1beta1",
             "metadata": {"name": "g"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}}}
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n0"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    with ReferenceClient(reference_binary_v137.path, timeout=60) as ref:
        ref.request("config", config="", featureGates={"GenericWorkload": True})
        applied = ref.request("apply", objects=[node, group, pod])
        assert [(o["kind"], o["action"]) for o in applied["objects"]] == [
            ("Node", "created"), ("PodGroup", "created"), ("Pod", "created")]
        ev = ref.request("evaluate", namespace="default", name="p")
        assert ev["outcome"] == "Scheduled" and ev["filter"]["feasible"] == ["n0"]
    with ReferenceClient(reference_binary.path, timeout=60) as ref:
        with pytest.raises(ReferenceRequestError) as err:
            ref.request("apply", objects=[group])
        assert err.value.kind == "unsupported" and "PodGroup" in str(err.value)
