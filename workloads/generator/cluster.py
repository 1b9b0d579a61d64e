"""The nodes of a scenario: zones and racks, node groups (kind, taints, cordons, extended
resources, images) and the model of every node the createNodes ops will make."""

from __future__ import annotations

from workloads.generator.draft import Draft
from workloads.generator.model import NODE_KINDS, Node, NodeGroup

__all__ = ["choose_nodes", "model_nodes"]


def choose_nodes(d: Draft) -> None:
    """Zones, racks and the node groups (kind, count, taints, cordons, extended resources,
    images); then the model of every node."""
    r = d.rng
    d.zones = r.choice((1, 2, 2, 3, 3, 4))
    d.racks = r.choice((1, 2, 3))
    if d.racks > 1:
        d.tag("racks")
    total = r.randint(20, 200)
    n_groups = r.choice((1, 2, 2, 3))
    kinds = ["standard", "mixed", "small", "large"]
    groups = []
    for k in range(n_groups):
        kind = r.choice(kinds[:2]) if k == 0 else r.choice(kinds)
        groups.append(NodeGroup(name="abc"[k], kind=kind))
    sizes = _split(d, total, n_groups, minimum=max(5, d.zones))
    for g, n in zip(groups, sizes, strict=True):
        g.count = n
        g.zone_strategy = d.chance(0.4)
        g.images = d.chance(0.3)
    if len({g.kind for g in groups}) > 1 or any(g.kind == "mixed" for g in groups):
        d.tag("heterogeneous-nodes")
    if d.chance(0.55):
        g = r.choice(groups)
        g.taint_tenths = r.randint(1, 5)
        g.taint_effect = r.choice(("NoSchedule", "NoSchedule", "NoExecute",
                                   "PreferNoSchedule"))
        d.tag(f"taints:{g.taint_effect}")
    if d.chance(0.3):
        g = r.choice(groups)
        g.cordon_every = r.randint(4, 10)
        d.tag("cordoned-nodes")
    if d.chance(0.3):
        g = r.choice(groups)
        g.gpus = r.choice((2, 4, 8))
        g.zone_strategy = False  # nodeAllocatableStrategy wins over the label strategy
        d.tag("extended-resource")
    for g in groups:
        d.tag("zone-labels:strategy" if g.zone_strategy else "zone-labels:template")
        if g.images:
            d.tag("node-images")
    d.node_groups = groups
    d.nodes = model_nodes(d)


def _split(d: Draft, total: int, parts: int, minimum: int) -> list[int]:
    weights = [d.rng.uniform(0.5, 2.0) for _ in range(parts)]
    free = total - minimum * parts
    sizes = [minimum + int(free * w / sum(weights)) for w in weights]
    sizes[0] += total - sum(sizes)
    return sizes


def model_nodes(d: Draft) -> list[Node]:
    """Every node the createNodes ops make, in creation order (``host`` numbers them)."""
    out = []
    host = 0
    for g in d.node_groups:
        shapes = NODE_KINDS[g.kind]
        for i in range(g.count):
            cpu, mem, pods = shapes[i % len(shapes)]
            out.append(Node(
                group=g.name, kind=g.kind, zone=i % d.zones,
                rack=i % (d.zones * d.racks), host=host, cpu=cpu, mem=mem, pods=pods,
                gpus=g.gpus, tainted=i % 10 < g.taint_tenths, effect=g.taint_effect,
                cordoned=bool(g.cordon_every) and i % g.cordon_every == g.cordon_every - 1,
                fill=g.fill))
            host += 1
    return out
