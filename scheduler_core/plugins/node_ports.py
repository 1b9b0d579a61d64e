"""NodePorts. Extension points: PreFilter, Filter, EnqueueExtensions.

A wanted ``(hostIP, protocol, hostPort)`` conflicts with one in use on the node when the
protocol and port match and either IP is the wildcard ``0.0.0.0`` or both IPs are equal.
Host ports are ``PodSpec.host_ports``: the regular containers' and the sidecars' (restartable
init containers), as upstream ``util.GetHostPorts`` collects them.

See docs/scheduling-model.md, "NodePorts".
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.pod import HostPort, Pod
from scheduler_core.framework.interface import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    FilterBase,
    Handle,
    PreFilterResult,
    QueueingHint,
    Status,
)
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import no_args

__all__ = ["ERR_REASON", "NAME", "NodePorts"]

NAME = names.NODE_PORTS
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_STATE_KEY = "PreFilter" + NAME
_WILDCARD_IP = "0.0.0.0"


def _conflict(wanted: HostPort, used: HostPort) -> bool:
    if wanted.protocol != used.protocol or wanted.port != used.port:
        return False
    return wanted.ip == _WILDCARD_IP or used.ip in (wanted.ip, _WILDCARD_IP)


class NodePorts(FilterBase):
    name: ClassVar[str] = NAME
    # upstream's Filter reads what its PreFilter stored: a profile that runs the Filter without
    # the PreFilter fails with this error (docs/fidelity.md, "Filter without its PreFilter")
    filter_needs_pre_filter: ClassVar[str] = (
        "reading \"PreFilterNodePorts\" from cycleState: not found")
    failure: ClassVar[Status] = Status.unschedulable(ERR_REASON, plugin=NAME)
    # its Filter reads only the node's own columns, its pods only through the accounting
    # columns (plugins.node_local)
    node_local: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)

    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        ports = pod.spec.host_ports
        if not ports:
            return None, SKIP
        state.write(_STATE_KEY, ports)
        return None, None

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        ports = state.get(_STATE_KEY)
        if ports is None:
            ports = pod.spec.host_ports
        if not ports:
            return None
        conflicts = table.port_conflicts(ports[0], idx)
        for hp in ports[1:]:
            conflicts |= table.port_conflicts(hp, idx)
        return ~conflicts

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Pod events cover assigned and unscheduled (nominated) pods alike upstream.
        return [
            ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE), _after_pod_deleted),
            ClusterEventWithHint(ClusterEvent("UnscheduledPod", ActionType.DELETE),
                                 _after_pod_deleted),
            ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD)),
        ]


def _after_pod_deleted(pod: Pod, old: Pod, new: Any) -> QueueingHint:
    if not old.node_name and not old.nominated_node_name:
        return QueueingHint.QUEUE_SKIP
    used = old.spec.host_ports
    if not used:
        return QueueingHint.QUEUE_SKIP
    for wanted in pod.spec.host_ports:
        if any(_conflict(wanted, u) for u in used):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
