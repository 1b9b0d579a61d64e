"""The smaller kinds: Namespace, PriorityClass, PodDisruptionBudget, Service."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scheduler_core.api._fields import Fields, object_key
from scheduler_core.api.selectors import LabelSelector
from scheduler_core.errors import ManifestError

__all__ = ["Namespace", "PodDisruptionBudget", "PriorityClass", "Service"]

_META_IGNORED = ("creationTimestamp", "finalizers", "resourceVersion", "generation",
                 "managedFields", "ownerReferences", "deletionTimestamp", "selfLink",
                 "generateName")
_PERCENT = re.compile(r"([0-9]+)%")


def _root(data: Any, kind: str, *, namespaced: bool, meta_extra: tuple[str, ...] = ()
          ) -> tuple[Fields, Fields, str, str]:
    if not isinstance(data, dict):
        raise ManifestError(f"expected a mapping for a {kind} manifest", obj=kind.lower())
    key = object_key(data, "default", cluster_scoped=not namespaced)
    root = Fields(data, "", f"{kind.lower()} {key}")
    got = root.str("kind", kind)
    if got != kind:
        raise root.error("kind", f'expected "{kind}", got "{got}"')
    meta = root.sub("metadata")
    if namespaced:
        meta.check_keys(("name", "namespace", "labels", "uid", "annotations", *meta_extra),
                        _META_IGNORED)
    else:  # the API server drops metadata.namespace of a cluster-scoped object
        meta.check_keys(("name", "labels", "uid", "annotations", *meta_extra),
                        (*_META_IGNORED, "namespace"))
    name = meta.str("name", required=True)
    if not name:
        raise meta.error("name", "must be non-empty")
    namespace = meta.str("namespace") or "default" if namespaced else ""
    return root, meta, name, namespace


def _locate(fn: Any) -> Any:
    def parse(cls: Any, data: Any, *, source: str | None = None) -> Any:
        try:
            return fn(cls, data)
        except ManifestError as exc:
            raise exc.located(source=source) from None
    parse.__doc__ = fn.__doc__
    return classmethod(parse)


@dataclass(slots=True)
class Namespace:
    name: str
    labels: dict[str, str] = field(default_factory=dict)

    def _parse(cls, data: Any) -> Namespace:
        root, meta, name, _ = _root(data, "Namespace", namespaced=False)
        root.check_keys(("apiVersion", "kind", "metadata"), ("spec", "status"))
        return cls(name, meta.str_map("labels"))

    from_manifest = _locate(_parse)


@dataclass(slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"

    def _parse(cls, data: Any) -> PriorityClass:
        root, _meta, name, _ = _root(data, "PriorityClass", namespaced=False)
        root.check_keys(("apiVersion", "kind", "metadata", "value", "globalDefault",
                         "preemptionPolicy"), ("description",))
        value = root.int("value")
        if value is None:
            raise root.error("value", "required field is missing")
        if value > 1_000_000_000:
            raise root.error("value", f"must be <= 1000000000 for user classes, got {value}")
        policy = root.str("preemptionPolicy") or "PreemptLowerPriority"
        if policy not in ("PreemptLowerPriority", "Never"):
            raise root.error("preemptionPolicy", f'unsupported value "{policy}"')
        return cls(name, value, root.bool("globalDefault"), policy)

    from_manifest = _locate(_parse)


@dataclass(slots=True)
class PodDisruptionBudget:
    name: str
    namespace: str
    selector: LabelSelector | None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disrupted_pods: frozenset[str] = frozenset()

    def _parse(cls, data: Any) -> PodDisruptionBudget:
        root, _meta, name, namespace = _root(data, "PodDisruptionBudget", namespaced=True)
        root.check_keys(("apiVersion", "kind", "metadata", "spec", "status"))
        spec = root.sub("spec")
        spec.check_keys(("selector", "minAvailable", "maxUnavailable"),
                        ("unhealthyPodEvictionPolicy",))
        values = []
        for key in ("minAvailable", "maxUnavailable"):
            raw = spec.raw(key)
            if raw is None:
                values.append(None)
            elif isinstance(raw, bool) or not isinstance(raw, (int, str)):
                raise spec.error(key, "expected an integer or a percentage string")
            elif isinstance(raw, str) and (m := _PERCENT.fullmatch(raw)) is None:
                raise spec.error(key, 'expected an integer or a percentage like "50%", '
                                 f'got "{raw}"')
            elif isinstance(raw, str) and int(m.group(1)) > 100:
                raise spec.error(key, f'must not be greater than 100%, got "{raw}"')
            elif isinstance(raw, int) and raw < 0:
                raise spec.error(key, f"must be >= 0, got {raw}")
            else:
                values.append(raw)
        if values[0] is not None and values[1] is not None:
            raise spec.error("maxUnavailable", "minAvailable and maxUnavailable are exclusive")
        selector = (LabelSelector.from_fields(spec.sub("selector")) if spec.has("selector")
                    else None)
        status = root.sub("status")
        status.check_keys(("disruptedPods",), ("disruptionsAllowed", "currentHealthy",
                                               "desiredHealthy", "expectedPods",
                                               "observedGeneration", "conditions"))
        # disruptedPods is a map of pod name -> eviction time; only the names matter here
        disrupted = status.raw("disruptedPods") or {}
        if not isinstance(disrupted, dict) or not all(isinstance(k, str) for k in disrupted):
            raise status.error("disruptedPods", "expected a mapping of pod names to times")
        return cls(name, namespace, selector, values[0], values[1], frozenset(disrupted))

    from_manifest = _locate(_parse)


@dataclass(slots=True)
class Service:
    name: str
    namespace: str
    selector: dict[str, str] = field(default_factory=dict)

    def _parse(cls, data: Any) -> Service:
        root, _meta, name, namespace = _root(data, "Service", namespaced=True)
        root.check_keys(("apiVersion", "kind", "metadata", "spec"), ("status",))
        spec = root.sub("spec")
        spec.check_keys(("selector",), ("ports", "type", "clusterIP", "clusterIPs",
                                        "sessionAffinity", "externalName", "ipFamilies",
                                        "ipFamilyPolicy", "internalTrafficPolicy",
                                        "externalTrafficPolicy", "publishNotReadyAddresses"))
        return cls(name, namespace, spec.str_map("selector"))

    from_manifest = _locate(_parse)
