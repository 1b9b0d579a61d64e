"""KubeSchedulerConfiguration: defaults, merge semantics, weights, args, and every error path."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_core.errors import ConfigError, UnsupportedConfigError
from scheduler_core.framework.config import build_frameworks, load_config, parse_config

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def build(config: dict, **gates: bool) -> dict:
    return build_frameworks(parse_config({**API, **config}), handle=None, **gates)


def names(fwk, point: str) -> list[str]:
    return [p.name for p in fwk.points[point]]


def test_default_profile_order_and_weights():
    fwk = build({})["default-scheduler"]
    assert names(fwk, "Filter") == [
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
        "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
        "VolumeZone", *[n for n in ("PodTopologySpread", "InterPodAffinity")
                        if n in names(fwk, "Filter")], "DynamicResources"]
    # v1.34 (DynamicResourceAllocation on by default): DynamicResources before DefaultPreemption
    assert names(fwk, "PostFilter") == ["DynamicResources", "DefaultPreemption"]
    assert names(fwk, "QueueSort") == ["PrioritySort"]
    # v1.34's DefaultPreemption holds a pod back at PreEnqueue while its async preemption runs
    assert names(fwk, "PreEnqueue") == ["SchedulingGates", "DefaultPreemption"]
    # the pod-group cycle's points are v1.37's, filled only with GenericWorkload on
    assert names(fwk, "PlacementScore") == [] and names(fwk, "PlacementGenerate") == []
    assert "NodeResourcesFit" in names(build({}, generic_workload=True)["default-scheduler"],
                                       "PlacementScore")
    assert names(fwk, "Bind") == ["DefaultBinder"]
    score = names(fwk, "Score")
    assert score[:3] == ["TaintToleration", "NodeAffinity", "NodeResourcesFit"]
    assert score[-2:] == ["NodeResourcesBalancedAllocation", "ImageLocality"]
    assert fwk.weights["TaintToleration"] == 3
    assert fwk.weights["NodeAffinity"] == 2
    assert fwk.weights["NodeResourcesFit"] == 1


def test_disable_all_score_plugins_and_enable_one_with_weight():
    fwk = build({"profiles": [{"plugins": {"score": {
        "disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}}]}
    )["default-scheduler"]
    assert names(fwk, "Score") == ["NodeResourcesFit"]
    assert fwk.weights["NodeResourcesFit"] == 5
    # other extension points keep their MultiPoint defaults
    assert "TaintToleration" in names(fwk, "Filter")


def test_specific_point_overrides_multipoint_and_goes_first():
    fwk = build({"profiles": [{"plugins": {"score": {
        "enabled": [{"name": "ImageLocality", "weight": 7}]}}}]})["default-scheduler"]
    score = names(fwk, "Score")
    assert score[0] == "ImageLocality"
    assert score.count("ImageLocality") == 1
    assert fwk.weights["ImageLocality"] == 7


def test_disable_one_plugin_everywhere_via_multipoint():
    fwk = build({"profiles": [{"plugins": {"multiPoint": {
        "disabled": [{"name": "TaintToleration"}]}}}]})["default-scheduler"]
    assert "TaintToleration" not in names(fwk, "Filter")
    assert "TaintToleration" not in names(fwk, "Score")


def test_zero_weight_becomes_one():
    fwk = build({"profiles": [{"plugins": {"score": {
        "enabled": [{"name": "ImageLocality", "weight": 0}]}}}]})["default-scheduler"]
    assert fwk._score_weights[names(fwk, "Score").index("ImageLocality")] == 1


def test_percentage_profile_overrides_global():
    fw = build({"percentageOfNodesToScore": 30,
                "profiles": [{"schedulerName": "a"},
                             {"schedulerName": "b", "percentageOfNodesToScore": 70}]})
    assert fw["a"].percentage_of_nodes_to_score == 30
    assert fw["b"].percentage_of_nodes_to_score == 70


def test_scoring_strategy_args_reach_the_plugin():
    fwk = build({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "RequestedToCapacityRatio",
                            "resources": [{"name": "cpu", "weight": 2}],
                            "requestedToCapacityRatio": {"shape": [
                                {"utilization": 0, "score": 0},
                                {"utilization": 100, "score": 10}]}}}}]}]}
    )["default-scheduler"]
    fit = next(p for p in fwk.points["Score"] if p.name == "NodeResourcesFit")
    assert "RequestedToCapacityRatio" in repr(vars(fit))


def test_out_of_tree_plugin_by_import_path(tmp_path, monkeypatch):
    (tmp_path / "my_plugins.py").write_text(
        "class Always:\n"
        "    name = 'Always'\n"
        "    per_node = True\n"
        "    def __init__(self, args=None, handle=None, *, args_path=''):\n"
        "        self.args = args\n"
        "    def filter(self, pod, node_info):\n"
        "        return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    fwk = build({"pluginRegistry": {"Always": "my_plugins:Always"},
                 "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Always"}]}}}]}
                )["default-scheduler"]
    # specific-point plugins that override nothing come after the MultiPoint ones
    assert names(fwk, "Filter")[-1] == "Always"
    assert type(fwk.points["Filter"][-1]).__name__ == "PerNodeAdapter"


def test_load_config_from_file(tmp_path: Path):
    path = tmp_path / "sched.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                    "kind: KubeSchedulerConfiguration\n"
                    "profiles:\n- schedulerName: custom\n")
    cfg = load_config(path)
    assert [p.scheduler_name for p in cfg.profiles] == ["custom"]


BAD = [
    ("unknown-top-field", {"profile": []},
     "profile: unknown field (expected one of:"),
    ("bad-api-version", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
     'apiVersion: unsupported apiVersion "kubescheduler.config.k8s.io/v1beta3"'),
    ("bad-kind", {"kind": "Scheduler"}, 'kind: expected "KubeSchedulerConfiguration"'),
    ("percentage-too-big", {"percentageOfNodesToScore": 101},
     "percentageOfNodesToScore: must be an integer in the range 0-100, got 101"),
    ("profiles-not-list", {"profiles": {"schedulerName": "x"}},
     "profiles: expected a list of profiles"),
    ("unknown-profile-field", {"profiles": [{"schedulerNmae": "x"}]},
     "profiles[0].schedulerNmae: unknown field"),
    ("duplicate-scheduler-name", {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
     'profiles[1].schedulerName: duplicate schedulerName "a"'),
    ("missing-name-with-two-profiles", {"profiles": [{"schedulerName": "a"}, {}]},
     "profiles[1].schedulerName: required when more than one profile is given"),
    ("unknown-extension-point", {"profiles": [{"plugins": {"filters": {}}}]},
     "profiles[0].plugins.filters: unknown field"),
    ("negative-weight", {"profiles": [{"plugins": {"score": {
        "enabled": [{"name": "ImageLocality", "weight": -1}]}}}]},
     "profiles[0].plugins.score.enabled[0].weight: must be in the range 0-"),
    ("string-weight", {"profiles": [{"plugins": {"score": {
        "enabled": [{"name": "ImageLocality", "weight": "high"}]}}}]},
     "profiles[0].plugins.score.enabled[0].weight: expected an integer, got 'high'"),
    ("unknown-plugin", {"profiles": [{"plugins": {"filter": {
        "enabled": [{"name": "NodeResourceFit"}]}}}]},
     'profiles[0].plugins.filter: unknown plugin "NodeResourceFit"'),
    ("plugin-without-extension-point", {"profiles": [{"plugins": {"score": {
        "enabled": [{"name": "NodeName"}]}}}]},
     'profiles[0].plugins.score: plugin "NodeName" does not extend Score'),
    ("star-enabled", {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "*"}]}}}]},
     'profiles[0].plugins.filter.enabled[0].name: "*" can only be used in disabled lists'),
    ("unknown-plugin-config", {"profiles": [{"pluginConfig": [{"name": "Nope", "args": {}}]}]},
     'profiles[0].pluginConfig[0].name: unknown plugin "Nope"'),
    ("duplicate-plugin-config", {"profiles": [{"pluginConfig": [
        {"name": "NodeResourcesFit"}, {"name": "NodeResourcesFit"}]}]},
     'profiles[0].pluginConfig[1].name: duplicate pluginConfig for plugin "NodeResourcesFit"'),
    ("bad-strategy-type", {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "Random"}}}]}]},
     "profiles[0].pluginConfig[0].args.scoringStrategy.type"),
    ("unknown-args-field", {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                                             "args": {"scoring": {}}}]}]},
     "profiles[0].pluginConfig[0].args.scoring"),
    ("no-queue-sort", {"profiles": [{"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}]},
     "profiles[0].plugins.queueSort: exactly one queueSort plugin is required, got 0"),
    ("no-binder", {"profiles": [{"plugins": {"bind": {"disabled": [{"name": "*"}]}}}]},
     "profiles[0].plugins.bind: at least one bind plugin is needed"),
    ("bad-registry-target", {"pluginRegistry": {"X": "no_colon_here"}},
     "pluginRegistry.X: expected \"module.path:ClassName\""),
    ("unimportable-registry", {"pluginRegistry": {"X": "no_such_module_xyz:Cls"}},
     'pluginRegistry.X: cannot import "no_such_module_xyz:Cls"'),
    ("extender-without-url", {"extenders": [{"filterVerb": "filter"}]},
     "extenders[0].urlPrefix: required"),
    ("extender-unknown-field", {"extenders": [{"urlPrefix": "http://x", "filterverb": "f"}]},
     "extenders[0].filterverb: unknown field"),
    ("prioritizer-without-weight", {"extenders": [{"urlPrefix": "http://x",
                                                   "prioritizeVerb": "p"}]},
     "extenders[0].weight: 0: must have a positive weight applied to it"),
    ("two-binders", {"extenders": [{"urlPrefix": "http://a", "bindVerb": "b"},
                                   {"urlPrefix": "http://b", "bindVerb": "b"}]},
     "extenders: found 2 extenders implementing bind: only one extender can implement bind"),
    ("native-managed-resource", {"extenders": [{"urlPrefix": "http://x", "managedResources": [
        {"name": "cpu"}]}]},
     'extenders[0].managedResources[0].name: "cpu": is an invalid extended resource name'),
    ("kubernetes-io-managed-resource", {"extenders": [{"urlPrefix": "http://x",
                                                       "managedResources": [
                                                           {"name": "kubernetes.io/x"}]}]},
     "is an invalid extended resource name"),
    ("duplicate-managed-resource", {"extenders": [
        {"urlPrefix": "http://a", "managedResources": [{"name": "example.com/gpu"}]},
        {"urlPrefix": "http://b", "managedResources": [{"name": "example.com/gpu"}]}]},
     'extenders[1].managedResources[0].name: "example.com/gpu": duplicate extender managed '
     "resource name"),
    ("bad-http-timeout", {"extenders": [{"urlPrefix": "http://x", "httpTimeout": "5 s"}]},
     'extenders[0].httpTimeout: time: unknown unit " s" in duration "5 s"'),
    ("numeric-http-timeout", {"extenders": [{"urlPrefix": "http://x", "httpTimeout": 5}]},
     'extenders[0].httpTimeout: expected a duration such as "5s", got 5'),
    ("extenders-not-a-list", {"extenders": {"urlPrefix": "http://x"}},
     "extenders: expected a list of extenders"),
    ("backoff-order", {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
     "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds"),
]


@pytest.mark.parametrize(("config", "message"), [(c, m) for _, c, m in BAD],
                         ids=[i for i, _, _ in BAD])
def test_config_errors_name_the_field(config, message):
    with pytest.raises(ConfigError) as exc:
        build(config)
    assert message in str(exc.value)


def test_an_empty_extenders_list_is_accepted():
    build({"extenders": []})


def test_extenders_are_parsed_with_upstream_defaults():
    cfg = parse_config({"extenders": [
        {"urlPrefix": "http://x/", "filterVerb": "filter", "prioritizeVerb": "prio",
         "weight": 3, "nodeCacheCapable": True, "ignorable": True, "httpTimeout": "1m30s",
         "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True},
                              {"name": "example.com/fpga"}]},
        {"urlPrefix": "https://y", "bindVerb": "bind", "enableHTTPS": True,
         "httpTimeout": "0s", "preemptVerb": "preempt"}]})
    first, second = cfg.extenders
    assert (first.filter_verb, first.prioritize_verb, first.weight) == ("filter", "prio", 3)
    assert first.node_cache_capable and first.ignorable and first.http_timeout == 90.0
    assert second.http_timeout == 5.0  # 0 or absent: DefaultExtenderTimeout
    assert second.bind_verb == "bind" and second.enable_https
    assert second.preempt_verb == "preempt"
    # ignoredByScheduler resources become every profile's NodeResourcesFit ignoredResources
    assert cfg.profiles[0].plugin_args["NodeResourcesFit"]["ignoredResources"] == [
        "example.com/gpu"]


@pytest.mark.parametrize(("extender", "field"), [
    ({"urlPrefix": "https://x", "tlsConfig": {"caData": "AAAA"}},
     "extenders[0].tlsConfig.caData"),
    ({"urlPrefix": "https://x", "tlsConfig": {"serverName": "e.example"}},
     "extenders[0].tlsConfig.serverName"),
])
def test_extender_fields_the_core_does_not_model_are_unsupported(extender, field):
    with pytest.raises(UnsupportedConfigError) as exc:
        parse_config({"extenders": [extender]})
    assert exc.value.field == field


def test_config_error_names_the_file(tmp_path: Path):
    path = tmp_path / "sched.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                    "kind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: [x]\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(exc.value).startswith(f"{path}: profiles[0].schedulerName: must be a non-empty")


def test_invalid_yaml_names_the_line(tmp_path: Path):
    path = tmp_path / "sched.yaml"
    path.write_text("profiles:\n  - schedulerName: a\n   bad: [\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(exc.value).startswith(f"{path}:3: invalid YAML")
