"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): loading, validation, defaults,
and building one ``Framework`` per profile.

Merge semantics follow kube-scheduler v1: the defaults are a MultiPoint list
(docs/scheduling-model.md, "Configuration and profiles"); a profile's per-extension-point
``enabled``/``disabled`` lists (``'*'`` disables every default) are merged with them, specific
extension-point configuration overrides MultiPoint, and order is "overrides, then MultiPoint,
then the remaining specific plugins".

schedperf extension: a top-level ``pluginRegistry`` maps out-of-tree plugin names to
``"module.path:ClassName"``. A class with ``per_node = True`` is wrapped by the per-node adapter.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from scheduler_core.errors import ConfigError, UnsupportedConfigError
from scheduler_core.extender.config import ExtenderConfig, ignored_by_scheduler, parse_extenders
from scheduler_core.framework.interface import Handle
from scheduler_core.framework.runtime import EXTENSION_POINTS, Framework, implements
from scheduler_core.inputfile import (
    MAX_EXPANDED_VALUES,
    InputFileError,
    expanded_size,
    read_text,
)
from scheduler_core.plugins.names import NODE_RESOURCES_FIT

__all__ = [
    "API_VERSION",
    "DEFAULT_MULTIPOINT",
    "PluginRef",
    "ProfileConfig",
    "SchedulerConfig",
    "build_frameworks",
    "load_config",
    "parse_config",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

# pkg/scheduler/apis/config/v1/default_plugins.go (v1.34), weights where scoring; DynamicResources
# is there because the DynamicResourceAllocation gate is on by default (GA in v1.34)
DEFAULT_MULTIPOINT: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 0),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)

# appended to the default multiPoint set when the GenericWorkload gate is on (v1.37's
# applyGangScheduling)
GENERIC_WORKLOAD_MULTIPOINT: tuple[tuple[str, int], ...] = (("GangScheduling", 0),)
# appended after those when the TopologyAwareWorkloadScheduling gate is on (v1.37's
# applyTopologyAwareWorkloadScheduling)
TOPOLOGY_AWARE_MULTIPOINT: tuple[tuple[str, int], ...] = (
    ("TopologyPlacementGenerator", 0), ("PodGroupPodsCount", 1))

# config point name -> extension point
_POINT_KEYS = {
    "preEnqueue": "PreEnqueue", "queueSort": "QueueSort", "preFilter": "PreFilter",
    "filter": "Filter", "postFilter": "PostFilter", "preScore": "PreScore", "score": "Score",
    "reserve": "Reserve", "permit": "Permit", "preBind": "PreBind", "bind": "Bind",
    "postBind": "PostBind", "placementGenerate": "PlacementGenerate",
    "placementScore": "PlacementScore",
}
_TOP_KEYS = ("apiVersion", "kind", "profiles", "percentageOfNodesToScore", "extenders",
             "percentageOfPlacementsToScore",
             "podInitialBackoffSeconds", "podMaxBackoffSeconds", "pluginRegistry", "parallelism")
_TOP_IGNORED = ("leaderElection", "clientConnection", "healthzBindAddress",
                "metricsBindAddress", "enableProfiling", "enableContentionProfiling",
                "delayCacheUntilActive", "featureGates")
MAX_WEIGHT = (2**63 - 1) // 100
# upstream in-tree plugins of workload-aware scheduling that the core does not have: a
# profile enabling one is unsupported (UnsupportedConfigError), not bad input
UNIMPLEMENTED_PLUGINS = {
    "NodePoolPlacement": "node-pool placement of pod groups, newer than kube v1.37.2",
}
# percentageOfPlacementsToScore (newer than v1.37.2: an adaptive limit on the placements
# scored): 100 asks for every placement, which is what v1.37.2 does; other values are
# unsupported
ALL_PLACEMENTS = 100
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class PluginRef:
    name: str
    weight: int = 0


@dataclass
class PluginSetConfig:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass
class ProfileConfig:
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    percentage_of_nodes_to_score: int | None = None
    multi_point: PluginSetConfig = field(default_factory=PluginSetConfig)
    points: dict[str, PluginSetConfig] = field(default_factory=dict)
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    path: str = "profiles[0]"


@dataclass
class SchedulerConfig:
    profiles: list[ProfileConfig] = field(default_factory=lambda: [ProfileConfig()])
    percentage_of_nodes_to_score: int | None = None
    # pod groups' placements scored (topology-aware workload scheduling): None or 100 (every
    # placement, as v1.37.2); any other value makes the config unsupported
    percentage_of_placements_to_score: int | None = None
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    plugin_registry: dict[str, str] = field(default_factory=dict)
    # HTTP extenders (scheduler_core.extender), in the configured order
    extenders: list[ExtenderConfig] = field(default_factory=list)
    source: str | None = None


# --------------------------------------------------------------------------- parsing
def load_config(path: str | Path) -> SchedulerConfig:
    try:
        text = read_text(Path(path), what="a KubeSchedulerConfiguration (YAML)")
    except InputFileError as exc:
        where = f"{path}:{exc.line}" if exc.line else str(path)
        raise ConfigError(exc.problem, source=where) from None
    try:
        data = yaml.load(text, Loader=_SafeLoader)
    except RecursionError:
        raise ConfigError("invalid YAML: nested too deeply", source=str(path)) from None
    except (ValueError, OverflowError) as exc:  # a constructor's: a date like 2026-13-45
        raise ConfigError(f"invalid YAML value: {exc}", source=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"invalid YAML: {getattr(exc, 'problem', exc)}", source=where) from None
    if expanded_size(data) is None:
        raise ConfigError(f"its aliases expand to more than {MAX_EXPANDED_VALUES} values (an "
                          "alias bomb?)", source=str(path))
    return parse_config(data, source=str(path))


def parse_config(data: Any, *, source: str | None = None) -> SchedulerConfig:
    def err(field_: str, problem: str) -> ConfigError:
        return ConfigError(problem, field=field_, source=source)

    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise err("", "expected a KubeSchedulerConfiguration mapping")
    _check_keys(data, "", _TOP_KEYS + _TOP_IGNORED, err)
    api = data.get("apiVersion", API_VERSION)
    if api != API_VERSION:
        raise err("apiVersion", f'unsupported apiVersion "{api}" (expected "{API_VERSION}")')
    kind = data.get("kind", "KubeSchedulerConfiguration")
    if kind != "KubeSchedulerConfiguration":
        raise err("kind", f'expected "KubeSchedulerConfiguration", got "{kind}"')
    cfg = SchedulerConfig(source=source)
    cfg.percentage_of_nodes_to_score = _percentage(data, "percentageOfNodesToScore", "", err)
    cfg.percentage_of_placements_to_score = _percentage(data, "percentageOfPlacementsToScore",
                                                        "", err)
    for key, attr in (("podInitialBackoffSeconds", "pod_initial_backoff_seconds"),
                      ("podMaxBackoffSeconds", "pod_max_backoff_seconds")):
        if key in data:
            v = data[key]
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise err(key, f"must be a positive integer, got {v!r}")
            setattr(cfg, attr, float(v))
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        raise err("podMaxBackoffSeconds", "must be greater than or equal to "
                  "podInitialBackoffSeconds")
    registry = data.get("pluginRegistry") or {}
    if not isinstance(registry, dict):
        raise err("pluginRegistry", "expected a mapping of plugin name to \"module:Class\"")
    for name, target in registry.items():
        module_name, colon, class_name = (target if isinstance(target, str) else "").partition(":")
        if not (colon and module_name.strip() and class_name.strip()):
            raise err(f"pluginRegistry.{name}",
                      f'expected "module.path:ClassName", got {target!r}')
    cfg.plugin_registry = dict(registry)
    raw_profiles = data.get("profiles")
    if raw_profiles is not None:
        if not isinstance(raw_profiles, list):
            raise err("profiles", "expected a list of profiles")
        cfg.profiles = [_parse_profile(p, f"profiles[{i}]", err, len(raw_profiles))
                        for i, p in enumerate(raw_profiles)]
        if not cfg.profiles:
            cfg.profiles = [ProfileConfig()]
    names: dict[str, str] = {}
    for prof in cfg.profiles:
        if prof.scheduler_name in names:
            raise err(f"{prof.path}.schedulerName",
                      f'duplicate schedulerName "{prof.scheduler_name}" '
                      f"(already used by {names[prof.scheduler_name]})")
        names[prof.scheduler_name] = prof.path
    cfg.extenders = parse_extenders(data.get("extenders"), err)
    ignored = ignored_by_scheduler(cfg.extenders)
    if ignored:  # upstream replaces every profile's NodeResourcesFitArgs.ignoredResources
        for prof in cfg.profiles:
            args = dict(prof.plugin_args.get(NODE_RESOURCES_FIT) or {})
            args["ignoredResources"] = list(ignored)
            prof.plugin_args[NODE_RESOURCES_FIT] = args
    return cfg


def _check_keys(data: dict, path: str, allowed: tuple[str, ...], err: Any) -> None:
    for key in data:
        if key not in allowed:
            where = f"{path}.{key}" if path else str(key)
            raise err(where, f"unknown field (expected one of: {', '.join(sorted(allowed))})")


def _percentage(data: dict, key: str, path: str, err: Any) -> int | None:
    if data.get(key) is None:
        return None
    v = data[key]
    where = f"{path}.{key}" if path else key
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 100:
        raise err(where, f"must be an integer in the range 0-100, got {v!r}")
    return v


def _parse_profile(data: Any, path: str, err: Any, count: int) -> ProfileConfig:
    if not isinstance(data, dict):
        raise err(path, "expected a mapping")
    _check_keys(data, path, ("schedulerName", "percentageOfNodesToScore", "plugins",
                             "pluginConfig"), err)
    prof = ProfileConfig(path=path)
    name = data.get("schedulerName")
    if name is None:
        if count > 1:
            raise err(f"{path}.schedulerName", "required when more than one profile is given")
        name = DEFAULT_SCHEDULER_NAME
    if not isinstance(name, str) or not name:
        raise err(f"{path}.schedulerName", f"must be a non-empty string, got {name!r}")
    prof.scheduler_name = name
    prof.percentage_of_nodes_to_score = _percentage(data, "percentageOfNodesToScore", path, err)
    plugins = data.get("plugins") or {}
    if not isinstance(plugins, dict):
        raise err(f"{path}.plugins", "expected a mapping of extension points")
    _check_keys(plugins, f"{path}.plugins", (*_POINT_KEYS, "multiPoint"), err)
    for key, value in plugins.items():
        pset = _parse_plugin_set(value, f"{path}.plugins.{key}", err)
        if key == "multiPoint":
            prof.multi_point = pset
        else:
            prof.points[_POINT_KEYS[key]] = pset
    configs = data.get("pluginConfig") or []
    if not isinstance(configs, list):
        raise err(f"{path}.pluginConfig", "expected a list")
    for i, pc in enumerate(configs):
        where = f"{path}.pluginConfig[{i}]"
        if not isinstance(pc, dict):
            raise err(where, "expected a mapping with name and args")
        _check_keys(pc, where, ("name", "args"), err)
        pname = pc.get("name")
        if not isinstance(pname, str) or not pname:
            raise err(f"{where}.name", "required field is missing")
        if pname in prof.plugin_args:
            raise err(f"{where}.name", f'duplicate pluginConfig for plugin "{pname}"')
        args = pc.get("args") or {}
        if not isinstance(args, dict):
            raise err(f"{where}.args", "expected a mapping")
        args = {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}
        prof.plugin_args[pname] = {"__path__": f"{where}.args", **args}
    return prof


def _parse_plugin_set(data: Any, path: str, err: Any) -> PluginSetConfig:
    if data is None:
        return PluginSetConfig()
    if not isinstance(data, dict):
        raise err(path, "expected a mapping with enabled/disabled lists")
    _check_keys(data, path, ("enabled", "disabled"), err)
    out = PluginSetConfig()
    for key in ("enabled", "disabled"):
        items = data.get(key) or []
        if not isinstance(items, list):
            raise err(f"{path}.{key}", "expected a list of plugins")
        for i, item in enumerate(items):
            where = f"{path}.{key}[{i}]"
            if not isinstance(item, dict):
                raise err(where, "expected a mapping with a name")
            _check_keys(item, where, ("name", "weight") if key == "enabled" else ("name",), err)
            name = item.get("name")
            if not isinstance(name, str) or not name:
                raise err(f"{where}.name", "required field is missing")
            if key == "enabled":
                weight = item.get("weight", 0)
                if isinstance(weight, bool) or not isinstance(weight, int):
                    raise err(f"{where}.weight", f"expected an integer, got {weight!r}")
                if weight < 0 or weight > MAX_WEIGHT:
                    raise err(f"{where}.weight", f"must be in the range 0-{MAX_WEIGHT}, "
                              f"got {weight}")
                if name == "*":
                    raise err(f"{where}.name", '"*" can only be used in disabled lists')
                out.enabled.append(PluginRef(name, weight))
            else:
                out.disabled.append(name)
    return out


# --------------------------------------------------------------------------- merging & building
def _merge(default: PluginSetConfig, custom: PluginSetConfig) -> PluginSetConfig:
    """kube's mergePluginSet."""
    disabled = list(custom.disabled) + list(default.disabled)
    disabled_set = set(disabled)
    custom_index = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_set:
        for p in default.enabled:
            if p.name in disabled_set:
                continue
            if p.name in custom_index:
                i, q = custom_index[p.name]
                p = q
                replaced.add(i)
            enabled.append(p)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSetConfig(enabled, disabled)


def _import_plugin(name: str, target: str, source: str | None) -> Any:
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, class_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f'cannot import "{target}": {exc}', field=f"pluginRegistry.{name}",
                          source=source) from None
    except Exception as exc:  # the module itself fails to import: its error, one line
        raise ConfigError(f'cannot import "{target}": {type(exc).__name__}: {exc}',
                          field=f"pluginRegistry.{name}", source=source) from None
    return cls


def build_frameworks(cfg: SchedulerConfig, handle: Handle | None, *,
                     generic_workload: bool = False, topology_aware: bool = False
                     ) -> dict[str, Framework]:
    """Instantiate every profile's plugins and return schedulerName -> Framework.

    ``generic_workload`` is the GenericWorkload feature gate (v1.37, off by default): on, the
    default multiPoint set ends with GangScheduling, as upstream's applyGangScheduling.
    ``topology_aware`` is the TopologyAwareWorkloadScheduling gate: on, TopologyPlacementGenerator
    and PodGroupPodsCount (weight 1) follow it (applyTopologyAwareWorkloadScheduling)."""
    pct = cfg.percentage_of_placements_to_score
    if pct is not None and pct != ALL_PLACEMENTS:
        raise UnsupportedConfigError(
            f"percentageOfPlacementsToScore {pct}: the adaptive limit on the placements "
            "scored is newer than kube v1.37.2, which scheduler_core follows (every placement "
            f"is scored; {ALL_PLACEMENTS} asks for that)",
            field="percentageOfPlacementsToScore", source=cfg.source)
    from scheduler_core.framework.adapter import PerNodeAdapter
    from scheduler_core.plugins.registry import IN_TREE

    registry: dict[str, Any] = dict(IN_TREE)
    for name, target in cfg.plugin_registry.items():
        if name in IN_TREE:
            raise ConfigError(f'plugin "{name}" is already registered in-tree',
                              field=f"pluginRegistry.{name}", source=cfg.source)
        registry[name] = _import_plugin(name, target, cfg.source)

    out: dict[str, Framework] = {}
    sort_keys: list[tuple[str, str]] = []
    for prof in cfg.profiles:
        fwk = _build_profile(cfg, prof, registry, handle, PerNodeAdapter, generic_workload,
                             topology_aware)
        qs = fwk.queue_sort
        sort_keys.append((prof.path, qs.name if qs is not None else ""))
        out[prof.scheduler_name] = fwk
    if len({k for _, k in sort_keys}) > 1:
        raise ConfigError("all profiles must use the same queueSort plugin, got "
                          + ", ".join(f"{p}: {k or 'none'}" for p, k in sort_keys),
                          field="profiles", source=cfg.source)
    return out


def _check_implemented(cfg: SchedulerConfig, prof: ProfileConfig, names: dict[str, str],
                       registry: dict[str, Any]) -> None:
    """UnsupportedConfigError for a valid profile needing what the core does not implement:
    an upstream plugin of :data:`UNIMPLEMENTED_PLUGINS`."""
    for pname, where in names.items():
        if pname not in registry and pname in UNIMPLEMENTED_PLUGINS:
            raise UnsupportedConfigError(
                f'plugin "{pname}" ({UNIMPLEMENTED_PLUGINS[pname]}) is an upstream plugin '
                "that scheduler_core does not implement yet", field=where, source=cfg.source)


def _instantiate(cfg: SchedulerConfig, prof: ProfileConfig, names: dict[str, str],
                 registry: dict[str, Any], handle: Handle | None, adapter: Any
                 ) -> dict[str, Any]:
    """Every plugin of ``names`` constructed with its args (per-node ones adapted)."""
    instances: dict[str, Any] = {}
    for pname, where in names.items():
        cls = registry.get(pname)
        if cls is None:
            raise ConfigError(f'unknown plugin "{pname}" (known: '
                              f'{", ".join(sorted(registry))})', field=where, source=cfg.source)
        args = dict(prof.plugin_args.get(pname, {}))
        args_path = args.pop("__path__", f"{prof.path}.pluginConfig[{pname}].args")
        try:
            plugin = cls(args or None, handle, args_path=args_path)
        except ConfigError as exc:
            raise ConfigError(exc.problem, field=exc.field, source=cfg.source) from None
        if getattr(cls, "per_node", False):
            plugin = adapter(plugin)
        instances[pname] = plugin
    return instances


# the extension points of the pod-group cycle (v1.37, GenericWorkload): multiPoint fills them
# only with that gate on, so a v1.34 profile (the gate off) lists no plugin there
_PLACEMENT_POINTS = frozenset({"PlacementGenerate", "PlacementScore"})


def _build_profile(cfg: SchedulerConfig, prof: ProfileConfig, registry: dict[str, Any],
                   handle: Handle | None, adapter: Any, generic_workload: bool = False,
                   topology_aware: bool = False) -> Framework:
    def err(field_: str, problem: str) -> ConfigError:
        return ConfigError(problem, field=field_, source=cfg.source)

    defaults = DEFAULT_MULTIPOINT + (GENERIC_WORKLOAD_MULTIPOINT if generic_workload else ()) \
        + (TOPOLOGY_AWARE_MULTIPOINT if topology_aware else ())
    default_mp = PluginSetConfig([PluginRef(n, w) for n, w in defaults if n in registry])
    multi = _merge(default_mp, prof.multi_point)
    points = {pt: _merge(PluginSetConfig(), prof.points.get(pt, PluginSetConfig()))
              for pt in EXTENSION_POINTS}
    # every plugin name that will be instantiated
    names: dict[str, str] = {}
    for ref in multi.enabled:
        names.setdefault(ref.name, f"{prof.path}.plugins.multiPoint")
    for pt, pset in points.items():
        key = next(k for k, v in _POINT_KEYS.items() if v == pt)
        for ref in pset.enabled:
            names.setdefault(ref.name, f"{prof.path}.plugins.{key}")
    _check_implemented(cfg, prof, names, registry)
    for pname in prof.plugin_args:
        if pname not in registry:
            raise err(prof.plugin_args[pname]["__path__"].rsplit(".args", 1)[0] + ".name",
                      f'unknown plugin "{pname}"')
    instances = _instantiate(cfg, prof, names, registry, handle, adapter)
    weights: dict[str, int] = {}
    for ref in multi.enabled:
        weights[ref.name] = ref.weight
    placement_weights = dict(weights)
    enabled_points: dict[str, list[Any]] = {}
    for pt, pset in points.items():
        key = next(k for k, v in _POINT_KEYS.items() if v == pt)
        for ref in pset.enabled:
            if not implements(instances[ref.name], pt):
                raise err(f"{prof.path}.plugins.{key}",
                          f'plugin "{ref.name}" does not extend {pt}')
            if pt == "Score":
                weights[ref.name] = ref.weight
            elif pt == "PlacementScore":
                placement_weights[ref.name] = ref.weight
        enabled_set = [r.name for r in pset.enabled]
        if "*" in pset.disabled:
            order = enabled_set
        else:
            disabled = set(pset.disabled)
            override: list[str] = []
            multi_names: list[str] = []
            for ref in multi.enabled:
                if not implements(instances[ref.name], pt) or ref.name in disabled:
                    continue
                if pt in _PLACEMENT_POINTS and not generic_workload:
                    continue  # v1.34 has no placement points: only an explicit entry adds one
                if ref.name in enabled_set:
                    override.append(ref.name)
                    continue
                if ref.name in multi_names:
                    raise err(f"{prof.path}.plugins.multiPoint",
                              f'plugin "{ref.name}" already registered as {pt}')
                multi_names.append(ref.name)
            order = list(dict.fromkeys(override + multi_names + enabled_set))
        if len(order) != len(set(order)) or len(enabled_set) != len(set(enabled_set)):
            raise err(f"{prof.path}.plugins.{key}", f"a plugin is enabled twice for {pt}")
        enabled_points[pt] = [instances[n] for n in order]
    if len(enabled_points["QueueSort"]) != 1:
        raise err(f"{prof.path}.plugins.queueSort",
                  f"exactly one queueSort plugin is required, got "
                  f"{len(enabled_points['QueueSort'])}")
    if not enabled_points["Bind"]:
        raise err(f"{prof.path}.plugins.bind", "at least one bind plugin is needed")
    pct = prof.percentage_of_nodes_to_score
    if pct is None:
        pct = cfg.percentage_of_nodes_to_score
    return Framework(prof.scheduler_name, enabled_points, weights, pct,
                     plugin_args={k: v for k, v in prof.plugin_args.items()},
                     placement_weights=placement_weights)
