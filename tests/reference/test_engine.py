"""The kube-scheduler engine (`schedperf run --engine kube-scheduler|both`): the real scheduler
loop in the reference process runs the same workload ops as scheduler_core, and the outputs
carry which engine ran them. No timing is asserted: only what was scheduled, where the
numbers are, and what is reported unsupported."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest

from bench.cli.main import main
from tests.builders import tiny_config
from workloads.reference import ReferenceClient, ReferenceRequestError
from workloads.result import ENGINE_CORE, ENGINE_KUBE


@pytest.fixture
def config(tmp_path: Path) -> Path:
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    text = tiny_config(("4Nodes", [], 4, 5, 30))
    # a test case with an op the engine does not run yet
    text += "\n".join([
        "- name: Steady",
        "  labels: [performance]",
        "  workloadTemplate:",
        "  - opcode: createNodes",
        "    count: 2",
        "  - opcode: createPods",
        "    count: 4",
        "    namespace: steady",
        "    steadyState: true",
        "    duration: 1s",
        "    collectMetrics: true",
        "  workloads:",
        "  - name: 2Nodes",
        # a window with a labelSelector: only the labelled pods are measured
        "- name: Selected",
        "  labels: [performance]",
        "  workloadTemplate:",
        "  - opcode: createNodes",
        "    count: 2",
        "  - opcode: startCollectingMetrics",
        "    name: labelled",
        "    namespaces: [sel]",
        "    labelSelector: {type: measured}",
        "  - opcode: createPods",
        "    count: 7",
        "    namespace: sel",
        "    podTemplatePath: pod-measured.yaml",
        "  - opcode: createPods",
        "    count: 3",
        "    namespace: sel",
        "  - opcode: stopCollectingMetrics",
        "  workloads:",
        "  - name: 2Nodes",
        "", ""])
    (folder / "performance-config.yaml").write_text(text)
    (folder / "pod-measured.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: m-\n  labels:\n"
        "    type: measured\nspec:\n  containers:\n  - name: c\n    image: i\n")
    return folder.parent


def test_both_engines_schedule_every_pod_and_say_which_engine(config, tmp_path, capsys,
                                                              reference_binary, shared_cache):
    out = tmp_path / "out"
    code = main(["run", "--config", str(config), "--label", "", "--out", str(out),
                 "--engine", "both", "--gomaxprocs", "1,2", "--format", "json",
                 "--timeout-per-workload", "300"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads(captured.out)
    runs = {(w["workload"], w["engine"]): w for w in doc["workloads"]}
    assert set(runs) == {(name, engine) for name in ("Tiny/4Nodes", "Steady/2Nodes",
                                                     "Selected/2Nodes")
                         for engine in (ENGINE_CORE, f"{ENGINE_KUBE} GOMAXPROCS=1",
                                        f"{ENGINE_KUBE} GOMAXPROCS=2")}
    for engine in (ENGINE_CORE, f"{ENGINE_KUBE} GOMAXPROCS=1", f"{ENGINE_KUBE} GOMAXPROCS=2"):
        assert runs[("Tiny/4Nodes", engine)]["status"] == "ok"
        assert runs[("Tiny/4Nodes", engine)]["pods_per_s"] > 0
        assert runs[("Tiny/4Nodes", engine)]["cpu_ms_per_pod"] > 0
    # the unsupported op is reported, with the op and why, on the kube-scheduler engine only
    assert runs[("Steady/2Nodes", ENGINE_CORE)]["status"] == "ok"
    kube = runs[("Steady/2Nodes", f"{ENGINE_KUBE} GOMAXPROCS=1")]
    assert kube["status"] == "unsupported"
    assert "steadyState" in kube["reason"] and "kube-scheduler engine" in kube["reason"]
    # the side-by-side rows: both kube-scheduler runs of the supported workload, with ratios
    (tiny,) = [r for r in doc["engines"] if r["workload"] == "Tiny/4Nodes"]
    assert [k["gomaxprocs"] for k in tiny["kube"]] == [1, 2]
    assert all(k["ratio"] > 0 and k["clock"] == "real" for k in tiny["kube"])

    results = pl.read_parquet(out / "results.parquet")
    status = results.filter(pl.col("metric") == "workload_status")
    assert sorted(status.filter(pl.col("workload") == "4Nodes")
                  .select("engine", "engine_gomaxprocs").rows(),
                  key=str) == sorted([(ENGINE_CORE, None), (ENGINE_KUBE, 1), (ENGINE_KUBE, 2)],
                                     key=str)
    kube_rows = results.filter(pl.col("engine") == ENGINE_KUBE)
    # the v1.34 build ran them (the session's cache also holds the v1.37 build)
    assert set(kube_rows["reference_sha256"].to_list()) == {reference_binary.sha256}
    assert set(kube_rows["kubernetes_version"].to_list()) == {"v1.34.4"}
    assert set(kube_rows["clock"].to_list()) == {"real"}
    # the labelSelector window measured the 7 labelled pods of 10, on both engines
    selected = results.filter((pl.col("metric") == "schedperf_pods")
                              & (pl.col("bucket") == "Scheduled")
                              & (pl.col("test_case") == "Selected"))
    assert sorted(selected["value"].to_list()) == [7.0, 7.0, 7.0]
    # every measured pod of the supported workload was bound, on both engines
    scheduled = results.filter((pl.col("metric") == "schedperf_pods")
                               & (pl.col("bucket") == "Scheduled")
                               & (pl.col("test_case") == "Tiny"))
    assert sorted(scheduled["value"].to_list()) == [30.0, 30.0, 30.0]
    placements = pl.read_parquet(out / "placements.parquet")
    assert placements.filter(pl.col("workload") == "4Nodes")["node"].null_count() == 0
    # one DataItems file per engine and GOMAXPROCS
    names = sorted(p.name for p in out.glob("BenchmarkPerfScheduling_*.json"))
    assert [n.split("_2")[0] for n in names] == [
        "BenchmarkPerfScheduling_benchmark_misc",
        "BenchmarkPerfScheduling_benchmark_misc_kube-scheduler_GOMAXPROCS1",
        "BenchmarkPerfScheduling_benchmark_misc_kube-scheduler_GOMAXPROCS2"]


def test_engine_ops_bind_every_pod_and_report_times(reference_binary):
    with ReferenceClient(reference_binary.path, timeout=120,
                         env={"GOMAXPROCS": "1"}) as ref:
        started = ref.request("engine.start", args={"gomaxprocs": 1})
        assert started["gomaxprocs"] == 1 and started["profiles"]
        nodes = [{"kind": "Node", "apiVersion": "v1",
                  "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
                  "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
                 for i in range(3)]
        ref.request("engine.create", args={"objects": nodes})
        ref.request("engine.create", args={"objects": [
            {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "t"}}]})
        pods = [{"kind": "Pod", "apiVersion": "v1",
                 "metadata": {"name": f"p{i}", "namespace": "t"},
                 "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                     "requests": {"cpu": "100m"}}}]}} for i in range(12)]
        ref.request("engine.create", args={"objects": pods})
        waited = ref.request("engine.wait", args={"namespace": "t", "count": 12,
                                                  "timeoutSeconds": 60})
        assert (waited["bound"], waited["timedOut"]) == (12, False)
        stats = ref.request("engine.stats", args={"namespaces": ["t"]})
        assert stats["bound"] == 12 and stats["cpuSeconds"] > 0
        assert sorted(p["name"] for p in stats["pods"]) == sorted(f"p{i}" for i in range(12))
        assert all(p["node"] in {"n0", "n1", "n2"} and p["bound"] >= p["created"]
                   for p in stats["pods"])
        # a pod in a namespace nobody created is refused, naming it
        with pytest.raises(ReferenceRequestError) as err:
            ref.request("engine.create", args={"objects": [
                {"kind": "Pod", "apiVersion": "v1",
                 "metadata": {"name": "x", "namespace": "nowhere"},
                 "spec": {"containers": [{"name": "c", "image": "i"}]}}]})
        assert err.value.kind == "not_found" and "nowhere" in str(err.value)
        # a second start in the same process is a conflict; unknown args are refused
        with pytest.raises(ReferenceRequestError) as err:
            ref.request("engine.start")
        assert err.value.kind == "conflict"
        with pytest.raises(ReferenceRequestError) as err:
            ref.request("engine.wait", args={"namespace": "t", "count": 1, "bogus": 1})
        assert err.value.kind == "protocol" and "bogus" in str(err.value)


def test_engine_ops_need_a_start(reference_binary):
    with ReferenceClient(reference_binary.path, timeout=60) as ref:
        with pytest.raises(ReferenceRequestError) as err:
            ref.request("engine.stats")
        assert err.value.kind == "conflict" and "engine.start" in str(err.value)


def test_queueing_hints_off_emulates_v1_33_as_scheduler_perf_does(reference_binary):
    # v1.34 locks SchedulerQueueingHints to true; its scheduler_perf sets the gates' emulation
    # version to 1.33 for a workload that turns the gate off, and every other gate then takes
    # its v1.33 default (DynamicResourceAllocation off: no DynamicResources plugin)
    started = {}
    for name, gates in (("off", {"SchedulerQueueingHints": False}),
                        ("on", {"SchedulerQueueingHints": True}), ("unset", {})):
        with ReferenceClient(reference_binary.path, timeout=60) as ref:
            started[name] = ref.request("engine.start", args={"featureGates": gates})
    versions = {name: reply["emulationVersion"] for name, reply in started.items()}
    assert versions == {"off": "1.33", "on": "1.34", "unset": "1.34"}
    prefilter = {name: reply["profiles"][0]["plugins"]["PreFilter"]
                 for name, reply in started.items()}
    assert "DynamicResources" not in prefilter["off"]
    assert "DynamicResources" in prefilter["on"] and "DynamicResources" in prefilter["unset"]


def test_a_locked_or_unknown_feature_gate_is_unsupported_on_the_engine(reference_binary):
    # AnyVolumeDataSource is GA and locked to true from v1.33 on: emulating 1.33 (queueing
    # hints off) does not unlock it
    for gates in ({"AnyVolumeDataSource": False},
                  {"SchedulerQueueingHints": False, "AnyVolumeDataSource": False}):
        with ReferenceClient(reference_binary.path, timeout=60) as ref:
            with pytest.raises(ReferenceRequestError) as err:
                ref.request("engine.start", args={"featureGates": gates})
            assert err.value.kind == "unsupported" and "locked" in str(err.value)
            assert "AnyVolumeDataSource" in str(err.value)
    with ReferenceClient(reference_binary.path, timeout=60) as ref:
        with pytest.raises(ReferenceRequestError) as err:
            ref.request("engine.start", args={"featureGates": {"NoSuchGateInV134": True}})
        assert err.value.kind == "unsupported" and "NoSuchGateInV134" in str(err.value)


def test_go_missing_is_bad_input(config, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-go-here"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    code = main(["run", "--config", str(config), "--label", "", "--out", str(tmp_path / "o"),
                 "--engine", "kube-scheduler"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--engine kube-scheduler" in err and "go" in err.lower()
    assert "Traceback" not in err
    assert os.environ["PATH"].endswith("no-go-here")
