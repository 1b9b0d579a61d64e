"""Feasibility and sizing: what each pod group can be given without any waited-for pod
becoming unschedulable (the rules in the package docstring), relaxing the most confining
choices first; and the background churn's share."""

from __future__ import annotations

import math
from typing import Any

from workloads.generator.draft import Draft
from workloads.generator.model import (
    GPU,
    HOSTNAME_KEY,
    MAX_PODS,
    MAX_UNGATED,
    MIN_GROUP_CAP,
    RACK_KEY,
    ZONE_KEY,
    Group,
    Node,
)

__all__ = ["selected", "size_groups", "tolerated"]


def size_groups(d: Draft) -> None:
    """Downgrade constraints until every group has room, then size the groups."""
    groups = [g for g in d.groups if not g.gated or g.ungate]
    max_cpu = max((g.eff_cpu for g in groups), default=0)
    max_mem = max((g.eff_mem for g in groups), default=0)
    d.slots = {}
    for n in d.nodes:
        s = n.pods - 4  # room for churn pods
        if max_cpu:
            s = min(s, n.cpu // max_cpu)
        if max_mem:
            s = min(s, n.mem // max_mem)
        d.slots[n.host] = 0 if (n.cordoned or n.fill) else max(0, s)
    for g in groups:  # extended-resource pods never also carry a required constraint
        if g.gpu and (g.required or any(s.hard for s in g.spreads)):
            _downgrade(d, g)
    for _ in range(6 * len(groups)):
        limits = {g.name: _confine(d, g) for g in groups}
        tightest = min(limits, key=lambda name: limits[name])
        if limits[tightest] // 2 >= max(MIN_GROUP_CAP, 3 * len(groups)):
            break
        _downgrade(d, next(g for g in groups if g.name == tightest))
    t_max = max(len(groups), min([MAX_PODS] + [_confine(d, g) // 2 for g in groups]))
    d.churn = _churn_plan(d, room=t_max - len(groups))
    total = d.rng.randint(max(len(groups) + d.churn_pods, t_max // 3), t_max)
    for g in groups:
        g.cap = max(1, _group_cap(d, g, total))
        if g.gated:  # named pods, rendered and parsed one by one twice (create, update)
            g.cap = min(g.cap, MAX_UNGATED)
    budget = total - d.churn_pods
    for g in groups:
        g.count = 1
    left = budget - len(groups)
    for _ in range(left):
        open_groups = [g for g in groups if g.count < g.cap]
        if not open_groups:
            break
        d.rng.choice(open_groups).count += 1
    for g in d.groups:
        if g.gated and not g.ungate:
            g.count = d.rng.randint(1, 20)


def selected(g: Group, n: Node) -> bool:
    """Does node ``n`` pass the group's node selection?"""
    sel = g.selection
    if sel == "selector-zone":
        return n.zone == g.sel_zones[0]
    if sel == "selector-pool":
        return n.group == g.sel_pool
    if sel == "in":
        return n.zone in g.sel_zones
    if sel == "notin":
        return n.zone != g.sel_zones[0]
    if sel == "or":
        return n.group == g.sel_pool or n.rack in g.sel_racks
    if sel == "dedicated":
        return n.tainted
    return True


def tolerated(g: Group, n: Node) -> bool:
    """Does the group tolerate node ``n``'s taint (PreferNoSchedule always does)?"""
    if not n.tainted or n.effect == "PreferNoSchedule":
        return True
    return g.toleration in ("equal", "exists", "all")


def _usable(d: Draft, g: Group) -> list[Node]:
    return [n for n in d.nodes if d.slots[n.host] > 0 and selected(g, n)
            and tolerated(g, n) and (n.gpus > 0 or not g.gpu)]


def _domain(key: str, n: Node) -> int:
    return {ZONE_KEY: n.zone, RACK_KEY: n.rack}.get(key, n.host)


def _slot_count(d: Draft, nodes: list[Node]) -> int:
    return sum(d.slots[n.host] for n in nodes)


def _confine(d: Draft, g: Group) -> int:
    """Slots of the smallest node set the group's pods may all end up in."""
    usable = _usable(d, g)
    if not usable:
        return 0
    if g.gpu:
        return _slot_count(d, usable)
    key = ""
    if g.required in ("affinity", "anti") and g.required_key != HOSTNAME_KEY:
        key = g.required_key
    hard = [s for s in g.spreads if s.hard and s.key != HOSTNAME_KEY]
    if hard:
        key = hard[0].key
    if not key:
        return _slot_count(d, usable)
    domains: dict[int, list[Node]] = {}
    for n in usable:
        domains.setdefault(_domain(key, n), []).append(n)
    return min(_slot_count(d, nodes) for nodes in domains.values())


def _group_cap(d: Draft, g: Group, total: int) -> int:
    """The largest safe pod count of ``g`` when ``total`` pods are placed in all."""
    usable = _usable(d, g)
    s_min = min((d.slots[n.host] for n in usable), default=1)
    full = math.ceil(total / s_min)  # nodes the pods may fill up
    cap = 10**9
    if g.gpu:  # gpu groups share the extended resource and have no required constraint
        sharing = sum(1 for x in d.groups if x.gpu and (x.ungate or not x.gated))
        cap = min(sum(n.gpus for n in usable), len(usable) - full) // (2 * sharing)
    if g.required in ("anti", "hostport"):
        if g.required_key == HOSTNAME_KEY:
            cap = min(cap, (len(usable) - full) // 2)
        else:
            cap = min(cap, len({_domain(g.required_key, n) for n in usable}))
    for s in g.spreads:
        if not s.hard:
            continue
        if s.key == HOSTNAME_KEY:
            cap = min(cap, s.max_skew * (len(usable) - full) // 2)
            continue
        counted = {_domain(s.key, n) for n in d.nodes
                   if (s.affinity_policy == "Ignore" or selected(g, n))
                   and (s.taints_policy != "Honor" or tolerated(g, n))}
        live = {_domain(s.key, n) for n in usable}
        if live < counted or (s.min_domains or 1) > len(counted):
            cap = min(cap, s.max_skew * len(live))
    return cap


def _downgrade(d: Draft, g: Group) -> None:
    """Relax the group's most confining choice: required constraint, selection, gpu."""
    if g.required or any(s.hard for s in g.spreads):
        if g.gpu:
            g.gpu = False
            g.relaxed.append(GPU)
            return
        g.relaxed.append(f"required {g.required} on {g.required_key}")
        if g.required in ("affinity", "anti"):
            g.soft_affinity.append((g.required, g.required_key, g.name, 50))
        g.required, g.port = "", 0
        soft_keys = {s.key for s in g.spreads if not s.hard}
        g.spreads = [s for s in g.spreads if not s.hard or s.key not in soft_keys]
        for s in g.spreads:
            s.hard, s.min_domains = False, None
    elif g.gpu:
        g.gpu = False
        g.relaxed.append(GPU)
    elif g.selection != "none":
        g.relaxed.append(f"node selection {g.selection}")
        g.selection = "none"
    elif g.toleration in ("none", "wrong-value"):
        g.relaxed.append(f"toleration {g.toleration} (now all)")
        g.toleration = "all"


def _churn_plan(d: Draft, room: int) -> dict[str, Any] | None:
    """Background churn; at most ``room`` churn pods exist at any time."""
    r = d.rng
    d.churn_pods = 0
    if not d.chance(0.4):
        return None
    mode = r.choice(("create", "recreate"))
    kinds = sorted(r.sample(("node", "pod", "service"), r.randint(1, 3)))
    number = r.randint(1, 10)
    if "pod" in kinds and room < number:
        kinds = [k for k in kinds if k != "pod"] or ["service"]
    if "pod" in kinds:
        d.churn_pods = number
    d.tag(f"churn:{mode}")
    return {"mode": mode, "kinds": kinds, "number": number,
            "interval": r.choice((100, 200, 500, 1000))}
