"""A Filter plugin enabled without its PreFilter: upstream's Filter reads its PreFilter's
state and fails with an error on the first node that reaches it; the cycle ends with that
error (found by the lockstep check against kube-scheduler v1.34)."""

from __future__ import annotations

from workloads.reference.core import evaluate_core, load_core


def _node(name, taint=False):
    spec = {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]} if taint else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec,
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "i",
                                "resources": {"requests": {"cpu": "1"}}}]}}


def _config(pre_filter: bool):
    pre = {"disabled": [{"name": "*"}]}
    if pre_filter:
        pre["enabled"] = [{"name": "NodeResourcesFit"}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                "preFilter": pre,
                "filter": {"disabled": [{"name": "*"}],
                           "enabled": [{"name": "TaintToleration"},
                                       {"name": "NodeResourcesFit"}]},
                "postFilter": {"disabled": [{"name": "*"}]}}}]}


MESSAGE = ('running "NodeResourcesFit" filter plugin: error reading '
           '"PreFilterNodeResourcesFit" from cycleState: not found')


def test_the_cycle_ends_in_the_plugins_error():
    cluster, sched = load_core([_node("a"), _node("b"), POD], _config(pre_filter=False))
    sched.run_until_idle(max_attempts=1)
    assert not cluster.get_pod("default", "p").node_name
    assert sched.failures["default/p"] == MESSAGE


def test_with_its_pre_filter_the_pod_is_placed():
    cluster, sched = load_core([_node("a"), _node("b"), POD], _config(pre_filter=True))
    sched.run_until_idle(max_attempts=1)
    assert cluster.get_pod("default", "p").node_name in ("a", "b")


def test_a_node_rejected_before_the_plugin_keeps_its_own_status():
    """The tainted node is rejected by TaintToleration, before NodeResourcesFit runs; the
    other node reaches it and gets the error, which is the evaluation's outcome."""
    _, sched = load_core([_node("a", taint=True), _node("b"), POD], _config(pre_filter=False))
    ev = evaluate_core(sched, "default", "p")
    assert ev.outcome == "Error" and ev.message == MESSAGE
    assert ev.filter.rejected["a"].plugin == "TaintToleration"
    assert (ev.filter.rejected["b"].code, ev.filter.rejected["b"].plugin) == \
        ("Error", "NodeResourcesFit")


def test_when_every_node_is_rejected_before_it_there_is_no_error():
    _, sched = load_core([_node("a", taint=True), POD], _config(pre_filter=False))
    sched.run_until_idle(max_attempts=1)
    assert "untolerated taint" in sched.failures["default/p"]


def test_a_score_plugin_without_its_pre_score_ends_the_cycle_in_its_error():
    """TaintToleration's Score reads its PreScore's state: enabled at Score only, scoring
    two feasible nodes fails with upstream's error (one feasible node is never scored)."""
    config = _config(pre_filter=True)
    config["profiles"][0]["plugins"]["preScore"] = {"disabled": [{"name": "*"}]}
    config["profiles"][0]["plugins"]["score"] = {
        "disabled": [{"name": "*"}], "enabled": [{"name": "TaintToleration", "weight": 1}]}
    cluster, sched = load_core([_node("a"), _node("b"), POD], config)
    sched.run_until_idle(max_attempts=1)
    assert not cluster.get_pod("default", "p").node_name
    assert sched.failures["default/p"] == (
        'running Score plugins: plugin "TaintToleration" failed with: failed to read '
        '"PreScoreTaintToleration" from cycleState: not found')
    assert evaluate_core(sched, "default", "p").outcome == "Error"
