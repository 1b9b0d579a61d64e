"""The extender server's WSGI application (werkzeug): the verbs of kube-scheduler's extender
protocol over the TierGate rule (``rule.py``).

``POST /filter`` and ``POST /prioritize`` take ``ExtenderArgs`` (``nodes`` as a NodeList, or
``nodenames`` for a nodeCacheCapable extender: the server then looks node labels up in the
nodes it has been sent before, as a real extender reads its own node cache); ``POST /preempt``
takes ``ExtenderPreemptionArgs`` and drops the candidates on nodes it knows are excluded;
``POST /bind`` takes ``ExtenderBindingArgs`` and records the binding; ``POST /cache`` fills the
node cache (the harness sends it the nodes as an informer would); ``GET /stats`` counts the
calls.
Modes, for testing how the scheduler copes: ``ok``; ``error`` (every verb answers HTTP 500);
``fail`` (every verb answers 200 with an ``error`` field); ``hang`` (every verb waits until
the server stops, so the scheduler's ``httpTimeout`` fires).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from workloads.extender_server.rule import REJECT_MESSAGE, node_passes, node_score

__all__ = ["MODES", "ExtenderApp"]

MODES = ("ok", "error", "fail", "hang")


class ExtenderApp:
    def __init__(self, mode: str = "ok") -> None:
        if mode not in MODES:
            raise ValueError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        self.stopping = threading.Event()
        self.node_labels: dict[str, dict[str, Any]] = {}  # the node cache
        self.bindings: dict[str, str] = {}  # "namespace/name" -> node
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()
        self._urls = Map([Rule("/filter", endpoint="filter", methods=["POST"]),
                          Rule("/prioritize", endpoint="prioritize", methods=["POST"]),
                          Rule("/bind", endpoint="bind", methods=["POST"]),
                          Rule("/preempt", endpoint="preempt", methods=["POST"]),
                          Rule("/cache", endpoint="cache", methods=["POST"]),
                          Rule("/stats", endpoint="stats", methods=["GET"])])

    def __call__(self, environ: Any, start_response: Any) -> Any:
        request = Request(environ)
        try:
            endpoint, _ = self._urls.bind_to_environ(environ).match()
        except (NotFound, MethodNotAllowed) as exc:
            return exc(environ, start_response)
        try:
            response = self._dispatch(endpoint, request)
        except HTTPException as exc:
            return exc(environ, start_response)
        return response(environ, start_response)

    def _dispatch(self, endpoint: str, request: Request) -> Response:
        if endpoint == "stats":
            return _json({"calls": self.calls, "bindings": len(self.bindings)})
        if endpoint == "cache":  # the node cache a nodeCacheCapable extender keeps
            return self._cache(request)
        with self._lock:
            self.calls[endpoint] = self.calls.get(endpoint, 0) + 1
        if self.mode == "hang":
            self.stopping.wait()
            return Response("stopping", status=503)
        if self.mode == "error":
            return Response("extender error mode", status=500)
        try:
            args = json.loads(request.get_data())
        except ValueError:
            return Response("body is not JSON", status=400)
        if self.mode == "fail":
            return _json({"error": f"{endpoint} refused (fail mode)"})
        if endpoint == "bind":
            key = f"{args.get('podNamespace')}/{args.get('podName')}"
            with self._lock:
                self.bindings[key] = str(args.get("node", ""))
            return _json({})
        if endpoint == "preempt":
            return _json({"nodeNameToMetaVictims": self._preempt(args)})
        names, labels = self._nodes(args)
        if endpoint == "filter":
            passed = [n for n in names if node_passes(labels.get(n, {}))]
            failed = {n: REJECT_MESSAGE for n in names if not node_passes(labels.get(n, {}))}
            if args.get("nodenames") is not None:
                return _json({"nodenames": passed, "failedNodes": failed})
            keep = set(passed)
            items = [n for n in args["nodes"]["items"] if n["metadata"]["name"] in keep]
            return _json({"nodes": {"metadata": {}, "items": items}, "failedNodes": failed})
        return _json([{"host": n, "score": node_score(labels.get(n, {}))} for n in names])

    def _preempt(self, args: dict[str, Any]) -> dict[str, Any]:
        """The candidates on nodes the rule does not exclude (labels from the node cache: a
        node never seen is kept), their victims by UID."""
        full = args.get("nodeNameToVictims")
        given = full if full is not None else args.get("nodeNameToMetaVictims") or {}
        out: dict[str, Any] = {}
        for node, victims in given.items():
            if not node_passes(self.node_labels.get(node, {})):
                continue
            pods = (victims or {}).get("pods") or []
            uids = [((p.get("metadata") or {}).get("uid") if full is not None else p.get("uid"))
                    for p in pods]
            out[node] = {"pods": [{"uid": u} for u in uids],
                         "numPDBViolations": (victims or {}).get("numPDBViolations", 0)}
        return out

    def _cache(self, request: Request) -> Response:
        """``{"nodes": [Node manifests], "deleted": [names]}``: what an informer would tell."""
        try:
            body = json.loads(request.get_data())
        except ValueError:
            return Response("body is not JSON", status=400)
        with self._lock:
            for node in body.get("nodes") or []:
                meta = node.get("metadata") or {}
                self.node_labels[str(meta.get("name", ""))] = meta.get("labels") or {}
            for name in body.get("deleted") or []:
                self.node_labels.pop(str(name), None)
        return _json({"nodes": len(self.node_labels)})

    def _nodes(self, args: dict[str, Any]) -> tuple[list[str], dict[str, dict[str, Any]]]:
        if args.get("nodenames") is not None:
            return [str(n) for n in args["nodenames"]], self.node_labels
        names: list[str] = []
        labels: dict[str, dict[str, Any]] = {}
        for node in (args.get("nodes") or {}).get("items") or []:
            meta = node.get("metadata") or {}
            name = str(meta.get("name", ""))
            names.append(name)
            labels[name] = meta.get("labels") or {}
        with self._lock:
            self.node_labels.update(labels)
        return names, labels


def _json(value: Any) -> Response:
    return Response(json.dumps(value, separators=(",", ":")), mimetype="application/json")
