"""The pod groups of a scenario: resources, tolerations, node selection, (anti-)affinity,
spreading, priorities, profiles, gates; and the comment line describing each group."""

from __future__ import annotations

import random

from workloads.generator.draft import Draft
from workloads.generator.model import (
    GPU,
    HOSTNAME_KEY,
    IMAGES,
    PAUSE,
    PRIORITY_PREFIX,
    RACK_KEY,
    SECOND_PROFILE,
    ZONE_KEY,
    Group,
    Spread,
    cpu_text,
)

__all__ = ["choose_groups", "describe_group"]


def choose_groups(d: Draft) -> None:
    """2-5 pod groups, at most one of them scheduling-gated, and how many pods never fit."""
    r = d.rng
    n = r.randint(2, 5)
    d.groups = [_choose_group(d, k) for k in range(n)]
    if d.chance(0.35):
        g = r.choice(d.groups)
        g.gated = True
        g.ungate = d.chance(0.6)
        g.mode = "async"
        d.tag("scheduling-gates")
        if g.ungate:
            d.tag("ungate:updateAny")
    d.never_fits = r.randint(1, 4) if d.chance(0.3) else 0
    if d.never_fits:
        d.tag("never-schedulable")
    _choose_gang(d)


def _choose_gang(d: Draft) -> None:
    """Maybe one group (not gated: gated pods never complete a gang) scheduled as gangs of 2-4
    pods (GenericWorkload). Drawn from a stream of its own, so scenarios without gangs are
    what they were before gangs existed."""
    r = random.Random(f"pod-groups:{d.seed}:{d.index}")
    candidates = [g for g in d.groups if not g.gated]
    if candidates and r.random() < 0.3:
        r.choice(candidates).gang = r.choice((2, 3, 4))
        d.tag("pod-groups:gang")


def _choose_group(d: Draft, k: int) -> Group:
    r = d.rng
    name = f"p{k}"
    g = Group(name=name, namespace=f"group-{name}")
    if not d.chance(0.15):
        g.cpu = r.choice((10, 50, 100, 100, 200, 250, 400))
        g.mem = r.choice((0, 32, 64, 128, 256, 512))
    g.containers = 2 if g.cpu and d.chance(0.2) else 1
    if g.cpu and d.chance(0.2):
        g.init = r.choice(("init", "sidecar"))
    g.overhead = d.chance(0.1)
    if any(ng.gpus for ng in d.node_groups) and d.chance(0.4):
        g.gpu = True
    if any(ng.images for ng in d.node_groups) and d.chance(0.6):
        g.image = r.choice(IMAGES)
    tainted = [ng for ng in d.node_groups if ng.taint_tenths]
    if d.chance(0.5 if tainted else 0.15):
        g.toleration = r.choice(("equal", "exists", "all", "wrong-value"))
    sel = r.choice(("none", "none", "selector-zone", "selector-pool", "in", "notin", "or",
                    "dedicated"))
    if sel == "dedicated" and not (tainted and g.toleration in ("equal", "exists", "all")):
        sel = "in"
    if sel in ("selector-zone", "in", "notin") and d.zones == 1:
        sel = "selector-pool"
    g.selection = sel
    g.sel_zones = tuple(sorted(r.sample(range(d.zones), r.randint(
        1, max(1, d.zones - 1))))) if d.zones > 1 else (0,)
    g.sel_pool = r.choice(d.node_groups).name
    racks = d.zones * d.racks
    g.sel_racks = tuple(sorted(r.sample(range(racks), max(1, racks // 2))))
    if d.chance(0.3):
        g.preferred_node = r.choice(("zone", "class"))
    g.required = r.choice(("", "", "affinity", "anti", "hostport", "spread", "spread"))
    keys = [HOSTNAME_KEY, ZONE_KEY] + ([RACK_KEY] if d.racks > 1 else [])
    g.required_key = r.choice(keys)
    if g.required == "hostport":
        g.port = 8000 + k
        g.required_key = HOSTNAME_KEY
    if g.required == "affinity" and g.required_key == HOSTNAME_KEY:
        g.required_key = ZONE_KEY
    if g.required == "spread":
        g.spreads.append(_choose_spread(d, g.required_key, hard=True))
    soft_keys = r.sample(keys, r.choice((0, 0, 1, 2)))  # (key, when) pairs must be unique
    g.spreads += [_choose_spread(d, key, hard=False) for key in soft_keys]
    for _ in range(r.choice((0, 0, 1, 2))):
        kind = r.choice(("affinity", "anti"))
        target = r.choice([f"p{j}" for j in range(k + 1)])
        g.soft_affinity.append((kind, r.choice(keys), target, r.randint(1, 100)))
    g.ns_selector = d.chance(0.2)
    g.match_label_keys = d.chance(0.2)
    if d.priorities and d.chance(0.6):
        g.priority = f"{PRIORITY_PREFIX}{r.randint(0, 2)}"
    if len(d.schedulers) > 1 and d.chance(0.5):
        g.scheduler = SECOND_PROFILE
    g.grace_zero = d.chance(0.5)
    g.mode = r.choice(("sync", "async"))
    return g


def _choose_spread(d: Draft, key: str, hard: bool) -> Spread:
    r = d.rng
    s = Spread(key=key, max_skew=r.choice((1, 1, 2, 3, 5)), hard=hard)
    if hard and d.chance(0.4):
        s.min_domains = r.randint(1, {ZONE_KEY: d.zones + 1,
                                      RACK_KEY: d.zones * d.racks + 1}.get(key, 8))
    if d.chance(0.25):
        s.affinity_policy = r.choice(("Honor", "Ignore"))
    if d.chance(0.25):
        s.taints_policy = r.choice(("Honor", "Ignore"))
    s.match_label_keys = d.chance(0.15)
    return s


def describe_group(g: Group) -> str:
    """The comment line recording the group's choices."""
    parts = [f"{g.count} pods in {g.namespace}",
             {"sync": "waited for", "async": "skipWaitToCompletion"}[g.mode]]
    parts.append(f"requests {cpu_text(g.cpu) if g.cpu else '-'} cpu/"
                 f"{g.mem or '-'}Mi x{g.containers} container(s)"
                 + (f" + {g.init}" if g.init else "") + (" + overhead" if g.overhead else "")
                 + (f" + 1 {GPU}" if g.gpu else ""))
    if g.toleration != "none":
        parts.append(f"toleration {g.toleration}")
    if g.selection != "none":
        parts.append(f"node selection {g.selection} (zones {list(g.sel_zones)}, pool "
                     f"{g.sel_pool}, racks {list(g.sel_racks)})")
    if g.preferred_node:
        parts.append(f"preferred node affinity on {g.preferred_node}")
    if g.required in ("affinity", "anti"):
        kind = "affinity" if g.required == "affinity" else "anti-affinity"
        parts.append(f"required pod {kind} on {g.required_key}")
    if g.port:
        parts.append(f"hostPort {g.port}")
    for s in g.spreads:
        parts.append(f"spread {s.key} maxSkew {s.max_skew} "
                     f"{'DoNotSchedule' if s.hard else 'ScheduleAnyway'}"
                     + (f" minDomains {s.min_domains}" if s.min_domains else "")
                     + (f" nodeAffinityPolicy {s.affinity_policy}" if s.affinity_policy
                        else "")
                     + (f" nodeTaintsPolicy {s.taints_policy}" if s.taints_policy else "")
                     + (" matchLabelKeys" if s.match_label_keys else ""))
    for kind, key, target, w in g.soft_affinity:
        parts.append(f"preferred pod {'affinity' if kind == 'affinity' else 'anti-affinity'}"
                     f" to {target} on {key} weight {w}")
    if g.ns_selector:
        parts.append("namespaceSelector {}")
    for flag, text in ((g.priority, f"priorityClassName {g.priority}"),
                       (g.scheduler, f"schedulerName {g.scheduler}"),
                       (g.grace_zero, "terminationGracePeriodSeconds 0"),
                       (g.gated, "scheduling gate" + (", ungated by updateAny" if g.ungate
                                                      else ", never ungated")),
                       (g.image != PAUSE, f"image {g.image}")):
        if flag:
            parts.append(text)
    if g.gang:
        parts.append(f"pod groups of {g.gang} (gang, minCount {g.gang})")
    if g.relaxed:
        parts.append(f"relaxed to fit: {', '.join(g.relaxed)}")
    return f"group {g.name}: " + "; ".join(parts)
