"""The HTTP extenders of a run's scheduler config.

An extender whose ``urlPrefix`` is ``schedperf-extender://<mode>`` is schedperf's own server
(``workloads.extender_server``, the TierGate rule; mode ok, error, fail or hang): the run
starts it in a process of its own on a loopback port, writes its address into the config, and
stops it when the workload ends. Any other ``urlPrefix`` is called as it is (a user's own
extender, already running).

While a run has extenders, pods keep the spec mapping they were parsed from, so an extender
receives the pod as written. A built-in extender that is nodeCacheCapable is sent the nodes as
they are created, changed and deleted (``POST /cache``, as its informer would see them),
batched and flushed before the scheduler runs.

At the end, each extender's calls, errors, errors the cycle went on without, and seconds per
verb go into the result's ``extra`` (``extender[<i>]/<verb>/<what>``, the built-in server's
CPU seconds as ``extender[<i>]/server_cpu_seconds``), and every extender error the run went on
without becomes a warning of the result, with the extender's last error.
"""

from __future__ import annotations

from typing import Any

from scheduler_core.api.pod import retain_spec_sources
from scheduler_core.api.to_manifest import node_manifest
from scheduler_core.cluster.events import EventType, WatchEvent
from scheduler_core.cluster.store import Cluster
from scheduler_core.extender import Extenders
from scheduler_core.extender.config import ExtenderConfig
from workloads.extender_server import MODES, ExtenderProcess, ExtenderServerError
from workloads.ops.errors import WorkloadError
from workloads.result import WorkloadResult

__all__ = ["BUILTIN_SCHEME", "RunExtenders"]

BUILTIN_SCHEME = "schedperf-extender://"
_FLUSH_AT = 1000  # node changes buffered before they are sent to a node cache


class RunExtenders:
    """The extenders of ``configs``: ``extenders`` is what the Scheduler is given; the
    built-in servers start at :meth:`start` (the run's prepare step, so checking a workload
    starts no process), which writes their addresses into the extenders."""

    def __init__(self, configs: list[ExtenderConfig], cluster: Cluster) -> None:
        self.servers: dict[int, ExtenderProcess] = {}
        self._cluster = cluster
        self._cache_servers: list[ExtenderProcess] = []
        self._pending: dict[str, dict[str, Any] | None] = {}
        self._previous_retain: bool | None = None
        self._builtin: dict[int, str] = {}  # config index -> mode
        for i, cfg in enumerate(configs):
            if cfg.url_prefix.startswith(BUILTIN_SCHEME):
                mode = cfg.url_prefix[len(BUILTIN_SCHEME):].strip("/") or "ok"
                if mode not in MODES:
                    raise WorkloadError(
                        f"scheduler config: {cfg.path}.urlPrefix: \"{cfg.url_prefix}\": unknown "
                        f'built-in extender mode "{mode}" (expected {BUILTIN_SCHEME}<mode>, '
                        f"mode one of {', '.join(MODES)})")
                self._builtin[i] = mode
        self.extenders = Extenders(configs)
        by_path = {c.path: i for i, c in enumerate(configs)}
        # the scheduler's list (ignorable ones last) -> index in the config
        self._config_index = {id(e): by_path[e.config.path] for e in self.extenders.all}
        self._started = False

    def start(self) -> None:
        """Start the built-in servers and point their extenders at them; keep pod specs."""
        if self._started:
            return
        self._started = True
        self._previous_retain = retain_spec_sources(True)
        for ext in self.extenders.all:
            i = self._config_index[id(ext)]
            mode = self._builtin.get(i)
            if mode is None:
                continue
            server = ExtenderProcess(mode)
            try:
                server.start()
            except ExtenderServerError as exc:
                raise WorkloadError(f"scheduler config: {ext.config.path}.urlPrefix: "
                                    f"{exc}") from None
            self.servers[i] = server
            ext.point_at(server.url)
            if ext.config.node_cache_capable:
                self._cache_servers.append(server)
        if self._cache_servers:
            self._cluster.subscribe(self._on_event)
            table = self._cluster.table
            for name, slot in table.slot_of.items():  # nodes made before the start
                self._pending[name] = node_manifest(table.node(slot))

    # ------------------------------------------------------------------ node cache
    def _on_event(self, ev: WatchEvent) -> None:
        if ev.kind != "Node":
            return
        if ev.type == EventType.DELETED:
            self._pending[ev.old.name] = None
        else:
            self._pending[ev.new.name] = node_manifest(ev.new)
        if len(self._pending) >= _FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        """Send the buffered node changes to the built-in node caches."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        nodes = [m for m in pending.values() if m is not None]
        deleted = tuple(name for name, m in pending.items() if m is None)
        for server in self._cache_servers:
            try:
                server.cache_nodes(nodes, deleted)
            except OSError as exc:
                raise WorkloadError(f"extender server {server.url}: sending the node cache "
                                    f"failed: {exc}") from None

    # ------------------------------------------------------------------ the end
    def fill(self, result: WorkloadResult) -> None:
        for ext in self.extenders.all:
            i = self._config_index[id(ext)]
            st = ext.stats
            for verb, n in st.calls.items():
                result.extra[f"extender[{i}]/{verb}/calls"] = float(n)
                result.extra[f"extender[{i}]/{verb}/seconds"] = st.seconds.get(verb, 0.0)
                result.extra[f"extender[{i}]/{verb}/errors"] = float(st.errors.get(verb, 0))
                result.extra[f"extender[{i}]/{verb}/ignored"] = float(st.ignored.get(verb, 0))
            ignored = sum(st.ignored.values())
            if ignored:
                verbs = ", ".join(f"{v} {n}" for v, n in sorted(st.ignored.items()))
                result.warnings.append(
                    f"extenders[{i}] ({ext.name}): {ignored} failed call(s) the scheduler went "
                    f"on without ({verbs}); last error: {st.last_error}")
            server = self.servers.get(i)
            if server is not None:
                result.extra[f"extender[{i}]/server_cpu_seconds"] = server.cpu_seconds()

    def close(self) -> None:
        self.extenders.close()  # the client's connections first, then the servers
        for server in self.servers.values():
            server.stop()
        if self._previous_retain is not None:
            retain_spec_sources(self._previous_retain)
            self._previous_retain = None
