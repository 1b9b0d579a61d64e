"""Typed replies of the reference scheduler (protocol 1, docs/reference-scheduler.md).

Every parser checks the shape it reads; a reply of another shape raises
ReferenceProcessError (the binary and this client disagree about the protocol).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from workloads.reference.errors import ReferenceProcessError

__all__ = [
    "Applied",
    "ConfigInfo",
    "Evaluation",
    "Filter",
    "PluginPreFilter",
    "PluginScores",
    "PostFilter",
    "PreFilter",
    "ProfileInfo",
    "Score",
    "Status",
    "VersionInfo",
    "Victim",
]

T = TypeVar("T")


class _Reader:
    """Field access with shape checks; ``where`` is the path of the value in the reply."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise ReferenceProcessError(f"reply {where}: expected an object, got {data!r:.200}")
        self.data = data
        self.where = where

    def _get(self, key: str, kind: type | tuple[type, ...], *, nullable: bool = False) -> Any:
        if key not in self.data:
            raise ReferenceProcessError(f"reply {self.where}.{key}: missing")
        value = self.data[key]
        if value is None and nullable:
            return None
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise ReferenceProcessError(
                f"reply {self.where}.{key}: expected {kind}, got {value!r:.200}")
        return value

    def text(self, key: str, default: str | None = None) -> str:
        if default is not None and key not in self.data:
            return default
        return self._get(key, str)

    def integer(self, key: str) -> int:
        return self._get(key, int)

    def flag(self, key: str) -> bool:
        return self._get(key, bool)

    def texts(self, key: str, *, nullable: bool = False) -> tuple[str, ...] | None:
        value = self._get(key, list, nullable=nullable)
        if value is None:
            return None
        if not all(isinstance(v, str) for v in value):
            raise ReferenceProcessError(f"reply {self.where}.{key}: expected strings")
        return tuple(value)

    def obj(self, key: str, parse: Callable[[Any, str], T], *, nullable: bool = False
            ) -> T | None:
        value = self._get(key, dict, nullable=nullable)
        return None if value is None else parse(value, f"{self.where}.{key}")

    def objs(self, key: str, parse: Callable[[Any, str], T]) -> tuple[T, ...]:
        return tuple(parse(v, f"{self.where}.{key}[{i}]")
                     for i, v in enumerate(self._get(key, list)))

    def mapping(self, key: str, parse: Callable[[Any, str], T]) -> dict[str, T]:
        return {k: parse(v, f"{self.where}.{key}.{k}") for k, v in self._get(key, dict).items()}


def _int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ReferenceProcessError(f"reply {where}: expected an integer, got {value!r:.200}")
    return value


@dataclass(frozen=True, slots=True)
class VersionInfo:
    protocol: int
    kubernetes: str
    go: str
    binary_sha256: str

    @classmethod
    def parse(cls, data: Any, where: str = "result") -> VersionInfo:
        r = _Reader(data, where)
        return cls(r.integer("protocol"), r.text("kubernetes"), r.text("go"),
                   r.text("binarySHA256"))


@dataclass(frozen=True, slots=True)
class ProfileInfo:
    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: dict[str, tuple[str, ...]]  # extension point -> enabled plugins, in order
    score_weights: dict[str, int]

    @classmethod
    def parse(cls, data: Any, where: str) -> ProfileInfo:
        r = _Reader(data, where)
        pct = r._get("percentageOfNodesToScore", int, nullable=True)
        plugins = r.mapping("plugins", lambda v, w: _Reader({"v": v}, w).texts("v") or ())
        return cls(r.text("schedulerName"), pct, plugins, r.mapping("scoreWeights", _int))


@dataclass(frozen=True, slots=True)
class ConfigInfo:
    profiles: tuple[ProfileInfo, ...]

    @classmethod
    def parse(cls, data: Any, where: str = "result") -> ConfigInfo:
        return cls(_Reader(data, where).objs("profiles", ProfileInfo.parse))


@dataclass(frozen=True, slots=True)
class Applied:
    kind: str
    namespace: str
    name: str
    uid: str
    action: str  # created, updated, deleted, bound

    @classmethod
    def parse(cls, data: Any, where: str) -> Applied:
        r = _Reader(data, where)
        return cls(r.text("kind"), r.text("namespace", ""), r.text("name"), r.text("uid"),
                   r.text("action"))


@dataclass(frozen=True, slots=True)
class Status:
    """A framework status: code as kube-scheduler names it, plugin, reasons."""

    code: str
    plugin: str = ""
    reasons: tuple[str, ...] = ()

    @classmethod
    def parse(cls, data: Any, where: str) -> Status:
        r = _Reader(data, where)
        return cls(r.text("code"), r.text("plugin", ""), r.texts("reasons") or ())

    @property
    def is_success(self) -> bool:
        return self.code == "Success"


@dataclass(frozen=True, slots=True)
class PluginPreFilter:
    plugin: str
    code: str
    reasons: tuple[str, ...]
    node_names: frozenset[str] | None  # None: all nodes

    @classmethod
    def parse(cls, data: Any, where: str) -> PluginPreFilter:
        r = _Reader(data, where)
        names = r.texts("nodeNames", nullable=True)
        return cls(r.text("plugin"), r.text("code"), r.texts("reasons") or (),
                   None if names is None else frozenset(names))


@dataclass(frozen=True, slots=True)
class PreFilter:
    plugins: tuple[PluginPreFilter, ...]
    status: Status
    node_names: frozenset[str] | None
    skipped: frozenset[str]

    @classmethod
    def parse(cls, data: Any, where: str) -> PreFilter:
        r = _Reader(data, where)
        names = r.texts("nodeNames", nullable=True)
        return cls(r.objs("plugins", PluginPreFilter.parse), r.obj("status", Status.parse),
                   None if names is None else frozenset(names), frozenset(r.texts("skipped")))


@dataclass(frozen=True, slots=True)
class Filter:
    feasible: tuple[str, ...]
    rejected: dict[str, Status]  # node -> the first failing plugin's status

    @classmethod
    def parse(cls, data: Any, where: str) -> Filter:
        r = _Reader(data, where)
        return cls(r.texts("feasible") or (), r.mapping("rejected", Status.parse))


@dataclass(frozen=True, slots=True)
class PluginScores:
    plugin: str
    weight: int
    scores: dict[str, int]  # node -> normalized score, before the weight

    @classmethod
    def parse(cls, data: Any, where: str) -> PluginScores:
        r = _Reader(data, where)
        return cls(r.text("plugin"), r.integer("weight"), r.mapping("scores", _int))


@dataclass(frozen=True, slots=True)
class Score:
    pre_score: tuple[Status, ...]
    status: Status
    skipped: frozenset[str]
    plugins: tuple[PluginScores, ...]
    totals: dict[str, int]
    best: frozenset[str]
    scored_by_scheduler: bool

    @classmethod
    def parse(cls, data: Any, where: str) -> Score:
        r = _Reader(data, where)
        return cls(r.objs("preScore", Status.parse), r.obj("status", Status.parse),
                   frozenset(r.texts("skipped") or ()), r.objs("plugins", PluginScores.parse),
                   r.mapping("totals", _int), frozenset(r.texts("best") or ()),
                   r.flag("scoredByScheduler"))

    def plugin(self, name: str) -> PluginScores | None:
        return next((p for p in self.plugins if p.plugin == name), None)


@dataclass(frozen=True, slots=True)
class Victim:
    namespace: str
    name: str
    uid: str
    node: str

    @classmethod
    def parse(cls, data: Any, where: str) -> Victim:
        r = _Reader(data, where)
        return cls(r.text("namespace"), r.text("name"), r.text("uid"), r.text("node"))


@dataclass(frozen=True, slots=True)
class PostFilter:
    status: Status
    nominated_node: str | None  # None: nomination unchanged; "": cleared
    victims: tuple[Victim, ...]
    cleared_nominations: tuple[tuple[str, str], ...]  # (namespace, name)

    @classmethod
    def parse(cls, data: Any, where: str) -> PostFilter:
        r = _Reader(data, where)
        node = r._get("nominatedNode", str, nullable=True)
        cleared = tuple((_Reader(v, f"{where}.clearedNominations").text("namespace"),
                         _Reader(v, f"{where}.clearedNominations").text("name"))
                        for v in r._get("clearedNominations", list))
        return cls(r.obj("status", Status.parse), node, r.objs("victims", Victim.parse),
                   cleared)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What the real scheduler decides for one pending pod (``outcome``: Scheduled,
    Unschedulable or Error; ``message``: the FitError or error text)."""

    namespace: str
    name: str
    profile: str
    nodes: tuple[str, ...]
    pre_filter: PreFilter
    filter: Filter | None
    score: Score | None
    post_filter: PostFilter | None
    outcome: str
    message: str

    @classmethod
    def parse(cls, data: Any, where: str = "result") -> Evaluation:
        r = _Reader(data, where)
        pod = _Reader(r._get("pod", dict), f"{where}.pod")
        return cls(pod.text("namespace"), pod.text("name"), r.text("profile"),
                   r.texts("nodes") or (), r.obj("preFilter", PreFilter.parse),
                   r.obj("filter", Filter.parse, nullable=True),
                   r.obj("score", Score.parse, nullable=True),
                   r.obj("postFilter", PostFilter.parse, nullable=True),
                   r.text("outcome"), r.text("message"))
