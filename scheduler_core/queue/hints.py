"""Queueing hints: whether a cluster event may help a pod in the unschedulable pool
(docs/scheduling-model.md, "Requeueing and queueing hints").

Only the pod's *rejector* plugins are asked (its unschedulable and pending plugins), and only
through their registrations matching the event (kube's ``EventsToRegister``). A plugin that
registered no events (no EnqueueExtensions) counts as registered for every event with no hint;
a hint of None means Queue. ``QueueingHints`` holds the registrations and the caches, and
answers for one pod and one event (``worth``) or for the events a pod missed while it was in
flight (``strategy_for_in_flight``). ``cross_topology_pods`` picks the pool members an
assigned pod may help (kube's ``getUnschedulablePodsWithCrossTopologyTerm``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import IntEnum
from itertools import islice
from typing import TYPE_CHECKING, Any

from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import QueueingHint
from scheduler_core.plugins.names import POD_TOPOLOGY_SPREAD

if TYPE_CHECKING:
    from scheduler_core.framework.interface import ClusterEvent, ClusterEventWithHint
    from scheduler_core.queue.queued_pod import QueuedPodInfo

__all__ = ["QueueingHints", "QueueingStrategy", "cross_topology_pods"]


class QueueingStrategy(IntEnum):
    """How a pod leaves the unschedulable pool; larger wins when several events disagree."""

    SKIP = 0  # stay in the unschedulable pool
    AFTER_BACKOFF = 1  # backoffQ if still backing off, else activeQ
    IMMEDIATELY = 2  # activeQ (a Pending plugin said Queue)


_SKIP = QueueingStrategy.SKIP
_INTEREST_CACHE_LIMIT = 1024  # distinct event objects remembered by is_event_of_interest
_AFTER_BACKOFF = QueueingStrategy.AFTER_BACKOFF
_IMMEDIATELY = QueueingStrategy.IMMEDIATELY
_ALWAYS_QUEUE: tuple[None, ...] = (None,)


class QueueingHints:
    """The plugins' registrations, and the answers of their hints.

    Parameters
    ----------
    registrations : mapping
        Plugin name -> its registered ``ClusterEventWithHint`` list.
    enabled : bool
        The SchedulerQueueingHints feature gate. Off: hint functions are not called (every
        matching registration counts as Queue).

    ``unregistered_seen`` becomes True once some pod was rejected or gated by a plugin
    absent from ``registrations``: from then on every event is of interest.
    """

    def __init__(self, registrations: Mapping[str, Sequence[ClusterEventWithHint]],
                 enabled: bool) -> None:
        self.registrations: dict[str, tuple[ClusterEventWithHint, ...]] = {
            name: tuple(regs) for name, regs in registrations.items()
        }
        self.enabled = enabled
        self.unregistered_seen = False
        self._event_fns: dict[ClusterEvent, dict[str, tuple[Any, ...]]] = {}
        # id(event) -> (event kept alive, registered by some plugin): the same few event
        # objects come back on every pod event, and hashing a ClusterEvent runs Python code
        self._interest: dict[int, tuple[ClusterEvent, bool]] = {}

    def fns_for_event(self, event: ClusterEvent) -> dict[str, tuple[Any, ...]]:
        """Plugin -> hint functions of its registrations matching ``event`` (cached)."""
        fns = self._event_fns.get(event)
        if fns is None:
            fns = {}
            for plugin, regs in self.registrations.items():
                matching = tuple(r.hint for r in regs if r.event.matches(event))
                if matching:
                    fns[plugin] = matching
            self._event_fns[event] = fns
        return fns

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """Some plugin registered ``event`` (or a wildcard event, or an unregistered rejector
        was seen): False means the event cannot move any pod."""
        if self.unregistered_seen:
            return True
        hit = self._interest.get(id(event))
        if hit is not None and hit[0] is event:
            return hit[1]
        interest = event.is_wildcard or bool(self.fns_for_event(event))
        if len(self._interest) >= _INTEREST_CACHE_LIMIT:
            self._interest.clear()
        self._interest[id(event)] = (event, interest)
        return interest

    def note_unregistered(self, qpi: QueuedPodInfo) -> None:
        """Record a rejector plugin of ``qpi`` without registrations, if it has one."""
        if self.unregistered_seen:
            return
        registrations = self.registrations
        for plugin in qpi.unschedulable_plugins:
            if plugin not in registrations:
                self.unregistered_seen = True
                return
        for plugin in qpi.pending_plugins:
            if plugin not in registrations:
                self.unregistered_seen = True
                return

    def worth(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any,
              new: Any) -> QueueingStrategy:
        """kube's ``isPodWorthRequeuing``: ask only the rejector plugins' hints."""
        unsched = qpi.unschedulable_plugins
        pending = qpi.pending_plugins
        if not unsched and not pending:
            return _AFTER_BACKOFF
        if event.is_wildcard:
            # a wildcard event carrying a pod (ForceActivate) is for that pod only
            if new is not None and not (isinstance(new, Pod) and new.uid == qpi.pod.uid):
                return _SKIP
            return _AFTER_BACKOFF
        fns = self.fns_for_event(event)
        registrations = self.registrations
        if pending:
            rejectors: Iterable[str] = [*sorted(pending), *sorted(unsched - pending)]
        else:
            rejectors = unsched if len(unsched) == 1 else sorted(unsched)
        strategy = _SKIP
        pod = qpi.pod
        for plugin in rejectors:
            plugin_fns = fns.get(plugin)
            if plugin_fns is None:
                if plugin in registrations:
                    continue  # registered, but not for this event
                plugin_fns = _ALWAYS_QUEUE
            for fn in plugin_fns:
                if not self._hint_says_queue(fn, pod, old, new):
                    continue
                if plugin in pending:
                    return _IMMEDIATELY
                if not pending:
                    return _AFTER_BACKOFF
                strategy = _AFTER_BACKOFF
        return strategy

    def _hint_says_queue(self, fn: Any, pod: Pod, old: Any, new: Any) -> bool:
        if fn is None or not self.enabled:
            return True
        try:
            return fn(pod, old, new) != QueueingHint.QUEUE_SKIP
        except Exception:
            return True  # an erroring hint must not strand the pod: Queue

    def strategy_for_in_flight(self, qpi: QueuedPodInfo, rec: tuple[int, Pod] | None,
                               events: list[tuple[ClusterEvent, Any, Any]],
                               events_base: int) -> QueueingStrategy:
        """kube's ``determineSchedulingHintForInFlightPod``: replay the events that arrived
        while the pod was in flight.

        ``rec`` is the pod's in-flight record (the event-log position when it was popped,
        the pod), None if it was not tracked; ``events`` is the event log, whose first
        element is at log position ``events_base``."""
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return _AFTER_BACKOFF
        if rec is None:
            return _AFTER_BACKOFF  # upstream logs an error and retries after backoff
        strategy = _SKIP
        pending = qpi.pending_plugins
        for event, old, new in islice(events, rec[0] - events_base, None):
            s = self.worth(qpi, event, old, new)
            if s == _IMMEDIATELY:
                return s
            if s == _AFTER_BACKOFF:
                strategy = s
                if not pending:
                    return s
        return strategy


def cross_topology_pods(ungated: Iterable[QueuedPodInfo], pod: Pod,
                        namespace_labels: Callable[[str], Mapping[str, str]] | None,
                        ) -> list[QueuedPodInfo]:
    """kube's ``getUnschedulablePodsWithCrossTopologyTerm``: of the non-gated pool members
    ``ungated``, those rejected by PodTopologySpread in the namespace of the assigned pod
    ``pod``, or with a required pod-affinity term matching it. ``namespace_labels`` gives a
    namespace's labels for namespaceSelector terms."""
    ns_labels: dict[str, str] | None = None
    out = []
    for qpi in ungated:
        owner = qpi.pod
        if (POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins
                and owner.namespace == pod.namespace):
            out.append(qpi)
            continue
        terms = owner.spec.affinity.required_pod_affinity
        if not terms:
            continue
        for term in terms:
            namespaces = term.namespaces
            if not namespaces and term.namespace_selector is None:
                namespaces = (owner.namespace,)
            if pod.namespace not in namespaces:
                if term.namespace_selector is None:
                    continue
                if ns_labels is None:
                    ns_labels = (dict(namespace_labels(pod.namespace))
                                 if namespace_labels is not None else {})
                if not term.namespace_selector.matches(ns_labels):
                    continue
            sel = term.label_selector
            if sel is None:
                continue  # a nil selector matches nothing
            if not sel.matches(pod.labels):
                continue
            if not _label_keys_match(term, owner, pod):
                continue
            out.append(qpi)
            break
    return out


def _label_keys_match(term: Any, owner: Pod, pod: Pod) -> bool:
    """matchLabelKeys / mismatchLabelKeys of a pod-affinity term, taken from its owner's
    labels (what the API server merges into the selector)."""
    for key in term.match_label_keys:
        if key in owner.labels and pod.labels.get(key) != owner.labels[key]:
            return False
    for key in term.mismatch_label_keys:
        if key in owner.labels and pod.labels.get(key) == owner.labels[key]:
            return False
    return True
