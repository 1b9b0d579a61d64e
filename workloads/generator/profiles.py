"""PriorityClasses, the preemption pool and the scheduler profiles of a scenario."""

from __future__ import annotations

from typing import Any

from workloads.generator.cluster import model_nodes
from workloads.generator.draft import Draft
from workloads.generator.model import PRIORITY_PREFIX, SECOND_PROFILE

__all__ = ["choose_priorities_and_profiles"]


def choose_priorities_and_profiles(d: Draft) -> None:
    """PriorityClasses (globalDefault, preemptionPolicy Never), the node pool that fill pods
    pack for preemption, and 0-2 scheduler profiles with their KubeSchedulerConfiguration."""
    r = d.rng
    d.priorities = d.chance(0.5)
    d.global_default = d.priorities and d.chance(0.5)
    d.mid_never = d.priorities and d.chance(0.3)
    d.preemption = d.priorities and d.chance(0.6)
    if d.priorities:
        d.tag("priorities")
        notes = []
        if d.global_default:
            d.tag("globalDefault")
            notes.append(f"{PRIORITY_PREFIX}1 globalDefault")
        if d.mid_never:
            d.tag("preemptionPolicy:Never")
            notes.append(f"{PRIORITY_PREFIX}1 preemptionPolicy Never")
        d.record.append("priorities: PriorityClasses " + ", ".join(
            f"{PRIORITY_PREFIX}{k}={1000 * (k + 1)}" for k in range(3))
            + (f" ({'; '.join(notes)})" if notes else ""))
    if d.preemption:
        pools = [g for g in d.node_groups if g.kind != "mixed" and not g.gpus
                 and g.count - (g.count // g.cordon_every if g.cordon_every else 0) >= 2]
        others = [g for g in d.node_groups if g not in pools]
        if pools and (others or len(pools) > 1):
            pool = r.choice(pools)
            pool.fill = True
            d.nodes = model_nodes(d)
        else:
            d.preemption = False
    n_profiles = r.choice((0, 1, 2, 2))
    d.n_profiles = n_profiles
    d.schedulers = ["default-scheduler"] + ([SECOND_PROFILE] if n_profiles == 2 else [])
    d.profile_config = None
    if n_profiles:
        d.tag(f"profiles:{n_profiles}")
        d.profile_config = _scheduler_config(d, n_profiles)


def _scheduler_config(d: Draft, n: int) -> dict[str, Any]:
    r = d.rng
    cfg: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1",
                           "kind": "KubeSchedulerConfiguration"}
    if d.chance(0.3):
        cfg["percentageOfNodesToScore"] = r.choice((5, 30, 70))
        d.tag("percentageOfNodesToScore")
    if d.chance(0.4):
        cfg["podInitialBackoffSeconds"] = 1
        cfg["podMaxBackoffSeconds"] = r.choice((1, 2, 5))
    profiles = []
    notes = []
    for k in range(n):
        name = d.schedulers[k]
        strategy = r.choice(("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"))
        d.tag(f"scoring:{strategy}")
        ss: dict[str, Any] = {"type": strategy, "resources": [
            {"name": "cpu", "weight": r.randint(1, 3)},
            {"name": "memory", "weight": r.randint(1, 3)}]}
        if strategy == "RequestedToCapacityRatio":
            ss["requestedToCapacityRatio"] = {"shape": r.choice((
                [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
                [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
                [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 10},
                 {"utilization": 100, "score": 2}]))}
        prof: dict[str, Any] = {"schedulerName": name}
        plugins: dict[str, Any] = {}
        weights = [{"name": p, "weight": r.randint(1, 5)}
                   for p in ("TaintToleration", "NodeAffinity", "PodTopologySpread",
                             "InterPodAffinity") if d.chance(0.3)]
        if weights:
            plugins["multiPoint"] = {"enabled": weights}
        disabled = [p for p in ("NodeResourcesBalancedAllocation", "ImageLocality")
                    if d.chance(0.25)]
        if disabled:
            plugins["score"] = {"disabled": [{"name": p} for p in disabled]}
        if plugins:
            prof["plugins"] = plugins
        prof["pluginConfig"] = [{"name": "NodeResourcesFit",
                                 "args": {"scoringStrategy": ss}}]
        profiles.append(prof)
        pairs = ", ".join(f"{w['name']}={w['weight']}" for w in weights)
        notes.append(f"{name}: {strategy}" + (f", weights {pairs}" if weights else "")
                     + (f", score disabled {'/'.join(disabled)}" if disabled else ""))
    cfg["profiles"] = profiles
    extra = ", ".join(f"{k}={cfg[k]}" for k in ("percentageOfNodesToScore",
                                                 "podInitialBackoffSeconds",
                                                 "podMaxBackoffSeconds") if k in cfg)
    d.record.append(f"profiles ({n}): " + "; ".join(notes)
                    + (f" [{extra}]" if extra else ""))
    return cfg
