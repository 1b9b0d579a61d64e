"""One scenario while it is being built: its random stream, what was chosen so far, and the
files, params, ops and record it accumulates.

The build steps (:mod:`~workloads.generator.cluster`, ``profiles``, ``groups``, ``budget``,
``ops``, then ``scenario``) run in a fixed order and each reads what the earlier ones chose;
every random choice goes through :attr:`Draft.rng`, so the order of the draws is part of the
output (same seed and index -> the same scenario).
"""

from __future__ import annotations

import random
from typing import Any

from workloads.generator.model import TEMPLATE_DIR, Group, Node, NodeGroup, scenario_name

__all__ = ["Draft"]


class Draft:
    """The state of one scenario under construction."""

    def __init__(self, seed: int, index: int) -> None:
        self.rng = random.Random(f"schedperf-generate/{seed}/{index}")
        self.seed, self.index = seed, index
        self.name = scenario_name(seed, index)
        self.prefix = f"generated-{seed}-{index}"
        # what the scenario accumulates
        self.tags: set[str] = set()
        self.record: list[str] = []  # the comment lines above the test case
        self.templates: dict[str, str] = {}  # path relative to the topic folder -> text
        self.params: dict[str, int] = {}
        self.ops: list[dict[str, Any]] = []
        # the cluster (cluster.choose_nodes; the preemption pool in profiles)
        self.zones = 0
        self.racks = 0  # per zone
        self.node_groups: list[NodeGroup] = []
        self.nodes: list[Node] = []
        # priorities and scheduler profiles (profiles.choose_priorities_and_profiles)
        self.priorities = False
        self.global_default = False
        self.mid_never = False
        self.preemption = False
        self.n_profiles = 0
        self.schedulers: list[str] = []
        self.profile_config: dict[str, Any] | None = None
        # pod groups (groups.choose_groups) and their sizes (budget.size_groups)
        self.groups: list[Group] = []
        self.never_fits = 0  # pods larger than every node
        self.slots: dict[int, int] = {}  # node host number -> pods of the largest request
        self.churn: dict[str, Any] | None = None
        self.churn_pods = 0

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def tag(self, *tags: str) -> None:
        self.tags.update(tags)

    def template(self, suffix: str, text: str) -> str:
        path = f"{TEMPLATE_DIR}/{self.prefix}-{suffix}.yaml"
        self.templates[path] = text
        return path
