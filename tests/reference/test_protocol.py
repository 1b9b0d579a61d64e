"""The reference binary's protocol (docs/reference-scheduler.md): handshake, errors that name
the field, writes, evaluate without side effects, bind, determinism, version."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.builders import make_pod
from tests.reference.cases import (
    HOST,
    Manifest,
    bound,
    evaluate_both,
    fit_cluster,
    node,
    preemption_cluster,
)
from workloads.reference import ReferenceClient, ReferenceRequestError


def _raw_session(binary, *requests: dict) -> list[dict]:
    """Replies of a fresh process to ``requests`` (no client: the handshake is not sent)."""
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    out = subprocess.run([str(binary)], input=lines, capture_output=True, text=True,
                         timeout=300, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_handshake_comes_first_and_names_the_protocol(reference_binary):
    replies = _raw_session(reference_binary.path, {"id": 1, "op": "version"},
                           {"id": 2, "op": "hello", "protocol": 2},
                           {"id": 3, "op": "hello", "protocol": 1},
                           {"id": 4, "op": "nonsense"}, {"id": 5, "op": "evaluate", "nam": "x"})
    assert [r["ok"] for r in replies] == [False, False, True, False, False]
    assert "hello" in replies[0]["error"]["message"]
    assert replies[1]["error"]["field"] == "protocol"
    assert replies[2]["result"]["protocol"] == 1
    assert replies[3]["error"]["kind"] == "protocol" and replies[3]["error"]["field"] == "op"
    assert "nam" in replies[4]["error"]["message"]  # unknown request field
    assert [r.get("id") for r in replies] == [1, 2, 3, 4, 5]


def test_version_is_the_built_binary(reference, reference_binary):
    info = reference.get_version()
    assert info == reference.version
    assert info.kubernetes.startswith("v1.34.")
    assert info.go.startswith("go1.")
    assert info.binary_sha256 == reference_binary.sha256


def test_config_errors_name_the_field(reference):
    with pytest.raises(ReferenceRequestError) as err:
        reference.config("apiVersion: kubescheduler.config.k8s.io/v1\n"
                         "kind: KubeSchedulerConfiguration\nprofiles:\n- pluginz: {}\n")
    assert err.value.kind == "invalid_config"
    assert err.value.field == "profiles[0].pluginz"
    with pytest.raises(ReferenceRequestError) as err:
        reference.config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                          "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 150})
    assert err.value.kind == "invalid_config"
    assert err.value.field == "percentageOfNodesToScore"
    with pytest.raises(ReferenceRequestError) as err:
        reference.config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                          "kind": "KubeSchedulerConfiguration",
                          "extenders": [{"urlPrefix": "http://x", "filterVerb": "f"}]})
    assert err.value.kind == "unsupported" and err.value.field == "extenders"


def test_config_reports_profiles_and_comes_before_objects(reference):
    info = reference.config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                             "kind": "KubeSchedulerConfiguration",
                             "profiles": [{"schedulerName": "default-scheduler"},
                                          {"schedulerName": "no-score", "plugins": {
                                              "score": {"disabled": [{"name": "*"}]}}}]})
    by_name = {p.scheduler_name: p for p in info.profiles}
    assert by_name["default-scheduler"].score_weights["TaintToleration"] == 3
    assert by_name["no-score"].plugins["Score"] == ()
    assert "NodeResourcesFit" in by_name["no-score"].plugins["Filter"]
    reference.apply(node("n1").manifest())
    with pytest.raises(ReferenceRequestError) as err:
        reference.config(None)
    assert err.value.kind == "conflict"


def test_apply_rejects_bad_manifests_with_their_field(reference):
    with pytest.raises(ReferenceRequestError) as err:
        reference.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                         "spec": {"containerz": []}})
    assert err.value.kind == "invalid_object"
    assert err.value.field == "objects[0].spec.containerz"
    with pytest.raises(ReferenceRequestError) as err:
        reference.apply({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "cm"}})
    assert err.value.kind == "unsupported" and err.value.field == "objects[0].kind"
    with pytest.raises(ReferenceRequestError) as err:
        reference.apply(make_pod("x", namespace="nowhere").manifest())
    assert err.value.kind == "not_found" and "namespace nowhere" in err.value.detail
    with pytest.raises(ReferenceRequestError) as err:
        pod = make_pod("y").manifest()
        pod["spec"]["priorityClassName"] = "missing"
        reference.apply(pod)
    assert err.value.field == "spec.priorityClassName"


def test_evaluate_needs_a_pending_pod(reference):
    reference.apply(node("n1").manifest(), bound("b", "n1", "1"))
    with pytest.raises(ReferenceRequestError) as err:
        reference.evaluate("default", "nope")
    assert err.value.kind == "not_found"
    with pytest.raises(ReferenceRequestError) as err:
        reference.evaluate("default", "b")
    assert err.value.kind == "conflict"


def test_bind_delete_and_apply_change_what_evaluate_sees(reference):
    reference.apply(node("n1").manifest(), make_pod("p1").req(cpu="3").manifest(),
                    make_pod("p2").req(cpu="3").manifest())
    assert reference.evaluate("default", "p2").filter.feasible == ("n1",)
    assert reference.bind("default", "p1", "n1").action == "bound"
    after = reference.evaluate("default", "p2")
    assert after.filter.rejected["n1"].reasons == ("Insufficient cpu",)
    with pytest.raises(ReferenceRequestError) as err:
        reference.bind("default", "p1", "n1")
    assert err.value.kind == "conflict"
    with pytest.raises(ReferenceRequestError) as err:
        reference.bind("default", "p2", "n9")
    assert err.value.kind == "not_found"
    assert reference.delete(("Pod", "default", "p1"))[0].action == "deleted"
    assert reference.evaluate("default", "p2").filter.feasible == ("n1",)
    # a bigger node replaces the old one (update): the pod still fits, on the new capacity
    assert reference.apply(node("n1", cpu="16").manifest())[0].action == "updated"
    assert reference.evaluate("default", "p2").score.plugin("NodeResourcesFit").scores["n1"] > 80


def test_evaluate_has_no_side_effects(reference):
    reference.apply(*preemption_cluster())
    first = reference.request("evaluate", namespace="default", name="high")
    second = reference.request("evaluate", namespace="default", name="high")
    assert first == second
    assert {v["name"] for v in first["postFilter"]["victims"]} == {"c0", "c1"}
    # the victims are still there: binding another pod to n2 still finds n2 full
    reference.apply(make_pod("late").req(cpu="1").manifest())
    late = reference.evaluate("default", "late")
    assert late.filter.rejected["n2"].reasons == ("Insufficient cpu",)


def test_preemption_would_clear_lower_nominations_but_does_not(reference):
    waiting = make_pod("waiting").req(cpu="1").priority(1).nominated("n2").manifest()
    reference.apply(*preemption_cluster(), waiting)
    first = reference.evaluate("default", "high")
    assert first.post_filter.nominated_node == "n2"
    assert first.post_filter.cleared_nominations == (("default", "waiting"),)
    assert reference.evaluate("default", "high") == first  # the nomination is still there


def test_two_processes_give_the_same_answers(reference_binary):
    answers = []
    for _ in range(2):
        with ReferenceClient(reference_binary.path, timeout=300) as c:
            c.apply(*fit_cluster(), *preemption_cluster()[1:4])
            answers.append([c.request("evaluate", namespace="default", name="p"),
                            c.apply(make_pod("z").manifest())[0].uid])
    assert answers[0] == answers[1]


def test_assume_and_forget_change_what_evaluate_sees_and_bind_confirms(reference):
    """The cache's assumption of a pending pod (a pod-group cycle's earlier members): seen by
    evaluate, undone by forget, confirmed by bind; ``nodes`` and ``member`` narrow evaluate to
    a placement without PostFilter."""
    reference.apply(node("n1").manifest(), node("n2").manifest(),
                    make_pod("p1").req(cpu="3").manifest(), make_pod("p2").req(cpu="3").manifest())
    assert reference.request("assume", namespace="default", name="p1", node="n1")[
        "objects"][0]["action"] == "assumed"
    seen = reference.evaluate("default", "p2")
    assert seen.filter.feasible == ("n2",)
    assert seen.filter.rejected["n1"].reasons == ("Insufficient cpu",)
    with pytest.raises(ReferenceRequestError) as err:  # assumed already
        reference.request("assume", namespace="default", name="p1", node="n2")
    assert err.value.kind == "conflict"
    only_n1 = reference.request("evaluate", namespace="default", name="p2", nodes=["n1"],
                                member=True)
    assert only_n1["nodes"] == ["n1"] and only_n1["outcome"] == "Unschedulable"
    assert only_n1["message"].startswith("0/1 nodes are available")
    assert only_n1.get("postFilter") is None  # a member: no PostFilter
    with pytest.raises(ReferenceRequestError) as err:
        reference.request("evaluate", namespace="default", name="p2", nodes=["n9"])
    assert err.value.kind == "not_found"
    reference.request("forget", namespace="default", name="p1")
    assert reference.evaluate("default", "p2").filter.feasible == ("n1", "n2")
    with pytest.raises(ReferenceRequestError) as err:  # not assumed any more
        reference.request("forget", namespace="default", name="p1")
    assert err.value.kind == "conflict"
    reference.request("assume", namespace="default", name="p1", node="n1")
    assert reference.bind("default", "p1", "n1").action == "bound"  # confirms the assumption
    assert reference.evaluate("default", "p2").filter.feasible == ("n2",)
    with pytest.raises(ReferenceRequestError) as err:  # bound: the cache no longer assumes it
        reference.request("forget", namespace="default", name="p1")
    assert err.value.kind == "conflict"


def _spread_pod(policy_key: str) -> Manifest:
    """Pod ``p`` spread one per host with NodeTaintsPolicy Honor, under the key ``policy_key``."""
    m = make_pod("p").req(cpu="100m").label("foo", "bar").manifest()
    m["spec"]["topologySpreadConstraints"] = [{
        "maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"foo": "bar"}}, policy_key: "Honor"}]
    return m


@pytest.mark.parametrize("policy_key", ["nodeTaintsPolicy", "NodeTaintsPolicy"])
def test_manifest_field_names_match_case_insensitively_as_scheduler_perf_reads_them(
        reference, policy_key):
    """scheduler_perf reads templates with Go's encoding/json (upstream's
    pod-with-node-inclusion-policy.yaml writes ``NodeTaintsPolicy:``); the strict API decoder
    alone would refuse the key. Honoured on both sides: the tainted host t2 leaves the spread's
    domains, so n1 (one matching pod) is feasible; were the key dropped, t2's empty domain would
    make n1's skew 2."""
    objects = [node("n1").manifest(), node("t2").taint("k", "v", "NoSchedule").manifest(),
               bound("b", "n1", "100m", labels={"foo": "bar"}), _spread_pod(policy_key)]
    ref, core = evaluate_both(reference, objects, "p")
    assert ref.filter.feasible == core.filter.feasible == ("n1",)
    with pytest.raises(ReferenceRequestError) as err:  # unknown in any case: still refused
        bad = _spread_pod("nodeTaintsPolicyy")
        bad["metadata"]["name"] = "q"
        reference.apply(bad)
    assert err.value.kind == "invalid_object"
    assert err.value.field.endswith("nodeTaintsPolicyy")
