"""ImageLocality. Extension points: Score (no NormalizeScore).

Sums, over the pod's init and regular containers, the size of each image already on the node
scaled by the share of nodes that have it; the sum is clamped to [23 MiB, 1000 MiB times the
number of containers] and mapped linearly onto 0..100.

See docs/scheduling-model.md, "ImageLocality".
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import MAX_NODE_SCORE, CycleState, Handle
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import count, no_args, zeros

__all__ = ["MAX_CONTAINER_THRESHOLD", "MIN_THRESHOLD", "NAME", "ImageLocality"]

NAME = names.IMAGE_LOCALITY
_MB = 1024 * 1024
MIN_THRESHOLD = 23 * _MB
MAX_CONTAINER_THRESHOLD = 1000 * _MB


class ImageLocality:
    name: ClassVar[str] = NAME
    score_in_range: ClassVar[bool] = True  # final scores are in [0, 100] by construction
    # its Score reads the node's images and how many nodes have each, never pods
    # (plugins.node_local.scores_node_local)
    score_node_local: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)

    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        n = count(table, idx)
        total_nodes = table.num_nodes
        spec = pod.spec
        total: np.ndarray | None = None
        for image in spec.images:  # one entry per container: duplicates count again
            sizes = table.image_size.get(image)
            if sizes is None or not total_nodes:
                continue
            spread = table.image_nodes[image] / total_nodes
            scaled = (sizes[idx] * spread).astype(np.int64)  # int64(float64(size) * spread)
            total = scaled if total is None else total + scaled
        if total is None:  # clamps to the minimum threshold: score 0 (read-only)
            return zeros(n)
        max_threshold = MAX_CONTAINER_THRESHOLD * (len(spec.init_containers)
                                                   + len(spec.containers))
        np.clip(total, MIN_THRESHOLD, max_threshold, out=total)
        total -= MIN_THRESHOLD
        total *= MAX_NODE_SCORE
        total //= max_threshold - MIN_THRESHOLD
        return total
