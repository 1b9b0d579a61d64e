"""Nodes and the small kinds parsed from manifests (API-server defaulting included)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api import (
    ImageState,
    LabelSelector,
    Namespace,
    Node,
    PodDisruptionBudget,
    PriorityClass,
    Service,
    Taint,
    parse_object,
)

GI = 2**30


def node(status: dict | None = None, spec: dict | None = None, **meta: Any) -> Node:
    return Node.from_manifest({"apiVersion": "v1", "kind": "Node",
                               "metadata": {"name": "n1", **meta},
                               "spec": spec or {}, "status": status or {}})


ALLOCATABLE_CASES = [
    pytest.param({"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
                 {"cpu": 4000, "memory": 32 * GI, "pods": 110}, id="capacity-only-copied"),
    pytest.param({"allocatable": {"cpu": "3500m"}}, {"cpu": 3500}, id="allocatable-only"),
    pytest.param({"capacity": {"cpu": "4", "memory": "32Gi"}, "allocatable": {"cpu": "3"}},
                 {"cpu": 3000}, id="allocatable-set-capacity-not-merged"),
    pytest.param({"capacity": {"cpu": "4"}, "allocatable": {}}, {},
                 id="empty-allocatable-is-set"),
    pytest.param({}, {}, id="neither"),
    pytest.param({"allocatable": {"example.com/gpu": "2", "ephemeral-storage": "10Gi"}},
                 {"example.com/gpu": 2, "ephemeral-storage": 10 * GI}, id="scalar-resources"),
]


@pytest.mark.parametrize(("status", "want"), ALLOCATABLE_CASES)
def test_node_allocatable_defaulting(status: dict, want: dict[str, int]) -> None:
    """SetDefaults_NodeStatus: allocatable = capacity only when allocatable is absent."""
    assert node(status).allocatable == want


def test_node_fields() -> None:
    n = node({"images": [{"names": ["nginx:latest", "docker.io/nginx:latest"],
                          "sizeBytes": 1000}], "conditions": []},
             {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
              "unschedulable": True, "podCIDR": "10.0.0.0/24"},
             labels={"zone": "a"}, uid="u1")
    assert n.name == "n1" and n.labels == {"zone": "a"} and n.uid == "u1"
    assert n.taints == (Taint("k", "v", "NoSchedule"),)
    assert n.unschedulable is True
    assert n.images == (ImageState(("nginx:latest", "docker.io/nginx:latest"), 1000),)
    assert n.warnings == ("node n1: spec.podCIDR: ignored (not modelled)",
                          "node n1: status.conditions: ignored (not modelled)")


def test_node_generate_name_and_namespace_ignored() -> None:
    n = Node.from_manifest({"metadata": {"generateName": "perf-", "namespace": "x"}})
    assert n.name == "perf-"
    assert n.warnings == ("node perf-: metadata.namespace: ignored (not modelled)",)


def test_node_with_name_shares_fields_but_not_labels() -> None:
    n = node({"allocatable": {"cpu": "1"}}, labels={"zone": "a"}, uid="u")
    copy = n.with_name("n2")
    assert (copy.name, copy.uid) == ("n2", "")
    assert copy.allocatable is n.allocatable and copy.taints is n.taints
    assert copy.labels == n.labels and copy.labels is not n.labels
    assert n.with_name("n3", {"zone": "b"}).labels == {"zone": "b"}


# ------------------------------------------------------------------------ small kinds
def test_namespace() -> None:
    ns = Namespace.from_manifest({"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": "team", "labels": {"t": "a"}},
                                  "status": {"phase": "Active"}})
    assert ns == Namespace("team", {"t": "a"})


def test_cluster_scoped_kinds_ignore_metadata_namespace() -> None:
    """The API server drops metadata.namespace on cluster-scoped objects."""
    ns = Namespace.from_manifest({"kind": "Namespace",
                                  "metadata": {"name": "team", "namespace": "x"}})
    assert ns.name == "team"
    pc = PriorityClass.from_manifest({"kind": "PriorityClass", "value": 5,
                                      "metadata": {"name": "p", "namespace": "x"}})
    assert pc.value == 5


PRIORITY_CLASS_CASES = [
    pytest.param({"value": 1000}, PriorityClass("high", 1000), id="defaults"),
    pytest.param({"value": 1_000_000_000, "globalDefault": True, "preemptionPolicy": "Never",
                  "description": "x"},
                 PriorityClass("high", 1_000_000_000, True, "Never"), id="full-at-limit"),
    pytest.param({"value": -5}, PriorityClass("high", -5), id="negative"),
]


@pytest.mark.parametrize(("fields", "want"), PRIORITY_CLASS_CASES)
def test_priority_class(fields: dict, want: PriorityClass) -> None:
    data = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "high"}, **fields}
    assert PriorityClass.from_manifest(data) == want


PDB_CASES = [
    pytest.param({"minAvailable": 2}, (2, None), id="min-int"),
    pytest.param({"minAvailable": "50%"}, ("50%", None), id="min-percent"),
    pytest.param({"maxUnavailable": "0%"}, (None, "0%"), id="max-zero-percent"),
    pytest.param({"maxUnavailable": "100%"}, (None, "100%"), id="max-hundred-percent"),
    pytest.param({"maxUnavailable": 0}, (None, 0), id="max-zero"),
    pytest.param({}, (None, None), id="neither"),
]


@pytest.mark.parametrize(("spec", "want"), PDB_CASES)
def test_pdb_values(spec: dict, want: tuple) -> None:
    budget = PodDisruptionBudget.from_manifest(
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
         "metadata": {"name": "b", "namespace": "team"}, "spec": spec})
    assert (budget.min_available, budget.max_unavailable) == want
    assert (budget.name, budget.namespace, budget.selector) == ("b", "team", None)


def test_pdb_selector_and_disrupted_pods() -> None:
    budget = PodDisruptionBudget.from_manifest(
        {"kind": "PodDisruptionBudget", "metadata": {"name": "b"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
         "status": {"disruptedPods": {"web-1": "2024-01-01T00:00:00Z"}, "currentHealthy": 3}})
    assert budget.namespace == "default"
    assert budget.selector == LabelSelector.parse({"matchLabels": {"app": "web"}})
    assert budget.disrupted_pods == frozenset({"web-1"})


def test_service() -> None:
    svc = Service.from_manifest({"apiVersion": "v1", "kind": "Service",
                                 "metadata": {"name": "s", "namespace": "n"},
                                 "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    assert svc == Service("s", "n", {"app": "web"})


@pytest.mark.parametrize(("data", "kind"), [
    pytest.param({"kind": "Node", "metadata": {"name": "n"}}, Node, id="Node"),
    pytest.param({"kind": "Namespace", "metadata": {"name": "n"}}, Namespace, id="Namespace"),
    pytest.param({"kind": "PriorityClass", "metadata": {"name": "p"}, "value": 1}, PriorityClass,
                 id="PriorityClass"),
    pytest.param({"kind": "PodDisruptionBudget", "metadata": {"name": "b"}, "spec": {}},
                 PodDisruptionBudget, id="PodDisruptionBudget"),
    pytest.param({"kind": "Service", "metadata": {"name": "s"}}, Service, id="Service"),
])
def test_parse_object_dispatches_by_kind(data: dict, kind: type) -> None:
    assert type(parse_object(data)) is kind
