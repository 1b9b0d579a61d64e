"""The ``extenders:`` section of a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1
``Extender``): parsed, defaulted and validated as kube-scheduler v1.34 does.

Field by field: ``urlPrefix``, ``filterVerb``, ``preemptVerb``, ``prioritizeVerb``, ``weight``,
``bindVerb``, ``enableHTTPS``, ``tlsConfig``, ``httpTimeout`` (a Go duration; 0 or absent is
upstream's DefaultExtenderTimeout, 5 s), ``nodeCacheCapable``, ``managedResources``
(``name``, ``ignoredByScheduler``) and ``ignorable``. Validation as upstream's
validateExtenders: a prioritizer needs a positive weight, at most one extender binds, managed
resource names are extended resource names and appear once over all extenders.

What the core does not model is refused, never dropped: the ``tlsConfig`` fields other than
``insecure`` / ``caFile`` / ``certFile`` / ``keyFile`` raise :class:`UnsupportedConfigError`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scheduler_core.api.duration import parse_go_duration_ns
from scheduler_core.errors import ConfigError, UnsupportedConfigError
from scheduler_core.plugins.helper import label_name_problem

__all__ = ["DEFAULT_EXTENDER_TIMEOUT", "ExtenderConfig", "ManagedResource", "TLSConfig",
           "ignored_by_scheduler", "parse_extenders"]

# upstream's DefaultExtenderTimeout (pkg/scheduler/extender.go)
DEFAULT_EXTENDER_TIMEOUT = 5.0
_KEYS = ("urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb",
         "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources",
         "ignorable")
_TLS_KEYS = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData",
             "caData")
_TLS_MODELLED = ("insecure", "certFile", "keyFile", "caFile")
_MAX_INT64 = 2**63 - 1

Err = Callable[[str, str], ConfigError]


@dataclass(frozen=True)
class ManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True)
class TLSConfig:
    insecure: bool = False
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""


@dataclass(frozen=True)
class ExtenderConfig:
    url_prefix: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    preempt_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls: TLSConfig | None = None
    http_timeout: float = DEFAULT_EXTENDER_TIMEOUT
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False
    path: str = "extenders[0]"

    def with_url_prefix(self, url_prefix: str) -> ExtenderConfig:
        """A copy pointing at another address (a built-in extender server started for a run)."""
        return dataclasses.replace(self, url_prefix=url_prefix)


def ignored_by_scheduler(extenders: list[ExtenderConfig]) -> list[str]:
    """The managed resources NodeResourcesFit must ignore (upstream sets them as every
    profile's NodeResourcesFitArgs.ignoredResources, replacing what the args said)."""
    return [r.name for e in extenders for r in e.managed_resources if r.ignored_by_scheduler]


def parse_extenders(data: Any, err: Err) -> list[ExtenderConfig]:
    """``data``: the value of ``extenders`` (None or a list of mappings)."""
    if data is None:
        return []
    if not isinstance(data, list):
        raise err("extenders", "expected a list of extenders")
    out = [_parse_one(item, f"extenders[{i}]", err) for i, item in enumerate(data)]
    binders = sum(1 for e in out if e.bind_verb)
    if binders > 1:
        raise err("extenders", f"found {binders} extenders implementing bind: only one "
                  "extender can implement bind")
    seen: set[str] = set()
    for e in out:
        for j, r in enumerate(e.managed_resources):
            if r.name in seen:
                raise err(f"{e.path}.managedResources[{j}].name",
                          f'"{r.name}": duplicate extender managed resource name')
            seen.add(r.name)
    return out


def _parse_one(data: Any, path: str, err: Err) -> ExtenderConfig:
    if not isinstance(data, dict):
        raise err(path, "expected a mapping (an Extender)")
    for key in data:
        if key not in _KEYS:
            raise err(f"{path}.{key}", f"unknown field (expected one of: {', '.join(_KEYS)})")
    url = _string(data, "urlPrefix", path, err)
    if not url:
        raise err(f"{path}.urlPrefix", "required: the extender's URL prefix")
    weight = data.get("weight", 0)
    if isinstance(weight, bool) or not isinstance(weight, int) or \
            not -_MAX_INT64 - 1 <= weight <= _MAX_INT64:
        raise err(f"{path}.weight", f"expected an integer (int64), got {weight!r}")
    prioritize = _string(data, "prioritizeVerb", path, err)
    if prioritize and weight <= 0:
        raise err(f"{path}.weight", f"{weight}: must have a positive weight applied to it")
    timeout = DEFAULT_EXTENDER_TIMEOUT
    if data.get("httpTimeout") is not None:
        raw = data["httpTimeout"]
        if not isinstance(raw, str):
            raise err(f"{path}.httpTimeout", f'expected a duration such as "5s", got {raw!r}')
        try:
            ns = parse_go_duration_ns(raw)
        except ValueError as exc:
            raise err(f"{path}.httpTimeout", str(exc)) from None
        if ns < 0:
            raise err(f"{path}.httpTimeout", f'"{raw}": must not be negative')
        if ns > 0:
            timeout = ns / 1e9
    return ExtenderConfig(
        url_prefix=url,
        filter_verb=_string(data, "filterVerb", path, err),
        prioritize_verb=prioritize,
        bind_verb=_string(data, "bindVerb", path, err),
        preempt_verb=_string(data, "preemptVerb", path, err),
        weight=weight,
        enable_https=_bool(data, "enableHTTPS", path, err),
        tls=_tls(data.get("tlsConfig"), f"{path}.tlsConfig", err),
        http_timeout=timeout,
        node_cache_capable=_bool(data, "nodeCacheCapable", path, err),
        managed_resources=_managed(data.get("managedResources"), f"{path}.managedResources",
                                   err),
        ignorable=_bool(data, "ignorable", path, err),
        path=path,
    )


def _string(data: dict, key: str, path: str, err: Err) -> str:
    v = data.get(key)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise err(f"{path}.{key}", f"expected a string, got {v!r}")
    return v


def _bool(data: dict, key: str, path: str, err: Err) -> bool:
    v = data.get(key)
    if v is None:
        return False
    if not isinstance(v, bool):
        raise err(f"{path}.{key}", f"expected true or false, got {v!r}")
    return v


def _tls(data: Any, path: str, err: Err) -> TLSConfig | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise err(path, "expected a mapping (an ExtenderTLSConfig)")
    for key, value in data.items():
        if key not in _TLS_KEYS:
            raise err(f"{path}.{key}",
                      f"unknown field (expected one of: {', '.join(_TLS_KEYS)})")
        if key not in _TLS_MODELLED and value:
            raise UnsupportedConfigError(
                f"not modelled by scheduler_core (modelled: {', '.join(_TLS_MODELLED)})",
                field=f"{path}.{key}")
    return TLSConfig(insecure=_bool(data, "insecure", path, err),
                     cert_file=_string(data, "certFile", path, err),
                     key_file=_string(data, "keyFile", path, err),
                     ca_file=_string(data, "caFile", path, err))


def _managed(data: Any, path: str, err: Err) -> tuple[ManagedResource, ...]:
    if data is None:
        return ()
    if not isinstance(data, list):
        raise err(path, "expected a list of {name, ignoredByScheduler}")
    out = []
    for j, item in enumerate(data):
        at = f"{path}[{j}]"
        if not isinstance(item, dict):
            raise err(at, "expected a mapping with name and ignoredByScheduler")
        for key in item:
            if key not in ("name", "ignoredByScheduler"):
                raise err(f"{at}.{key}", "unknown field (expected one of: name, "
                          "ignoredByScheduler)")
        name = _string(item, "name", at, err)
        problem = _extended_resource_problem(name)
        if problem:
            raise err(f"{at}.name", f'"{name}": {problem}')
        out.append(ManagedResource(name, _bool(item, "ignoredByScheduler", at, err)))
    return tuple(out)


def _extended_resource_problem(name: str) -> str:
    """Why ``name`` is not an extended resource name ("" when it is), as upstream's
    validateExtendedResourceName: a qualified name with a domain prefix, not a native resource
    (no "kubernetes.io/" in it) and not a quota name (requests.*)."""
    problem = label_name_problem(name)  # a label name is a qualified name
    if problem:
        return problem
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return "is an invalid extended resource name"
    return ""
