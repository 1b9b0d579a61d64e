"""The detector study (bench/study_detector.py) end to end on two tiny workloads: one whose
pods have a topology spread constraint, one without. Instruction counts run when valgrind is
installed."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

from rich.console import Console

from bench.measure.instructions import valgrind_available
from bench.study_detector import PLUGIN_KEY, StudySettings, print_summary, run_study

CONFIG = """\
- name: Spread
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
    labelNodePrepareStrategy:
      labelKey: topology.kubernetes.io/zone
      labelValues: [z1, z2]
  - opcode: createPods
    countParam: $pods
    podTemplatePath: pod-spread.yaml
    collectMetrics: true
  workloads:
  - name: 10Nodes
    labels: [study]
    params: {nodes: 10, pods: 40}
- name: Plain
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods
    collectMetrics: true
  workloads:
  - name: 10Nodes
    labels: [study]
    params: {nodes: 10, pods: 40}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  generateName: spread-
  labels: {app: s}
spec:
  topologySpreadConstraints:
  - topologyKey: topology.kubernetes.io/zone
    maxSkew: 1
    whenUnsatisfiable: DoNotSchedule
    labelSelector:
      matchLabels: {app: s}
  containers:
  - name: c
    image: pause
    resources:
      requests: {cpu: 100m, memory: 100Mi}
"""


def _rates(node: object) -> list[float]:
    """Every value under a key ending in ``rate`` (nested dicts included)."""
    out: list[float] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if str(k).endswith("rate") and isinstance(v, float):
                out.append(v)
            elif str(k) == "per_workload" and isinstance(v, dict):
                out.extend(x for x in v.values() if isinstance(x, float))
            else:
                out.extend(_rates(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(_rates(v))
    return out


def test_study_reports_rates_and_catches_a_10_percent_slowdown(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    config = tmp_path / "cfg" / "performance-config.yaml"
    config.write_text(CONFIG)
    (tmp_path / "cfg" / "pod-spread.yaml").write_text(POD)
    counting = valgrind_available()
    settings = StudySettings(
        out=tmp_path / "out", configs=(config,), label="study", sizes=(0.10,),
        modes=("instructions", "time") if counting else ("time",), blocks=2, rounds=(1,),
        draws=10, attribution_draws=2, attribution_rounds=3, controls=0, compare_runs=False,
        instruction_aa=False, timeout=120.0)
    results = run_study(settings, Console(file=io.StringIO()))

    assert results["affected"]["time"] == ["Spread/10Nodes"]
    assert results["workloads"]["Plain/10Nodes"]["affected"] == 0
    rates = _rates(results)
    assert rates and all(0.0 <= r <= 1.0 for r in rates if not math.isnan(r))
    aa = results["time"]["aa"]["1"]
    assert aa["draws"] == 10 and 0.0 <= aa["false_alarm_rate"] <= 1.0
    slow = results["time"]["slowdown"]["0.1"]["1"]
    assert set(slow["detection"]) == {"Spread/10Nodes"}
    assert results["time"]["notes"]["frames_check"] and all(
        results["time"]["notes"]["frames_check"])
    for name in ("results.json", "time_rounds.parquet", "time_draws.parquet"):
        assert (settings.out / name).is_file(), name
    assert json.loads((settings.out / "results.json").read_text())["label"] == "study"
    if counting:
        assert results["affected"]["instructions"] == ["Spread/10Nodes"]
        cell = results["instructions"]["slowdown"]["0.1"]
        spread = cell["workloads"]["Spread/10Nodes"]
        assert spread["verdict"] == "regression"
        assert 0.099 < spread["change"] < 0.11
        assert spread["attribution"] == PLUGIN_KEY
        assert cell["detection_rate"] == 1.0 and cell["exact"]
        assert (settings.out / "instructions.parquet").is_file()
    buf = io.StringIO()
    print_summary(results, Console(file=buf, width=200))
    text = buf.getvalue()
    assert "A/A (BASE = HEAD)" in text and "Injected slowdowns: detection" in text
