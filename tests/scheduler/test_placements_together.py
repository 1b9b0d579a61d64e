"""Placements of a pod group tried together (``cycle.placement_batch``) decide what trying them
one at a time (upstream's loop) decides: the same nodes, statuses, messages and counters.

Both paths break ties between equally good nodes with the run's generator, in a different
order; with a generator that always draws 0 both take the first tie in list order, so their
outcomes must be identical. With the real generator the batched path is deterministic per seed.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from scheduler_core.api.pod import Pod
from scheduler_core.api.podgroup import PodGroup
from scheduler_core.cycle import placement as placement_cycle
from tests.builders import make_node, make_pod
from tests.scheduler.test_topology_placement import RACK, group


class FirstTie:
    """A generator whose every draw is 0: both paths then take the first of tied nodes (and
    the first of tied placements)."""

    def integers(self, low: Any, high: Any = None, size: Any = None) -> Any:
        if size is not None:
            return np.zeros(size, dtype=np.int64)
        shape = np.shape(low if high is None else high)
        return np.zeros(shape, dtype=np.int64) if shape else 0


def scenario(seed: int) -> tuple[list[Any], list[Any], list[PodGroup], list[Any]]:
    """Racks of nodes of different sizes, some with PreferNoSchedule taints or an ssd label,
    pods already bound, and groups (gang and basic; one too big for any rack) whose members
    differ in size and some prefer ssd nodes."""
    rnd = random.Random(seed)
    nodes, names = [], []
    for r in range(rnd.randint(3, 5)):
        for i in range(rnd.randint(2, 7)):
            name = f"r{r}-{i}"
            b = (make_node(name).alloc(cpu=rnd.choice(["2", "4", "8"]),
                                       memory=rnd.choice(["8Gi", "32Gi"]), pods=110)
                 .label("kubernetes.io/hostname", name).label(RACK, f"r{r}"))
            if rnd.random() < 0.3:
                b = b.label("disk", "ssd")
            for t in range(rnd.choice([0, 0, 1, 2])):
                b = b.taint(f"soft{t}", "x", "PreferNoSchedule")
            nodes.append(b.obj())
            names.append(name)
    bound = [make_pod(f"filler{i}").req(cpu=rnd.choice(["500m", "1"]), memory="1Gi")
             .node(rnd.choice(names)).obj() for i in range(rnd.randint(0, 6))]
    groups, members = [], []
    for g in range(rnd.randint(3, 6)):
        size = rnd.randint(2, 6)
        gang = rnd.random() < 0.7
        groups.append(group(f"g{g}", rnd.randint(1, size) if gang else None))
        for m in range(size):
            b = make_pod(f"g{g}-{m}").req(cpu=rnd.choice(["500m", "1", "1500m", "2"]),
                                          memory="512Mi").group(f"g{g}")
            if rnd.random() < 0.3:
                b = b.preferred(rnd.randint(1, 50), {"matchExpressions": [
                    {"key": "disk", "operator": "In", "values": ["ssd"]}]})
            members.append(b.obj())
    groups.append(group("huge", 30))
    members += [make_pod(f"huge-{m}").req(cpu="2", memory="1Gi").group("huge").obj()
                for m in range(30)]
    return nodes, bound, groups, members


def run(make_scheduler, seed: int, *, together: bool, monkeypatch, rng: Any = None,
        **kw: Any) -> tuple[Any, Any]:
    with monkeypatch.context() as m:
        if not together:
            m.setattr(placement_cycle, "evaluate_together", lambda *a: None)
        nodes, bound, groups, members = scenario(seed)
        cluster, sched = make_scheduler(nodes, seed=seed, generic_workload=True,
                                        topology_aware=True, **kw)
        if rng is not None:
            sched.rng = rng
        for p in bound:
            cluster.add_pod(p)
        for g in groups:
            cluster.add_pod_group(g)
        for p in members:
            cluster.add_pod(p)
        sched.run_until_idle()
    return cluster, sched


def outcome(cluster: Any, sched: Any) -> dict[str, Any]:
    ps, gs = sched.placement_stats, sched.group_stats
    return {
        "bound": {p.name: p.node_name for p in cluster.pods.values()
                  if p.node_name and p.key not in cluster.assumed},
        "assumed": set(cluster.assumed),
        "failures": dict(sched.failures),
        "placements": (ps.generated, ps.evaluated, ps.feasible),
        "groups": (gs.cycles, gs.scheduled, gs.unschedulable, gs.errors, gs.wasted_pods),
        "start": sched.next_start_node_index,
        "requested": {k: v.copy() for k, v in cluster.table.requested.items()},
        "pod_count": cluster.table.pod_count.copy(),
    }


def same(a: dict[str, Any], b: dict[str, Any]) -> None:
    for key in a:
        if isinstance(a[key], dict) and key in ("requested",):
            assert a[key].keys() == b[key].keys()
            for k in a[key]:
                assert np.array_equal(a[key][k], b[key][k]), (key, k)
        elif isinstance(a[key], np.ndarray):
            assert np.array_equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


@pytest.mark.parametrize("seed", range(8))
def test_together_decides_what_one_at_a_time_decides(make_scheduler, monkeypatch, seed):
    c1, s1 = run(make_scheduler, seed, together=True, monkeypatch=monkeypatch, rng=FirstTie())
    c2, s2 = run(make_scheduler, seed, together=False, monkeypatch=monkeypatch,
                 rng=FirstTie())
    assert s1.placement_stats.together > 0 and s2.placement_stats.together == 0
    same(outcome(c1, s1), outcome(c2, s2))
    o = outcome(c1, s1)
    assert "default/huge-0" in o["failures"]  # the gang no rack holds stays pending
    assert "0/" in o["failures"]["default/huge-0"]
    assert not any(n.startswith("huge") for n in o["bound"])
    assert o["assumed"] == set()


def test_the_scenarios_reach_the_interesting_cases(make_scheduler, monkeypatch):
    """Over the seeds above: groups placed, groups that fit no rack, placements a group fit
    in and ones it did not (wasted pods), and nodes with different PreferNoSchedule counts
    (NormalizeScore per placement)."""
    wasted = placed = partial = 0
    for seed in range(8):
        _, s = run(make_scheduler, seed, together=True, monkeypatch=monkeypatch,
                   rng=FirstTie())
        ps, gs = s.placement_stats, s.group_stats
        wasted += gs.wasted_pods
        placed += gs.scheduled
        partial += ps.evaluated - ps.feasible
    assert placed > 10 and wasted > 0 and partial > 0


@pytest.mark.parametrize("seed", range(3))
def test_together_is_deterministic_per_seed_and_keeps_groups_in_one_rack(
        make_scheduler, monkeypatch, seed):
    c1, s1 = run(make_scheduler, seed, together=True, monkeypatch=monkeypatch)
    c2, s2 = run(make_scheduler, seed, together=True, monkeypatch=monkeypatch)
    same(outcome(c1, s1), outcome(c2, s2))
    table = c1.table
    racks: dict[str, set[str]] = {}
    for p in c1.pods.values():
        if p.node_name and p.spec.pod_group:
            rack = table.node(table.slot_of[p.node_name]).labels[RACK]
            racks.setdefault(p.spec.pod_group, set()).add(rack)
    assert racks and all(len(r) == 1 for r in racks.values())


def test_a_member_with_pod_anti_affinity_is_tried_one_placement_at_a_time(make_scheduler):
    nodes, _, _, _ = scenario(0)
    cluster, sched = make_scheduler(nodes, generic_workload=True, topology_aware=True)
    cluster.add_pod_group(group("g", 2))
    cluster.add_pod(make_pod("a").req(cpu="500m").group("g").label("app", "x").obj())
    b = make_pod("b").req(cpu="500m").group("g").label("app", "x").manifest()
    b["spec"]["affinity"] = {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "x"}},
            "topologyKey": "kubernetes.io/hostname"}]}}
    cluster.add_pod(Pod.from_manifest(b))
    sched.run_until_idle()
    assert sched.group_stats.scheduled == 1
    assert sched.placement_stats.together == 0  # InterPodAffinity is not node-local
    a, b = cluster.pods["default/a"].node_name, cluster.pods["default/b"].node_name
    assert a and b and a != b


def test_racks_bigger_than_the_nodes_to_find_are_tried_one_at_a_time(make_scheduler):
    # 150 nodes per rack: the default percentage examines 100 of them, from a start that
    # moves, so the order of the search matters
    nodes = [make_node(f"r{r}-{i}").alloc(cpu="4", memory="32Gi", pods=110)
             .label(RACK, f"r{r}").obj() for r in range(2) for i in range(150)]
    cluster, sched = make_scheduler(nodes, generic_workload=True, topology_aware=True)
    cluster.add_pod_group(group("g", 2))
    for i in range(2):
        cluster.add_pod(make_pod(f"p{i}").req(cpu="1").group("g").obj())
    sched.run_until_idle()
    assert sched.group_stats.scheduled == 1 and sched.placement_stats.together == 0
    cluster2, sched2 = make_scheduler(nodes[:100] + nodes[150:250], generic_workload=True,
                                      topology_aware=True)
    cluster2.add_pod_group(group("g", 2))
    for i in range(2):
        cluster2.add_pod(make_pod(f"p{i}").req(cpu="1").group("g").obj())
    sched2.run_until_idle()
    assert sched2.group_stats.scheduled == 1 and sched2.placement_stats.together == 1


def test_the_decisions_log_tries_placements_one_at_a_time(make_scheduler, monkeypatch):
    _, s = run(make_scheduler, 0, together=True, monkeypatch=monkeypatch, record_cycles=True)
    assert s.placement_stats.together == 0 and s.group_stats.scheduled > 0



@pytest.mark.parametrize("together", [True, False])
def test_scores_are_normalised_within_each_placement(make_scheduler, monkeypatch, together):
    # NodeAffinity's preferred terms: weight 1 for label x (a0), 100 for label y (b0).
    # Within rack a the maximum is 1, so a0 normalises to 100 (x2 = 200) and wins over the
    # emptier a1 (about 50 more from the resource scores); normalised over both racks at
    # once, a0 would get 1 (x2 = 2) and lose to a1.
    if not together:
        monkeypatch.setattr(placement_cycle, "evaluate_together", lambda *a: None)
    ns = [make_node("a0").alloc(cpu="4", memory="32Gi", pods=110).label(RACK, "a")
          .label("x", "1").obj(),
          make_node("a1").alloc(cpu="4", memory="32Gi", pods=110).label(RACK, "a").obj(),
          make_node("b0").alloc(cpu="64", memory="256Gi", pods=110).label(RACK, "b")
          .label("y", "1").obj()]
    cluster, sched = make_scheduler(ns, generic_workload=True, topology_aware=True)
    cluster.add_pod(make_pod("filler").req(cpu="2", memory="1Gi").node("a0").obj())
    cluster.add_pod_group(group("g", 1))
    cluster.add_pod(make_pod("p").req(cpu="1", memory="100Mi").group("g")
                    .preferred(1, {"matchExpressions": [{"key": "x", "operator": "Exists"}]})
                    .preferred(100, {"matchExpressions": [{"key": "y", "operator": "Exists"}]})
                    .obj())
    sched.run_until_idle()
    assert sched.placement_stats.together == (1 if together else 0)
    assert cluster.pods["default/p"].node_name == "a0"
