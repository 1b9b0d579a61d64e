"""workloads.generator and ``schedperf generate``: determinism, validity, feature coverage,
and generated scenarios running to status ok."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from bench.cli.generate import generate as generate_command
from bench.cli.generate import write_generated
from workloads.config import load_configs, validate
from workloads.generator import (
    CONFIG_FILE,
    FEATURES,
    LABELS,
    TOPIC,
    Generated,
    generate,
    scenario_name,
)
from workloads.runner import execute_workload

ROOT = Path(__file__).resolve().parents[2]
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
HOSTNAME = "kubernetes.io/hostname"
# 3 seeds x 3 scenarios: cheap, and together they carry every feature tag
RUN_SEEDS = (4, 15, 26)
RUN_COUNT = 3


def _write(tmp: Path, seed: int, count: int) -> Path:
    write_generated(tmp, generate(seed, count))
    return tmp


def _block(g: Generated, index: int) -> str:
    """The comment and test case of scenario ``index`` in the config file."""
    start = f"# {scenario_name(g.seed, index)}:"
    rest = g.files[CONFIG_FILE].split(start, 1)[1].split("\n\n# Generated_", 1)[0]
    return start + rest.rstrip("\n")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- determinism


def test_same_seed_gives_byte_identical_files(tmp_path: Path) -> None:
    a, b = _write(tmp_path / "a", 7, 3), _write(tmp_path / "b", 7, 3)
    assert _tree(a) == _tree(b)
    assert generate(7, 3) == generate(7, 3)


def test_output_does_not_depend_on_hash_seed() -> None:
    code = ("import hashlib, json; from workloads.generator import generate; "
            "print(hashlib.sha256(json.dumps(generate(11, 4).files).encode()).hexdigest())")
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True,
                         capture_output=True, text=True)
    local = hashlib.sha256(json.dumps(generate(11, 4).files).encode()).hexdigest()
    assert out.stdout.strip() == local


@pytest.mark.parametrize(("a", "b"), [(0, 1), (1, 2), (41, 42)], ids=lambda s: f"seed{s}")
def test_different_seeds_give_different_scenarios(a: int, b: int) -> None:
    ga, gb = generate(a, 2), generate(b, 2)
    assert ga.files[CONFIG_FILE] != gb.files[CONFIG_FILE]
    assert [s.record[1:] for s in ga.scenarios] != [s.record[1:] for s in gb.scenarios]


def test_scenario_depends_only_on_seed_and_index() -> None:
    """Scenario 2 of --count 5 is scenario 2 of --count 3: a failure reproduces from
    (seed, index) alone."""
    small, big = generate(5, 3), generate(5, 5)
    assert small.scenarios == big.scenarios[:3]
    for path, text in small.files.items():
        if path != CONFIG_FILE:
            assert big.files[path] == text
    for i in range(3):
        assert _block(small, i) == _block(big, i)


@pytest.mark.parametrize(("seed", "count"), [(-1, 1), (0, 0), (True, 1), (0, 2.0)],
                         ids=["negative-seed", "zero-count", "bool-seed", "float-count"])
def test_generate_rejects_bad_arguments(seed: Any, count: Any) -> None:
    with pytest.raises(ValueError, match="must be an integer"):
        generate(seed, count)


# --------------------------------------------------------------------------- validity


def test_generated_configs_validate(tmp_path: Path) -> None:
    for seed in range(6):
        root = _write(tmp_path / str(seed), seed, 3)
        assert validate(root) == []
        cases = load_configs(root)
        assert [tc.name for tc in cases] == [scenario_name(seed, i) for i in range(3)]
        for tc in cases:
            assert tc.topic == TOPIC
            assert tc.unsupported_reason is None
            (w,) = tc.workloads
            assert w.labels == LABELS
            assert w.threshold is None


def test_comment_records_the_feature_choices() -> None:
    g = generate(3, 2)
    text = g.files[CONFIG_FILE]
    for s in g.scenarios:
        block = text.split(f"- name: {s.name}\n")[0].rsplit("\n\n", 1)[-1]
        assert block.splitlines() == [f"# {line}" for line in s.record]
        assert s.record[0].startswith(f"{s.name}: scenario {s.index} of `schedperf generate "
                                      f"--seed 3`")
        assert s.record[-1] == "tags: " + " ".join(sorted(s.tags))


# --------------------------------------------------------------------------- features

Scenario = dict[str, Any]


def _scenarios(seed: int, count: int) -> list[tuple[set[str], Scenario]]:
    """(tags, parsed scenario) per scenario: its test case, pod manifests, other texts."""
    g = generate(seed, count)
    cases = yaml.load(g.files[CONFIG_FILE], Loader=_LOADER)
    out = []
    for info, tc in zip(g.scenarios, cases, strict=True):
        prefix = f"templates/generated-{seed}-{info.index}-"
        texts = {p[len(prefix):]: t for p, t in g.files.items() if p.startswith(prefix)}
        pods = [yaml.load(t, Loader=_LOADER) for name, t in texts.items()
                if name.startswith("pod-")]
        out.append((set(info.tags), {"tc": tc, "ops": tc["workloadTemplate"], "pods": pods,
                                     "texts": texts}))
    return out


def _ops(sc: Scenario, opcode: str) -> list[dict[str, Any]]:
    return [op for op in sc["ops"] if op["opcode"] == opcode]


def _specs(sc: Scenario) -> list[dict[str, Any]]:
    return [p["spec"] for p in sc["pods"]]


def _aff(sc: Scenario, kind: str, how: str) -> bool:
    key = f"{how}DuringSchedulingIgnoredDuringExecution"
    return any(key in s.get("affinity", {}).get(kind, {}) for s in _specs(sc))


def _spreads(sc: Scenario) -> list[dict[str, Any]]:
    return [c for s in _specs(sc) for c in s.get("topologySpreadConstraints", [])]


def _terms(sc: Scenario) -> list[dict[str, Any]]:
    return [t.get("podAffinityTerm", t) for s in _specs(sc)
            for kind in ("podAffinity", "podAntiAffinity")
            for how in ("required", "preferred")
            for t in s.get("affinity", {}).get(kind, {}).get(
                f"{how}DuringSchedulingIgnoredDuringExecution", [])]


def _nodes(sc: Scenario) -> str:
    return "".join(t for name, t in sc["texts"].items() if name.startswith("node-"))


def _sched(sc: Scenario) -> dict[str, Any]:
    return yaml.load(sc["texts"].get("scheduler-config.yaml", "{}"), Loader=_LOADER)


def _strategies(sc: Scenario) -> set[str]:
    return {pc["args"]["scoringStrategy"]["type"] for p in _sched(sc).get("profiles", [])
            for pc in p["pluginConfig"]}


def _barriers(sc: Scenario, stage: str) -> list[dict[str, Any]]:
    return [op for op in _ops(sc, "barrier") if op.get("stageRequirement", "Scheduled") == stage]


# tag -> what the generated files must then contain
EVIDENCE: dict[str, Callable[[Scenario], bool]] = {
    "zone-labels:template": lambda sc: "topology.kubernetes.io/zone: zone-{{ mod" in _nodes(sc),
    "zone-labels:strategy": lambda sc: any("labelNodePrepareStrategy" in op
                                           for op in _ops(sc, "createNodes")),
    "racks": lambda sc: "topology.example.com/rack: rack-{{ mod" in _nodes(sc),
    "taints:NoSchedule": lambda sc: "effect: NoSchedule" in _nodes(sc),
    "taints:NoExecute": lambda sc: "effect: NoExecute" in _nodes(sc),
    "taints:PreferNoSchedule": lambda sc: "effect: PreferNoSchedule" in _nodes(sc),
    "cordoned-nodes": lambda sc: "}}true{{ else }}false{{ end }}" in _nodes(sc),
    "heterogeneous-nodes": lambda sc: "{{ else if" in _nodes(sc) or len(
        {line for line in _nodes(sc).splitlines() if line.startswith("    cpu:")}) > 1,
    "extended-resource": lambda sc: any("nodeAllocatableStrategy" in op
                                        for op in _ops(sc, "createNodes")),
    "node-images": lambda sc: "sizeBytes:" in _nodes(sc),
    "requests": lambda sc: any("requests" in c.get("resources", {})
                               for s in _specs(sc) for c in s["containers"]),
    "best-effort-pods": lambda sc: any(all("resources" not in c for c in s["containers"])
                                       for s in _specs(sc)),
    "init-containers": lambda sc: any("initContainers" in s for s in _specs(sc)),
    "sidecar": lambda sc: any(c.get("restartPolicy") == "Always"
                              for s in _specs(sc) for c in s.get("initContainers", [])),
    "overhead": lambda sc: any("overhead" in s for s in _specs(sc)),
    "tolerations": lambda sc: any("tolerations" in s for s in _specs(sc)),
    "nodeSelector": lambda sc: any("nodeSelector" in s for s in _specs(sc)),
    "nodeAffinity:required": lambda sc: _aff(sc, "nodeAffinity", "required"),
    "nodeAffinity:preferred": lambda sc: _aff(sc, "nodeAffinity", "preferred"),
    "podAffinity:required": lambda sc: _aff(sc, "podAffinity", "required"),
    "podAffinity:preferred": lambda sc: _aff(sc, "podAffinity", "preferred"),
    "podAntiAffinity:required": lambda sc: _aff(sc, "podAntiAffinity", "required"),
    "podAntiAffinity:preferred": lambda sc: _aff(sc, "podAntiAffinity", "preferred"),
    "namespaceSelector": lambda sc: any("namespaceSelector" in t for t in _terms(sc)),
    "matchLabelKeys": lambda sc: any("matchLabelKeys" in t
                                     for t in _terms(sc) + _spreads(sc)),
    "hostPort": lambda sc: any("hostPort" in p for s in _specs(sc) for c in s["containers"]
                               for p in c.get("ports", [])),
    "spread:DoNotSchedule": lambda sc: any(c["whenUnsatisfiable"] == "DoNotSchedule"
                                           for c in _spreads(sc)),
    "spread:ScheduleAnyway": lambda sc: any(c["whenUnsatisfiable"] == "ScheduleAnyway"
                                            for c in _spreads(sc)),
    "minDomains": lambda sc: any("minDomains" in c for c in _spreads(sc)),
    "spread:nodeTaintsPolicy": lambda sc: any("nodeTaintsPolicy" in c for c in _spreads(sc)),
    "spread:nodeAffinityPolicy": lambda sc: any("nodeAffinityPolicy" in c
                                                for c in _spreads(sc)),
    "priorities": lambda sc: "kind: PriorityClass" in sc["texts"].get("priorityclass.yaml", ""),
    "globalDefault": lambda sc: "globalDefault:" in sc["texts"]["priorityclass.yaml"],
    "preemptionPolicy:Never": lambda sc: "Never" in sc["texts"]["priorityclass.yaml"],
    "preemption": lambda sc: {"fill", "preemptors"} <= {
        op.get("namespace") for op in _ops(sc, "createPods")},
    "churn:create": lambda sc: any(op["mode"] == "create" for op in _ops(sc, "churn")),
    "churn:recreate": lambda sc: any(op["mode"] == "recreate" for op in _ops(sc, "churn")),
    "deletePods": lambda sc: bool(_ops(sc, "deletePods")),
    "deletePods:rate": lambda sc: any("deletePodsPerSecond" in op
                                      for op in _ops(sc, "deletePods")),
    "scheduling-gates": lambda sc: any("schedulingGates" in s for s in _specs(sc)),
    "ungate:updateAny": lambda sc: bool(_ops(sc, "updateAny")),
    "never-schedulable": lambda sc: any(op.get("namespace") == "never-fits"
                                        for op in _ops(sc, "createPods")),
    "pod-groups:gang": lambda sc: bool(_ops(sc, "createPodGroups")) and any(
        "schedulingGroup" in s for s in _specs(sc))
    and sc["tc"].get("featureGates") == {"GenericWorkload": True},
    "profiles:1": lambda sc: len(_sched(sc)["profiles"]) == 1,
    "profiles:2": lambda sc: len(_sched(sc)["profiles"]) == 2,
    "scoring:LeastAllocated": lambda sc: "LeastAllocated" in _strategies(sc),
    "scoring:MostAllocated": lambda sc: "MostAllocated" in _strategies(sc),
    "scoring:RequestedToCapacityRatio": lambda sc: "RequestedToCapacityRatio"
                                                   in _strategies(sc),
    "percentageOfNodesToScore": lambda sc: "percentageOfNodesToScore" in _sched(sc),
    "barrier:Scheduled": lambda sc: bool(_barriers(sc, "Scheduled")),
    "barrier:all-namespaces": lambda sc: any("namespaces" not in op
                                             for op in _ops(sc, "barrier")),
    "barrier:Attempted": lambda sc: bool(_barriers(sc, "Attempted")),
    "skipWaitToCompletion": lambda sc: any(op.get("skipWaitToCompletion")
                                           for op in _ops(sc, "createPods")),
    "collectMetrics": lambda sc: any(op.get("collectMetrics") for op in _ops(sc, "createPods")),
    "startCollectingMetrics": lambda sc: bool(_ops(sc, "startCollectingMetrics"))
                                         and bool(_ops(sc, "stopCollectingMetrics")),
    "metricsCollectorConfig": lambda sc: "metricsCollectorConfig" in sc["tc"],
    "queueingHints:off": lambda sc: sc["tc"]["workloads"][0].get("featureGates") == {
        "SchedulerQueueingHints": False},
    "sleep": lambda sc: bool(_ops(sc, "sleep")),
}


def test_evidence_table_covers_every_feature() -> None:
    assert set(EVIDENCE) == set(FEATURES)


@pytest.fixture(scope="module")
def twenty_seeds() -> list[tuple[set[str], Scenario]]:
    return [sc for seed in range(20) for sc in _scenarios(seed, 1)]


@pytest.mark.parametrize("feature", FEATURES)
def test_feature_occurs_over_twenty_seeds_and_shows_in_the_files(
        feature: str, twenty_seeds: list[tuple[set[str], Scenario]]) -> None:
    tagged = [sc for tags, sc in twenty_seeds if feature in tags]
    assert tagged, f"no scenario of seeds 0-19 has {feature}"
    for sc in tagged:
        assert EVIDENCE[feature](sc), f"{sc['tc']['name']} is tagged {feature}"


def test_each_group_has_at_most_one_required_placement_constraint(
        twenty_seeds: list[tuple[set[str], Scenario]]) -> None:
    for _, sc in twenty_seeds:
        for spec in _specs(sc):
            aff = spec.get("affinity", {})
            required = sum(
                "requiredDuringSchedulingIgnoredDuringExecution" in aff.get(k, {})
                for k in ("podAffinity", "podAntiAffinity"))
            required += sum(c["whenUnsatisfiable"] == "DoNotSchedule"
                            for c in spec.get("topologySpreadConstraints", []))
            required += any("hostPort" in p for c in spec["containers"]
                            for p in c.get("ports", []))
            assert required <= 1, sc["tc"]["name"]


# --------------------------------------------------------------------------- running


@pytest.fixture(scope="module")
def run_configs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    base = tmp_path_factory.mktemp("generated")
    return {seed: _write(base / str(seed), seed, RUN_COUNT) for seed in RUN_SEEDS}


def _may_stay_pending(tc_dict: dict[str, Any], texts: dict[str, str]) -> set[str]:
    """Namespaces whose pods are never meant to schedule: churn, pods larger than any node,
    scheduling-gated pods that no updateAny ungates."""
    ops = tc_dict["workloadTemplate"]
    ungated = {op["namespace"] for op in ops if op["opcode"] == "updateAny"}
    gated = {op["namespace"] for op in ops if op["opcode"] == "createPods"
             and "schedulingGates" in texts[op["podTemplatePath"]]}
    return {"churn", "never-fits"} | (gated - ungated)


def _tolerates(spec: dict[str, Any], key: str, value: str, effect: str) -> bool:
    for t in spec.get("tolerations", []):
        if t.get("effect") and t["effect"] != effect:
            continue
        if t.get("operator") == "Exists" and t.get("key", key) == key:
            return True
        if t.get("key") == key and t.get("value", "") == value:
            return True
    return False


def _node_matches(spec: dict[str, Any], labels: dict[str, str]) -> bool:
    if any(labels.get(k) != v for k, v in spec.get("nodeSelector", {}).items()):
        return False
    required = spec.get("affinity", {}).get("nodeAffinity", {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True

    def expr_ok(e: dict[str, Any]) -> bool:
        op, v = e["operator"], labels.get(e["key"])
        return {"In": v in e.get("values", ()), "NotIn": v not in e.get("values", ()),
                "Exists": v is not None, "DoesNotExist": v is None}[op]

    return any(all(expr_ok(e) for e in term["matchExpressions"])
               for term in required["nodeSelectorTerms"])


def placement_violations(run: Any, tc_dict: dict[str, Any], topic: Path) -> list[str]:
    """Independent checks of the final placements against the pod templates' hard
    constraints and the nodes' allocatable (an oracle for the scheduler, not the generator)."""
    cluster = run.cluster
    nodes = {name: cluster.node(name) for name in {p.node_name for p in cluster.pods.values()
                                                   if p.node_name}}
    out = []
    used: dict[str, dict[str, int]] = {}
    for pod in cluster.pods.values():
        if pod.node_name:
            acc = used.setdefault(pod.node_name, {"pods": 0})
            acc["pods"] += 1
            for res, q in pod.spec.requests.items():
                acc[res] = acc.get(res, 0) + q
    for name, acc in used.items():
        over = {r: q for r, q in acc.items() if q > nodes[name].allocatable.get(r, 0)}
        if over:
            out.append(f"node {name}: requests {over} exceed {nodes[name].allocatable}")
    ops = tc_dict["workloadTemplate"]
    deleted = {op["namespace"] for op in ops if op["opcode"] == "deletePods"}
    churn_nodes = any("churn-node" in path for op in ops if op["opcode"] == "churn"
                      for path in op["templatePaths"])
    all_nodes = [n for n in cluster.table.nodes if n is not None]
    for op in ops:
        if op["opcode"] != "createPods":
            continue
        ns = op["namespace"]
        manifest = yaml.load((topic / op["podTemplatePath"]).read_text(), Loader=_LOADER)
        spec = manifest["spec"]
        pods = [p for p in cluster.pods.values() if p.namespace == ns and p.node_name]
        for p in pods:
            node = nodes[p.node_name]
            if not _node_matches(spec, node.labels):
                out.append(f"{p.key} on {node.name}: node selection not met")
            for t in node.taints:
                if t.effect != "PreferNoSchedule" and not _tolerates(spec, t.key, t.value,
                                                                     t.effect):
                    out.append(f"{p.key} on {node.name}: untolerated taint {t.key}")
            if node.unschedulable and not _tolerates(
                    spec, "node.kubernetes.io/unschedulable", "", "NoSchedule"):
                out.append(f"{p.key} on cordoned {node.name}")

        def domains(key: str, pods: list[Any] = pods) -> list[str | None]:
            return [nodes[p.node_name].labels.get(key) for p in pods]

        aff = spec.get("affinity", {})
        for term in aff.get("podAntiAffinity", {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution", []):
            d = domains(term["topologyKey"])
            if len(d) != len(set(d)):
                out.append(f"{ns}: two pods share a {term['topologyKey']} despite required "
                           "anti-affinity")
        for term in aff.get("podAffinity", {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution", []):
            if len(set(domains(term["topologyKey"]))) > 1:
                out.append(f"{ns}: pods in several {term['topologyKey']} despite required "
                           "affinity")
        if any("hostPort" in port for c in spec["containers"] for port in c.get("ports", [])):
            d = domains(HOSTNAME)
            if len(d) != len(set(d)):
                out.append(f"{ns}: two pods with the same hostPort on one node")
        for c in spec.get("topologySpreadConstraints", []):
            key = c["topologyKey"]
            if (c["whenUnsatisfiable"] != "DoNotSchedule" or ns in deleted
                    or (key == HOSTNAME and churn_nodes)):
                continue
            counted = {n.labels[key] for n in all_nodes if key in n.labels
                       and (c.get("nodeAffinityPolicy") == "Ignore"
                            or _node_matches(spec, n.labels))
                       and (c.get("nodeTaintsPolicy") != "Honor"
                            or all(t.effect == "PreferNoSchedule"
                                   or _tolerates(spec, t.key, t.value, t.effect)
                                   for t in n.taints))}
            counts = {d: 0 for d in counted}
            for d in domains(key):
                counts[d] = counts.get(d, 0) + 1
            low = 0 if len(counted) < c.get("minDomains", 1) else min(
                (counts[d] for d in counted), default=0)
            if counts and max(counts.values()) - low > c["maxSkew"]:
                out.append(f"{ns}: skew {max(counts.values()) - low} over {key} exceeds "
                           f"maxSkew {c['maxSkew']}")
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "index"),
                         [(s, i) for s in RUN_SEEDS for i in range(RUN_COUNT)],
                         ids=lambda v: str(v))
def test_generated_scenario_runs_ok(seed: int, index: int, run_configs: dict[int, Path]
                                   ) -> None:
    root = run_configs[seed]
    tc = load_configs(root)[index]
    result, run = execute_workload(tc, tc.workloads[0], timeout=30)
    assert result.status == "ok", result.reason
    topic = root / TOPIC
    (tc_dict,) = [t for t in yaml.load((topic / CONFIG_FILE).read_text(), Loader=_LOADER)
                  if t["name"] == tc.name]
    texts = {op["podTemplatePath"]: (topic / op["podTemplatePath"]).read_text()
             for op in tc_dict["workloadTemplate"] if op["opcode"] == "createPods"}
    allowed = _may_stay_pending(tc_dict, texts)
    pending = {(p.namespace, p.name) for p in result.placements
               if p.node is None and p.namespace not in allowed}
    assert not pending, f"{tc.name}: unscheduled {sorted(pending)[:5]}"
    assert result.scheduled_pods > 0
    assert placement_violations(run, tc_dict, topic) == []


def test_placement_oracle_catches_violations(run_configs: dict[int, Path]) -> None:
    """Generated_4_0's group p3 uses hostPort 8003: a second such pod on a node, and 200 more
    pods on one node, must both be reported."""
    root = run_configs[4]
    tc = load_configs(root)[0]
    result, run = execute_workload(tc, tc.workloads[0], timeout=30)
    assert result.status == "ok", result.reason
    topic = root / TOPIC
    (tc_dict,) = [t for t in yaml.load((topic / CONFIG_FILE).read_text(), Loader=_LOADER)
                  if t["name"] == tc.name]
    assert placement_violations(run, tc_dict, topic) == []
    pod = next(p for p in run.cluster.pods.values() if p.namespace == "group-p3" and p.node_name)
    run.cluster.add_pod(pod.clone(f"{pod.name}-twin"))
    assert placement_violations(run, tc_dict, topic) == [
        "group-p3: two pods with the same hostPort on one node"]
    for k in range(200):
        run.cluster.add_pod(pod.clone(f"{pod.name}-extra-{k}", "elsewhere"))
    assert any(v.startswith(f"node {pod.node_name}: requests") and "exceed" in v
               for v in placement_violations(run, tc_dict, topic))


# --------------------------------------------------------------------------- CLI


def test_cli_writes_the_topic_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = CliRunner().invoke(generate_command, ["--seed", "3", "--count", "2", "--out",
                                                str(out)])
    assert res.exit_code == 0, res.output
    assert "wrote 2 scenarios" in res.output
    assert str(out / TOPIC / CONFIG_FILE) in res.output
    assert _tree(out / TOPIC) == {p: t.encode() for p, t in generate(3, 2).files.items()}
    assert not list(out.rglob("*.tmp*")), "temporary files left behind"


def test_cli_refuses_a_non_empty_target_without_force(tmp_path: Path) -> None:
    (tmp_path / TOPIC).mkdir()
    keep = tmp_path / TOPIC / "notes.txt"
    keep.write_text("mine")
    res = CliRunner().invoke(generate_command, ["--seed", "1", "--out", str(tmp_path)])
    assert res.exit_code == 2
    assert "exists and is not empty: pass --force" in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert sorted(p.name for p in (tmp_path / TOPIC).iterdir()) == ["notes.txt"]


def test_cli_force_replaces_and_drops_stale_generated_templates(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(generate_command, ["--seed", "2", "--count", "3", "--out",
                                            str(tmp_path)]).exit_code == 0
    mine = tmp_path / TOPIC / "templates" / "hand-written.yaml"
    mine.write_text("kind: Pod\n")
    res = runner.invoke(generate_command, ["--seed", "9", "--count", "1", "--out",
                                           str(tmp_path), "--force"])
    assert res.exit_code == 0, res.output
    expected = {p: t.encode() for p, t in generate(9, 1).files.items()}
    expected["templates/hand-written.yaml"] = b"kind: Pod\n"
    assert _tree(tmp_path / TOPIC) == expected


@pytest.mark.parametrize("args", [
    ["--seed", "1", "--count", "0"],
    ["--seed", "-1"],
    ["--seed", "x"],
    ["--count", "2"],
], ids=["count-0", "negative-seed", "seed-not-int", "seed-missing"])
def test_cli_bad_input_exits_2(args: list[str], tmp_path: Path) -> None:
    res = CliRunner().invoke(generate_command, [*args, "--out", str(tmp_path)])
    assert res.exit_code == 2
    assert not (tmp_path / TOPIC).exists()


@pytest.mark.parametrize("where", ["file", "file/below"],
                         ids=["out-is-a-file", "out-below-a-file"])
def test_cli_unusable_out_exits_2(where: str, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    res = CliRunner().invoke(generate_command, ["--seed", "1", "--out", str(tmp_path / where)])
    assert res.exit_code == 2
    assert "Error: " in res.output
