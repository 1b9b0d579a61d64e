"""Which function prepares and which runs each op type.

``PREPARE[type(op)](ctx, index, op)`` runs for every op before the first one executes and
returns what the op's run step reads back with ``ctx.prepared(index)``;
``RUN[type(op)](ctx, index, op)`` executes the op. An op type missing from ``RUN`` is not
supported (its ``unsupported_reason`` says why).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from workloads.config.ops_groups import CreateCompositePodGroups, CreatePodGroups
from workloads.ops.create import (
    prepare_create_any,
    prepare_create_namespaces,
    prepare_create_nodes,
    prepare_create_pods,
    prepare_update_any,
    run_create_any,
    run_create_namespaces,
    run_create_nodes,
    run_create_pods,
    run_update_any,
)
from workloads.ops.flow import (
    prepare_churn,
    run_barrier,
    run_churn,
    run_delete_pods,
    run_sleep,
    run_start_collecting,
    run_stop_collecting,
)
from workloads.ops.groups import (
    prepare_create_composite_pod_groups,
    prepare_create_pod_groups,
    run_create_pod_groups,
)

__all__ = ["PREPARE", "RUN"]

PREPARE: dict[type, Callable[..., Any]] = {
    CreateNodes: prepare_create_nodes,
    CreateNamespaces: prepare_create_namespaces,
    CreatePods: prepare_create_pods,
    CreateAny: prepare_create_any,
    UpdateAny: prepare_update_any,
    Churn: prepare_churn,
    # createPodGroups runs with the GenericWorkload gate; createCompositePodGroups is
    # validated, then unsupported (no multi-level groups): no RUN entry
    CreatePodGroups: prepare_create_pod_groups,
    CreateCompositePodGroups: prepare_create_composite_pod_groups,
}
RUN: dict[type, Callable[..., None]] = {
    CreateNodes: run_create_nodes,
    CreateNamespaces: run_create_namespaces,
    CreatePods: run_create_pods,
    CreateAny: run_create_any,
    UpdateAny: run_update_any,
    DeletePods: run_delete_pods,
    Churn: run_churn,
    Barrier: run_barrier,
    Sleep: run_sleep,
    StartCollectingMetrics: run_start_collecting,
    StopCollectingMetrics: run_stop_collecting,
    CreatePodGroups: run_create_pod_groups,
}
