"""Kubernetes objects built from manifests: quantities, selectors, taints, pods, nodes."""

from scheduler_core.api.affinity import (
    Affinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
    WeightedNodeTerm,
    WeightedPodAffinityTerm,
)
from scheduler_core.api.manifest import (
    GROUP_KINDS,
    MODELLED_KINDS,
    UNMODELLED_KINDS,
    UnsupportedKindError,
    parse_object,
)
from scheduler_core.api.node import ImageState, Node
from scheduler_core.api.objects import Namespace, PodDisruptionBudget, PriorityClass, Service
from scheduler_core.api.pod import DEFAULT_SCHEDULER_NAME, Container, HostPort, Pod, PodSpec
from scheduler_core.api.podgroup import CompositePodGroup, PodGroup
from scheduler_core.api.quantity import Quantity, parse_quantity
from scheduler_core.api.selectors import (
    LabelRequirement,
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Taint,
    Toleration,
)

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "GROUP_KINDS",
    "MODELLED_KINDS",
    "UNMODELLED_KINDS",
    "Affinity",
    "CompositePodGroup",
    "Container",
    "HostPort",
    "ImageState",
    "LabelRequirement",
    "LabelSelector",
    "Namespace",
    "Node",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "Pod",
    "PodAffinityTerm",
    "PodDisruptionBudget",
    "PodGroup",
    "PodSpec",
    "PriorityClass",
    "Quantity",
    "Service",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "UnsupportedKindError",
    "WeightedNodeTerm",
    "WeightedPodAffinityTerm",
    "parse_object",
    "parse_quantity",
]
