"""The nominator: pods that preemption nominated to a node, waiting for victims to leave.

kube's ``nominator`` (``backend/queue/nominator.go``): ``node name -> pods`` in nomination
order and ``uid -> node name``. A pod is stored at most once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler_core.api.pod import Pod

__all__ = ["Nominator"]


class Nominator:
    __slots__ = ("_by_node", "_node_of")

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, Pod]] = {}  # insertion-ordered per node
        self._node_of: dict[str, str] = {}

    def add(self, pod: Pod, node_name: str | None = None) -> None:
        """Nominate ``pod`` to ``node_name``.

        ``None`` is kube's ModeNoop: use ``pod.nominated_node_name`` (nothing if empty).
        A string is ModeOverride; ``""`` clears the nomination. Any previous nomination of
        the pod is removed first.
        """
        self.delete(pod)
        name = pod.nominated_node_name if node_name is None else node_name
        if not name:
            return
        self._node_of[pod.uid] = name
        self._by_node.setdefault(name, {})[pod.uid] = pod

    def delete(self, pod: Pod) -> None:
        name = self._node_of.pop(pod.uid, None)
        if name is None:
            return
        pods = self._by_node[name]
        pods.pop(pod.uid, None)
        if not pods:
            del self._by_node[name]

    def update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """kube's ``UpdateNominatedPod``: keep an in-memory nomination when neither version of
        the pod carries ``status.nominatedNodeName`` (the update raced the nomination)."""
        node_name: str | None = None
        old_nnn = old_pod.nominated_node_name if old_pod is not None else ""
        if not old_nnn and not new_pod.nominated_node_name:
            uid = old_pod.uid if old_pod is not None else new_pod.uid
            node_name = self._node_of.get(uid)
        if old_pod is not None:
            self.delete(old_pod)
        self.add(new_pod, node_name)

    def pods_for_node(self, node_name: str) -> list[Pod]:
        pods = self._by_node.get(node_name)
        return list(pods.values()) if pods else []

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def nodes(self) -> list[str]:
        """Node names with at least one nominated pod."""
        return list(self._by_node)

    def __len__(self) -> int:
        return len(self._node_of)
