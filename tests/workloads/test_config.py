"""workloads.config: parsing upstream scheduler_perf configs, strictness, param resolution."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.shared import require_upstream, upstream_params
from workloads.config import (
    DEFAULT_THRESHOLD_METRIC_SELECTOR,
    ConfigFileError,
    TestCase,
    ThresholdMetricSelector,
    load_configs,
    parse_go_duration,
    parse_go_duration_ns,
    resolve,
    validate,
)
from workloads.config.ops import (
    Barrier,
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    DeletePods,
    Sleep,
    StartCollectingMetrics,
    StopCollectingMetrics,
    UpdateAny,
)
from workloads.config.ops_unsupported import CreateResourceClaims

UPSTREAM_FILES = upstream_params(lambda folder: [
    pytest.param(p, id=f"{p.parent.name}/{p.name}")
    for p in sorted(folder.glob("*/performance-config*.yaml"))])


# --------------------------------------------------------------------------- helpers


def write_config(tmp_path: Path, text: str, topic: str = "misc") -> Path:
    """Write a config into <tmp>/<topic>/performance-config.yaml beside pod.yaml/node.yaml."""
    folder = tmp_path / topic
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("pod.yaml", "node.yaml", "scheduler.yaml"):
        (folder / name).write_text("kind: Dummy\n")
    path = folder / "performance-config.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def load_one(tmp_path: Path, text: str) -> TestCase:
    (tc,) = load_configs(write_config(tmp_path, text))
    return tc


def load_error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigFileError) as info:
        load_configs(write_config(tmp_path, text))
    return str(info.value)


BASIC = """
- name: SchedulingBasic
  defaultPodTemplatePath: pod.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
  - opcode: createPods
    countParam: $initPods
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - name: 5000Nodes
    params:
      initNodes: 5000
      initPods: 1000
      measurePods: 1000
"""


# --------------------------------------------------------------------------- upstream configs


@pytest.mark.parametrize("path", UPSTREAM_FILES)
def test_every_upstream_config_parses_and_resolves(path: Path, upstream_dir: Path) -> None:
    test_cases = load_configs(path)
    assert test_cases
    for tc in test_cases:
        assert tc.topic == path.parent.name
        assert tc.unsupported_reason is None
        for w in tc.workloads:
            ops = resolve(tc, w)
            assert ops
            for op in ops:
                if isinstance(op, CreatePods):
                    assert op.namespace and op.count >= 0
    assert validate(path) == []


@pytest.fixture(scope="module")
def cases() -> dict[tuple[str, str], TestCase]:
    return {(tc.topic, tc.name): tc for tc in load_configs(require_upstream())}


class TestUpstreamContent:

    def test_folder_loads_every_topic(self, cases: dict) -> None:
        topics = {topic for topic, _ in cases}
        assert topics == {"affinity", "default_preemption", "event_handling", "misc",
                          "topology_spreading", "volumes"}

    def test_scheduling_basic_resolves_like_upstream(self, cases: dict) -> None:
        tc = cases["misc", "SchedulingBasic"]
        w = tc.workload("5000Nodes_10000Pods")
        assert w.threshold == 680 and w.threshold_for("misc") == 680.0
        assert w.threshold_metric_selector == DEFAULT_THRESHOLD_METRIC_SELECTOR
        assert w.labels == ("performance",)
        nodes, init, measure = resolve(tc, w)
        assert isinstance(nodes, CreateNodes) and nodes.count == 5000
        assert nodes.node_template_path is None
        pod_default = (require_upstream() / "templates/pod-default.yaml").resolve()
        assert (init.count, init.namespace, init.pod_template_path, init.collect_metrics) == (
            1000, "namespace-1", pod_default, False)
        assert (measure.count, measure.namespace, measure.collect_metrics) == (
            10000, "namespace-2", True)
        gated = tc.workload("5Nodes_AsyncAPICallsEnabled")
        assert gated.feature_gates == {"SchedulerAsyncAPICalls": True}
        assert gated.labels == ("integration-test", "short")

    def test_create_pod_sets_unrolled_and_op_index_shifts(self, cases: dict) -> None:
        tc = cases["affinity", "SchedulingRequiredPodAntiAffinityWithNSSelector"]
        ops = resolve(tc, tc.workload("500Nodes"))
        pods = [op for op in ops if isinstance(op, CreatePods)]
        assert [p.namespace for p in pods[:10]] == [f"init-ns-{i}" for i in range(10)]
        assert pods[-1].namespace == "measure-ns-0" and pods[-1].collect_metrics
        assert len(ops) == 3 + 10 + 1

    def test_deleted_namespace_matches_unrolled_index(self, cases: dict) -> None:
        tc = cases["misc", "SchedulingWhileGated"]
        ops = resolve(tc, tc.workload("1Node_10GatedPods"))
        assert isinstance(ops[2], Barrier) and ops[2].stage_requirement == "Attempted"
        assert ops[3].namespace == "namespace-3"
        assert isinstance(ops[4], DeletePods) and ops[4].namespace == "namespace-3"
        assert ops[4].delete_pods_per_second == 50 and ops[4].skip_wait_to_completion

    def test_churn_defaults(self, cases: dict) -> None:
        tc = cases["misc", "SchedulingWithMixedChurn"]
        churn = resolve(tc, tc.workload("10Nodes"))[1]
        assert isinstance(churn, Churn)
        assert (churn.mode, churn.number, churn.interval_milliseconds, churn.namespace) == (
            "recreate", 1, 1000, "namespace-1")
        assert [p.name for p in churn.template_paths] == [
            "node-default.yaml", "pod-high-priority-large-cpu.yaml", "service-default.yaml"]

    def test_node_strategies(self, cases: dict) -> None:
        spread = cases["topology_spreading", "TopologySpreading"].workload_template[0]
        assert spread.label_node_prepare_strategy.label_key == "topology.kubernetes.io/zone"
        assert spread.label_node_prepare_strategy.label_values == ("moon-1", "moon-2", "moon-3")
        csi = cases["volumes", "SchedulingMigratedInTreePVs"].workload_template[0]
        strategy = csi.node_allocatable_strategy
        assert strategy.node_allocatable == {"attachable-volumes-csi-ebs.csi.aws.com": "39"}
        assert strategy.csi_node_allocatable == {"ebs.csi.aws.com": 39}
        assert strategy.migrated_plugins == ("kubernetes.io/aws-ebs",)

    def test_event_handling_ops(self, cases: dict) -> None:
        tc = cases["event_handling", "EventHandlingPodUpdate"]
        ops = resolve(tc, tc.workloads[0])
        start = ops[0]
        assert isinstance(start, StartCollectingMetrics)
        assert start.label_selector == {"type": "unsched"} and len(start.namespaces) == 6
        resize = next(op for op in ops if isinstance(op, UpdateAny) and op.subresources)
        assert (resize.subresources, resize.count, resize.update_per_second) == (
            ("resize",), 1000, 100)
        assert isinstance(ops[-1], StopCollectingMetrics)
        assert tc.feature_gates == {"SchedulerQueueingHints": True,
                                    "InPlacePodVerticalScaling": True}

    def test_create_any_default_count(self, cases: dict) -> None:
        tc = cases["topology_spreading", "DefaultTopologySpreading"]
        create_any = resolve(tc, tc.workloads[0])[1]
        assert isinstance(create_any, CreateAny)
        assert (create_any.count, create_any.namespace) == (1, "service-ns")


# --------------------------------------------------------------------------- strictness


ERRORS = [
    pytest.param(BASIC.replace("    countParam: $initPods\n",
                               "    countParam: $initPods\n    bogus: 1\n"),
                 'misc/performance-config.yaml:8: SchedulingBasic: workloadTemplate[1].bogus: '
                 'unknown field "bogus"', id="unknown-op-field"),
    pytest.param(BASIC.replace("  workloads:", "  workloadz:"),
                 'misc/performance-config.yaml:11: SchedulingBasic: workloadz: unknown field '
                 '"workloadz" (did you mean "workloads"?)', id="unknown-test-case-field"),
    pytest.param(BASIC.replace("    params:", "    parms: {}\n    params:"),
                 'misc/performance-config.yaml:13: SchedulingBasic/5000Nodes: workloads[0].parms: '
                 'unknown field "parms" (did you mean "params"?)', id="unknown-workload-field"),
    pytest.param(BASIC.replace("countParam: $initNodes", "countParm: $initNodes"),
                 'misc/performance-config.yaml:5: SchedulingBasic: workloadTemplate[0].countParm: '
                 'unknown field "countParm" (did you mean "countParam"?)',
                 id="typo-in-param-field"),
    pytest.param(BASIC.replace("opcode: createNodes", "opcode: createNode"),
                 'misc/performance-config.yaml:4: SchedulingBasic: workloadTemplate[0].opcode: '
                 'unknown opcode "createNode", must be one of allocResourceClaims, barrier, '
                 'churn, createAny, createCompositePodGroups, createNamespaces, createNodes, '
                 'createPodGroups, createPodSets, createPods, '
                 'createResourceClaims, createResourceDriver, deletePods, sleep, '
                 'startCollectingMetrics, stopCollectingMetrics, updateAny, waitForPodGroups',
                 id="unknown-opcode"),
    pytest.param(BASIC.replace("countParam: $initNodes", 'count: "5"'),
                 'misc/performance-config.yaml:5: SchedulingBasic: workloadTemplate[0].count: '
                 'expected an integer, got string "5"', id="wrong-type"),
    pytest.param(BASIC.replace("countParam: $initNodes", "countParam: initNodes"),
                 'misc/performance-config.yaml:5: SchedulingBasic: workloadTemplate[0].countParam:'
                 ' must name a workload parameter as "$name", got "initNodes"', id="param-no-$"),
    pytest.param(BASIC.replace("countParam: $initNodes", "count: -1"),
                 'misc/performance-config.yaml:5: SchedulingBasic: workloadTemplate[0].count: '
                 'must not be negative, got -1', id="negative-count"),
    pytest.param(BASIC.replace("collectMetrics: true",
                               "collectMetrics: true\n    skipWaitToCompletion: true"),
                 'misc/performance-config.yaml:8: SchedulingBasic: workloadTemplate[2]: '
                 'collectMetrics and skipWaitToCompletion cannot be true at the same time',
                 id="collect-and-skip-wait"),
    pytest.param(BASIC.replace("countParam: $initPods\n",
                               "countParam: $initPods\n    steadyState: true\n"
                               "    duration: 10s\n    skipWaitToCompletion: true\n"),
                 'misc/performance-config.yaml:6: SchedulingBasic: workloadTemplate[1]: '
                 'skipWaitToCompletion and steadyState cannot be true at the same time',
                 id="steady-state-and-skip-wait"),
    pytest.param(BASIC.replace("countParam: $initPods\n",
                               "countParam: $initPods\n    steadyState: true\n"),
                 'misc/performance-config.yaml:6: SchedulingBasic: workloadTemplate[1].duration: '
                 'when creating pods in a steady state, the test duration must be > 0',
                 id="steady-state-without-duration"),
    pytest.param(BASIC.replace("    collectMetrics: true\n", ""),
                 'misc/performance-config.yaml:3: SchedulingBasic: workloadTemplate: no op in the '
                 'workload template collects metrics', id="no-metrics"),
    pytest.param(BASIC + "  - name: 5000Nodes\n    params: {}\n",
                 'misc/performance-config.yaml:17: SchedulingBasic/5000Nodes: workloads[1].name: '
                 'workload name 5000Nodes is not unique (also used on line 12)',
                 id="duplicate-workload"),
    pytest.param(BASIC + BASIC,
                 'misc/performance-config.yaml:18: SchedulingBasic: name: name is not unique '
                 '(also used on line 1)', id="duplicate-test-case"),
    pytest.param("""
                 - name: NoWorkloads
                   workloadTemplate:
                   - opcode: stopCollectingMetrics
                 """,
                 'misc/performance-config.yaml:1: NoWorkloads: workloads: no workloads defined',
                 id="no-workloads"),
    pytest.param("""
                 - name: NoOps
                   workloadTemplate: []
                   workloads:
                   - name: w
                 """,
                 'misc/performance-config.yaml:2: NoOps: workloadTemplate: no ops defined',
                 id="no-ops"),
    pytest.param(BASIC.replace("defaultPodTemplatePath: pod.yaml",
                               "defaultPodTemplatePath: ../templates/nope.yaml"),
                 'misc/performance-config.yaml:2: SchedulingBasic: defaultPodTemplatePath: file '
                 '"../templates/nope.yaml" does not exist (looked for {tmp}/templates/nope.yaml)',
                 id="missing-default-template"),
    pytest.param(BASIC.replace("countParam: $initNodes",
                               "countParam: $initNodes\n    nodeTemplatePath: gone.yaml"),
                 'misc/performance-config.yaml:6: SchedulingBasic: workloadTemplate[0].'
                 'nodeTemplatePath: file "gone.yaml" does not exist (looked for '
                 '{tmp}/misc/gone.yaml)', id="missing-node-template"),
    pytest.param(BASIC.replace("  defaultPodTemplatePath: pod.yaml",
                               "  schedulerConfigPath: config/missing.yaml"),
                 'misc/performance-config.yaml:2: SchedulingBasic: schedulerConfigPath: file '
                 '"config/missing.yaml" does not exist (looked for '
                 '{tmp}/misc/config/missing.yaml)',
                 id="missing-scheduler-config"),
    pytest.param(BASIC.replace("    params:", "    threshold: -5\n    params:"),
                 'misc/performance-config.yaml:13: SchedulingBasic/5000Nodes: '
                 'workloads[0].threshold: must not be negative, got -5', id="negative-threshold"),
    pytest.param(BASIC.replace("    params:", "    threshold: fast\n    params:"),
                 'misc/performance-config.yaml:13: SchedulingBasic/5000Nodes: '
                 'workloads[0].threshold: expected a number or a mapping of topic name to number',
                 id="threshold-type"),
    pytest.param(BASIC.replace("    params:", "    thresholdMetricSelector:\n"
                               "      name: scheduler_unknown\n      dataBucket: Perc99\n"
                               "    params:"),
                 'misc/performance-config.yaml:13: SchedulingBasic/5000Nodes: '
                 'workloads[0].thresholdMetricSelector: the metric scheduler_unknown is targeted, '
                 "but it's not collected during the test. Make sure the MetricsCollectorConfig is "
                 "valid", id="selector-metric-not-collected"),
    pytest.param(BASIC.replace("    params:", "    thresholdMetricSelector:\n"
                               "      name: SchedulingThroughput\n    params:"),
                 'misc/performance-config.yaml:13: SchedulingBasic/5000Nodes: '
                 'workloads[0].thresholdMetricSelector: dataBucket should be set for metric '
                 'SchedulingThroughput', id="selector-without-bucket"),
    pytest.param(BASIC.replace("    params:", "    thresholdMetricSelector:\n"
                               "      name: scheduler_scheduling_attempt_duration_seconds\n"
                               "      labels: {result: maybe}\n      dataBucket: Perc99\n"
                               "    params:"),
                 'misc/performance-config.yaml:13: SchedulingBasic/5000Nodes: '
                 'workloads[0].thresholdMetricSelector: no matching labels found for metric '
                 'scheduler_scheduling_attempt_duration_seconds', id="selector-labels"),
    pytest.param(BASIC.replace("  - opcode: createNodes",
                               "  - opcode: churn\n    mode: sometimes\n    templatePaths: "
                               "[pod.yaml]\n  - opcode: createNodes"),
                 'misc/performance-config.yaml:5: SchedulingBasic: workloadTemplate[0].mode: '
                 'invalid mode "sometimes", must be one of recreate, create', id="churn-mode"),
    pytest.param(BASIC.replace("  - opcode: createNodes",
                               "  - opcode: churn\n    mode: recreate\n  - opcode: createNodes"),
                 'misc/performance-config.yaml:4: SchedulingBasic: workloadTemplate[0].number: '
                 'number cannot be 0 when mode is recreate', id="churn-recreate-zero"),
    pytest.param(BASIC.replace("  - opcode: createNodes",
                               "  - opcode: barrier\n    stageRequirement: Bound\n"
                               "  - opcode: createNodes"),
                 'misc/performance-config.yaml:5: SchedulingBasic: workloadTemplate[0].'
                 'stageRequirement: invalid StageRequirement "Bound", must be Scheduled or '
                 'Attempted', id="barrier-stage"),
    pytest.param(BASIC.replace("  - opcode: createNodes",
                               "  - opcode: stopCollectingMetrics\n  - opcode: createNodes"),
                 'misc/performance-config.yaml:4: SchedulingBasic: workloadTemplate[0]: missing '
                 'startCollectingMetrics operation before', id="stop-without-start"),
    pytest.param(BASIC.replace("  - opcode: createNodes",
                               "  - opcode: startCollectingMetrics\n    namespaces: [a]\n"
                               "  - opcode: createNodes"),
                 'misc/performance-config.yaml:10: SchedulingBasic: workloadTemplate[3]: metrics '
                 'collection is overlapping: a collector is started before the previous one was '
                 'stopped', id="overlapping-collection"),
    pytest.param(BASIC.replace("  - opcode: createNodes",
                               "  - opcode: startCollectingMetrics\n  - opcode: createNodes"),
                 'misc/performance-config.yaml:4: SchedulingBasic: workloadTemplate[0].namespaces:'
                 ' namespaces cannot be empty', id="start-without-namespaces"),
    pytest.param(BASIC.replace("    countParam: $initPods\n",
                               "    countParam: $initPods\n    countparam: $initNodes\n"),
                 'misc/performance-config.yaml:8: SchedulingBasic: workloadTemplate[1].countparam:'
                 ' field "countparam" is given twice (also as "countParam")',
                 id="same-field-twice-case-insensitively"),
    pytest.param(BASIC.replace("      initPods: 1000\n", "      initPods: 1000\n"
                               "      initPods: 2000\n"),
                 'misc/performance-config.yaml:16: key "initPods" is given twice in one mapping '
                 '(first on line 15)', id="duplicate-yaml-key"),
    pytest.param("", "misc/performance-config.yaml: no test cases defined", id="empty-file"),
    pytest.param("name: x\n",
                 "misc/performance-config.yaml:1: the file must be a YAML list of test cases",
                 id="not-a-list"),
]


@pytest.mark.parametrize(("text", "expected"), ERRORS)
def test_load_error(tmp_path: Path, text: str, expected: str) -> None:
    assert load_error(tmp_path, text) == expected.format(tmp=tmp_path.resolve())


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    message = load_error(tmp_path, "- name: ok\n  labels: [a, b\n- name: next\n")
    assert message.startswith("misc/performance-config.yaml:3: invalid YAML: ")


def test_error_carries_its_parts(tmp_path: Path) -> None:
    path = write_config(tmp_path, BASIC.replace("countParam: $initNodes", "count: -1"))
    with pytest.raises(ConfigFileError) as info:
        load_configs(path)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.path, err.line, err.test_case, err.workload, err.yaml_path, err.problem) == (
        path, 5, "SchedulingBasic", None, "workloadTemplate[0].count",
        "must not be negative, got -1")


def test_keys_match_case_insensitively(tmp_path: Path) -> None:
    tc = load_one(tmp_path, BASIC.replace("countParam: $initNodes", "CountParam: $initNodes")
                  .replace("collectMetrics", "COLLECTMETRICS").replace("  workloads:",
                                                                         "  Workloads:"))
    ops = resolve(tc, tc.workloads[0])
    assert ops[0].count == 5000 and ops[2].collect_metrics


def test_opcode_value_is_case_sensitive(tmp_path: Path) -> None:
    assert 'unknown opcode "CreateNodes"' in load_error(
        tmp_path, BASIC.replace("opcode: createNodes", "opcode: CreateNodes"))


def test_unsupported_ops_parse_and_are_flagged(tmp_path: Path) -> None:
    (tmp_path / "misc").mkdir()
    (tmp_path / "misc/claim.yaml").write_text("kind: ResourceClaim\n")
    tc = load_one(tmp_path, BASIC.replace(
        "  - opcode: createNodes",
        "  - opcode: createResourceClaims\n    namespace: test\n    templatePath: claim.yaml\n"
        "    count: 2\n  - opcode: createNodes"))
    claims = tc.workload_template[0]
    assert isinstance(claims, CreateResourceClaims) and claims.count == 2
    assert claims.unsupported_reason is not None
    assert tc.unsupported_reason.startswith("op createResourceClaims (workloadTemplate[0]):")


# Shape of upstream dra/performance-config.yaml (commit 03312ae5), SteadyStateCluster... case.
DRA_STEADY_STATE = """
- name: SteadyStateClusterResourceClaimTemplate
  featureGates:
    DynamicResourceAllocation: true
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodesWithoutDRA
  - opcode: createNodes
    nodeTemplatePath: node.yaml
    countParam: $nodesWithDRA
  - opcode: createResourceDriver
    driverName: test-driver.cdi.k8s.io
    nodes: scheduler-perf-dra-*
    maxClaimsPerNodeParam: $maxClaimsPerNode
  - opcode: createAny
    templatePath: pod.yaml
    countParam: $initClaims
    namespace: init
  - opcode: allocResourceClaims
    namespace: init
  - opcode: createPods
    namespace: test
    count: 10
    steadyState: true
    durationParam: $duration
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: fast
    featureGates:
      SchedulerQueueingHints: false
    labels: [integration-test, short]
    params:
      nodesWithDRA: 1
      nodesWithoutDRA: 1
      initClaims: 0
      maxClaimsPerNode: 10
      duration: 2s
"""


def test_dra_steady_state_case_parses_and_is_unsupported(tmp_path: Path) -> None:
    tc = load_one(tmp_path, DRA_STEADY_STATE)
    assert tc.unsupported_reason == (
        "op createResourceDriver (workloadTemplate[2]): dynamic resource allocation (DRA) is "
        "not modelled by schedperf")
    ops = resolve(tc, tc.workloads[0])
    assert ops[2].max_claims_per_node == 10 and ops[2].nodes == "scheduler-perf-dra-*"
    assert ops[3].count == 0 and ops[4].namespace == "init"
    assert (ops[5].steady_state, ops[5].duration, ops[5].count) == (True, 2.0, 10)
    assert tc.workloads[0].feature_gates == {"DynamicResourceAllocation": True,
                                             "SchedulerQueueingHints": False}


# --------------------------------------------------------------------------- resolve errors


RESOLVE_ERRORS = [
    pytest.param(BASIC.replace("      initPods: 1000\n", ""),
                 "misc/performance-config.yaml:7: SchedulingBasic/5000Nodes: "
                 "workloadTemplate[1].countParam: parameter $initPods is undefined",
                 id="undefined-param"),
    pytest.param(BASIC.replace("      initPods: 1000\n", "      initPods: 1000\n"
                               "      measurePod: 5\n      zzz: 1\n"),
                 "misc/performance-config.yaml:13: SchedulingBasic/5000Nodes: workloads[0].params:"
                 " the parameters [measurePod zzz] are defined on workload 5000Nodes, but unused. "
                 "Please make sure there are no typos", id="unused-params"),
    pytest.param(BASIC.replace("initNodes: 5000", "initNodes: many"),
                 "misc/performance-config.yaml:5: SchedulingBasic/5000Nodes: "
                 "workloadTemplate[0].countParam: parameter $initNodes has the wrong type string, "
                 "want a number", id="param-wrong-type"),
    pytest.param(BASIC.replace("initNodes: 5000", "initNodes: -2"),
                 "misc/performance-config.yaml:5: SchedulingBasic/5000Nodes: "
                 "workloadTemplate[0].countParam: count must not be negative, got -2",
                 id="param-negative-count"),
    pytest.param(BASIC.replace("countParam: $initPods\n", "countParam: $initPods\n"
                               "    steadyState: true\n    durationParam: $d\n")
                 .replace("      initPods: 1000\n", "      initPods: 1000\n      d: 10 s\n"),
                 'misc/performance-config.yaml:9: SchedulingBasic/5000Nodes: '
                 'workloadTemplate[1].durationParam: parsing duration parameter $d: time: unknown '
                 'unit " s" in duration "10 s"', id="bad-duration-param"),
    pytest.param(BASIC.replace("countParam: $initPods\n", "countParam: $initPods\n"
                               "    steadyStateParam: $steady\n    duration: 5s\n"
                               "    skipWaitToCompletion: true\n")
                 .replace("      initPods: 1000\n", "      initPods: 1000\n      steady: true\n"),
                 'misc/performance-config.yaml:8: SchedulingBasic/5000Nodes: '
                 'workloadTemplate[1].steadyStateParam: skipWaitToCompletion and steadyState '
                 'cannot be true at the same time', id="steady-state-param-with-skip-wait"),
]


@pytest.mark.parametrize(("text", "expected"), RESOLVE_ERRORS)
def test_resolve_error(tmp_path: Path, text: str, expected: str) -> None:
    tc = load_one(tmp_path, text)
    with pytest.raises(ConfigFileError) as info:
        resolve(tc, tc.workloads[0])
    assert str(info.value) == expected


def test_validate_collects_every_error_of_every_file(tmp_path: Path) -> None:
    bad_misc = BASIC.replace("      initPods: 1000\n", "      initPods: 1000\n      extra: 1\n")
    bad_misc += BASIC.replace("SchedulingBasic", "Other").replace("      initNodes: 5000\n", "")
    write_config(tmp_path, bad_misc, topic="misc")
    write_config(tmp_path, BASIC.replace("count", "cnt", 1), topic="volumes")
    errors = validate(tmp_path)
    assert [(e.path.parent.name, e.line, e.test_case, e.workload) for e in errors] == [
        ("misc", 13, "SchedulingBasic", "5000Nodes"),
        ("misc", 23, "Other", "5000Nodes"),
        ("volumes", 5, "SchedulingBasic", None),
    ]
    assert "unused" in errors[0].problem and "undefined" in errors[1].problem
    assert errors[2].problem.startswith('unknown field "cntParam"')
    assert validate([]) == []


def test_validate_reports_missing_config_folder(tmp_path: Path) -> None:
    (error,) = validate(tmp_path)
    assert error.problem == "no performance-config.yaml found in this folder or its subfolders"
    with pytest.raises(ConfigFileError):
        load_configs(tmp_path)


# --------------------------------------------------------------------------- substitution


def test_param_substitution_for_every_param_kind(tmp_path: Path) -> None:
    tc = load_one(tmp_path, """
        - name: Params
          workloadTemplate:
          - opcode: createNodes
            countParam: $nodes
            nodeTemplatePath: node.yaml
            templateParams: {zone: $zone, fixed: literal, size: 3}
          - opcode: createPods
            countParam: $perGroup
            countMultiplierParam: $groups
            steadyStateParam: $steady
            durationParam: $duration
            podTemplatePath: pod.yaml
            templateParams: {groupSize: $perGroup}
            collectMetrics: true
          - opcode: sleep
            durationParam: $pause
          - opcode: createAny
            templatePath: pod.yaml
            namespace: ns
            countParam: $objects
          workloads:
          - name: w
            params: {nodes: 10.9, zone: [a, b], perGroup: 4, groups: 3, steady: true,
                     duration: 1m30s, pause: 500ms, objects: 2}
        """)
    nodes, pods, sleep, create_any = resolve(tc, tc.workloads[0])
    assert nodes.count == 10  # JSON numbers are float64, truncated to int
    assert nodes.template_params == {"zone": ["a", "b"], "fixed": "literal", "size": 3}
    assert (pods.count, pods.steady_state, pods.duration) == (12, True, 90.0)
    assert pods.template_params == {"groupSize": 4}
    assert pods.namespace == "namespace-1" and pods.signature_batch_size == 1
    assert isinstance(sleep, Sleep) and sleep.duration == 0.5
    assert create_any.count == 2
    # parsing leaves the template untouched
    assert tc.workload_template[1].count == 0 and tc.workload_template[1].duration == 0.0


def test_create_pod_sets_are_unrolled_before_namespaces_are_numbered(tmp_path: Path) -> None:
    tc = load_one(tmp_path, """
        - name: Sets
          defaultPodTemplatePath: pod.yaml
          workloadTemplate:
          - opcode: createNamespaces
            prefix: init
            countParam: $sets
          - opcode: createPodSets
            countParam: $sets
            namespacePrefix: init
            createPodsOp:
              opcode: createPods
              countParam: $perSet
          - opcode: createPods
            count: 5
            collectMetrics: true
          - opcode: churn
            mode: create
            templatePaths: [pod.yaml]
          - opcode: barrier
          workloads:
          - name: w
            params: {sets: 3, perSet: 2}
        """)
    ops = resolve(tc, tc.workloads[0])
    assert [type(op) for op in ops] == [CreateNamespaces, CreatePods, CreatePods, CreatePods,
                                        CreatePods, Churn, Barrier]
    assert [op.namespace for op in ops[1:6]] == ["init-0", "init-1", "init-2", "namespace-4",
                                                 "namespace-5"]
    assert all(op.count == 2 for op in ops[1:4])
    assert ops[5].interval_milliseconds == 500
    assert ops[6].stage_requirement == "Scheduled"
    assert ops[4].pod_template_path == (tmp_path / "misc/pod.yaml").resolve()


def test_workload_inherits_and_overrides_test_case_settings(tmp_path: Path) -> None:
    tc = load_one(tmp_path, BASIC.replace(
        "  defaultPodTemplatePath: pod.yaml",
        "  defaultPodTemplatePath: pod.yaml\n  labels: [performance, short]\n"
        "  featureGates: {A: true, B: true}\n  schedulerConfigPath: scheduler.yaml\n"
        "  defaultThresholdMetricSelector:\n"
        "    name: scheduler_scheduling_attempt_duration_seconds\n"
        "    labels: {result: scheduled}\n    dataBucket: Perc99\n    expectLower: true"
    ).replace("    params:", "    labels: [short, integration-test]\n"
              "    featureGates: {B: false, C: true}\n    threshold: {misc: 100, other: 7.5}\n"
              "    params:"))
    w = tc.workloads[0]
    assert tc.labels == ("performance", "short")
    assert w.labels == ("performance", "short", "integration-test")
    assert w.feature_gates == {"A": True, "B": False, "C": True}
    assert tc.scheduler_config_path == (tmp_path / "misc/scheduler.yaml").resolve()
    assert w.threshold_metric_selector == ThresholdMetricSelector(
        "scheduler_scheduling_attempt_duration_seconds", {"result": "scheduled"}, "Perc99", True)
    assert (w.threshold_for("misc"), w.threshold_for("other"), w.threshold_for("x")) == (
        100.0, 7.5, 0.0)
    assert w.full_name == "SchedulingBasic/5000Nodes"


def test_metrics_collector_config(tmp_path: Path) -> None:
    tc = load_one(tmp_path, BASIC.replace(
        "  defaultPodTemplatePath: pod.yaml",
        "  defaultPodTemplatePath: pod.yaml\n  metricsCollectorConfig:\n    metrics:\n"
        "      scheduler_x_seconds:\n      - label: result\n        values: [a, b]\n"
        "      - label: plugin\n        values: [P]\n      scheduler_y_seconds: null\n"
        "  defaultThresholdMetricSelector:\n    name: scheduler_x_seconds\n"
        "    labels: {result: b}\n    dataBucket: Perc99"))
    mcc = tc.metrics_collector_config
    assert mcc is tc.effective_metrics_collector_config
    assert mcc.metrics["scheduler_y_seconds"] is None
    assert mcc.label_combinations("scheduler_x_seconds") == [
        {"result": "a", "plugin": "P"}, {"result": "b", "plugin": "P"}]
    assert mcc.label_combinations("scheduler_y_seconds") == [{}]
    assert tc.workloads[0].threshold_metric_selector.name == "scheduler_x_seconds"
    assert load_one(tmp_path, BASIC).effective_metrics_collector_config.metrics[
        "scheduler_scheduling_attempt_duration_seconds"][0].values == (
        "scheduled", "unschedulable", "error")
    message = load_error(tmp_path, BASIC.replace(
        "  defaultPodTemplatePath: pod.yaml",
        "  defaultPodTemplatePath: pod.yaml\n  metricsCollectorConfig:\n    metrics:\n"
        "      scheduler_x_seconds:\n      - label: result\n        value: [a]"))
    assert message == ('misc/performance-config.yaml:7: SchedulingBasic: metricsCollectorConfig.'
                       'metrics.scheduler_x_seconds[0].value: unknown field "value" (did you mean '
                       '"values"?)')


def test_absent_threshold_means_no_check(tmp_path: Path) -> None:
    w = load_one(tmp_path, BASIC).workloads[0]
    assert w.threshold is None and w.threshold_for("misc") == 0.0


def test_names_given_as_numbers_become_strings(tmp_path: Path) -> None:
    # sigs.k8s.io/yaml turns YAML scalars into strings for Go string fields
    tc = load_one(tmp_path, BASIC.replace("name: 5000Nodes", "name: 5000"))
    assert tc.workloads[0].name == "5000"


def test_parsed_config_is_immutable(tmp_path: Path) -> None:
    tc = load_one(tmp_path, BASIC)
    with pytest.raises(AttributeError):
        tc.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        tc.workloads[0].params["initNodes"] = 1  # type: ignore[index]
    assert hash(tc.workload_template[0]) == hash(load_one(tmp_path, BASIC).workload_template[0])


# --------------------------------------------------------------------------- Go durations


@pytest.mark.parametrize(("text", "seconds"), [
    ("10s", 10.0), ("1m30s", 90.0), ("500ms", 0.5), ("1h", 3600.0), ("1.5h", 5400.0),
    ("2h45m0.5s", 9900.5), ("-2s", -2.0), ("+5m", 300.0), ("0", 0.0), ("-0", 0.0),
    (".5s", 0.5), ("1.s", 1.0), ("1us", 1e-6), ("1\u00b5s", 1e-6), ("1\u03bcs", 1e-6),
    ("100ns", 1e-7), ("1m0s", 60.0),
])
def test_parse_go_duration(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds, abs=1e-12)


@pytest.mark.parametrize(("text", "message"), [
    ("", 'time: invalid duration ""'),
    ("10", 'time: missing unit in duration "10"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("s", 'time: invalid duration "s"'),
    ("-", 'time: invalid duration "-"'),
    (".s", 'time: invalid duration ".s"'),
    ("1..5s", 'time: missing unit in duration "1..5s"'),
    ("3000000h", 'time: invalid duration "3000000h"'),
])
def test_parse_go_duration_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_go_duration(text)
    assert str(info.value) == message


def test_parse_go_duration_ns_is_exact() -> None:
    assert parse_go_duration_ns("1.000000001s") == 1_000_000_001
    assert parse_go_duration_ns("2562047h47m16.854775807s") == (1 << 63) - 1
