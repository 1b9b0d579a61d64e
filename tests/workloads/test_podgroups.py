"""Workload-aware scheduling: PodGroup / CompositePodGroup objects, the pod's
``spec.schedulingGroup``, the createPodGroups / createCompositePodGroups ops, the scheduler
config fields and feature gates of upstream's newest configs are parsed and validated strictly.
With the GenericWorkload gate on, createPodGroups runs and its pods are scheduled as groups;
without it, and for what the core does not model (CompositePodGroup, topology-aware
placement), the workload is reported unsupported with its reason (never run as if the group
fields were absent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from bench.cli.main import cli
from scheduler_core.api import CompositePodGroup, Pod, PodGroup, parse_object
from scheduler_core.errors import ConfigError, ManifestError, UnsupportedConfigError
from scheduler_core.framework.config import build_frameworks, parse_config
from tests.shared import SHARED_DIR, require_shared
from workloads.catalog.check import check_workload
from workloads.catalog.support import support_reason
from workloads.config import ConfigFileError, load_configs
from workloads.config.ops_groups import (
    COMPOSITE_POD_GROUP_REASON,
    POD_GROUP_REASON,
    CreateCompositePodGroups,
    CreatePodGroups,
)
from workloads.runner import execute_workload

NEXT_DIR = SHARED_DIR / "upstream" / "scheduler_perf-next"
MAIN_CONFIGS = ("podgroup/basicscheduling", "podgroup/gangscheduling", "podgroup/tas", "cpg",
                "batching", "default_preemption")

GANG = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
        "metadata": {"name": "gang-0", "namespace": "ns"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}},
                 "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]},
                 "parentCompositePodGroupName": "cpg-0",
                 "workloadRef": {"workloadName": "wl", "templateName": "pg"},
                 "priority": 1000, "disruptionMode": {"all": {}},
                 "resourceClaims": [{"name": "c", "resourceClaimName": "claim"}]}}
CPG = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
       "metadata": {"name": "cpg-0", "namespace": "ns"},
       "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2}},
                "workloadRef": {"workloadName": "wl", "templateName": "cpg"}, "priority": 7}}


def with_spec(obj: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {**obj, "spec": {**obj["spec"], **spec}}


# --------------------------------------------------------------------------- the kinds


def test_pod_group_parses_every_field():
    pg = parse_object(GANG)
    assert isinstance(pg, PodGroup)
    assert (pg.name, pg.namespace, pg.policy.gang, pg.policy.min_count) == ("gang-0", "ns",
                                                                             True, 3)
    assert pg.topology_keys == ("topology.kubernetes.io/rack",)
    assert (pg.parent, pg.priority, pg.disruption_mode) == ("cpg-0", 1000, "all")
    assert pg.workload_ref is not None and pg.workload_ref.template_name == "pg"
    assert pg.resource_claims[0].resource_claim_name == "claim"
    basic = parse_object({**GANG, "apiVersion": "scheduling.k8s.io/v1alpha3",
                          "spec": {"schedulingPolicy": {"basic": {}}}})
    assert not basic.policy.gang and basic.disruption_mode == ""


def test_composite_pod_group_parses():
    cpg = parse_object(CPG)
    assert isinstance(cpg, CompositePodGroup)
    assert (cpg.policy.gang, cpg.policy.min_count, cpg.priority) == (True, 2, 7)


@pytest.mark.parametrize(("obj", "field", "problem"), [
    (with_spec(GANG, schedulingPolicy={"gang": {"minCont": 3}}),
     "spec.schedulingPolicy.gang.minCont", "unknown field"),
    (with_spec(GANG, schedulingPolicy={"gang": {"minCount": "3"}}),
     "spec.schedulingPolicy.gang.minCount", "expected an integer"),
    (with_spec(GANG, schedulingPolicy={"gang": {"minCount": 0}}),
     "spec.schedulingPolicy.gang.minCount", "must be >= 1"),
    (with_spec(GANG, schedulingPolicy={"gang": {}}),
     "spec.schedulingPolicy.gang.minCount", "required"),
    (with_spec(GANG, schedulingPolicy={"basic": {}, "gang": {"minCount": 1}}),
     "spec.schedulingPolicy", "exactly one of basic, gang"),
    (with_spec(GANG, schedulingPolicy={"basik": {}}), "spec.schedulingPolicy.basik",
     "unknown field"),
    (with_spec(GANG, schedulingConstraints={"topology": [{"kye": "x"}]}),
     "spec.schedulingConstraints.topology[0].kye", "unknown field"),
    (with_spec(GANG, disruptionMode={"some": {}}), "spec.disruptionMode.some",
     "unknown field"),
    (with_spec(GANG, workloadRef={"workloadName": "wl"}), "spec.workloadRef.templateName",
     "required"),
    (with_spec(GANG, resourceClaims=[{"name": "c"}]), "spec.resourceClaims[0]",
     "exactly one of resourceClaimName"),
    (with_spec(GANG, priority="high"), "spec.priority", "expected an integer"),
    (with_spec(GANG, parentCompositePodGroup="x"), "spec.parentCompositePodGroup",
     "unknown field"),
    ({**GANG, "apiVersion": "scheduling.k8s.io/v1"}, "apiVersion", "unsupported apiVersion"),
    ({**CPG, "apiVersion": "scheduling.k8s.io/v1beta1"}, "apiVersion",
     "unsupported apiVersion"),
    (with_spec(CPG, schedulingPolicy={"gang": {"minCount": 2}}),
     "spec.schedulingPolicy.gang.minCount", "unknown field"),
    (with_spec(CPG, disruptionMode={"all": {}}), "spec.disruptionMode", "unknown field"),
])
def test_group_kinds_refuse_bad_fields(obj, field, problem):
    with pytest.raises(ManifestError) as info:
        parse_object(obj, source="templates/podgroup.yaml")
    assert info.value.field == field
    assert problem in str(info.value) and "templates/podgroup.yaml" in str(info.value)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
       "spec": {"containers": [{"name": "c", "image": "pause"}]}}


def test_pod_scheduling_group_is_parsed_not_ignored():
    pod = Pod.from_manifest(with_spec(POD, schedulingGroup={"podGroupName": "gang-0"}))
    assert pod.spec.pod_group == "gang-0"
    assert Pod.from_manifest(POD).spec.pod_group == ""
    for bad, field in (({"podGroup": "g"}, "spec.schedulingGroup.podGroup"),
                       ({}, "spec.schedulingGroup.podGroupName"),
                       ({"podGroupName": 3}, "spec.schedulingGroup.podGroupName")):
        with pytest.raises(ManifestError) as info:
            Pod.from_manifest(with_spec(POD, schedulingGroup=bad))
        assert info.value.field == field


# --------------------------------------------------------------------------- the ops

PODGROUP_TEMPLATE = """\
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: gang-{{.Index}}
spec:
  schedulingPolicy:
    gang:
      minCount: {{.podsPerGroup}}
"""
GANG_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p-{{.Index}}
spec:
  schedulingGroup:
    podGroupName: gang-{{DivideInt .Index .podsPerGroup}}
  containers:
  - image: pause
    name: pause
"""
CPG_TREE = """\
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata:
  name: cpg-l{{.Level}}-{{.Index}}
spec:
  {{- if gt .Level 1 }}
  parentCompositePodGroupName: cpg-l{{.ParentLevel}}-{{.ParentIndex}}
  {{- end }}
  schedulingPolicy:
    gang:
      minGroupCount: {{.ChildrenCount}}
"""


def write_case(tmp: Path, ops: list[dict[str, Any]], params: dict[str, Any],
               templates: dict[str, str], gates: dict[str, bool] | None = None) -> Path:
    for name, text in templates.items():
        (tmp / name).write_text(text)
    case = {"name": "Gangs", "workloadTemplate": ops,
            "workloads": [{"name": "w", "params": params,
                           **({"featureGates": gates} if gates else {})}]}
    path = tmp / "performance-config.yaml"
    path.write_text(yaml.safe_dump([case], sort_keys=False))
    return path


GANG_OPS = [
    {"opcode": "createNodes", "count": 4},
    {"opcode": "createPodGroups", "countParam": "$groups", "namespace": "ns",
     "templatePath": "podgroup.yaml", "templateParams": {"podsPerGroup": "$podsPerGroup"}},
    {"opcode": "createPods", "countParam": "$groups", "countMultiplierParam": "$podsPerGroup",
     "namespace": "ns", "podTemplatePath": "gang-pod.yaml", "collectMetrics": True,
     "templateParams": {"podsPerGroup": "$podsPerGroup"}},
]
GANG_TEMPLATES = {"podgroup.yaml": PODGROUP_TEMPLATE, "gang-pod.yaml": GANG_POD}


def test_create_pod_groups_decodes_its_fields(tmp_path):
    (tc,) = load_configs(write_case(tmp_path, GANG_OPS, {"groups": 2, "podsPerGroup": 3},
                                    GANG_TEMPLATES))
    op = tc.workload_template[1]
    assert isinstance(op, CreatePodGroups)
    assert (op.count_param, op.namespace, op.template_path) == (
        "$groups", "ns", (tmp_path / "podgroup.yaml").resolve())
    assert tc.unsupported_reason is None  # it depends on the workload's GenericWorkload gate
    assert support_reason(tc, tc.workloads[0]) == (
        f"op 1 createPodGroups (workloadTemplate[1]): {POD_GROUP_REASON}")


@pytest.mark.parametrize(("op", "path", "problem"), [
    ({"countParam": "$groups", "namespace": "ns", "templatePath": "podgroup.yaml",
      "templatPath": "x"}, "templatPath", "unknown field"),
    ({"count": "2", "namespace": "ns", "templatePath": "podgroup.yaml"}, "count",
     "expected an integer"),
    ({"count": 2, "templatePath": "podgroup.yaml"}, "namespace", "Namespace must be set"),
    ({"count": 2, "namespace": "ns"}, "templatePath", "TemplatePath must be set"),
    ({"countParam": "groups", "namespace": "ns", "templatePath": "podgroup.yaml"},
     "countParam", 'must name a workload parameter as "$name"'),
])
def test_create_pod_groups_refuses_bad_fields(tmp_path, op, path, problem):
    ops = [GANG_OPS[0], {"opcode": "createPodGroups", **op}]
    config = write_case(tmp_path, ops, {"groups": 2}, GANG_TEMPLATES)
    with pytest.raises(ConfigFileError) as info:
        load_configs(config)
    message = str(info.value)
    assert f"workloadTemplate[1].{path}" in message and problem in message
    assert "performance-config.yaml" in message


@pytest.mark.parametrize(("op", "path", "problem"), [
    ({"count": 1, "rootCount": 1, "depth": 2}, "rootCount", "exclusive"),
    ({"rootCount": 1, "depth": 1}, "depth", "depth >= 2"),
    ({"count": 1, "childrenPodGroupsPerCPG": 2}, "", "belong to the tree form"),
    ({"rootCountParam": "$r", "depth": 2, "depht": 2}, "depht", "unknown field"),
])
def test_create_composite_pod_groups_refuses_bad_fields(tmp_path, op, path, problem):
    ops = [{"opcode": "createCompositePodGroups", "namespace": "ns",
            "templatePath": "cpg.yaml", **op}]
    config = write_case(tmp_path, ops, {"r": 1}, {"cpg.yaml": CPG_TREE})
    with pytest.raises(ConfigFileError) as info:
        load_configs(config)
    message = str(info.value)
    assert f"workloadTemplate[0]{'.' + path if path else ''}" in message and problem in message


def test_create_composite_pod_groups_tree_levels(tmp_path):
    ops = [{"opcode": "createCompositePodGroups", "rootCountParam": "$roots", "depth": 4,
            "childrenCompositePodGroupsPerCPGParam": "$cpgs",
            "childrenPodGroupsPerCPGParam": "$pgs", "namespace": "ns",
            "templatePath": "cpg.yaml"},
           {"opcode": "createPods", "count": 1, "collectMetrics": True}]
    (tc,) = load_configs(write_case(tmp_path, ops, {"roots": 2, "cpgs": 3, "pgs": 4},
                                    {"cpg.yaml": CPG_TREE}))
    from workloads.config import resolve
    op = resolve(tc, tc.workloads[0])[0]
    assert isinstance(op, CreateCompositePodGroups) and op.tree
    assert op.level_sizes() == [2, 6, 18]
    assert [op.children_count(level) for level in (1, 2, 3)] == [3, 3, 4]
    check = check_workload(tc, tc.workloads[0])
    assert check.ok, check.problems
    assert check.unsupported is not None and COMPOSITE_POD_GROUP_REASON in check.unsupported


# ------------------------------------------------------------------- unsupported, validated


def test_pod_group_workload_is_unsupported_with_reason_and_never_runs(tmp_path):
    (tc,) = load_configs(write_case(tmp_path, GANG_OPS, {"groups": 2, "podsPerGroup": 3},
                                    GANG_TEMPLATES))
    w = tc.workloads[0]
    assert POD_GROUP_REASON in (support_reason(tc, w) or "")
    check = check_workload(tc, w)
    assert check.ok and POD_GROUP_REASON in (check.unsupported or "")
    result, _run = execute_workload(tc, w)
    assert result.status == "unsupported" and POD_GROUP_REASON in (result.reason or "")
    assert result.scheduled_pods == 0


def test_pods_naming_a_group_are_unsupported_without_create_pod_groups(tmp_path):
    ops = [GANG_OPS[0], GANG_OPS[2]]
    (tc,) = load_configs(write_case(tmp_path, ops, {"groups": 2, "podsPerGroup": 3},
                                    GANG_TEMPLATES))
    reason = support_reason(tc, tc.workloads[0]) or ""
    assert "spec.schedulingGroup.podGroupName (gang-0)" in reason and POD_GROUP_REASON in reason
    result, _ = execute_workload(tc, tc.workloads[0])
    assert result.status == "unsupported"


@pytest.mark.parametrize(("templates", "where"), [
    ({**GANG_TEMPLATES, "podgroup.yaml": PODGROUP_TEMPLATE.replace("minCount", "minCont")},
     "spec.schedulingPolicy.gang.minCont"),
    ({**GANG_TEMPLATES, "gang-pod.yaml": GANG_POD.replace("podGroupName", "podGroupNme")},
     "spec.schedulingGroup.podGroupNme"),
])
def test_validate_reports_typos_in_unsupported_group_workloads(tmp_path, templates, where):
    (tc,) = load_configs(write_case(tmp_path, GANG_OPS, {"groups": 2, "podsPerGroup": 3},
                                    templates))
    check = check_workload(tc, tc.workloads[0])
    assert not check.ok
    message = str(check.problems[0])
    assert where in message and "unknown field" in message


@pytest.mark.parametrize("gate", ["OpportunisticBatching"])
def test_unmodelled_gate_on_is_unsupported_off_runs(tmp_path, gate):
    ops = [{"opcode": "createNodes", "count": 2},
           {"opcode": "createPods", "count": 2, "collectMetrics": True}]
    on = load_configs(write_case(tmp_path, ops, {}, {}, {gate: True}))[0]
    reason = support_reason(on, on.workloads[0]) or ""
    assert reason.startswith(f"feature gate {gate}=true: ")
    assert check_workload(on, on.workloads[0]).unsupported == reason
    result, _ = execute_workload(on, on.workloads[0])
    assert (result.status, result.reason) == ("unsupported", reason)
    off = load_configs(write_case(tmp_path, ops, {}, {}, {gate: False}))[0]
    assert support_reason(off, off.workloads[0]) is None
    result, _ = execute_workload(off, off.workloads[0])
    assert result.status == "ok", result.reason
    assert gate not in result.ignored_feature_gates  # off is what the core does


@pytest.mark.parametrize("gate", ["GenericWorkload", "TopologyAwareWorkloadScheduling",
                                  "CompositePodGroup"])
def test_pod_group_gates_are_honoured_on_and_off(tmp_path, gate):
    ops = [{"opcode": "createNodes", "count": 2},
           {"opcode": "createPods", "count": 2, "collectMetrics": True}]
    for on in (True, False):
        (tc,) = load_configs(write_case(tmp_path, ops, {}, {}, {gate: on}))
        assert support_reason(tc, tc.workloads[0]) is None
        result, run = execute_workload(tc, tc.workloads[0])
        assert result.status == "ok", result.reason
        assert result.scheduled_pods == 2
        assert gate not in result.ignored_feature_gates
        if gate == "TopologyAwareWorkloadScheduling":
            assert run.scheduler.topology_aware is on


def test_pod_group_workload_runs_with_the_gate(tmp_path):
    (tc,) = load_configs(write_case(tmp_path, GANG_OPS, {"groups": 2, "podsPerGroup": 3},
                                    GANG_TEMPLATES, {"GenericWorkload": True}))
    assert support_reason(tc, tc.workloads[0]) is None
    result, run = execute_workload(tc, tc.workloads[0])
    assert result.status == "ok", result.reason
    assert result.scheduled_pods == 6
    assert sorted(run.cluster.pod_groups) == ["ns/gang-0", "ns/gang-1"]
    assert run.scheduler.group_stats.scheduled == 2


# --------------------------------------------------------------------------- scheduler config


def test_percentage_of_placements_to_score_is_checked():
    assert parse_config({"percentageOfPlacementsToScore": 100}
                        ).percentage_of_placements_to_score == 100
    with pytest.raises(ConfigError) as info:
        parse_config({"percentageOfPlacementsToScore": 101})
    assert info.value.field == "percentageOfPlacementsToScore"


def test_percentage_of_placements_below_100_is_unsupported():
    build_frameworks(parse_config({"percentageOfPlacementsToScore": 100}), None,
                     topology_aware=True)
    with pytest.raises(UnsupportedConfigError) as info:
        build_frameworks(parse_config({"percentageOfPlacementsToScore": 50}), None,
                         topology_aware=True)
    assert info.value.field == "percentageOfPlacementsToScore"
    assert "newer than kube v1.37.2" in str(info.value)


def test_node_pool_placement_is_unsupported_topology_placement_is_built():
    cfg = parse_config({"profiles": [{"plugins": {"placementGenerate": {
        "enabled": [{"name": "NodePoolPlacement"}]}}}]}, source="sched.yaml")
    with pytest.raises(UnsupportedConfigError) as info:
        build_frameworks(cfg, None, topology_aware=True)
    assert info.value.field == "profiles[0].plugins.placementGenerate"
    assert "NodePoolPlacement" in str(info.value)
    cfg = parse_config({"profiles": [{"plugins": {"placementGenerate": {
        "enabled": [{"name": "TopologyPlacementGenerator"}]}, "placementScore": {
        "enabled": [{"name": "PodGroupPodsCount", "weight": 3}]}}}]})
    fwk = build_frameworks(cfg, None)["default-scheduler"]
    assert [p.name for p in fwk.points["PlacementGenerate"]] == ["TopologyPlacementGenerator"]
    assert fwk.placement_weights["PodGroupPodsCount"] == 3
    with pytest.raises(ConfigError) as bad:
        build_frameworks(parse_config({"profiles": [{"plugins": {"placementScore": {
            "enabled": [{"name": "GangScheduling"}]}}}]}), None)
    assert "does not extend PlacementScore" in str(bad.value)
    with pytest.raises(ConfigError) as bad:
        parse_config({"profiles": [{"plugins": {"placementGenerat": {}}}]})
    assert not isinstance(bad.value, UnsupportedConfigError)
    assert bad.value.field == "profiles[0].plugins.placementGenerat"


def test_unimplemented_upstream_plugin_is_unsupported_unknown_is_bad():
    cfg = parse_config({"profiles": [{"plugins": {"multiPoint": {
        "enabled": [{"name": "NodePoolPlacement"}]}}}]})
    with pytest.raises(UnsupportedConfigError, match="NodePoolPlacement"):
        build_frameworks(cfg, None)
    cfg = parse_config({"profiles": [{"plugins": {"multiPoint": {
        "enabled": [{"name": "GangScheduling"}]}}}]})
    fwk = build_frameworks(cfg, None)["default-scheduler"]
    assert [p.name for p in fwk.points["Permit"]] == ["GangScheduling"]
    cfg = parse_config({"profiles": [{"plugins": {"multiPoint": {
        "enabled": [{"name": "GangSchedulin"}]}}}]})
    with pytest.raises(ConfigError) as info:
        build_frameworks(cfg, None)
    assert not isinstance(info.value, UnsupportedConfigError)


# --------------------------------------------------------------------------- upstream's configs


@pytest.mark.parametrize("topic", MAIN_CONFIGS)
def test_validate_passes_on_the_newest_upstream_configs(topic):
    config = require_shared(NEXT_DIR / topic / "performance-config.yaml")
    result = CliRunner().invoke(cli, ["validate", str(config)], catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("topic", ["podgroup/basicscheduling", "podgroup/gangscheduling",
                                   "podgroup/tas", "cpg"])
def test_upstream_pod_group_workloads_supported_unless_composite_objects(topic):
    config = require_shared(NEXT_DIR / topic / "performance-config.yaml")
    for tc in load_configs(config):
        for w in tc.workloads:
            reason = support_reason(tc, w)
            if topic == "cpg":
                assert reason, w.full_name
            else:
                assert reason is None, (w.full_name, reason)


def test_upstream_batching_runs_only_with_opportunistic_batching_off():
    config = require_shared(NEXT_DIR / "batching" / "performance-config.yaml")
    for tc in load_configs(config):
        for w in tc.workloads:
            reason = support_reason(tc, w)
            if w.feature_gates.get("OpportunisticBatching"):
                assert reason and "OpportunisticBatching=true" in reason
            else:
                assert reason is None, reason


def test_list_shows_upstream_gang_workloads_supported_with_the_composite_gate_too():
    # CompositePodGroup=true without CompositePodGroup objects schedules root PodGroups as off
    config = require_shared(NEXT_DIR / "podgroup" / "gangscheduling" / "performance-config.yaml")
    result = CliRunner().invoke(cli, ["list", "--config", str(config), "--format", "json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert len(rows) == 16
    assert [r for r in rows if r["supported"] == "no"] == []
    assert sum("CompositePodGroupEnabled" in r["workload"] for r in rows) == 7


# --------------------------------------------------------------------------- running pod groups


@pytest.mark.parametrize(("topic", "count"), [("podgroup/basicscheduling", 3),
                                              ("podgroup/gangscheduling", 3),
                                              ("podgroup/tas", 4)])
def test_upstream_integration_test_pod_group_workloads_run_ok(topic, count):
    # the CompositePodGroupEnabled ones included: no CompositePodGroup objects in them
    config = require_shared(NEXT_DIR / topic / "performance-config.yaml")
    ran = 0
    for tc in load_configs(config):
        for w in tc.workloads:
            if "integration-test" not in w.labels:
                continue
            result, run = execute_workload(tc, w)
            assert result.status == "ok", (w.full_name, result.reason)
            want = w.params["initPodGroups"] * w.params["podsPerGroup"]
            assert result.scheduled_pods == want
            assert run is not None and len(run.cluster.pod_groups) == w.params["initPodGroups"]
            assert run.scheduler.group_stats.wasted_pods == 0
            gates = {**tc.feature_gates, **w.feature_gates}
            assert run.scheduler.topology_aware is bool(
                gates.get("TopologyAwareWorkloadScheduling"))
            ran += 1
    assert ran == count


def test_pod_group_metrics_reach_the_data_items(tmp_path):
    (tc,) = load_configs(write_case(tmp_path, GANG_OPS, {"groups": 3, "podsPerGroup": 2},
                                    GANG_TEMPLATES, {"GenericWorkload": True}))
    result, _ = execute_workload(tc, tc.workloads[0])
    assert result.status == "ok", result.reason
    items = {i.labels["Metric"]: i for i in result.data_items}
    assert items["schedperf_pod_groups"].data["Scheduled"] == 3
    assert items["schedperf_pod_groups"].data["Unschedulable"] == 0
    assert items["schedperf_pod_group_wasted_pods"].data["Count"] == 0
    assert items["schedperf_pod_group_throughput"].unit == "groups/s"
    assert items["schedperf_pod_group_throughput"].data["Average"] > 0
    assert "Perc99" in items["schedperf_pod_group_scheduling_duration_seconds"].data
    attempts = [i for i in result.data_items
                if i.labels["Metric"] == "scheduler_podgroup_scheduling_attempt_duration_seconds"]
    assert [i.labels["result"] for i in attempts] == ["scheduled"]


def test_wasted_pods_of_a_gang_that_cannot_fit_are_reported(tmp_path):
    too_big = GANG_POD.replace("    name: pause\n", "    name: pause\n    resources:\n"
                               "      requests:\n        cpu: \"3\"\n")
    (tc,) = load_configs(write_case(tmp_path, GANG_OPS, {"groups": 1, "podsPerGroup": 5},
                                    {**GANG_TEMPLATES, "gang-pod.yaml": too_big},
                                    {"GenericWorkload": True}))
    result, run = execute_workload(tc, tc.workloads[0])
    assert run is not None and run.cluster.assumed == set()
    assert result.scheduled_pods == 0
    items = {i.labels["Metric"]: i for i in result.data_items}
    failed = items["schedperf_pod_groups"].data["Unschedulable"]
    assert failed >= 1 and items["schedperf_pod_groups"].data["Scheduled"] == 0
    # each failed attempt placed one pod per node (4 nodes of 4 CPU), then released them
    assert items["schedperf_pod_group_wasted_pods"].data["Count"] == 4 * failed
    assert "schedperf_pod_group_throughput" not in items


def test_group_preemption_workloads_stay_unsupported_with_the_fields_named():
    config = require_shared(NEXT_DIR / "default_preemption" / "performance-config.yaml")
    seen = 0
    for tc in load_configs(config):
        if tc.name != "PreemptionPodGroupDisruptionMode":
            continue
        for w in tc.workloads:
            reason = support_reason(tc, w) or ""
            assert "spec.priority" in reason and "not modelled" in reason, w.full_name
            assert "group priority and preemption" in reason
            assert "topology-aware" not in reason  # these groups have no topology
            if w.params.get("disruptionMode"):
                assert "spec.disruptionMode" in reason
            seen += 1
    assert seen == 6


def test_templated_pods_parsed_once_per_manifest_keep_their_own_identity(tmp_path):
    """Pods whose manifests differ only in their name are parsed once (the factory's memo):
    each still gets its own name, uid, labels and group."""
    (tc,) = load_configs(write_case(tmp_path, GANG_OPS, {"groups": 3, "podsPerGroup": 4},
                                    GANG_TEMPLATES, {"GenericWorkload": True}))
    result, run = execute_workload(tc, tc.workloads[0])
    assert result.status == "ok", result.reason
    pods = sorted(run.cluster.pods.values(), key=lambda p: int(p.name.split("-")[1]))
    assert [p.name for p in pods] == [f"p-{i}" for i in range(12)]
    assert [p.spec.pod_group for p in pods] == [f"gang-{i // 4}" for i in range(12)]
    assert len({p.uid for p in pods}) == 12 and all(p.uid == f"ns/{p.name}" for p in pods)
    assert len({id(p.labels) for p in pods}) == 12
    assert all(p.labels["signature"].startswith("signature-label-") for p in pods)
    assert len({id(p.spec) for p in pods}) == 3  # one parse per group's manifest


def test_group_throughput_counts_a_basic_group_once(tmp_path):
    basic = PODGROUP_TEMPLATE.replace("    gang:\n      minCount: {{.podsPerGroup}}\n",
                                      "    basic: {}\n")
    (tc,) = load_configs(write_case(tmp_path, GANG_OPS, {"groups": 3, "podsPerGroup": 4},
                                    {**GANG_TEMPLATES, "podgroup.yaml": basic},
                                    {"GenericWorkload": True}))
    result, run = execute_workload(tc, tc.workloads[0])
    assert result.status == "ok", result.reason
    items = {i.labels["Metric"]: i for i in result.data_items}
    # pods of a basic group pass PreEnqueue one by one: one successful cycle per pod
    assert items["schedperf_pod_groups"].data["Scheduled"] == 12
    assert run is not None and run.scheduler.group_stats.initially_scheduled == {
        "ns/gang-0", "ns/gang-1", "ns/gang-2"}


def test_pods_differing_only_in_name_and_group_are_parsed_once(tmp_path, monkeypatch):
    """The memo also serves pods whose manifests differ in their PodGroup: one full parse for
    the whole op, each pod still in its own group (and, when fidelity keeps the spec as
    written, that spec names the pod's own group)."""
    from scheduler_core.api import Pod
    from scheduler_core.api.pod import retain_spec_sources

    calls = []
    parse = Pod.from_manifest.__func__

    def counting(cls, data, **kw):
        calls.append(data["metadata"]["name"])
        return parse(cls, data, **kw)

    monkeypatch.setattr(Pod, "from_manifest", classmethod(counting))
    (tc,) = load_configs(write_case(tmp_path, GANG_OPS, {"groups": 3, "podsPerGroup": 4},
                                    GANG_TEMPLATES, {"GenericWorkload": True}))
    previous = retain_spec_sources(True)
    try:
        result, run = execute_workload(tc, tc.workloads[0])
    finally:
        retain_spec_sources(previous)
    assert result.status == "ok", result.reason
    created = [c for c in calls if c.startswith("p-")]
    assert len(created) <= 2, created  # the factory's check of Index 0, then one per op
    pods = sorted(run.cluster.pods.values(), key=lambda p: int(p.name.split("-")[1]))
    assert [p.spec.pod_group for p in pods] == [f"gang-{i // 4}" for i in range(12)]
    assert all(p.node_name for p in pods)
    assert [p.spec.source["schedulingGroup"]["podGroupName"] for p in pods] == [
        p.spec.pod_group for p in pods]
