"""Fuzz quantity and selector parsing and the manifest parsers built on them (issue 16):
any input parses or raises the core's own error (``parse_quantity``: ValueError naming the
quantity; manifests and selectors: ManifestError with a field path); never another exception,
never a hang."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.api import Node, Pod
from scheduler_core.api.quantity import parse_quantity
from scheduler_core.api.selectors import LabelSelector, NodeSelector
from scheduler_core.errors import ManifestError
from tests.fuzz.support import fuzz_settings, no_hang, yaml_values

QUANTITY_PIECES = st.sampled_from(
    ["0", "1", "9", "100", ".", "5", "e", "E", "+", "-", "m", "k", "K", "M", "Mi", "Gi", "Ti",
     "Pi", "Ei", "G", "T", "P", "E", "u", "n", "i", " ", "99999999999999999999", "e308",
     "e-308", "1e18", "x"])
QUANTITIES = (st.lists(QUANTITY_PIECES, max_size=6).map("".join) | st.text(max_size=12)
              | st.integers(-(2**70), 2**70) | st.floats() | st.booleans() | st.none())
KEYS = st.sampled_from(["matchLabels", "matchExpressions", "key", "operator", "values",
                        "nodeSelectorTerms", "matchFields", "In", "NotIn", "Exists",
                        "DoesNotExist", "Gt", "Lt", "metadata.name"])
OPERATORS = st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Foo", ""])


@fuzz_settings()
@given(QUANTITIES)
def test_quantities(raw: object) -> None:
    with no_hang():
        try:
            q = parse_quantity(raw)
        except ValueError as exc:
            assert "quantity" in str(exc)
            return
        assert q is not None


requirement = st.fixed_dictionaries(
    {}, optional={"key": st.text(max_size=10) | yaml_values(max_leaves=2),
                  "operator": OPERATORS | yaml_values(max_leaves=2),
                  "values": st.lists(st.text(max_size=6) | st.integers(), max_size=3)
                  | yaml_values(max_leaves=3)})
label_selector = st.fixed_dictionaries(
    {}, optional={"matchLabels": st.dictionaries(st.text(max_size=6), st.text(max_size=6)
                                                 | yaml_values(max_leaves=2), max_size=3),
                  "matchExpressions": st.lists(requirement, max_size=3)}) | yaml_values(KEYS)
node_selector = st.fixed_dictionaries(
    {}, optional={"nodeSelectorTerms": st.lists(st.fixed_dictionaries(
        {}, optional={"matchExpressions": st.lists(requirement, max_size=3),
                      "matchFields": st.lists(requirement, max_size=2)}), max_size=3)}
) | yaml_values(KEYS)


def _manifest_error(fn, *args, **kw) -> None:
    with no_hang():
        try:
            fn(*args, **kw)
        except ManifestError as exc:
            assert str(exc).strip()


@fuzz_settings()
@given(label_selector)
def test_label_selectors(data: object) -> None:
    _manifest_error(LabelSelector.parse, data)


@fuzz_settings()
@given(node_selector)
def test_node_selectors(data: object) -> None:
    _manifest_error(lambda d: NodeSelector.from_fields(_fields(d)), data)


def _fields(data: object):
    from scheduler_core.api._fields import Fields

    return Fields(data, "nodeSelector", "pod x")


resources = st.dictionaries(st.sampled_from(["cpu", "memory", "pods", "nvidia.com/gpu",
                                             "ephemeral-storage", "x"]), QUANTITIES, max_size=3)
pod = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Pod")},
    optional={
        "metadata": st.fixed_dictionaries(
            {}, optional={"name": st.text(max_size=6), "generateName": st.text(max_size=6),
                          "labels": yaml_values(max_leaves=3)}),
        "spec": st.fixed_dictionaries({}, optional={
            "containers": st.lists(st.fixed_dictionaries(
                {"name": st.text(max_size=4)},
                optional={"resources": st.fixed_dictionaries(
                    {}, optional={"requests": resources, "limits": resources}),
                    "ports": yaml_values(max_leaves=4)}), max_size=2),
            "nodeSelector": yaml_values(max_leaves=3),
            "affinity": st.fixed_dictionaries({}, optional={
                "nodeAffinity": st.fixed_dictionaries({}, optional={
                    "requiredDuringSchedulingIgnoredDuringExecution": node_selector}),
                "podAffinity": yaml_values(KEYS, max_leaves=8)}),
            "tolerations": yaml_values(max_leaves=5),
            "topologySpreadConstraints": st.lists(st.fixed_dictionaries({}, optional={
                "maxSkew": yaml_values(max_leaves=1), "topologyKey": st.text(max_size=5),
                "whenUnsatisfiable": st.sampled_from(["DoNotSchedule", "x"]),
                "labelSelector": label_selector, "minDomains": yaml_values(max_leaves=1)}),
                max_size=2),
            "priority": yaml_values(max_leaves=1),
        })})
node = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Node")},
    optional={"metadata": st.fixed_dictionaries({}, optional={
        "name": st.text(max_size=6), "labels": yaml_values(max_leaves=3)}),
        "spec": st.fixed_dictionaries({}, optional={"taints": yaml_values(max_leaves=5),
                                                    "unschedulable": yaml_values(max_leaves=1)}),
        "status": st.fixed_dictionaries({}, optional={"allocatable": resources,
                                                      "capacity": resources})})


@fuzz_settings()
@given(pod | yaml_values(KEYS))
def test_pod_manifests(data: object) -> None:
    _manifest_error(Pod.from_manifest, data, source="pod.yaml")


@fuzz_settings()
@given(node | yaml_values(KEYS))
def test_node_manifests(data: object) -> None:
    _manifest_error(Node.from_manifest, data, source="node.yaml")
