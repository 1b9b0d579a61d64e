"""The detector study (bench/study/, run by bench/study_detector.py) end to end on two tiny
workloads: one whose pods have a topology spread constraint, one without.

Time mode runs on recorded paced rounds (tests/bench/fixtures/study_time_rounds.json, real
rounds of the two 400-pod workloads, label study-time) put in place of new paced runs: how
many SchedulingThroughput samples a run of a few tenths of a second gets depends on how fast
the machine is at that moment, and a round without one cannot be judged, so a study of real
rounds left its A/A cell out on some machines (KeyError '3'). What the study does with rounds
that lack a judged metric is tested here with recorded rounds too: it says which, it does not
drop them silently. Instruction counts (exact on any machine) run for real when valgrind is
installed."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import yaml
from rich.console import Console

import bench.study.time_pools
from bench.compare.measure import SideRun
from bench.compare.samples import time_rows
from bench.measure.instructions import valgrind_available
from bench.measure.spec import WorkerSpec
from bench.study.report import print_summary
from bench.study.run import run_study
from bench.study.settings import PLUGIN_KEY, StudySettings
from workloads.example_plugins.slowdown import UNIT_SECONDS

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
  - name: Timed
    labels: [study-time]
    params: {nodes: 20, pods: 400}
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
  - name: Timed
    labels: [study-time]
    params: {nodes: 20, pods: 400}
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


SPREAD, PLAIN = "Spread/Timed", "Plain/Timed"
RECORDED: dict[str, dict[str, list[dict[str, Any]]]] = json.loads(
    (Path(__file__).parent / "fixtures" / "study_time_rounds.json").read_text())["rounds"]
POOL, POOL_SLOWDOWN, ROUNDS = 6, 5, 5  # the fixture holds 6 rounds


def write_catalog(tmp_path: Path) -> Path:
    (tmp_path / "cfg").mkdir(parents=True)
    config = tmp_path / "cfg" / "performance-config.yaml"
    config.write_text(CONFIG)
    (tmp_path / "cfg" / "pod-spread.yaml").write_text(POD)
    return config


def injected_seconds(scheduler_config: str | None) -> float:
    """Seconds InjectedSlowdown adds to one attempt of a pod with the feature under this
    config: ``fraction * (perPod + perNode * nodes)`` work units (perNode is 0 here)."""
    assert scheduler_config is not None
    doc = yaml.safe_load(Path(scheduler_config).read_text())
    (plugin,) = doc["profiles"][0]["pluginConfig"]
    args = plugin["args"]
    if args["fraction"] == 0:
        return 0.0
    assert args["calibration"]["perNode"] == 0.0
    return args["fraction"] * args["calibration"]["perPod"] * UNIT_SECONDS


class RecordedRounds:
    """Stands in for bench.compare.measure.run_time in bench.study.time_pools: round ``r`` of a
    side is the recorded round ``r`` of that side, turned into rows by the real
    bench.compare.samples.time_rows. A HEAD whose config injects a slowdown pays what the
    plugin's work costs (every attempt of Spread/Timed has the feature), in CPU time, in its
    InjectedSlowdown/PreFilter timing and in wall time. ``no_throughput`` lists (workload,
    side, round) to record without SchedulingThroughput, as a run too short for two sampler
    windows is."""

    def __init__(self, no_throughput: Sequence[tuple[str, str, int]] = ()) -> None:
        self.no_throughput = set(no_throughput)
        self.calls: list[tuple[tuple[str, ...], int, tuple[str | None, ...]]] = []

    def __call__(self, sides: Sequence[SideRun], spec: WorkerSpec, repeat: int, workdir: Path,
                 **_: Any) -> list[dict[str, Any]]:
        self.calls.append((spec.workloads, repeat, tuple(s.scheduler_config for s in sides)))
        rows: list[dict[str, Any]] = []
        for rnd in range(1, repeat + 1):
            for side in sides:
                extra = injected_seconds(side.scheduler_config)
                for w in spec.workloads:
                    m = json.loads(json.dumps(RECORDED[w][side.side][rnd - 1]))
                    if extra:
                        assert w == SPREAD, "only pods with the feature pay"
                        cost = extra * m["measured_attempts"]
                        per_pod = cost / m["measured_pods"]
                        m["cpu_seconds"] += cost
                        m["cpu_per_pod"] += per_pod
                        m["plugin_seconds"][PLUGIN_KEY] += cost
                        m["extension_point_seconds"]["PreFilter"] += cost
                        m["throughput_avg"] = 1 / (1 / m["throughput_avg"] + per_pod)
                    if (w, side.side, rnd) in self.no_throughput:
                        m["throughput_avg"] = None
                    rows.extend(time_rows(side.side, rnd, m))
        return rows


def time_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               recorded: RecordedRounds) -> tuple[StudySettings, dict[str, Any]]:
    monkeypatch.setattr(bench.study.time_pools, "run_time", recorded)
    settings = StudySettings(
        out=tmp_path / "out", configs=(write_catalog(tmp_path),), label="study",
        time_label="study-time", sizes=(0.10,), modes=("time",), rounds=(ROUNDS,),
        pool=POOL, pool_slowdown=POOL_SLOWDOWN, draws=4, attribution_rounds=3, controls=0,
        jobs=2, compare_runs=False, instruction_aa=False, timeout=120.0)
    return settings, run_study(settings, Console(file=io.StringIO()))


def summary_text(results: dict[str, Any]) -> str:
    buf = io.StringIO()
    print_summary(results, Console(file=buf, width=200))
    return buf.getvalue()


def test_time_study_calibrates_injects_and_judges_a_10_percent_slowdown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recorded = RecordedRounds()
    settings, results = time_study(tmp_path, monkeypatch, recorded)
    base = str(settings.out / "configs" / "base.yaml")
    head = str(settings.out / "configs" / "time-0.1-0.yaml")
    # the A/A pool runs both workloads BASE against BASE; the 10 % pool the target alone
    assert recorded.calls == [((SPREAD, PLAIN), POOL, (base, base)),
                              ((SPREAD,), POOL_SLOWDOWN, (base, head))]
    assert results["affected"]["time"] == [SPREAD]
    assert results["workloads"][PLAIN]["affected"] == 0
    tm = results["time"]
    assert tm["affected"] == [SPREAD] and tm["workloads"] == [SPREAD, PLAIN]
    assert tm["problems"] == [] and results["problems"] == []

    # calibration: 10 % of the target's median BASE CPU time per pod in the A/A pool,
    # spread over its attempts with the feature
    probe = results["workloads"][SPREAD]
    median_cpu = float(np.median([m["cpu_per_pod"] for m in RECORDED[SPREAD]["base"]]))
    assert probe["pods"] == 400 and probe["affected"] == 400
    assert tm["calibration"][SPREAD] == pytest.approx(
        {"perPod": median_cpu * probe["pods"] / probe["affected"] / UNIT_SECONDS,
         "perNode": 0.0, "perCall": tm["calibration"][SPREAD]["perCall"]})
    assert injected_seconds(head) == pytest.approx(0.1 * median_cpu)
    # achieved: the median per-round HEAD/BASE ratio of the 10 % pool, minus one
    ratios = [(h["cpu_per_pod"] + 0.1 * median_cpu) / b["cpu_per_pod"]
              for b, h in zip(RECORDED[SPREAD]["base"][:POOL_SLOWDOWN],
                              RECORDED[SPREAD]["head"][:POOL_SLOWDOWN], strict=True)]
    assert tm["achieved"]["0.1"][SPREAD] == pytest.approx(float(np.median(ratios)) - 1)
    assert 0.05 < tm["achieved"]["0.1"][SPREAD] < 0.15

    key = str(ROUNDS)
    aa = tm["aa"][key]
    assert aa["draws"] == 4
    assert set(aa["per_workload"]) == {SPREAD, PLAIN}
    assert all(0.0 <= r <= 1.0 for r in aa["per_workload"].values())
    assert 0.0 <= aa["any_alarm_per_draw"] <= 1.0
    assert set(tm["power"][key]["0.1"]) == {SPREAD}
    assert 0.0 <= tm["power"][key]["0.1"][SPREAD] <= 1.0
    assert tm["independent_rounds"] == {"aa": POOL, "per_size_and_workload": POOL_SLOWDOWN,
                                        "total": POOL + POOL_SLOWDOWN}
    assert set(tm["noise"]) == {SPREAD, PLAIN}

    pools = pl.read_parquet(settings.out / "time_pools.parquet")
    cpu = pools.filter(pl.col("metric") == "cpu_per_pod")
    aa_rows = cpu.filter(pl.col("pool") == "aa")
    per = aa_rows.group_by(["workload", "side"]).agg(pl.col("round").n_unique().alias("n"))
    assert sorted(per.rows()) == [(PLAIN, "base", POOL), (PLAIN, "head", POOL),
                                  (SPREAD, "base", POOL), (SPREAD, "head", POOL)]
    slow = cpu.filter(pl.col("pool") == "0.1")
    assert slow["target"].unique().to_list() == [SPREAD]
    assert slow["workload"].unique().to_list() == [SPREAD]
    assert slow.group_by("side").agg(pl.col("round").n_unique()).sort("side").rows() == [
        ("base", POOL_SLOWDOWN), ("head", POOL_SLOWDOWN)]
    decisions = pl.read_parquet(settings.out / "time_decisions.parquet")
    for cell, affected in (("aa", set()), ("0.1", {SPREAD})):
        drawn = decisions.filter(pl.col("cell") == cell)
        assert drawn["draw"].n_unique() == 4 and drawn["n"].unique().to_list() == [ROUNDS]
        assert sorted(drawn["workload"].unique().to_list()) == [PLAIN, SPREAD]
        assert set(drawn.filter(pl.col("affected"))["workload"].to_list()) == affected
    # the same rounds and seed give the same decisions
    settings2, again = time_study(tmp_path / "again", monkeypatch, RecordedRounds())
    assert pl.read_parquet(settings2.out / "time_decisions.parquet").equals(decisions)
    assert again["time"]["aa"] == tm["aa"] and again["time"]["power"] == tm["power"]
    assert json.loads((settings.out / "results.json").read_text())["label"] == "study"

    text = summary_text(results)
    for title in ("A/A (BASE = HEAD)", "Injected slowdowns: detection",
                  "slowdown achieved", "per-round noise", f"{POOL} paced rounds",
                  f"named {PLUGIN_KEY}", "smallest size detected"):
        assert title in text, title


def test_time_study_names_rounds_without_a_judged_metric(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounds that lack SchedulingThroughput (a run too short for two sampler windows) leave
    Plain/Timed with 4 complete A/A rounds: no cell can draw 5, and the study says so."""
    recorded = RecordedRounds(no_throughput=[(PLAIN, "base", 2), (PLAIN, "head", 4)])
    _, results = time_study(tmp_path, monkeypatch, recorded)
    tm = results["time"]
    assert tm["aa"] == {} and tm["power"] == {}
    lacking = (f"too few rounds with every judged metric (SchedulingThroughput, cpu_per_pod) "
               f"on both sides: {PLAIN} has 4 (SchedulingThroughput missing on base in round "
               f"2; SchedulingThroughput missing on head in round 4)")
    assert tm["problems"] == [f"cell aa not judged with {ROUNDS} rounds: {lacking}",
                              f"cell 0.1/{SPREAD} not judged with {ROUNDS} rounds: {lacking}"]
    assert results["problems"] == [f"time: {p}" for p in tm["problems"]]
    assert f"cell aa not judged with {ROUNDS} rounds" in summary_text(results)


@pytest.mark.skipif(not valgrind_available(), reason="valgrind is not installed")
def test_instruction_study_catches_a_10_percent_slowdown(tmp_path: Path) -> None:
    settings = StudySettings(
        out=tmp_path / "out", configs=(write_catalog(tmp_path),), label="study",
        time_label="study-time", sizes=(0.10,), modes=("instructions",), rounds=(3,),
        pool=4, pool_slowdown=3, draws=4, attribution_rounds=3, controls=0, jobs=2,
        compare_runs=False, instruction_aa=False, timeout=120.0)
    results = run_study(settings, Console(file=io.StringIO()))
    assert results["problems"] == []
    assert results["affected"]["instructions"] == ["Spread/10Nodes"]
    cell = results["instructions"]["slowdown"]["0.1"]
    got = cell["workloads"]["Spread/10Nodes"]
    assert got["verdict"] == "regression"
    assert 0.099 < got["change"] < 0.11
    # attributed from 3 paced time rounds of the 40-pod workload (4 timed cycles a run at
    # the 10 % plugin sample): which plugin comes first is noise there, but it was checked
    assert isinstance(got["attribution"], str) and "/" in got["attribution"]
    assert cell["detection_rate"] == 1.0 and cell["exact"]
    assert (settings.out / "instructions.parquet").is_file()
    text = summary_text(results)
    for title in ("A/A (BASE = HEAD)", "Injected slowdowns: detection",
                  "instructions: smallest size caught"):
        assert title in text, title


def test_the_script_the_docs_name_still_runs(tmp_path: Path) -> None:
    """``python bench/study_detector.py --help`` from outside the checkout (README.md and
    docs/detector-study.md give these command lines)."""
    script = Path(__file__).resolve().parents[2] / "bench" / "study_detector.py"
    proc = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    for option in ("--measure", "--feature", "--sizes", "--pool-slowdown", "--resume", "--out"):
        assert option in proc.stdout, option
