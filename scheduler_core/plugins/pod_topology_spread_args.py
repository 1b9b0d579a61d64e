"""PodTopologySpreadArgs: parsing, defaulting and validation (kube's
``ValidatePodTopologySpreadArgs``; messages use kube's field-error wording).

``defaultingType`` is ``System`` (default; the built-in hostname/zone constraints) or ``List``
(``defaultConstraints`` as given, possibly empty). Default constraints carry no selector: each
pod gets one deduced from the Services that select it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler_core.api._fields import Fields
from scheduler_core.api.affinity import TopologySpreadConstraint
from scheduler_core.errors import ConfigError, ManifestError
from scheduler_core.plugins.helper import (
    check_keys,
    label_name_problem,
    require_list,
    require_mapping,
)

__all__ = [
    "DO_NOT_SCHEDULE",
    "HOSTNAME_LABEL",
    "LIST_DEFAULTING",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "ZONE_LABEL",
    "PodTopologySpreadArgs",
]

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"

SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(3, HOSTNAME_LABEL, SCHEDULE_ANYWAY),
    TopologySpreadConstraint(5, ZONE_LABEL, SCHEDULE_ANYWAY),
)

_CONSTRAINT_KEYS = ("maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                    "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys")
_WHEN = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    defaulting_type: str = SYSTEM_DEFAULTING  # System | List
    default_constraints: tuple[TopologySpreadConstraint, ...] = ()  # only with List

    @property
    def system_defaulted(self) -> bool:
        return self.defaulting_type == SYSTEM_DEFAULTING

    @property
    def effective_defaults(self) -> tuple[TopologySpreadConstraint, ...]:
        """The constraints a pod without its own gets (before its selector is deduced)."""
        if self.system_defaulted:
            return SYSTEM_DEFAULT_CONSTRAINTS
        return self.default_constraints

    @classmethod
    def parse(cls, args: dict | None, path: str = "") -> PodTopologySpreadArgs:
        def at(*parts: str) -> str:
            return ".".join(p for p in (path, *parts) if p)

        data = require_mapping(args, path)
        check_keys(data, path, ("defaultConstraints", "defaultingType"),
                   "PodTopologySpreadArgs")
        raw = require_list(data.get("defaultConstraints"), at("defaultConstraints"))
        kind = data.get("defaultingType") or SYSTEM_DEFAULTING
        if kind not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            raise ConfigError(f"Unsupported value: {kind!r}: supported values: "
                              f'"{SYSTEM_DEFAULTING}", "{LIST_DEFAULTING}"',
                              field=at("defaultingType"))
        if kind == SYSTEM_DEFAULTING and raw:
            raise ConfigError(f'Invalid value: "{kind}": when .defaultConstraints are not empty',
                              field=at("defaultingType"))
        constraints: list[TopologySpreadConstraint] = []
        seen: set[tuple[str, str]] = set()
        for i, item in enumerate(raw):
            cpath = f"{at('defaultConstraints')}[{i}]"
            c = _parse_constraint(require_mapping(item, cpath), cpath)
            if (c.topology_key, c.when_unsatisfiable) in seen:
                raise ConfigError(
                    f'Duplicate value: "{{{c.topology_key}, {c.when_unsatisfiable}}}"',
                    field=cpath)
            seen.add((c.topology_key, c.when_unsatisfiable))
            constraints.append(c)
        return cls(kind, tuple(constraints))


def _parse_constraint(item: dict[str, Any], path: str) -> TopologySpreadConstraint:
    """One default constraint, checked in upstream order (maxSkew, topologyKey,
    whenUnsatisfiable, labelSelector); the remaining fields as in a pod spec."""
    check_keys(item, path, _CONSTRAINT_KEYS)
    skew = item.get("maxSkew")
    if isinstance(skew, bool) or not isinstance(skew, int | None):
        raise ConfigError(f"expected an integer, got {type(skew).__name__}",
                          field=f"{path}.maxSkew")
    if skew is None or skew <= 0:
        raise ConfigError(f"Invalid value: {skew or 0}: not in valid range (0, inf)",
                          field=f"{path}.maxSkew")
    key = item.get("topologyKey")
    if not key:
        raise ConfigError("Required value: can not be empty", field=f"{path}.topologyKey")
    problem = label_name_problem(key) if isinstance(key, str) else "expected a string"
    if problem:
        raise ConfigError(problem, field=f"{path}.topologyKey")
    when = item.get("whenUnsatisfiable")
    if not when:
        raise ConfigError("Required value: can not be empty",
                          field=f"{path}.whenUnsatisfiable")
    if when not in _WHEN:
        raise ConfigError(f"Unsupported value: {when!r}: supported values: "
                          f'"{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"',
                          field=f"{path}.whenUnsatisfiable")
    if item.get("labelSelector") is not None:
        raise ConfigError("Forbidden: constraint must not define a selector, as they deduced "
                          "for each pod", field=f"{path}.labelSelector")
    try:
        return TopologySpreadConstraint.from_fields(Fields(item, path, ""))
    except ManifestError as exc:
        raise ConfigError(exc.problem, field=exc.field) from None
