"""Bad manifests: every problem is a ManifestError whose message names file, object and field.

Messages are asserted whole (or, for long "expected one of" lists, by a precise prefix), so a
change in wording is a deliberate, reviewed change.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_core.api import (
    MODELLED_KINDS,
    UNMODELLED_KINDS,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    Service,
    UnsupportedKindError,
    parse_object,
)
from scheduler_core.errors import ManifestError

# ------------------------------------------------------------------------------ builders
NODE_AFFINITY = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
TERM0 = f"{NODE_AFFINITY}.nodeSelectorTerms[0]"
POD = "templates/pod.yaml: pod default/web-1: "
NODE = "templates/node.yaml: node n1: "


def pod(spec: dict | None = None, *, container: dict | None = None, meta: dict | None = None,
        **root: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c", "image": "img", "resources": {"requests": {"cpu": "1"}}}
    c.update(container or {})
    data: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": "web-1", **(meta or {})},
                            "spec": {"containers": [c], **(spec or {})}}
    data.update(root)
    return data


def node(spec: dict | None = None, status: dict | None = None, *, meta: dict | None = None,
         **root: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                            "metadata": {"name": "n1", **(meta or {})},
                            "spec": spec or {}, "status": status or {}}
    data.update(root)
    return data


def node_term(*exprs: dict, fields: list[dict] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields is not None:
        t["matchFields"] = fields
    return {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [t]}}}}


def spread(*constraints: dict) -> dict[str, Any]:
    base = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    return {"topologySpreadConstraints": [{**base, **c} for c in constraints]}


def pdb(spec: dict, **root: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "budget"}, "spec": spec, **root}


def pclass(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "high"}, **fields}


def service(spec: dict, **root: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}, "spec": spec,
            **root}


Parser = Callable[..., Any]

# kind label -> (parser, the source file name the test passes in)
_PARSERS: dict[str, tuple[Parser, str]] = {
    "pod": (Pod.from_manifest, "templates/pod.yaml"),
    "node": (Node.from_manifest, "templates/node.yaml"),
    "namespace": (Namespace.from_manifest, "templates/ns.yaml"),
    "priorityclass": (PriorityClass.from_manifest, "templates/pc.yaml"),
    "pdb": (PodDisruptionBudget.from_manifest, "templates/pdb.yaml"),
    "service": (Service.from_manifest, "templates/svc.yaml"),
    "any": (parse_object, "templates/x.yaml"),
}


def case(name: str, kind: str, data: Any, message: str) -> Any:
    return pytest.param(kind, data, message, id=name)


POD_PARSE = "pod"
NODE_PARSE = "node"

# --------------------------------------------------------------------- whole messages
WHOLE_MESSAGES = [
    # ---- Pod: quantities
    case("pod-cpu-invalid-quantity", POD_PARSE,
         pod(container={"resources": {"requests": {"cpu": "12x"}}}),
         POD + 'spec.containers[0].resources.requests.cpu: invalid quantity "12x"'),
    case("pod-negative-memory", POD_PARSE,
         pod(container={"resources": {"requests": {"memory": "-1Gi"}}}),
         POD + 'spec.containers[0].resources.requests.memory: must be non-negative, '
               'got "-1Gi"'),
    case("pod-negative-limit", POD_PARSE,
         pod(container={"resources": {"limits": {"cpu": -2}}}),
         POD + 'spec.containers[0].resources.limits.cpu: must be non-negative, got "-2"'),
    case("pod-quantity-bool", POD_PARSE,
         pod(container={"resources": {"requests": {"cpu": True}}}),
         POD + "spec.containers[0].resources.requests.cpu: invalid quantity True: "
               "expected a string or number"),
    case("pod-quantity-list", POD_PARSE,
         pod(container={"resources": {"requests": {"cpu": ["1"]}}}),
         POD + "spec.containers[0].resources.requests.cpu: invalid quantity ['1']: "
               "expected a string or number"),
    case("pod-requests-list", POD_PARSE,
         pod(container={"resources": {"requests": ["cpu"]}}),
         POD + "spec.containers[0].resources.requests: expected a mapping of quantities, "
               "got a list"),
    case("pod-resource-name-not-string", POD_PARSE,
         pod(container={"resources": {"requests": {1: "1"}}}),
         POD + "spec.containers[0].resources.requests: expected resource names as keys, "
               "got an integer (1)"),
    case("pod-overhead-invalid", POD_PARSE, pod({"overhead": {"memory": "1.2.3"}}),
         POD + 'spec.overhead.memory: invalid quantity "1.2.3"'),
    # ---- Pod: types
    case("pod-priority-string", POD_PARSE, pod({"priority": "10"}),
         POD + 'spec.priority: expected an integer, got a string ("10")'),
    case("pod-priority-float", POD_PARSE, pod({"priority": 1.5}),
         POD + "spec.priority: expected an integer, got a number (1.5)"),
    case("pod-priority-bool", POD_PARSE, pod({"priority": True}),
         POD + "spec.priority: expected an integer, got a boolean (true)"),
    case("pod-label-value-int", POD_PARSE, pod(meta={"labels": {"app": 1}}),
         POD + "metadata.labels.app: expected a string value, got an integer (1) (quote it)"),
    case("pod-label-value-bool", POD_PARSE, pod(meta={"labels": {"on": True}}),
         POD + "metadata.labels.on: expected a string value, got a boolean (true)"),
    case("pod-label-key-int", POD_PARSE, pod(meta={"labels": {1: "a"}}),
         POD + "metadata.labels: expected string keys, got an integer (1)"),
    case("pod-labels-list", POD_PARSE, pod(meta={"labels": ["app=web"]}),
         POD + "metadata.labels: expected a mapping of strings, got a list"),
    case("pod-node-selector-list", POD_PARSE, pod({"nodeSelector": ["zone"]}),
         POD + "spec.nodeSelector: expected a mapping of strings, got a list"),
    case("pod-containers-mapping", POD_PARSE, pod({"containers": {"name": "c"}}),
         POD + "spec.containers: expected a list, got a mapping"),
    case("pod-container-not-mapping", POD_PARSE, pod({"containers": ["c"]}),
         POD + 'spec.containers[0]: expected a mapping, got a string ("c")'),
    case("pod-spec-list", POD_PARSE, {"metadata": {"name": "web-1"}, "spec": []},
         POD + "spec: expected a mapping, got a list"),
    case("pod-image-int", POD_PARSE, pod(container={"image": 5}),
         POD + "spec.containers[0].image: expected a string, got an integer (5)"),
    case("pod-scheduler-name-list", POD_PARSE, pod({"schedulerName": ["a"]}),
         POD + "spec.schedulerName: expected a string, got a list"),
    case("pod-not-a-mapping", POD_PARSE, ["kind", "Pod"],
         "templates/pod.yaml: pod: expected a mapping for a Pod manifest"),
    # ---- Pod: structure
    case("pod-missing-name", POD_PARSE, {"spec": {"containers": [{"name": "c"}]}},
         "templates/pod.yaml: pod default/<unnamed>: metadata.name: required field is missing "
         "(name or generateName)"),
    case("pod-missing-containers", POD_PARSE, {"metadata": {"name": "web-1"}, "spec": {}},
         POD + "spec.containers: required field is missing (at least one container)"),
    case("pod-empty-containers", POD_PARSE, pod({"containers": []}),
         POD + "spec.containers: required field is missing (at least one container)"),
    case("pod-missing-spec", POD_PARSE, {"metadata": {"name": "web-1"}},
         POD + "spec.containers: required field is missing (at least one container)"),
    case("pod-wrong-kind", POD_PARSE, pod(kind="Node"),
         POD + 'kind: expected "Pod", got "Node"'),
    case("pod-unknown-toleration-field", POD_PARSE,
         pod({"tolerations": [{"key": "k", "tolerationSecs": 5}]}),
         POD + "spec.tolerations[0].tolerationSecs: unknown field (expected one of: effect, "
               "key, operator, tolerationSeconds, value)"),
    case("pod-unknown-root-field", POD_PARSE, pod(specs={}),
         POD + "specs: unknown field (expected one of: apiVersion, kind, metadata, spec, "
               "status)"),
    case("pod-non-string-root-key", POD_PARSE, {**pod(), 1: "x"},
         POD + "1: unknown field (expected one of: apiVersion, kind, metadata, spec, status)"),
    case("pod-restart-policy-on-container", POD_PARSE, pod(container={"restartPolicy": "Always"}),
         POD + "spec.containers[0].restartPolicy: only Always is allowed, and only on init "
               "containers"),
    case("pod-init-restart-policy-never", POD_PARSE,
         pod({"initContainers": [{"name": "i", "restartPolicy": "Never"}]}),
         POD + "spec.initContainers[0].restartPolicy: only Always is allowed, and only on init "
               "containers"),
    case("pod-host-port-too-large", POD_PARSE, pod(container={"ports": [{"hostPort": 70000}]}),
         POD + "spec.containers[0].ports[0].hostPort: must be between 1 and 65535, got 70000"),
    case("pod-host-port-negative", POD_PARSE, pod(container={"ports": [{"hostPort": -1}]}),
         POD + "spec.containers[0].ports[0].hostPort: must be >= 0, got -1"),
    case("pod-host-port-string", POD_PARSE, pod(container={"ports": [{"hostPort": "80"}]}),
         POD + 'spec.containers[0].ports[0].hostPort: expected an integer, got a string ("80")'),
    case("pod-bad-protocol", POD_PARSE,
         pod(container={"ports": [{"hostPort": 80, "protocol": "tcp"}]}),
         POD + 'spec.containers[0].ports[0].protocol: unsupported value "tcp" (expected one '
               "of: TCP, UDP, SCTP)"),
    case("pod-bad-preemption-policy", POD_PARSE, pod({"preemptionPolicy": "Always"}),
         POD + 'spec.preemptionPolicy: unsupported value "Always" (expected '
               "PreemptLowerPriority or Never)"),
    case("pod-scheduling-gate-without-name", POD_PARSE, pod({"schedulingGates": [{}]}),
         POD + "spec.schedulingGates[0].name: required field is missing"),
    # ---- Pod: tolerations
    case("toleration-bad-operator", POD_PARSE,
         pod({"tolerations": [{"key": "k", "operator": "In", "value": "v"}]}),
         POD + 'spec.tolerations[0].operator: unsupported value "In" (expected Equal or '
               "Exists)"),
    case("toleration-exists-with-value", POD_PARSE,
         pod({"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]}),
         POD + "spec.tolerations[0].value: must be empty when operator is Exists"),
    case("toleration-empty-key-equal", POD_PARSE,
         pod({"tolerations": [{"operator": "Equal", "value": "v"}]}),
         POD + "spec.tolerations[0].operator: must be Exists when key is empty"),
    case("toleration-empty-key-default-operator", POD_PARSE,
         pod({"tolerations": [{"key": "", "effect": "NoSchedule"}]}),
         POD + "spec.tolerations[0].operator: must be Exists when key is empty"),
    case("toleration-bad-effect", POD_PARSE,
         pod({"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoRun"}]}),
         POD + 'spec.tolerations[0].effect: unsupported value "NoRun" (expected one of: '
               "NoSchedule, PreferNoSchedule, NoExecute)"),
    # ---- Pod: node affinity
    case("node-selector-bad-operator", POD_PARSE,
         pod(node_term({"key": "k", "operator": "Like", "values": ["a"]})),
         POD + f'{TERM0}.matchExpressions[0].operator: unsupported operator "Like" (expected '
               "one of: In, NotIn, Exists, DoesNotExist, Gt, Lt)"),
    case("node-selector-gt-two-values", POD_PARSE,
         pod(node_term({"key": "k", "operator": "Gt", "values": ["1", "2"]})),
         POD + f"{TERM0}.matchExpressions[0].values: must have exactly one value for "
               "operator Gt"),
    case("node-selector-lt-not-integer", POD_PARSE,
         pod(node_term({"key": "k", "operator": "Lt", "values": ["1.5"]})),
         POD + f'{TERM0}.matchExpressions[0].values: must be an integer for operator Lt, '
               'got "1.5"'),
    case("node-selector-in-without-values", POD_PARSE,
         pod(node_term({"key": "k", "operator": "In"})),
         POD + f"{TERM0}.matchExpressions[0].values: must be non-empty for operator In"),
    case("node-selector-exists-with-values", POD_PARSE,
         pod(node_term({"key": "k", "operator": "Exists", "values": ["a"]})),
         POD + f"{TERM0}.matchExpressions[0].values: must be empty for operator Exists"),
    case("node-selector-value-int", POD_PARSE,
         pod(node_term({"key": "k", "operator": "In", "values": [1]})),
         POD + f"{TERM0}.matchExpressions[0].values[0]: expected a string, got an integer (1)"),
    case("node-selector-missing-key", POD_PARSE,
         pod(node_term({"operator": "Exists"})),
         POD + f"{TERM0}.matchExpressions[0].key: required field is missing"),
    case("match-fields-other-key", POD_PARSE,
         pod(node_term(fields=[{"key": "metadata.labels", "operator": "In", "values": ["a"]}])),
         POD + f'{TERM0}.matchFields[0].key: unsupported field "metadata.labels" (only '
               "metadata.name)"),
    case("match-fields-exists", POD_PARSE,
         pod(node_term(fields=[{"key": "metadata.name", "operator": "Exists"}])),
         POD + f'{TERM0}.matchFields[0].operator: unsupported operator "Exists" for '
               "matchFields (expected In or NotIn)"),
    case("match-fields-two-names", POD_PARSE,
         pod(node_term(fields=[{"key": "metadata.name", "operator": "In",
                                "values": ["a", "b"]}])),
         POD + f"{TERM0}.matchFields[0].values: must have exactly one value for matchFields"),
    case("node-affinity-missing-terms", POD_PARSE,
         pod({"affinity": {"nodeAffinity": {
             "requiredDuringSchedulingIgnoredDuringExecution": {"terms": []}}}}),
         POD + f"{NODE_AFFINITY}.terms: unknown field (expected one of: nodeSelectorTerms)"),
    case("preferred-weight-zero", POD_PARSE,
         pod({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
             {"weight": 0, "preference": {}}]}}}),
         POD + "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
               ".weight: must be in the range 1-100, got 0"),
    case("pod-affinity-missing-topology-key", POD_PARSE,
         pod({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
             {"labelSelector": {}}]}}}),
         POD + "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
               ".topologyKey: required field is missing"),
    case("pod-anti-affinity-bad-selector-operator", POD_PARSE,
         pod({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
             {"topologyKey": "zone", "labelSelector": {"matchExpressions": [
                 {"key": "a", "operator": "Gt", "values": ["1"]}]}}]}}}),
         POD + "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
               '.labelSelector.matchExpressions[0].operator: unsupported operator "Gt" '
               "(expected one of: In, NotIn, Exists, DoesNotExist)"),
    # ---- Pod: topology spread
    case("spread-max-skew-zero", POD_PARSE, pod(spread({"maxSkew": 0})),
         POD + "spec.topologySpreadConstraints[0].maxSkew: must be greater than zero, got 0"),
    case("spread-max-skew-missing", POD_PARSE, pod(spread({"maxSkew": None})),
         POD + "spec.topologySpreadConstraints[0].maxSkew: required field is missing"),
    case("spread-bad-when-unsatisfiable", POD_PARSE,
         pod(spread({"whenUnsatisfiable": "Sometimes"})),
         POD + 'spec.topologySpreadConstraints[0].whenUnsatisfiable: unsupported value '
               '"Sometimes" (expected one of: DoNotSchedule, ScheduleAnyway)'),
    case("spread-min-domains-schedule-anyway", POD_PARSE,
         pod(spread({"whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2})),
         POD + "spec.topologySpreadConstraints[0].minDomains: can only be set when "
               "whenUnsatisfiable is DoNotSchedule"),
    case("spread-min-domains-zero", POD_PARSE, pod(spread({"minDomains": 0})),
         POD + "spec.topologySpreadConstraints[0].minDomains: must be greater than zero, got 0"),
    case("spread-empty-topology-key", POD_PARSE, pod(spread({"topologyKey": ""})),
         POD + "spec.topologySpreadConstraints[0].topologyKey: must be non-empty"),
    case("spread-bad-node-affinity-policy", POD_PARSE,
         pod(spread({"nodeAffinityPolicy": "Always"})),
         POD + 'spec.topologySpreadConstraints[0].nodeAffinityPolicy: unsupported value '
               '"Always" (expected Honor or Ignore)'),
    case("spread-duplicate", POD_PARSE, pod(spread({}, {"maxSkew": 2})),
         POD + 'spec.topologySpreadConstraints[1]: duplicate constraint for topologyKey "zone" '
               "and whenUnsatisfiable DoNotSchedule"),
    # ---- Node
    case("node-bad-taint-effect", NODE_PARSE,
         node({"taints": [{"key": "k", "effect": "NoWay"}]}),
         NODE + 'spec.taints[0].effect: unsupported value "NoWay" (expected one of: '
                "NoSchedule, PreferNoSchedule, NoExecute)"),
    case("node-taint-missing-effect", NODE_PARSE, node({"taints": [{"key": "k"}]}),
         NODE + "spec.taints[0].effect: required field is missing"),
    case("node-taint-empty-key", NODE_PARSE,
         node({"taints": [{"key": "", "effect": "NoSchedule"}]}),
         NODE + "spec.taints[0].key: must be non-empty"),
    case("node-allocatable-invalid", NODE_PARSE, node(status={"allocatable": {"cpu": "4x"}}),
         NODE + 'status.allocatable.cpu: invalid quantity "4x"'),
    case("node-capacity-negative", NODE_PARSE, node(status={"capacity": {"pods": "-1"}}),
         NODE + 'status.capacity.pods: must be non-negative, got "-1"'),
    case("node-unschedulable-string", NODE_PARSE, node({"unschedulable": "yes"}),
         NODE + 'spec.unschedulable: expected true or false, got a string ("yes")'),
    case("node-image-size-negative", NODE_PARSE,
         node(status={"images": [{"names": ["a"], "sizeBytes": -5}]}),
         NODE + "status.images[0].sizeBytes: must be >= 0, got -5"),
    case("node-image-names-string", NODE_PARSE,
         node(status={"images": [{"names": "a", "sizeBytes": 5}]}),
         NODE + 'status.images[0].names: expected a list, got a string ("a")'),
    case("node-labels-int-value", NODE_PARSE, node(meta={"labels": {"cores": 8}}),
         NODE + "metadata.labels.cores: expected a string value, got an integer (8) (quote it)"),
    case("node-missing-name", NODE_PARSE, {"kind": "Node", "metadata": {}},
         "templates/node.yaml: node <unnamed>: metadata.name: required field is missing "
         "(name or generateName)"),
    case("node-wrong-kind", NODE_PARSE, node(kind="Pod"),
         NODE + 'kind: expected "Node", got "Pod"'),
    case("node-namespace-not-in-name", NODE_PARSE,
         node(meta={"namespace": "x"}, status={"allocatable": {"cpu": "x"}}),
         NODE + 'status.allocatable.cpu: invalid quantity "x"'),
    case("node-not-a-mapping", NODE_PARSE, "Node",
         "templates/node.yaml: node: expected a mapping for a Node manifest"),
    # ---- Namespace
    case("namespace-missing-name", "namespace", {"kind": "Namespace"},
         "templates/ns.yaml: namespace <unnamed>: metadata.name: required field is missing"),
    case("namespace-empty-name", "namespace",
         {"kind": "Namespace", "metadata": {"name": ""}},
         "templates/ns.yaml: namespace <unnamed>: metadata.name: must be non-empty"),
    case("namespace-unknown-field", "namespace",
         {"kind": "Namespace", "metadata": {"name": "team"}, "data": {}},
         "templates/ns.yaml: namespace team: data: unknown field (expected one of: apiVersion, "
         "kind, metadata, spec, status)"),
    case("namespace-labels-list", "namespace",
         {"kind": "Namespace", "metadata": {"name": "team", "labels": []}},
         "templates/ns.yaml: namespace team: metadata.labels: expected a mapping of strings, "
         "got a list"),
    # ---- PriorityClass
    case("priority-class-over-1e9", "priorityclass", pclass(value=1_000_000_001),
         "templates/pc.yaml: priorityclass high: value: must be <= 1000000000 for user "
         "classes, got 1000000001"),
    case("priority-class-missing-value", "priorityclass", pclass(),
         "templates/pc.yaml: priorityclass high: value: required field is missing"),
    case("priority-class-value-string", "priorityclass", pclass(value="100"),
         'templates/pc.yaml: priorityclass high: value: expected an integer, got a string '
         '("100")'),
    case("priority-class-bad-policy", "priorityclass",
         pclass(value=1, preemptionPolicy="Sometimes"),
         'templates/pc.yaml: priorityclass high: preemptionPolicy: unsupported value '
         '"Sometimes"'),
    case("priority-class-global-default-string", "priorityclass",
         pclass(value=1, globalDefault="true"),
         'templates/pc.yaml: priorityclass high: globalDefault: expected true or false, got '
         'a string ("true")'),
    # ---- PodDisruptionBudget
    case("pdb-both-min-and-max", "pdb",
         pdb({"minAvailable": 1, "maxUnavailable": "10%"}),
         "templates/pdb.yaml: poddisruptionbudget default/budget: spec.maxUnavailable: "
         "minAvailable and maxUnavailable are exclusive"),
    case("pdb-percentage-without-sign", "pdb",
         pdb({"minAvailable": "50"}),
         "templates/pdb.yaml: poddisruptionbudget default/budget: spec.minAvailable: expected "
         'an integer or a percentage like "50%", got "50"'),
    case("pdb-percentage-not-number", "pdb",
         pdb({"maxUnavailable": "half%"}),
         "templates/pdb.yaml: poddisruptionbudget default/budget: spec.maxUnavailable: "
         'expected an integer or a percentage like "50%", got "half%"'),
    case("pdb-percentage-non-ascii-digit", "pdb",
         pdb({"maxUnavailable": "\u00b2%"}),
         "templates/pdb.yaml: poddisruptionbudget default/budget: spec.maxUnavailable: "
         'expected an integer or a percentage like "50%", got "\u00b2%"'),
    case("pdb-percentage-over-100", "pdb",
         pdb({"maxUnavailable": "101%"}),
         "templates/pdb.yaml: poddisruptionbudget default/budget: spec.maxUnavailable: "
         'must not be greater than 100%, got "101%"'),
    case("pdb-negative", "pdb", pdb({"minAvailable": -1}),
         "templates/pdb.yaml: poddisruptionbudget default/budget: spec.minAvailable: must be "
         ">= 0, got -1"),
    case("pdb-float", "pdb", pdb({"minAvailable": 0.5}),
         "templates/pdb.yaml: poddisruptionbudget default/budget: spec.minAvailable: expected "
         "an integer or a percentage string"),
    case("pdb-bad-selector", "pdb",
         pdb({"selector": {"matchLabels": {"app": None}}}),
         "templates/pdb.yaml: poddisruptionbudget default/budget: spec.selector.matchLabels.app:"
         " expected a string value, got null"),
    case("pdb-disrupted-pods-list", "pdb",
         pdb({}, status={"disruptedPods": ["p1"]}),
         "templates/pdb.yaml: poddisruptionbudget default/budget: status.disruptedPods: "
         "expected a mapping of pod names to times"),
    # ---- Service
    case("service-selector-bool", "service", service({"selector": {"app": True}}),
         "templates/svc.yaml: service default/svc: spec.selector.app: expected a string value, "
         "got a boolean (true)"),
    case("service-wrong-kind", "service", service({}, kind="Pod"),
         'templates/svc.yaml: service default/svc: kind: expected "Service", got "Pod"'),
    case("service-unknown-spec-field", "service", service({"selectr": {}}),
         "templates/svc.yaml: service default/svc: spec.selectr: unknown field (expected one "
         "of: clusterIP, clusterIPs, externalName, externalTrafficPolicy, internalTrafficPolicy,"
         " ipFamilies, ipFamilyPolicy, ports, publishNotReadyAddresses, selector, "
         "sessionAffinity, type)"),
    case("service-missing-name", "service", {"kind": "Service", "metadata": {}},
         "templates/svc.yaml: service default/<unnamed>: metadata.name: required field is "
         "missing"),
    # ---- parse_object dispatch
    case("parse-object-unknown-kind", "any", {"kind": "Foo"},
         "templates/x.yaml: kind: unknown kind 'Foo' (expected one of: Node, Pod, Namespace, "
         "PriorityClass, PodDisruptionBudget, Service, PersistentVolume, "
         "PersistentVolumeClaim, StorageClass, CSINode, CSIDriver)"),
    case("parse-object-missing-kind", "any", {"metadata": {"name": "x"}},
         "templates/x.yaml: kind: unknown kind None (expected one of: Node, Pod, Namespace, "
         "PriorityClass, PodDisruptionBudget, Service, PersistentVolume, "
         "PersistentVolumeClaim, StorageClass, CSINode, CSIDriver)"),
    case("parse-object-kind-list", "any", {"kind": ["Pod"]},
         "templates/x.yaml: kind: unknown kind ['Pod'] (expected one of: Node, Pod, Namespace, "
         "PriorityClass, PodDisruptionBudget, Service, PersistentVolume, "
         "PersistentVolumeClaim, StorageClass, CSINode, CSIDriver)"),
    case("parse-object-not-a-mapping", "any", [1, 2],
         "templates/x.yaml: expected a mapping (a Kubernetes object)"),
    case("parse-object-dispatches-pod", "any",
         pod(container={"resources": {"requests": {"cpu": "12x"}}}),
         'templates/x.yaml: pod default/web-1: spec.containers[0].resources.requests.cpu: '
         'invalid quantity "12x"'),
]

@pytest.mark.parametrize(("kind", "data", "message"), WHOLE_MESSAGES)
def test_whole_message(kind: str, data: Any, message: str) -> None:
    parser, source = _PARSERS[kind]
    before = copy.deepcopy(data)
    with pytest.raises(ManifestError) as info:
        parser(data, source=source)
    assert str(info.value) == message
    assert info.value.source == source
    assert data == before  # parsing never mutates the manifest


def test_at_least_twenty_distinct_bad_inputs() -> None:
    assert len({p.id for p in WHOLE_MESSAGES}) == len(WHOLE_MESSAGES) >= 20
    assert len({p.values[2] for p in WHOLE_MESSAGES}) >= 20


# --------------------------------------------------------------------- precise prefixes
def test_unknown_pod_spec_field_prefix() -> None:
    with pytest.raises(ManifestError) as info:
        Pod.from_manifest(pod({"nodeNmae": "n1"}), source="templates/pod.yaml")
    msg = str(info.value)
    assert msg.startswith(POD + "spec.nodeNmae: unknown field (expected one of: "
                                "activeDeadlineSeconds, affinity, ")
    assert msg.endswith(", volumes, workloadRef)")
    assert info.value.field == "spec.nodeNmae"
    assert info.value.obj == "pod default/web-1"
    assert info.value.problem.startswith("unknown field (expected one of: ")


def test_case_folded_duplicate_is_an_unknown_field() -> None:
    with pytest.raises(ManifestError) as info:
        Pod.from_manifest(pod({"nodeName": "a", "NodeName": "b"}))
    assert str(info.value).startswith(
        "pod default/web-1: spec.NodeName: unknown field (expected one of: ")


def test_unknown_container_field_prefix() -> None:
    with pytest.raises(ManifestError) as info:
        Pod.from_manifest(pod(container={"imagee": "x"}))
    assert str(info.value).startswith(
        "pod default/web-1: spec.containers[0].imagee: unknown field (expected one of: args, "
        "command, env, envFrom, image, imagePullPolicy, lifecycle, livenessProbe, name, ports, ")


def test_no_source_means_no_file_prefix() -> None:
    with pytest.raises(ManifestError) as info:
        Pod.from_manifest(pod({"priority": "x"}))
    assert str(info.value) == 'pod default/web-1: spec.priority: expected an integer, got a ' \
                              'string ("x")'
    assert info.value.source is None


def test_located_adds_line_and_keeps_existing_parts() -> None:
    err = ManifestError("bad", field="spec.x", obj="pod a/b")
    located = err.located(source="f.yaml", line=12, obj="ignored")
    assert str(located) == "f.yaml:12: pod a/b: spec.x: bad"
    assert str(located.located(source="other.yaml")) == "f.yaml:12: pod a/b: spec.x: bad"


def test_pod_namespace_in_message() -> None:
    with pytest.raises(ManifestError) as info:
        Pod.from_manifest(pod({"priority": "x"}, meta={"namespace": "team-a"}))
    assert str(info.value).startswith("pod team-a/web-1: spec.priority: ")
    with pytest.raises(ManifestError) as info:
        Pod.from_manifest(pod({"priority": "x"}), default_namespace="bench")
    assert str(info.value).startswith("pod bench/web-1: spec.priority: ")


# --------------------------------------------------------------------- unmodelled kinds
@pytest.mark.parametrize("kind", ["CSIStorageCapacity", "VolumeAttachment", "ResourceClaim",
                                  "Deployment"])
def test_unmodelled_kind_raises_unsupported_kind_error(kind: str) -> None:
    assert kind in UNMODELLED_KINDS
    with pytest.raises(UnsupportedKindError) as info:
        parse_object({"apiVersion": "v1", "kind": kind, "metadata": {"name": "c"}},
                     source="templates/pvc.yaml")
    assert isinstance(info.value, ManifestError)
    assert str(info.value) == (f"templates/pvc.yaml: kind: kind {kind} is not modelled by "
                               "scheduler_core")


def test_unknown_kind_is_not_unsupported_kind_error() -> None:
    with pytest.raises(ManifestError) as info:
        parse_object({"kind": "Gadget"})
    assert type(info.value) is ManifestError


def test_modelled_and_unmodelled_kinds_are_disjoint() -> None:
    assert not set(MODELLED_KINDS) & set(UNMODELLED_KINDS)
    assert MODELLED_KINDS == ("Node", "Pod", "Namespace", "PriorityClass",
                              "PodDisruptionBudget", "Service", "PersistentVolume",
                              "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver")


# --------------------------------------------------------------------- fuzzing
# Real field names make the junk reach deep into the parsers, not stop at the root.
_FIELD_NAMES = [
    "apiVersion", "kind", "metadata", "spec", "status", "name", "generateName", "namespace",
    "labels", "annotations", "uid", "ownerReferences", "deletionTimestamp", "containers",
    "initContainers", "nodeName", "nodeSelector", "affinity", "tolerations", "schedulerName",
    "priority", "preemptionPolicy", "overhead", "topologySpreadConstraints", "schedulingGates",
    "volumes", "image", "resources", "requests", "limits", "ports", "restartPolicy", "hostPort",
    "hostIP", "protocol", "key", "operator", "value", "values", "effect", "nodeAffinity",
    "podAffinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
    "preferredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", "matchExpressions",
    "matchFields", "weight", "preference", "podAffinityTerm", "labelSelector", "topologyKey",
    "namespaceSelector", "matchLabels", "maxSkew", "whenUnsatisfiable", "minDomains",
    "nodeAffinityPolicy", "taints", "unschedulable", "allocatable", "capacity", "images",
    "names", "sizeBytes", "nominatedNodeName", "persistentVolumeClaim", "cpu", "memory",
    "NodeName", "CONTAINERS",
]
_scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
            | st.text(max_size=6)
            | st.sampled_from(["Pod", "Node", "In", "Exists", "Gt", "1", "100m", "-1",
                               "NoSchedule", "DoNotSchedule", "Always", "metadata.name", "50%"]))
_keys = st.sampled_from(_FIELD_NAMES) | st.text(max_size=4) | st.integers(-2, 2) | st.none()
_junk = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=20)

_VALID_POD = pod({
    "initContainers": [{"name": "i", "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "1"}}}],
    "nodeSelector": {"a": "b"}, "priority": 1, "overhead": {"cpu": "1"},
    "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
    **node_term({"key": "k", "operator": "Gt", "values": ["1"]},
                fields=[{"key": "metadata.name", "operator": "In", "values": ["n"]}]),
    **spread({"labelSelector": {"matchLabels": {"a": "b"}}, "minDomains": 1}),
    "schedulingGates": [{"name": "g"}],
}, container={"ports": [{"containerPort": 1, "hostPort": 2}]})
_VALID_POD["spec"]["affinity"]["podAntiAffinity"] = {
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "podAffinityTerm": {"topologyKey": "zone",
                                          "labelSelector": {"matchLabels": {"a": "b"}}}}]}
_VALID_NODE = node({"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
                   {"capacity": {"cpu": "4"}, "images": [{"names": ["a:1"], "sizeBytes": 10}]},
                   meta={"labels": {"zone": "a"}})


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def _mutated(draw: st.DrawFn, base: dict) -> dict:
    """A valid manifest with one to three places replaced by junk (or a junk key added)."""
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(data)[1:]))
        parent: Any = data
        for step in path[:-1]:
            parent = parent[step]
        target = parent[path[-1]]
        if isinstance(target, dict) and draw(st.booleans()):
            target[draw(_keys)] = draw(_junk)
        else:
            parent[path[-1]] = draw(_junk)
    return data


def _only_manifest_errors(parser: Parser, data: Any) -> None:
    try:
        parser(data, source="fuzz.yaml")
    except ManifestError as exc:
        assert str(exc).startswith("fuzz.yaml: ")


def test_fuzz_bases_are_valid() -> None:
    p = Pod.from_manifest(_VALID_POD)
    assert p.spec.requests == {"cpu": 3000}
    assert Node.from_manifest(_VALID_NODE).allocatable == {"cpu": 4000}
    for data in _VALID_SMALL_KINDS:
        parse_object(data)


_FUZZ = settings(max_examples=150, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_FUZZ
@given(_junk)
def test_random_junk_gives_only_manifest_errors(data: Any) -> None:
    for parser in (Pod.from_manifest, Node.from_manifest, parse_object):
        _only_manifest_errors(parser, data)


@_FUZZ
@given(st.dictionaries(st.sampled_from(["apiVersion", "kind", "metadata", "spec", "status"]),
                       _junk, max_size=5))
def test_junk_under_real_root_keys_gives_only_manifest_errors(data: dict) -> None:
    _only_manifest_errors(Pod.from_manifest, data)
    _only_manifest_errors(Node.from_manifest, data)


@_FUZZ
@given(_mutated(_VALID_POD))
def test_mutated_pod_gives_only_manifest_errors(data: dict) -> None:
    _only_manifest_errors(Pod.from_manifest, data)


@_FUZZ
@given(_mutated(_VALID_NODE))
def test_mutated_node_gives_only_manifest_errors(data: dict) -> None:
    _only_manifest_errors(Node.from_manifest, data)


_VALID_SMALL_KINDS = [
    pdb({"minAvailable": "50%", "selector": {"matchLabels": {"a": "b"}}},
        status={"disruptedPods": {"p": "2024-01-01T00:00:00Z"}}),
    pclass(value=10, globalDefault=False, preemptionPolicy="Never"),
    service({"selector": {"a": "b"}}),
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"a": "b"}}},
]


@_FUZZ
@given(st.sampled_from(_VALID_SMALL_KINDS).flatmap(_mutated))
def test_mutated_small_kinds_give_only_manifest_errors(data: dict) -> None:
    _only_manifest_errors(parse_object, data)
