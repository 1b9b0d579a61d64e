"""The harness's view of the pods, kept from the cluster's watch events as upstream's
informers keep it: pods by namespace, how many have a node, the pods whose placement the
result reports, and the namespaces a barrier waits for (upstream's
``numPodsScheduledPerNamespace``). Ops see it as :class:`~workloads.ops.context.PodView`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from scheduler_core.api.pod import Pod
from scheduler_core.cluster.events import ADDED, MODIFIED, WatchEvent
from workloads.runner.metrics import Window

__all__ = ["PodBook"]


class PodBook:
    """Pods by namespace as the watch shows them; see the module docstring."""

    def __init__(self) -> None:
        # upstream's numPodsScheduledPerNamespace: namespace -> pods a barrier waits for
        self.known_ns: dict[str, int] = {}
        self.bound: dict[str, int] = {}  # namespace -> pods with a node now
        self.ns_pods: dict[str, dict[str, Pod]] = {}  # namespace -> pods, creation order
        self.placement_keys: dict[str, None] = {}  # pods created without a node
        self.gone: dict[str, Pod] = {}  # deleted pods among those, as last seen
        self.bind_hooks: list[Callable[[Pod], None]] = []
        # the open metrics collection window (set by Windows): binds in its scope count
        self.window: Window | None = None

    # ------------------------------------------------------------------ the watch
    def on_event(self, ev: WatchEvent) -> None:
        if ev.kind != "Pod":
            return
        t = ev.type
        if t is MODIFIED:
            new = ev.new
            old = ev.old
            ns = new.namespace
            if type(old) is Pod:  # an update replaced the object (a bind keeps it)
                self.ns_pods[ns][new.key] = new
            if new.node_name and not old.node_name:
                bound = self.bound
                bound[ns] = bound.get(ns, 0) + 1
                w = self.window
                if w is not None and ns in w.namespaces and (
                        not w.label_selector or w.matches(new)):
                    w.bound += 1
                for hook in self.bind_hooks:
                    hook(new)
        elif t is ADDED:
            new = ev.new
            ns = new.namespace
            pods = self.ns_pods.get(ns)
            if pods is None:
                pods = self.ns_pods[ns] = {}
            key = new.key
            pods[key] = new
            if new.node_name:
                self.bound[ns] = self.bound.get(ns, 0) + 1
            else:
                self.placement_keys[key] = None
        else:
            old = ev.old
            ns = old.namespace
            key = old.key
            self.ns_pods[ns].pop(key, None)
            if old.node_name:
                self.bound[ns] = max(0, self.bound.get(ns, 0) - 1)
            if key in self.placement_keys:
                self.gone[key] = old

    # ------------------------------------------------------------------ what ops read
    def in_namespace(self, ns: str) -> Mapping[str, Pod]:
        """The pods of ``ns`` (key -> pod), in creation order."""
        return self.ns_pods.get(ns, {})

    @contextmanager
    def bind_hook(self, hook: Callable[[Pod], None]) -> Iterator[None]:
        """Call ``hook(pod)`` for every pod that gets a node while the block runs."""
        self.bind_hooks.append(hook)
        try:
            yield
        finally:
            self.bind_hooks.remove(hook)

    # ------------------------------------------------------------------ barriers
    def register(self, ns: str) -> None:
        """A namespace barriers know (upstream createNamespaceIfNotPresent)."""
        self.known_ns.setdefault(ns, 0)

    def knows(self, ns: str) -> bool:
        return ns in self.known_ns

    def expect(self, ns: str, count: int) -> None:
        """``count`` more pods of ``ns`` that the next Scheduled barrier waits for."""
        self.known_ns[ns] = self.known_ns.get(ns, 0) + count

    def expected(self, namespaces: Sequence[str]) -> dict[str, int]:
        """Namespace -> pods a barrier on ``namespaces`` (every known one when empty) waits
        for; every namespace must be known."""
        return {ns: self.known_ns[ns] for ns in (list(namespaces) or list(self.known_ns))}

    def release(self, namespaces: Sequence[str]) -> None:
        """A Scheduled barrier on ``namespaces`` (every one when empty) passed: forget them."""
        if namespaces:
            for ns in namespaces:
                self.known_ns.pop(ns, None)
        else:
            self.known_ns.clear()
