"""The opcode registry and the decoder for one workloadTemplate entry."""

from __future__ import annotations

from typing import Any

from workloads.config.decode import Fields, FrozenDict, Scope
from workloads.config.ops import (
    Barrier,
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    CreatePodSets,
    DeletePods,
    Op,
    Sleep,
    StartCollectingMetrics,
    StopCollectingMetrics,
    UpdateAny,
)
from workloads.config.ops_groups import CreateCompositePodGroups, CreatePodGroups
from workloads.config.ops_unsupported import (
    AllocResourceClaims,
    CreateResourceClaims,
    CreateResourceDriver,
    WaitForPodGroups,
)
from workloads.config.yaml_lines import LineDict

__all__ = ["OPS", "decode_op"]

OPS: dict[str, type[Op]] = {cls.opcode: cls for cls in (
    AllocResourceClaims, Barrier, Churn, CreateAny, CreateCompositePodGroups, CreateNamespaces,
    CreateNodes, CreatePodGroups, CreatePodSets, CreatePods, CreateResourceClaims,
    CreateResourceDriver, DeletePods, Sleep, StartCollectingMetrics, StopCollectingMetrics,
    UpdateAny, WaitForPodGroups)}


def decode_op(scope: Scope, node: Any, yaml_path: str, line: int | None) -> Op | None:
    """Decode one workloadTemplate entry; None (with errors recorded) if it is unusable.

    As upstream: read ``opcode`` first, then decode strictly into that op's fields.
    """
    if not isinstance(node, LineDict):
        scope.error(yaml_path, "an op must be a mapping with an opcode", line)
        return None
    f = Fields(scope, node, yaml_path)
    opcode = f.string("opcode")
    if not opcode:
        f.error(f.key_of("opcode"), "opcode must be set")
        return None
    kind = OPS.get(opcode)
    if kind is None:
        f.error(f.key_of("opcode"),
                f'unknown opcode "{opcode}", must be one of {", ".join(sorted(OPS))}')
        return None
    kwargs = kind.decode(f)
    f.finish()
    return kind(line=node.line, yaml_path=yaml_path, field_lines=FrozenDict(f.lines), **kwargs)
