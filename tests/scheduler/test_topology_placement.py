"""Topology-aware placement of pod groups (TopologyAwareWorkloadScheduling, kube v1.37.2):
one placement per domain of the group's topology key, the group tried whole in each, the
best kept by the PlacementScore plugins; members already placed pin the domain."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.podgroup import PodGroup
from scheduler_core.framework.interface import Code
from scheduler_core.framework.placement import whole_table
from scheduler_core.plugins.topology_placement import domain_placements
from tests.builders import make_node, make_pod

RACK = "topology.kubernetes.io/rack"


def rack_nodes(racks: dict[str, int], cpu: str = "4") -> list[Any]:
    return [make_node(f"{r}-{i}").alloc(cpu=cpu, memory="32Gi", pods=110)
            .label("kubernetes.io/hostname", f"{r}-{i}").label(RACK, r).obj()
            for r, n in racks.items() for i in range(n)]


def group(name: str, min_count: int | None, key: str | None = RACK) -> PodGroup:
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    spec: dict[str, Any] = {"schedulingPolicy": policy}
    if key is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    return PodGroup.from_manifest({
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"}, "spec": spec})


def member(name: str, grp: str, cpu: str = "500m") -> Any:
    return make_pod(name).req(cpu=cpu, memory="100Mi").group(grp).obj()


@pytest.fixture
def tas(make_scheduler):
    def factory(ns, **kw):
        return make_scheduler(ns, generic_workload=True, topology_aware=True, **kw)
    return factory


def bound(cluster) -> dict[str, str]:
    return {p.name: p.node_name for p in cluster.pods.values()
            if p.node_name and p.key not in cluster.assumed}


def racks_of(cluster, names) -> set[str]:
    b = bound(cluster)
    return {cluster.table.node(cluster.table.slot_of[b[n]]).labels[RACK] for n in names}


# --------------------------------------------------------------------------- the generator


def test_one_placement_per_domain_in_list_order_nodes_without_the_label_in_none(tas):
    ns = rack_nodes({"r2": 2, "r0": 3, "r1": 1})
    ns.append(make_node("bare").alloc(cpu="4", memory="32Gi", pods=110).obj())
    cluster, _ = tas(ns)
    table = cluster.table
    placements = domain_placements(table, RACK, whole_table(table))
    assert [p.name for p in placements] == ["r0", "r1", "r2"]
    for p in placements:
        names = table.names_of(p.slots)
        assert {table.node(s).labels[RACK] for s in p.slots} == {p.name}
        order = [n for n in table.names_of(table.order()) if n in names]
        assert names == order  # list order kept inside a placement
        assert p.mask.sum() == len(p.slots) and p.mask[p.slots].all()
    assert sum(len(p) for p in placements) == 6  # "bare" is in none


# --------------------------------------------------------------------------- placing gangs


@pytest.mark.parametrize("seed", range(4))
def test_gang_is_placed_inside_one_domain(tas, seed):
    # 1 cpu pods on 4 cpu nodes: without the constraint LeastAllocated spreads them
    cluster, sched = tas(rack_nodes({"r0": 3, "r1": 3, "r2": 3}), seed=seed)
    cluster.add_pod_group(group("g", 3))
    for i in range(3):
        cluster.add_pod(member(f"p{i}", "g", cpu="1"))
    sched.run_until_idle()
    assert set(bound(cluster)) == {"p0", "p1", "p2"}
    assert len(set(bound(cluster).values())) == 3  # spread over nodes ...
    assert len(racks_of(cluster, ["p0", "p1", "p2"])) == 1  # ... of one rack
    assert sched.placement_stats.generated == 3
    assert sched.placement_stats.feasible == 3


def test_gang_that_fits_no_single_domain_binds_nothing(tas):
    # each rack holds two 3-cpu pods; the cluster holds six; the gang needs three in one rack
    ns = rack_nodes({"r0": 2, "r1": 2, "r2": 2})
    cluster, sched = tas(ns)
    cluster.add_pod_group(group("g", 3))
    for i in range(3):
        cluster.add_pod(member(f"p{i}", "g", cpu="3"))
    sched.run_until_idle()
    assert bound(cluster) == {}
    assert cluster.assumed == set()
    assert sched.placement_stats.evaluated == 3 and sched.placement_stats.feasible == 0
    assert "0/3 placements are available" in sched.failures["default/p0"]
    # the same gang without the constraint fits the cluster
    cluster2, sched2 = tas(rack_nodes({"r0": 2, "r1": 2, "r2": 2}))
    cluster2.add_pod_group(group("g", 3, key=None))
    for i in range(3):
        cluster2.add_pod(member(f"p{i}", "g", cpu="3"))
    sched2.run_until_idle()
    assert set(bound(cluster2)) == {"p0", "p1", "p2"}


@pytest.mark.parametrize("seed", range(3))
def test_scheduled_members_pin_the_domain(tas, seed):
    cluster, sched = tas(rack_nodes({"r0": 2, "r1": 2}), seed=seed)
    cluster.add_pod_group(group("g", 2))
    cluster.add_pod(member("p0", "g", cpu="1500m"))
    cluster.add_pod(member("p1", "g", cpu="1500m"))
    sched.run_until_idle()
    (home,) = racks_of(cluster, ["p0", "p1"])
    other = "r1" if home == "r0" else "r0"
    fwk = sched.profiles["default-scheduler"]
    pg = cluster.pod_groups["default/g"]
    placements, status = fwk.run_placement_generate(pg, whole_table(cluster.table))
    assert status is None and [p.name for p in placements] == [home]
    # a later member goes to the home rack while it has room ...
    cluster.add_pod(member("p2", "g", cpu="1500m"))
    cluster.add_pod(member("p3", "g", cpu="1500m"))
    sched.run_until_idle()
    assert racks_of(cluster, ["p2", "p3"]) == {home}
    # ... and stays pending when it is full, though the other rack is empty
    cluster.add_pod(member("p4", "g", cpu="1500m"))
    sched.run_until_idle()
    assert "p4" not in bound(cluster)
    assert all(not n.startswith(other) for n in bound(cluster).values())


def test_members_in_two_domains_are_an_error(tas):
    cluster, sched = tas(rack_nodes({"r0": 1, "r1": 1}))
    cluster.add_pod_group(group("g", 1))
    cluster.add_pod(make_pod("a").req(cpu="1").group("g").node("r0-0").obj())
    cluster.add_pod(make_pod("b").req(cpu="1").group("g").node("r1-0").obj())
    fwk = sched.profiles["default-scheduler"]
    placements, status = fwk.run_placement_generate(cluster.pod_groups["default/g"],
                                                    whole_table(cluster.table))
    assert placements == [] and status is not None and status.code == Code.ERROR
    assert "more than 1 domain found for pod group: r0, r1" in status.message
    assert status.plugin == "TopologyPlacementGenerator"


# --------------------------------------------------------------------------- scoring


def test_placement_scores_as_upstream_fit_most_allocated_plus_pods_count(tas):
    cluster, sched = tas(rack_nodes({"a": 2, "b": 2}))
    cluster.add_pod(make_pod("filler").req(cpu="2", memory="1Gi").node("b-0").obj())
    cluster.add_pod_group(group("g", 2))
    pods = [member("p0", "g"), member("p1", "g")]
    fwk = sched.profiles["default-scheduler"]
    table = cluster.table
    pa, pb = domain_placements(table, RACK, whole_table(table))
    pg = cluster.pod_groups["default/g"]
    totals, status = fwk.run_placement_score(
        pg, [(pa, [(p, "a-0") for p in pods]), (pb, [(p, "b-1") for p in pods])])
    assert status is None
    # Fit (MostAllocated over the rack as one node, weight 1):
    #   a: cpu 1000*100//8000 = 12, memory 200Mi*100//64Gi = 0  -> (12+0)//2 = 6
    #   b: cpu 3000*100//8000 = 37, memory 1224Mi*100//64Gi = 1 -> (37+1)//2 = 19
    # PodGroupPodsCount (weight 1): 2 pods each, normalised by the max -> 100
    assert totals == [106, 119]


@pytest.mark.parametrize("seed", range(3))
def test_best_placement_is_the_fuller_rack(tas, seed):
    cluster, sched = tas(rack_nodes({"a": 2, "b": 2}), seed=seed)
    cluster.add_pod(make_pod("filler").req(cpu="2", memory="1Gi").node("b-0").obj())
    cluster.add_pod_group(group("g", 2))
    cluster.add_pod(member("p0", "g"))
    cluster.add_pod(member("p1", "g"))
    sched.run_until_idle()
    assert racks_of(cluster, ["p0", "p1"]) == {"b"}


@pytest.mark.parametrize("seed", range(3))
def test_pods_count_outweighs_a_fuller_rack(tas, seed):
    # basic policy: rack a holds all three 1500m pods, rack b (one node) only two.
    # a: Fit (4500*100//8000=56, 0)//2 = 28, count 3 -> 100: 128
    # b: Fit (3000*100//4000=75, 0)//2 = 37, count 2 -> 66:  103
    cluster, sched = tas(rack_nodes({"a": 2, "b": 1}), seed=seed)
    cluster.add_pod_group(group("g", None))
    for i in range(3):
        cluster.add_pod(member(f"p{i}", "g", cpu="1500m"))
    sched.run_until_idle()
    assert racks_of(cluster, ["p0", "p1", "p2"]) == {"a"}


def _tie_rack(make_scheduler, seed: int) -> str:
    cluster, sched = make_scheduler(rack_nodes({"a": 2, "b": 2}), seed=seed,
                                    generic_workload=True, topology_aware=True)
    cluster.add_pod_group(group("g", 2))
    cluster.add_pod(member("p0", "g"))
    cluster.add_pod(member("p1", "g"))
    sched.run_until_idle()
    (rack,) = racks_of(cluster, ["p0", "p1"])
    return rack


def test_equal_placements_same_seed_same_choice_seeds_differ(make_scheduler):
    picks = [_tie_rack(make_scheduler, s) for s in range(12)]
    assert picks == [_tie_rack(make_scheduler, s) for s in range(12)]  # deterministic
    assert set(picks) == {"a", "b"}  # the tie is broken at random, not by order


def test_no_node_with_the_key_is_no_feasible_placement(tas):
    cluster, sched = tas(rack_nodes({"r0": 2}))
    cluster.add_pod_group(group("g", 2, key="example.com/block"))
    cluster.add_pod(member("p0", "g"))
    cluster.add_pod(member("p1", "g"))
    sched.run_until_idle()
    assert bound(cluster) == {}
    assert "no feasible placements found" in sched.failures["default/p0"]
    assert sched.group_stats.unschedulable >= 1


def test_only_the_chosen_placements_evaluations_are_recorded(tas):
    cluster, sched = tas(rack_nodes({"a": 2, "b": 2, "c": 2}), record_cycles=True)
    cluster.add_pod_group(group("g", 2))
    cluster.add_pod(member("p0", "g"))
    cluster.add_pod(member("p1", "g"))
    sched.schedule_one()
    assert sched.placement_stats.evaluated == 3
    records = sched.cycles
    assert [r.pod.name for r in records] == ["p0", "p1"]
    (rack,) = racks_of(cluster, ["p0", "p1"])
    table = cluster.table
    assert {table.node(r.selected).labels[RACK] for r in records} == {rack}


def test_the_search_start_wraps_at_the_placement_size(tas):
    # two racks of 100 and 50 nodes without the label (250 in the table): over a rack,
    # numFeasibleNodesToFind is all 100 nodes, so each of the 4 searches (2 members x 2 racks)
    # examines 100 and the start index wraps at 100: 37 stays 37 (at 250 it would be 187)
    ns = rack_nodes({"a": 100, "b": 100})
    ns += [make_node(f"bare-{i}").alloc(cpu="4", memory="32Gi", pods=110).obj()
           for i in range(50)]
    cluster, sched = tas(ns)
    sched.next_start_node_index = 37
    cluster.add_pod_group(group("g", 2))
    cluster.add_pod(member("p0", "g"))
    cluster.add_pod(member("p1", "g"))
    sched.schedule_one()
    assert sched.placement_stats.evaluated == 2
    assert sched.next_start_node_index == 37


def _score_placement_by_hand(table, slots, pods, resources) -> int:
    """Fit.ScorePlacement as documented: MostAllocated over the placement as one node."""
    score = weights = 0
    for name, weight in resources:
        want = 0
        for p in pods:
            if name == "cpu":
                want += p.spec.non_zero_cpu
            elif name == "memory":
                want += p.spec.non_zero_memory
            else:
                want += p.spec.requests.get(name, 0)
        if name not in ("cpu", "memory") and not want:
            continue
        alloc_col = table.allocatable.get(name)
        if alloc_col is None:
            continue
        used_col = {"cpu": table.nonzero_cpu, "memory": table.nonzero_memory}.get(
            name, table.requested.get(name))
        total = used = 0
        for s in slots.tolist():
            if alloc_col[s]:
                total += int(alloc_col[s])
                used += int(used_col[s]) if used_col is not None else 0
        if not total:
            continue
        score += min(want + used, total) * 100 // total * weight
        weights += weight
    return score // weights if weights else 0


@pytest.mark.parametrize("seed", range(6))
def test_placements_scored_together_score_as_one_at_a_time(make_scheduler, seed):
    import random

    rnd = random.Random(seed)
    gpu = "example.com/gpu"
    ns = []
    for r in range(4):
        for i in range(rnd.randint(0 if r == 3 else 1, 5)):
            b = make_node(f"r{r}-{i}").alloc(cpu=rnd.choice(["2", "4", "8"]),
                                              memory=rnd.choice(["8Gi", "32Gi"]), pods=110)
            if rnd.random() < 0.5:
                b = b.alloc({gpu: rnd.choice(["0", "2", "4"])})
            ns.append(b.label(RACK, f"r{r}").obj())
    ns.append(make_node("other").alloc(cpu="4", memory="8Gi", pods=110).label(RACK, "r9").obj())
    resources = [("cpu", 1), ("memory", 2), (gpu, 3)]
    config = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": n, "weight": w} for n, w in resources]}}}]}]}
    cluster, sched = make_scheduler(ns, config=config, generic_workload=True,
                                    topology_aware=True)
    table = cluster.table
    for k in range(rnd.randint(0, 8)):
        node = rnd.choice(ns).name
        # bound by name, so also on nodes without the gpu: those count for neither side
        cluster.add_pod(make_pod(f"filler{k}").req({
            "cpu": rnd.choice(["100m", "1"]), "memory": "1Gi",
            gpu: rnd.choice(["0", "1"])}).node(node).obj())
    fit = next(p for p in sched.profiles["default-scheduler"].points["PlacementScore"]
               if p.name == "NodeResourcesFit")
    placements = domain_placements(table, RACK, whole_table(table))
    empty = type(placements[0])("empty", placements[0].slots[:0], placements[0].mask & False)
    placements.append(empty)
    pg = group("g", 2)
    assignments = []
    for pl in placements:
        pods = [make_pod(f"m{j}").req({"cpu": rnd.choice(["0", "500m"]), "memory": "1Gi",
                                       gpu: rnd.choice(["0", "1"])}).obj()
                for j in range(rnd.randint(0, 3))]
        assignments.append((pl, [(p, "") for p in pods]))
    got, status = fit.score_placements(pg, assignments)
    assert status is None
    want = [_score_placement_by_hand(table, pl.slots, [p for p, _ in proposed], resources)
            for pl, proposed in assignments]
    assert got == want
    assert [fit.score_placement(pg, pl, proposed)[0] for pl, proposed in assignments] == want
