"""Incremental pod indexes stay equal to a recount from scratch through adds, deletes,
label updates, node removal and LRU eviction."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler_core.api.selectors import LabelSelector
from scheduler_core.cluster.store import Cluster
from scheduler_core.nodetable.pod_index import (
    NamespaceFilter,
    PriorityLoads,
    SelectorCounts,
    TermIndex,
    domain_counts,
    priority_loads,
)
from tests.builders import make_node, make_pod

APP_WEB = LabelSelector.parse({"matchLabels": {"app": "web"}})
DEFAULT_NS = NamespaceFilter(frozenset({"default"}))


def recount(cluster: Cluster, selector: LabelSelector, ns: str = "default") -> np.ndarray:
    t = cluster.table
    out = np.zeros(t.high, dtype=np.int32)
    for slot in range(t.high):
        if t.live[slot]:
            out[slot] = sum(1 for p in t.pods[slot].values()
                            if p.namespace == ns and selector.matches(p.labels))
    return out


def cluster_with(n: int) -> Cluster:
    c = Cluster()
    for i in range(n):
        c.add_node(make_node(f"n{i}").alloc(cpu="8", memory="32Gi", pods=110)
                   .label("zone", "abc"[i % 3]).obj())
    return c


def test_counts_follow_adds_deletes_and_label_updates():
    c = cluster_with(6)
    idx = SelectorCounts(c.table)
    for i in range(10):
        c.add_pod(make_pod(f"p{i}").label("app", "web" if i % 2 else "db").node(f"n{i % 6}").obj())
    col = idx.counts(DEFAULT_NS, APP_WEB)
    assert np.array_equal(col[: c.table.high], recount(c, APP_WEB))
    c.delete_pod("default", "p1")
    relabelled = make_pod("p2").label("app", "web").node("n2").obj()
    c.update_pod(relabelled)
    c.add_pod(make_pod("other-ns", "kube-system").label("app", "web").node("n0").obj())
    assert np.array_equal(idx.counts(DEFAULT_NS, APP_WEB)[: c.table.high], recount(c, APP_WEB))


def test_node_removal_clears_its_slot_and_reuse_starts_at_zero():
    c = cluster_with(3)
    idx = SelectorCounts(c.table)
    c.add_pod(make_pod("a").label("app", "web").node("n1").obj())
    idx.counts(DEFAULT_NS, APP_WEB)
    c.delete_node("n1")
    c.add_node(make_node("fresh").alloc(cpu="1", memory="1Gi", pods=10).obj())
    col = idx.counts(DEFAULT_NS, APP_WEB)
    assert col[c.table.slot_of["fresh"]] == 0


def test_lru_eviction_bounds_keys_and_rebuilds_correctly():
    c = cluster_with(4)
    idx = SelectorCounts(c.table, max_keys=3)
    for i in range(8):
        c.add_pod(make_pod(f"p{i}").label("app", f"a{i % 5}").node(f"n{i % 4}").obj())
    selectors = [LabelSelector.parse({"matchLabels": {"app": f"a{k}"}}) for k in range(5)]
    for sel in selectors:
        idx.counts(DEFAULT_NS, sel)
    assert idx.stats["keys"] == 3 and idx.stats["evictions"] == 2
    c.add_pod(make_pod("late").label("app", "a0").node("n3").obj())
    for sel in selectors:  # evicted ones are rebuilt from scratch, kept ones were maintained
        assert np.array_equal(idx.counts(DEFAULT_NS, sel)[: c.table.high], recount(c, sel))


def test_domain_counts_by_zone():
    c = cluster_with(6)
    idx = SelectorCounts(c.table)
    for i in range(7):
        c.add_pod(make_pod(f"p{i}").label("app", "web").node(f"n{i % 6}").obj())
    _codes, totals = domain_counts(c.table, "zone", idx.counts(DEFAULT_NS, APP_WEB))
    by_zone = {c.table.label_values["zone"][k]: int(v) for k, v in enumerate(totals)}
    assert by_zone == {"a": 3, "b": 2, "c": 2}


def test_term_index_tracks_carriers():
    c = cluster_with(3)

    def terms_of(pod):
        return tuple(sorted(k for k in pod.labels if k.startswith("term-")))

    index = TermIndex(c.table, terms_of)
    c.add_pod(make_pod("a").label("term-x", "1").node("n0").obj())
    c.add_pod(make_pod("b").label("term-x", "1").label("term-y", "1").node("n2").obj())
    got = {t: col[: c.table.high].tolist() for t, col in index.terms()}
    assert got == {"term-x": [1, 0, 1], "term-y": [0, 0, 1]}
    c.delete_pod("default", "b")
    got = {t: col[: c.table.high].tolist() for t, col in index.terms()}
    assert got == {"term-x": [1, 0, 0]}


# --------------------------------------------------------------------------- PriorityLoads
def recount_below(cluster: Cluster, priority: int) -> tuple[list[int], dict[str, list[int]]]:
    """From the pods themselves: per slot, the pods under ``priority`` and their requests."""
    t = cluster.table
    pods = [0] * t.high
    res: dict[str, list[int]] = {}
    for slot in range(t.high):
        for p in t.pods[slot].values():
            if p.priority < priority:
                pods[slot] += 1
                for r, v in p.spec.requests.items():
                    res.setdefault(r, [0] * t.high)[slot] += v
    return pods, res


def below(index: PriorityLoads, cluster: Cluster, priority: int
          ) -> tuple[list[int], dict[str, list[int]]]:
    pods, res = index.below(priority, np.arange(cluster.table.high))
    return pods.tolist(), {r: v.tolist() for r, v in res.items() if v.any()}


def test_priority_loads_follow_adds_deletes_updates_and_node_removal():
    c = cluster_with(4)
    for i in range(3):  # placed before the index exists: counted when it is built
        c.add_pod(make_pod(f"early{i}").req(cpu="100m").priority(i).node(f"n{i}").obj())
    index = priority_loads(c.table)
    assert index is not None and priority_loads(c.table) is index
    for i in range(12):
        c.add_pod(make_pod(f"p{i}").req(cpu=f"{100 * (i % 3 + 1)}m", memory="1Gi")
                  .priority(i % 4).node(f"n{i % 4}").obj())
    c.delete_pod("default", "p5")
    c.update_pod(make_pod("p6").req(cpu="100m", memory="1Gi").priority(2).node("n2")
                 .label("x", "y").obj())
    c.delete_node("n3")
    for prio in range(6):
        assert below(index, c, prio) == recount_below(c, prio), prio


def test_priority_loads_drop_a_priority_with_its_last_pod_and_switch_off_past_the_bound():
    c = cluster_with(2)
    index = PriorityLoads(c.table, max_priorities=3)
    for prio in (1, 2, 3):
        c.add_pod(make_pod(f"p{prio}").req(cpu="1").priority(prio).node("n0").obj())
    c.delete_pod("default", "p3")  # priority 3 has no pod left: its columns go
    c.add_pod(make_pod("p4").req(cpu="1").priority(4).node("n1").obj())  # room again
    assert index.enabled and below(index, c, 10) == recount_below(c, 10)
    c.add_pod(make_pod("p5").req(cpu="1").priority(5).node("n1").obj())  # a 4th priority
    assert not index.enabled
    assert not any(name.startswith("priority-loads") for name in c.table._extra)
    assert index._on_pod not in c.table.pod_listeners


@pytest.mark.parametrize("n_priorities", [2, 40], ids=["within-bound", "past-bound"])
def test_priority_loads_shared_instance(n_priorities):
    c = cluster_with(2)
    for prio in range(n_priorities):
        c.add_pod(make_pod(f"p{prio}").priority(prio).node("n0").obj())
    got = priority_loads(c.table)
    assert (got is not None) == (n_priorities <= 32)
    assert priority_loads(c.table) is got
