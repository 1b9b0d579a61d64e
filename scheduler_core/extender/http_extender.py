"""An HTTP scheduler extender, as kube-scheduler v1.34's HTTPExtender (pkg/scheduler/extender.go).

Each verb is one ``POST <urlPrefix>/<verb>`` with a JSON body, through one ``httpx.Client``
per extender (connections kept alive, ``httpTimeout`` for the whole request):

* filter and prioritize send ``ExtenderArgs``: the pod, and the nodes as a ``NodeList``
  (``nodes``) or, with ``nodeCacheCapable``, by name (``nodenames``). Filter answers an
  ``ExtenderFilterResult`` (``nodes`` or ``nodenames``, ``failedNodes``,
  ``failedAndUnresolvableNodes``, ``error``); prioritize a ``HostPriorityList``
  (``[{host, score}]``, scores 0-10).
* bind sends ``ExtenderBindingArgs`` (``podName``, ``podNamespace``, ``podUID``, ``node``)
  and answers an ``ExtenderBindingResult`` (``error``).
* preempt sends ``ExtenderPreemptionArgs``: the pod and, per candidate node, its victims as
  pods (``nodeNameToVictims``) or, with ``nodeCacheCapable``, as UIDs
  (``nodeNameToMetaVictims``); it answers an ``ExtenderPreemptionResult``
  (``nodeNameToMetaVictims``: the candidates it keeps, their victims by UID).

A status other than 200, a body that is not the expected JSON, an ``error`` in the answer, a
refused connection and a timeout are all :class:`ExtenderError`, whose message follows Go's
(``Post "<url>": ...``, ``failed <verb> with extender at URL <url>, code <n>``).
"""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

from scheduler_core.api.pod import Pod
from scheduler_core.extender.config import ExtenderConfig

__all__ = ["MAX_EXTENDER_PRIORITY", "ExtenderError", "ExtenderStats", "FilterAnswer",
           "HTTPExtender"]

# extenderv1.MaxExtenderPriority: an extender's scores are 0..10, scaled by 100 / 10
MAX_EXTENDER_PRIORITY = 10


class ExtenderError(Exception):
    """A call to an extender failed; ``str()`` names its URL."""


@dataclass
class FilterAnswer:
    """What filter returned: the names that passed, in the extender's order, and the failed
    nodes with their messages."""

    passed: list[str]
    failed: dict[str, str] = field(default_factory=dict)
    failed_unresolvable: dict[str, str] = field(default_factory=dict)


@dataclass
class ExtenderStats:
    """Per verb: calls made, calls that failed, seconds spent (wall time of the round trip),
    and the last error's message; ``ignored`` counts failures the cycle went on without."""

    calls: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    ignored: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    last_error: str = ""

    def record(self, verb: str, seconds: float, error: str | None) -> None:
        self.calls[verb] = self.calls.get(verb, 0) + 1
        self.seconds[verb] = self.seconds.get(verb, 0.0) + seconds
        if error is not None:
            self.error(verb, error)

    def error(self, verb: str, message: str) -> None:
        self.errors[verb] = self.errors.get(verb, 0) + 1
        self.last_error = message

    def ignore(self, verb: str) -> None:
        self.ignored[verb] = self.ignored.get(verb, 0) + 1


class HTTPExtender:
    """One configured extender. ``name`` is its URL prefix (upstream's Name())."""

    def __init__(self, config: ExtenderConfig, *,
                 transport: Any = None) -> None:
        import httpx  # on first use: a scheduler without extenders never loads it

        self.config = config
        self.name = config.url_prefix
        self.managed = frozenset(r.name for r in config.managed_resources)
        self.stats = ExtenderStats()
        if transport is None:  # TCP_NODELAY, as Go's net/http sets it
            transport = httpx.HTTPTransport(
                verify=_verify(config), cert=_cert(config),
                socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        self._client = httpx.Client(timeout=config.http_timeout, transport=transport)

    def close(self) -> None:
        self._client.close()

    def point_at(self, url_prefix: str) -> None:
        """Call another address from now on (a server started after the scheduler was built)."""
        self.config = self.config.with_url_prefix(url_prefix)
        self.name = url_prefix

    # ------------------------------------------------------------------ what it does
    @property
    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    @property
    def is_preempter(self) -> bool:
        return bool(self.config.preempt_verb)

    @property
    def ignorable(self) -> bool:
        return self.config.ignorable

    def is_interested(self, pod: Pod) -> bool:
        """No managed resources: every pod; else a pod requesting (or limiting) one of them
        in a container or init container."""
        if not self.managed:
            return True
        managed = self.managed
        return any(not managed.isdisjoint(c.requests)
                   for c in pod.spec.containers + pod.spec.init_containers)

    # ------------------------------------------------------------------ verbs
    def filter(self, pod_manifest: dict[str, Any], names: Sequence[str],
               node_manifests: Callable[[], list[dict[str, Any]]]) -> FilterAnswer:
        """The nodes of ``names`` (their manifests from ``node_manifests`` unless the extender
        is nodeCacheCapable) through the filter verb."""
        args = self._args(pod_manifest, names, node_manifests)
        result = self._send(self.config.filter_verb, args)
        if not isinstance(result, dict):
            raise self._bad_answer(self.config.filter_verb, "an ExtenderFilterResult object")
        if result.get("error"):
            raise ExtenderError(str(result["error"]))
        passed: list[str] = []
        given = set(names)
        if self.config.node_cache_capable and result.get("nodenames") is not None:
            passed = [str(n) for n in _list(result["nodenames"])]
        elif result.get("nodes") is not None:
            items = (result["nodes"] or {}).get("items") or []
            passed = [str(((n or {}).get("metadata") or {}).get("name", "")) for n in items]
        for name in passed:
            if name not in given:
                raise ExtenderError(f'extender "{self.name}" claims a filtered node "{name}" '
                                    "which is not found in the input node list")
        return FilterAnswer(passed, _failed(result.get("failedNodes")),
                            _failed(result.get("failedAndUnresolvableNodes")))

    def prioritize(self, pod_manifest: dict[str, Any], names: Sequence[str],
                   node_manifests: Callable[[], list[dict[str, Any]]]) -> dict[str, int]:
        """Host -> score (0-10 as the extender gave it; the caller scales)."""
        args = self._args(pod_manifest, names, node_manifests)
        result = self._send(self.config.prioritize_verb, args)
        if result is None:
            return {}
        if not isinstance(result, list):
            raise self._bad_answer(self.config.prioritize_verb, "a HostPriorityList array")
        scores: dict[str, int] = {}
        for item in result:
            if not isinstance(item, dict) or not isinstance(item.get("score", 0), int):
                raise self._bad_answer(self.config.prioritize_verb,
                                       "HostPriority objects {host, score}")
            scores[str(item.get("host", ""))] = int(item.get("score", 0))
        return scores

    def preempt(self, pod_manifest: dict[str, Any],
                victims: dict[str, tuple[list[dict[str, Any]], int]]
                ) -> dict[str, tuple[list[str], int]]:
        """Candidate node -> (victim manifests, PDB violations) through the preempt verb;
        the answer: node -> (victim UIDs, PDB violations), in the extender's order."""
        if self.config.node_cache_capable:
            args: dict[str, Any] = {"pod": pod_manifest, "nodeNameToMetaVictims": {
                node: {"pods": [{"uid": (m.get("metadata") or {}).get("uid", "")}
                                for m in pods], "numPDBViolations": n}
                for node, (pods, n) in victims.items()}}
        else:
            args = {"pod": pod_manifest, "nodeNameToVictims": {
                node: {"pods": pods, "numPDBViolations": n}
                for node, (pods, n) in victims.items()}}
        result = self._send(self.config.preempt_verb, args)
        if not isinstance(result, dict):
            raise self._bad_answer(self.config.preempt_verb,
                                   "an ExtenderPreemptionResult object")
        out: dict[str, tuple[list[str], int]] = {}
        for node, meta in (result.get("nodeNameToMetaVictims") or {}).items():
            if meta is None:
                out[str(node)] = ([], 0)
                continue
            if not isinstance(meta, dict):
                raise self._bad_answer(self.config.preempt_verb, "MetaVictims objects")
            uids = [str((p or {}).get("uid", "")) for p in meta.get("pods") or []]
            out[str(node)] = (uids, int(meta.get("numPDBViolations") or 0))
        return out

    def bind(self, pod: Pod, node_name: str) -> None:
        result = self._send(self.config.bind_verb, {
            "podName": pod.name, "podNamespace": pod.namespace, "podUID": pod.uid,
            "node": node_name})
        if isinstance(result, dict) and result.get("error"):
            raise ExtenderError(str(result["error"]))

    # ------------------------------------------------------------------ wire
    def _args(self, pod_manifest: dict[str, Any], names: Sequence[str],
              node_manifests: Callable[[], list[dict[str, Any]]]) -> dict[str, Any]:
        if self.config.node_cache_capable:
            return {"pod": pod_manifest, "nodes": None, "nodenames": list(names)}
        return {"pod": pod_manifest, "nodes": {"metadata": {}, "items": node_manifests()},
                "nodenames": None}

    def url(self, verb: str) -> str:
        return self.config.url_prefix.rstrip("/") + "/" + verb

    def _send(self, verb: str, args: Any) -> Any:
        url = self.url(verb)
        t0 = perf_counter()
        try:
            out = self._post(url, verb, args)
        except ExtenderError as exc:
            self.stats.record(verb, perf_counter() - t0, str(exc))
            raise
        self.stats.record(verb, perf_counter() - t0, None)
        return out

    def _post(self, url: str, verb: str, args: Any) -> Any:
        """One round trip; every failure an ExtenderError in Go's wording."""
        import httpx

        try:
            resp = self._client.post(url, content=json.dumps(args, separators=(",", ":")),
                                     headers={"Content-Type": "application/json"})
        except httpx.TimeoutException:
            raise ExtenderError(f'Post "{url}": context deadline exceeded (Client.Timeout '
                                "exceeded while awaiting headers)") from None
        except httpx.HTTPError as exc:
            raise ExtenderError(f'Post "{url}": {_transport_reason(exc)}') from None
        if resp.status_code != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, "
                                f"code {resp.status_code}")
        try:
            return json.loads(resp.content)
        except ValueError as exc:
            raise ExtenderError(f"extender at URL {url}: {verb}: the answer is not JSON: "
                                f"{exc}") from None

    def _bad_answer(self, verb: str, expected: str) -> ExtenderError:
        msg = f"extender at URL {self.url(verb)}: {verb}: expected {expected}"
        self.stats.error(verb, msg)
        return ExtenderError(msg)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _failed(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def _transport_reason(exc: Any) -> str:
    """Go's net/http wording for the common transport failures."""
    import httpx


    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError) and "refused" in text.lower():
        host = exc.request.url.host if exc.request is not None else ""
        port = exc.request.url.port if exc.request is not None else ""
        return f"dial tcp {host}:{port}: connect: connection refused"
    return text


def _verify(config: ExtenderConfig) -> bool | ssl.SSLContext:
    """Upstream's makeTransport: HTTPS without a CA (or with insecure) skips verification."""
    tls = config.tls
    if tls is not None and tls.ca_file and not tls.insecure:
        return ssl.create_default_context(cafile=tls.ca_file)
    return not (config.enable_https or (tls is not None and tls.insecure))


def _cert(config: ExtenderConfig) -> tuple[str, str] | None:
    tls = config.tls
    if tls is not None and tls.cert_file and tls.key_file:
        return (tls.cert_file, tls.key_file)
    return None
