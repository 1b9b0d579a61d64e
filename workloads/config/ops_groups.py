"""scheduler_perf ops of workload-aware scheduling: createPodGroups, createCompositePodGroups.

They are parsed and checked as strictly as every other op, and their objects are rendered and
validated by ``schedperf validate`` (:mod:`workloads.ops.groups`). createPodGroups runs when
the workload turns the GenericWorkload feature gate on (v1.37's PodGroup API, off by default;
without it the workload is *unsupported*: upstream's API server would not serve PodGroups).
createCompositePodGroups stays unsupported (no multi-level groups in scheduler_core).

The flat form of createCompositePodGroups (``count``/``countParam``) creates ``count`` objects
like createPodGroups. Its tree form (``rootCount``/``rootCountParam`` with ``depth``) creates
levels 1 .. depth-1 of CompositePodGroups: ``rootCount`` roots, then
``childrenCompositePodGroupsPerCPG`` children under each CompositePodGroup of the level above;
the PodGroups of level ``depth`` come from the next createPodGroups op. Its template sees
``.Level``, ``.ParentLevel``, ``.ParentIndex`` and ``.ChildrenCount`` (children per
CompositePodGroup: ``childrenPodGroupsPerCPG`` on the last level, else
``childrenCompositePodGroupsPerCPG``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from workloads.config.decode import EMPTY, Fields, FrozenDict
from workloads.config.ops import Op, check_count, require

__all__ = [
    "COMPOSITE_POD_GROUP_REASON",
    "POD_GROUP_REASON",
    "CreateCompositePodGroups",
    "CreatePodGroups",
]

POD_GROUP_REASON = ("PodGroup objects are served, and their pods scheduled as groups, only "
                    "with the GenericWorkload feature gate on (off by default, as in v1.37), "
                    "which this workload does not turn on")
COMPOSITE_POD_GROUP_REASON = ("CompositePodGroup objects need multi-level gang scheduling, "
                              "which scheduler_core does not implement yet")


@dataclass(frozen=True, kw_only=True)
class CreatePodGroups(Op):
    """Create ``count`` PodGroups from ``template_path`` in ``namespace`` (and wait until the
    scheduler's informer has them)."""

    opcode: ClassVar[str] = "createPodGroups"

    count: int = 0
    count_param: str = ""
    namespace: str = ""
    template_path: Path | None = None
    template_params: FrozenDict[str, Any] = EMPTY

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"count": f.integer("count"), "count_param": f.param("countParam"),
              "namespace": f.string("namespace"), "template_path": f.file("templatePath"),
              "template_params": f.any_map("templateParams")}
        check_count(f, "count", kw["count"], kw["count_param"])
        require(f, "namespace", "Namespace must be set")
        require(f, "templatePath", "TemplatePath must be set")
        return kw


@dataclass(frozen=True, kw_only=True)
class CreateCompositePodGroups(Op):
    """Create CompositePodGroups: ``count`` of them (flat form) or trees of ``depth`` levels
    under ``root_count`` roots (tree form; module docstring)."""

    opcode: ClassVar[str] = "createCompositePodGroups"
    unsupported_reason: ClassVar[str | None] = COMPOSITE_POD_GROUP_REASON

    count: int = 0
    count_param: str = ""
    root_count: int = 0
    root_count_param: str = ""
    depth: int = 0
    children_composite_pod_groups_per_cpg: int = 0
    children_composite_pod_groups_per_cpg_param: str = ""
    children_pod_groups_per_cpg: int = 0
    children_pod_groups_per_cpg_param: str = ""
    namespace: str = ""
    template_path: Path | None = None
    template_params: FrozenDict[str, Any] = EMPTY

    @property
    def tree(self) -> bool:
        return bool(self.root_count_param or self.root_count or self.depth)

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"count": f.integer("count"), "count_param": f.param("countParam"),
              "root_count": f.integer("rootCount"), "root_count_param": f.param("rootCountParam"),
              "depth": f.integer("depth"),
              "children_composite_pod_groups_per_cpg":
                  f.integer("childrenCompositePodGroupsPerCPG"),
              "children_composite_pod_groups_per_cpg_param":
                  f.param("childrenCompositePodGroupsPerCPGParam"),
              "children_pod_groups_per_cpg": f.integer("childrenPodGroupsPerCPG"),
              "children_pod_groups_per_cpg_param": f.param("childrenPodGroupsPerCPGParam"),
              "namespace": f.string("namespace"), "template_path": f.file("templatePath"),
              "template_params": f.any_map("templateParams")}
        for name, key in (("count", "count"), ("rootCount", "root_count"),
                          ("childrenCompositePodGroupsPerCPG",
                           "children_composite_pod_groups_per_cpg"),
                          ("childrenPodGroupsPerCPG", "children_pod_groups_per_cpg")):
            check_count(f, name, kw[key], kw.get(f"{key}_param", ""))
        tree = kw["root_count"] or kw["root_count_param"] or kw["depth"]
        flat = kw["count"] or kw["count_param"]
        if tree and flat:
            f.error(f.key_of("rootCountParam" if kw["root_count_param"] else "rootCount"),
                    "count/countParam (flat form) and rootCount/rootCountParam/depth (tree "
                    "form) are exclusive")
        if tree and kw["depth"] < 2:
            f.error(f.key_of("depth"), f"the tree form needs depth >= 2 (CompositePodGroup "
                    f"roots and the PodGroups below them), got {kw['depth']}")
        if not tree and (kw["children_composite_pod_groups_per_cpg"]
                         or kw["children_composite_pod_groups_per_cpg_param"]
                         or kw["children_pod_groups_per_cpg"]
                         or kw["children_pod_groups_per_cpg_param"]):
            f.error(None, "childrenCompositePodGroupsPerCPG/childrenPodGroupsPerCPG belong to "
                    "the tree form: set rootCount or rootCountParam and depth")
        require(f, "namespace", "Namespace must be set")
        require(f, "templatePath", "TemplatePath must be set")
        return kw

    def level_sizes(self) -> list[int]:
        """CompositePodGroups per level (1 .. depth-1) of the tree form, or [count]."""
        if not self.tree:
            return [self.count]
        sizes = [self.root_count]
        for _ in range(2, self.depth):
            sizes.append(sizes[-1] * self.children_composite_pod_groups_per_cpg)
        return sizes

    def children_count(self, level: int) -> int:
        """``.ChildrenCount`` of a CompositePodGroup at ``level`` (tree form)."""
        if level >= self.depth - 1:
            return self.children_pod_groups_per_cpg
        return self.children_composite_pod_groups_per_cpg
