"""Mirror every change of a core cluster into the reference scheduler.

The mirror subscribes to the cluster's watch events and queues each change as the request
that repeats it on the reference (``apply``, ``delete``, ``bind`` with the pod's start time);
``flush`` sends the queue in order, consecutive applies and deletes as one request each. What
changes without a watch event is synchronised at each flush: nominations (set by preemption on
the pod in place, as upstream's status patch would be seen) and each PodDisruptionBudget's
``status.disruptionsAllowed`` (the core derives it as the disruption controller would; the
reference is sent the same value, so both judge budgets alike).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler_core.api.pod import Pod
from scheduler_core.cluster.events import ADDED, DELETED, WatchEvent
from scheduler_core.cluster.store import Cluster
from scheduler_core.plugins.default_preemption_pdb import BudgetTracker
from workloads.fidelity.manifests import manifest_of, rfc3339
from workloads.reference.client import ReferenceClient

__all__ = ["Mirror"]


class Mirror:
    """The cluster's changes, queued for the reference (see the module docstring)."""

    def __init__(self, client: ReferenceClient, cluster: Cluster,
                 nominations: Callable[[], dict[str, Pod]]) -> None:
        self.client = client
        self.cluster = cluster
        self._nominations = nominations  # pod key -> pod, every pod nominated now
        self._queue: list[tuple[str, Any]] = []
        self._nominated: dict[str, str] = {}  # pod key -> node, as last sent (nominated only)
        self._allowed: dict[str, int] = {}  # PDB key -> disruptionsAllowed, as last sent
        self._budgets: BudgetTracker | None = None  # the core's counts, once there are PDBs
        self.deleted_pods: list[Pod] = []  # pods deleted since the list was last cleared
        cluster.subscribe(self.on_event)

    def on_event(self, ev: WatchEvent) -> None:
        kind = ev.kind
        if ev.type is DELETED:
            old: Any = ev.old
            ns = getattr(old, "namespace", "")
            self._queue.append(("delete", {"kind": kind, "namespace": ns, "name": old.name}))
            if kind == "Pod":
                self.deleted_pods.append(old)
                self._nominated.pop(old.key, None)
            return
        new: Any = ev.new
        if kind == "Pod" and ev.type is not ADDED and type(ev.old) is not Pod:
            # a bind: the pod turned from unscheduled to assigned
            self._queue.append(("bind", {"namespace": new.namespace, "name": new.name,
                                          "node": new.node_name,
                                          "startTime": rfc3339(new.start_time or 0.0)}))
            return
        if kind == "PodDisruptionBudget":
            self._allowed.pop(f"{new.namespace}/{new.name}", None)
            return  # sent at the flush, with its disruptionsAllowed
        if kind == "Pod":
            self._note_nomination(new)
        self._queue.append(("apply", manifest_of(new)))

    # ------------------------------------------------------------------ sending
    def requests_due(self) -> list[tuple[str, dict[str, Any]]]:
        """The queued changes as requests, in order (consecutive applies and deletes merged
        into one request each), and the queue emptied; for ``ReferenceClient.pipeline``."""
        self._sync_nominations()
        self._sync_budgets()
        queue, self._queue = self._queue, []
        out: list[tuple[str, dict[str, Any]]] = []
        for op, body in queue:
            if op == "bind":
                out.append((op, body))
                continue
            field = "objects" if op == "apply" else "refs"
            if out and out[-1][0] == op:
                out[-1][1][field].append(body)
            else:
                out.append((op, {field: [body]}))
        return out

    def flush(self) -> None:
        """Send the queued changes now."""
        self.client.pipeline(self.requests_due())

    def _note_nomination(self, pod: Pod) -> None:
        if pod.nominated_node_name and not pod.node_name:
            self._nominated[pod.key] = pod.nominated_node_name
        else:
            self._nominated.pop(pod.key, None)

    def _sync_nominations(self) -> None:
        """Resend the pods whose nomination changed in place since last sent: over the
        nominated pods only, never every pod."""
        now = {key: pod.nominated_node_name for key, pod in self._nominations().items()}
        changed = {key for key, node in self._nominated.items() if now.get(key, "") != node}
        changed.update(key for key, node in now.items() if self._nominated.get(key) != node)
        for key in changed:
            pod = self.cluster.pods.get(key)
            if pod is None or pod.node_name:
                self._nominated.pop(key, None)
                continue
            self._note_nomination(pod)
            self._queue.append(("apply", manifest_of(pod)))

    def _sync_budgets(self) -> None:
        if not self.cluster.pdbs and not self._allowed:
            return
        if self._budgets is None:
            self._budgets = BudgetTracker(self.cluster)
        # a budget that selects nothing allows no disruption (absent from the tracker's)
        counted = {f"{b.pdb.namespace}/{b.pdb.name}": b.allowed
                   for b in self._budgets.budgets()}
        for key, pdb in self.cluster.pdbs.items():
            allowed = counted.get(key, 0)
            if self._allowed.get(key) != allowed:
                self._allowed[key] = allowed
                manifest = manifest_of(pdb)
                manifest.setdefault("status", {})["disruptionsAllowed"] = allowed
                self._queue.append(("apply", manifest))
        for key in [k for k in self._allowed if k not in self.cluster.pdbs]:
            del self._allowed[key]
