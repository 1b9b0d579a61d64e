"""Pods: effective and non-zero requests, host ports, images, clone, warnings for
real-but-unmodelled fields and case-insensitive field names.

The request rules: docs/scheduling-model.md, "Resources and effective requests", and
docs/scheduling-model.md, "Non-zero requests for scoring".
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scheduler_core.api import DEFAULT_SCHEDULER_NAME, HostPort, Pod, PodSpec
from scheduler_core.api.resources import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST

G = 10**9
GI = 2**30
MI = 2**20


def ctr(cpu: str | None = None, mem: str | None = None, *, sidecar: bool = False,
        other: dict[str, str] | None = None) -> dict[str, Any]:
    """A container manifest requesting the given resources (absent when None)."""
    requests = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v is not None}
    requests.update(other or {})
    c: dict[str, Any] = {"name": "c", "image": "img"}
    if requests:
        c["resources"] = {"requests": requests}
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def pod(containers: list[dict], init: list[dict] | None = None, *,
        overhead: dict[str, str] | None = None, name: str = "web") -> Pod:
    spec: dict[str, Any] = {"containers": containers}
    if init is not None:
        spec["initContainers"] = init
    if overhead is not None:
        spec["overhead"] = overhead
    return Pod.from_manifest({"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": name}, "spec": spec})


# --------------------------------------------------------------- effective requests
REQUEST_CASES = [
    pytest.param(
        [ctr("2", "1G"), ctr("1", "1G")], [ctr("2", "1G"), ctr("2", "3G")], None,
        {"cpu": 3000, "memory": 3 * G}, id="fit.go-comment-example"),
    pytest.param([ctr("1", "1G"), ctr("500m", "512Mi")], None, None,
                 {"cpu": 1500, "memory": G + 512 * MI}, id="containers-summed"),
    pytest.param([ctr("1")], [ctr("3")], None, {"cpu": 3000}, id="init-larger-wins"),
    pytest.param([ctr("4")], [ctr("3")], None, {"cpu": 4000}, id="containers-larger-win"),
    pytest.param([ctr("1")], [ctr(mem="1Gi")], None, {"cpu": 1000, "memory": GI},
                 id="init-only-resource-kept"),
    pytest.param([ctr("1")], [ctr("1", sidecar=True)], None, {"cpu": 2000},
                 id="sidecar-adds-to-containers"),
    pytest.param([ctr("1")], [ctr("1", sidecar=True), ctr("5")], None, {"cpu": 6000},
                 id="sidecar-adds-to-later-init"),
    pytest.param([ctr("1")], [ctr("5"), ctr("1", sidecar=True)], None, {"cpu": 5000},
                 id="sidecar-not-added-to-earlier-init"),
    pytest.param([ctr("1")], [ctr("1", sidecar=True), ctr("2", sidecar=True),
                              ctr("3", sidecar=True)], None, {"cpu": 7000},
                 id="sidecars-cumulative"),
    pytest.param([ctr("1")], [ctr("5"), ctr("1", sidecar=True), ctr("2", sidecar=True),
                              ctr("4")], None, {"cpu": 7000},
                 id="init-after-two-sidecars"),
    pytest.param([ctr("1", "1Gi")], None, {"cpu": "250m", "memory": "120Mi"},
                 {"cpu": 1250, "memory": GI + 120 * MI}, id="overhead-added"),
    pytest.param([ctr("1")], [ctr("3")], {"cpu": "1"}, {"cpu": 4000},
                 id="overhead-added-after-init-max"),
    pytest.param([ctr(other={"example.com/foo": "2"})], [ctr(other={"example.com/foo": "3"})],
                 None, {"example.com/foo": 3}, id="extended-resource"),
    pytest.param([ctr(other={"ephemeral-storage": "1Gi"})], None, None,
                 {"ephemeral-storage": GI}, id="ephemeral-storage"),
    pytest.param([ctr("0.5m")], None, None, {"cpu": 1}, id="cpu-rounds-up-to-millis"),
    pytest.param([ctr(mem="1.5")], None, None, {"memory": 2}, id="memory-rounds-up"),
    pytest.param([ctr()], None, None, {}, id="no-requests"),
    pytest.param([ctr("0", "0")], None, None, {"cpu": 0, "memory": 0}, id="explicit-zero"),
]


@pytest.mark.parametrize(("containers", "init", "overhead", "want"), REQUEST_CASES)
def test_effective_requests(containers: list, init: list | None, overhead: dict | None,
                            want: dict[str, int]) -> None:
    assert pod(containers, init, overhead=overhead).spec.requests == want


def test_sidecar_flag_only_on_restartable_init_containers() -> None:
    p = pod([ctr("1")], [ctr("1", sidecar=True), ctr("1")])
    assert [c.sidecar for c in p.spec.init_containers] == [True, False]
    assert [c.sidecar for c in p.spec.containers] == [False]


LIMIT_CASES = [
    pytest.param({"limits": {"cpu": "2", "memory": "1Gi"}}, {"cpu": 2000, "memory": GI},
                 id="limits-only"),
    pytest.param({"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}},
                 {"cpu": 1000, "memory": GI}, id="limit-fills-missing-request-per-key"),
    pytest.param({"requests": {"cpu": "1", "memory": "1Mi"}, "limits": {"cpu": "2"}},
                 {"cpu": 1000, "memory": MI}, id="requests-win-over-limits"),
    pytest.param({"requests": {}, "limits": {"cpu": "2"}}, {"cpu": 2000},
                 id="empty-requests-mapping"),
]


@pytest.mark.parametrize(("resources", "want"), LIMIT_CASES)
def test_requests_default_to_limits(resources: dict, want: dict[str, int]) -> None:
    """SetDefaults_Pod: a resource with a limit but no request gets the limit as request."""
    c = {"name": "c", "resources": resources}
    assert pod([c]).spec.requests == want
    assert pod([ctr()], [c]).spec.requests == want


def test_has_requests() -> None:
    assert pod([ctr("1")]).spec.has_requests
    assert not pod([ctr()]).spec.has_requests
    assert not pod([ctr("0", "0")]).spec.has_requests


# --------------------------------------------------------------- non-zero requests
DEF_CPU, DEF_MEM = DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST

NON_ZERO_CASES = [
    pytest.param([ctr()], None, None, (100, 200 * MI), id="absent-keys-defaulted"),
    pytest.param([ctr(), ctr()], None, None, (200, 400 * MI), id="defaults-per-container"),
    pytest.param([ctr("0", "0")], None, None, (0, 0), id="explicit-zero-stays-zero"),
    pytest.param([ctr("0")], None, None, (0, DEF_MEM), id="explicit-zero-cpu-only"),
    pytest.param([ctr("1")], None, None, (1000, DEF_MEM), id="cpu-set-memory-defaulted"),
    pytest.param([ctr(mem="1Gi")], None, None, (DEF_CPU, GI), id="memory-set-cpu-defaulted"),
    pytest.param([ctr("2", "1Gi")], None, None, (2000, GI), id="both-set"),
    pytest.param([ctr()], [ctr("500m")], None, (500, DEF_MEM), id="init-container-max"),
    pytest.param([ctr(), ctr()], [ctr()], None, (200, 400 * MI),
                 id="init-defaults-smaller-than-containers"),
    pytest.param([ctr()], [ctr(sidecar=True)], None, (200, 400 * MI),
                 id="sidecar-defaults-added"),
    pytest.param([ctr()], None, {"cpu": "100m", "memory": "10Mi"}, (200, 210 * MI),
                 id="overhead-added"),
    pytest.param([ctr(other={"example.com/foo": "1"})], None, None, (DEF_CPU, DEF_MEM),
                 id="extended-only-gets-defaults"),
]


@pytest.mark.parametrize(("containers", "init", "overhead", "want"), NON_ZERO_CASES)
def test_non_zero_requests(containers: list, init: list | None, overhead: dict | None,
                           want: tuple[int, int]) -> None:
    spec = pod(containers, init, overhead=overhead).spec
    assert (spec.non_zero_cpu, spec.non_zero_memory) == want


def test_non_zero_defaults_do_not_leak_into_requests() -> None:
    spec = pod([ctr()]).spec
    assert spec.requests == {}
    assert (spec.non_zero_cpu, spec.non_zero_memory) == (100, 200 * MI)


def test_pod_without_containers_contributes_zero() -> None:
    spec = PodSpec()
    assert spec.requests == {}
    assert (spec.non_zero_cpu, spec.non_zero_memory) == (0, 0)
    assert spec.host_ports == () and spec.images == ()


# --------------------------------------------------------------- host ports
def with_ports(*ports: dict, sidecar: bool = False) -> dict[str, Any]:
    c = ctr(sidecar=sidecar)
    c["ports"] = list(ports)
    return c


HOST_PORT_CASES = [
    pytest.param([with_ports({"containerPort": 80, "hostPort": 8080})], None,
                 (HostPort("0.0.0.0", "TCP", 8080),), id="defaults-0.0.0.0-TCP"),
    pytest.param([with_ports({"containerPort": 53, "hostPort": 53, "protocol": "UDP",
                              "hostIP": "10.0.0.1"})], None,
                 (HostPort("10.0.0.1", "UDP", 53),), id="explicit-ip-protocol"),
    pytest.param([with_ports({"containerPort": 80, "hostPort": 8080, "hostIP": "",
                              "protocol": ""})], None,
                 (HostPort("0.0.0.0", "TCP", 8080),), id="empty-strings-defaulted"),
    pytest.param([with_ports({"containerPort": 80}, {"containerPort": 81, "hostPort": 0})],
                 None, (), id="no-host-port-ignored"),
    pytest.param([with_ports({"hostPort": 1}), with_ports({"hostPort": 2, "protocol": "SCTP"})],
                 None, (HostPort("0.0.0.0", "TCP", 1), HostPort("0.0.0.0", "SCTP", 2)),
                 id="several-containers-in-order"),
    pytest.param([with_ports({"hostPort": 1})], [with_ports({"hostPort": 2})],
                 (HostPort("0.0.0.0", "TCP", 1),), id="plain-init-container-holds-no-port"),
    pytest.param([with_ports({"hostPort": 1})], [with_ports({"hostPort": 2}, sidecar=True)],
                 (HostPort("0.0.0.0", "TCP", 2), HostPort("0.0.0.0", "TCP", 1)),
                 id="sidecar-ports-first"),
]


@pytest.mark.parametrize(("containers", "init", "want"), HOST_PORT_CASES)
def test_host_ports(containers: list, init: list | None, want: tuple[HostPort, ...]) -> None:
    assert pod(containers, init).spec.host_ports == want


# --------------------------------------------------------------- images
def img(image: str) -> dict[str, Any]:
    return {"name": "c", "image": image}


IMAGE_CASES = [
    pytest.param("nginx", "nginx:latest", id="bare-name"),
    pytest.param("nginx:1.25", "nginx:1.25", id="tagged"),
    pytest.param("library/nginx", "library/nginx:latest", id="with-path"),
    pytest.param("host:5000/img", "host:5000/img:latest", id="registry-port-no-tag"),
    pytest.param("host:5000/img:v1", "host:5000/img:v1", id="registry-port-tagged"),
    pytest.param("host:5000/team/img", "host:5000/team/img:latest", id="registry-port-path"),
    pytest.param("img@sha256:abcd", "img@sha256:abcd", id="digest-kept"),
    pytest.param("registry.k8s.io/pause:3.9", "registry.k8s.io/pause:3.9", id="k8s-pause"),
]


@pytest.mark.parametrize(("image", "want"), IMAGE_CASES)
def test_image_normalisation(image: str, want: str) -> None:
    assert pod([img(image)]).spec.images == (want,)


def test_images_init_first_and_empty_skipped() -> None:
    p = pod([img("app"), {"name": "noimage"}], [img("init:1")])
    assert p.spec.images == ("init:1", "app:latest")


# --------------------------------------------------------------- Pod object, clone
def test_pod_defaults() -> None:
    p = pod([ctr("1")])
    assert (p.name, p.namespace, p.key, p.uid) == ("web", "default", "default/web", "default/web")
    assert p.priority == 0 and p.spec.priority is None
    assert p.scheduler_name == DEFAULT_SCHEDULER_NAME == "default-scheduler"
    assert p.node_name == "" and p.nominated_node_name == ""
    assert p.labels == {} and p.warnings == ()
    assert p.deletion_timestamp is None
    assert p.spec.affinity.required_node is None and p.spec.affinity.preferred_node == ()
    assert repr(p) == "Pod(default/web, node=-)"


def test_pod_fields_read_from_manifest() -> None:
    p = Pod.from_manifest({
        "metadata": {"generateName": "gen-", "namespace": "ns1", "labels": {"app": "a"},
                     "uid": "u-1", "annotations": {"k": "v"}, "deletionTimestamp": "x",
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "rs", "uid": "1",
                                          "apiVersion": "apps/v1", "controller": True}]},
        "spec": {"containers": [ctr("1")], "nodeName": "n1", "priority": 7,
                 "schedulerName": "other", "preemptionPolicy": "Never",
                 "priorityClassName": "high", "nodeSelector": {"zone": "a"},
                 "tolerations": [{"operator": "Exists"}],
                 "schedulingGates": [{"name": "g1"}, {"name": "g2"}],
                 "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}},
                             {"name": "e", "emptyDir": {}},
                             {"name": "d", "awsElasticBlockStore": {"volumeID": "vol-1",
                                                                    "readOnly": True}},
                             {"name": "g", "ephemeral": {"volumeClaimTemplate": {}}}]},
        "status": {"nominatedNodeName": "n2", "phase": "Pending"},
    })
    assert (p.name, p.namespace, p.uid) == ("gen-", "ns1", "u-1")
    assert p.labels == {"app": "a"} and p.annotations == {"k": "v"}
    assert p.owner_references == (("ReplicaSet", "rs"),)
    assert p.deletion_timestamp == 0.0
    assert (p.node_name, p.priority, p.scheduler_name) == ("n1", 7, "other")
    assert p.spec.preemption_policy == "Never" and p.spec.priority_class_name == "high"
    assert p.spec.node_selector == {"zone": "a"}
    assert p.spec.scheduling_gates == ("g1", "g2")
    assert [(v.name, v.claim) for v in p.spec.volumes] == [("v", "c"), ("d", "")]
    disk = p.spec.volumes[1].source
    assert disk is not None and (disk.kind, disk.ident, disk.read_only) == (
        "awsElasticBlockStore", "vol-1", True)
    assert p.spec.unsupported_volumes == ("ephemeral",)
    assert p.nominated_node_name == "n2"


def test_default_namespace_argument() -> None:
    data = {"metadata": {"name": "p"}, "spec": {"containers": [ctr()]}}
    assert Pod.from_manifest(data, default_namespace="bench").namespace == "bench"


def test_clone_shares_spec_but_not_labels() -> None:
    original = Pod.from_manifest({"metadata": {"name": "tmpl", "labels": {"app": "a"}},
                                  "spec": {"containers": [ctr("1")], "priority": 5}})
    original.node_name = "n1"
    clone = original.clone("p-2", "other")
    assert clone.spec is original.spec
    assert clone.labels == original.labels and clone.labels is not original.labels
    clone.labels["extra"] = "x"
    assert original.labels == {"app": "a"}
    assert (clone.name, clone.namespace, clone.uid) == ("p-2", "other", "other/p-2")
    assert (clone.priority, clone.node_name) == (5, "n1")


def test_clone_defaults_and_explicit_labels() -> None:
    original = pod([ctr()], name="a")
    same = original.clone()
    assert (same.name, same.namespace, same.spec) == ("a", "default", original.spec)
    relabelled = original.clone("b", labels={"x": "y"})
    assert relabelled.labels == {"x": "y"} and original.labels == {}


def test_clone_keeps_mutated_priority() -> None:
    original = pod([ctr()])
    original.priority = 100
    assert original.clone("b").priority == 100
    assert original.spec.priority is None


def test_spec_is_immutable() -> None:
    spec = pod([ctr("1")]).spec
    with pytest.raises(AttributeError):
        spec.node_name = "x"  # type: ignore[misc]


def test_from_manifest_does_not_mutate_its_input() -> None:
    data = {"metadata": {"name": "p"},
            "spec": {"Containers": [ctr("1")], "restartPolicy": "Never"}}
    before = copy.deepcopy(data)
    Pod.from_manifest(data)
    Pod.from_manifest(data)
    assert data == before


# --------------------------------------------------------------- warnings
WARNING_CASES = [
    pytest.param({"spec": {"restartPolicy": "Never"}},
                 ["pod default/web: spec.restartPolicy: ignored (not modelled)"],
                 id="spec-field"),
    pytest.param({"container": {"command": ["sleep"], "env": []}},
                 ["pod default/web: spec.containers[0].command: ignored (not modelled)",
                  "pod default/web: spec.containers[0].env: ignored (not modelled)"],
                 id="container-fields"),
    pytest.param({"metadata": {"creationTimestamp": None}},
                 ["pod default/web: metadata.creationTimestamp: ignored (not modelled)"],
                 id="metadata-field"),
    pytest.param({"status": {"phase": "Pending"}},
                 ["pod default/web: status.phase: ignored (not modelled)"], id="status-field"),
    pytest.param({"container": {"resources": {"limits": {"cpu": "1"}, "claims": []}}},
                 ["pod default/web: spec.containers[0].resources.claims: ignored (not modelled)"],
                 id="resources-claims"),
    pytest.param({"toleration": {"key": "k", "operator": "Exists", "tolerationSeconds": 5}},
                 ["pod default/web: spec.tolerations[0].tolerationSeconds: ignored "
                  "(not modelled)"], id="toleration-seconds"),
    pytest.param({"spec": {"NodeName": "n1"}},
                 ["pod default/web: spec.NodeName: read as nodeName"], id="case-folded-spec"),
    pytest.param({"spec": {"RestartPolicy": "Never"}},
                 ["pod default/web: spec.RestartPolicy: read as restartPolicy",
                  "pod default/web: spec.restartPolicy: ignored (not modelled)"],
                 id="case-folded-ignored-field"),
    pytest.param({"spread": {"NodeAffinityPolicy": "Ignore"}},
                 ["pod default/web: spec.topologySpreadConstraints[0].NodeAffinityPolicy: "
                  "read as nodeAffinityPolicy"], id="case-folded-spread-policy"),
]


def _warning_pod(extra: dict[str, Any]) -> Pod:
    container: dict[str, Any] = {"name": "c", "image": "img"}
    container.update(extra.get("container", {}))
    spec: dict[str, Any] = {"containers": [container]}
    spec.update(extra.get("spec", {}))
    if "toleration" in extra:
        spec["tolerations"] = [extra["toleration"]]
    if "spread" in extra:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              **extra["spread"]}]
    data: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": "web", **extra.get("metadata", {})},
                            "spec": spec}
    if "status" in extra:
        data["status"] = extra["status"]
    return Pod.from_manifest(data)


@pytest.mark.parametrize(("extra", "want"), WARNING_CASES)
def test_unmodelled_fields_become_warnings(extra: dict, want: list[str]) -> None:
    assert list(_warning_pod(extra).warnings) == want


def test_case_folded_field_value_is_used() -> None:
    p = _warning_pod({"spec": {"NodeName": "n1", "PRIORITY": 9},
                      "spread": {"NodeAffinityPolicy": "Ignore", "nodetaintspolicy": "Honor"}})
    assert p.node_name == "n1" and p.priority == 9
    tsc = p.spec.topology_spread_constraints[0]
    assert (tsc.node_affinity_policy, tsc.node_taints_policy) == ("Ignore", "Honor")
    assert len(p.warnings) == 4


def test_clone_keeps_warnings() -> None:
    p = _warning_pod({"spec": {"restartPolicy": "Never"}})
    assert p.clone("other").warnings == p.warnings


def test_a_kept_spec_source_holds_every_key_as_read_and_the_input_is_untouched():
    """Under retain_spec_sources(True) the spec the core parsed is kept with the names it read
    (Go's case-insensitive matching), nested ones included, for the fidelity check to send
    on; the caller's manifest is left as it was."""
    import copy

    from scheduler_core.api.pod import retain_spec_sources

    data = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"Containers": [{"name": "c", "image": "i"}],
                     "topologySpreadConstraints": [
                         {"maxSkew": 1, "topologyKey": "zone",
                          "whenUnsatisfiable": "DoNotSchedule",
                          "NodeAffinityPolicy": "Honor"}]}}
    before = copy.deepcopy(data)
    previous = retain_spec_sources(True)
    try:
        pod = Pod.from_manifest(data)
    finally:
        retain_spec_sources(previous)
    assert data == before
    source = pod.spec.source
    assert source is not None and "containers" in source and "Containers" not in source
    assert source["topologySpreadConstraints"][0]["nodeAffinityPolicy"] == "Honor"
    assert "NodeAffinityPolicy" not in source["topologySpreadConstraints"][0]
    assert Pod.from_manifest(data).spec.source is None  # off by default
