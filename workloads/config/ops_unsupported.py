"""scheduler_perf ops that schedperf parses but cannot run: DRA and pod groups.

Each carries a class-level ``unsupported_reason``; the runner reports workloads using them as
unsupported. Fields and checks follow upstream's ``dra.go`` / ``operations.go``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from workloads.config.decode import Fields
from workloads.config.ops import Op, check_count, require

__all__ = [
    "AllocResourceClaims",
    "CreateResourceClaims",
    "CreateResourceDriver",
    "WaitForPodGroups",
]

_DRA = "dynamic resource allocation (DRA) is not modelled by schedperf"


@dataclass(frozen=True, kw_only=True)
class CreateResourceDriver(Op):
    """DRA: publish ResourceSlices for nodes matching the ``nodes`` glob."""

    opcode: ClassVar[str] = "createResourceDriver"
    unsupported_reason: ClassVar[str | None] = _DRA

    driver_name: str = ""
    max_claims_per_node: int = 0
    max_claims_per_node_param: str = ""
    nodes: str = ""

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"driver_name": f.string("driverName"),
              "max_claims_per_node": f.integer("maxClaimsPerNode"),
              "max_claims_per_node_param": f.param("maxClaimsPerNodeParam"),
              "nodes": f.string("nodes")}
        check_count(f, "maxClaimsPerNode", kw["max_claims_per_node"],
                     kw["max_claims_per_node_param"])
        require(f, "driverName", "DriverName must be set")
        require(f, "nodes", "Nodes must be set")
        return kw


@dataclass(frozen=True, kw_only=True)
class CreateResourceClaims(Op):
    """DRA: create ``count`` ResourceClaims from ``template_path`` in ``namespace``."""

    opcode: ClassVar[str] = "createResourceClaims"
    unsupported_reason: ClassVar[str | None] = _DRA

    count: int = 0
    count_param: str = ""
    namespace: str = ""
    template_path: Path | None = None

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"count": f.integer("count"), "count_param": f.param("countParam"),
              "namespace": f.string("namespace"), "template_path": f.file("templatePath")}
        check_count(f, "count", kw["count"], kw["count_param"])
        require(f, "namespace", "Namespace must be set")
        require(f, "templatePath", "TemplatePath must be set")
        return kw


@dataclass(frozen=True, kw_only=True)
class AllocResourceClaims(Op):
    """DRA: allocate the claims in ``namespace`` (all namespaces if empty) without pods."""

    opcode: ClassVar[str] = "allocResourceClaims"
    unsupported_reason: ClassVar[str | None] = _DRA

    namespace: str = ""

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        return {"namespace": f.string("namespace")}


@dataclass(frozen=True, kw_only=True)
class WaitForPodGroups(Op):
    """Wait until ``count`` PodGroup objects exist in ``namespace`` (gang scheduling)."""

    opcode: ClassVar[str] = "waitForPodGroups"
    unsupported_reason: ClassVar[str | None] = "PodGroups (gang scheduling) are not modelled " \
        "by schedperf"

    namespace: str = ""
    count: int = 0
    count_param: str = ""

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"namespace": f.string("namespace"), "count": f.integer("count"),
              "count_param": f.param("countParam")}
        check_count(f, "count", kw["count"], kw["count_param"])
        return kw
