"""Incremental pod indexes stay equal to a recount from scratch through adds, deletes,
label updates, node removal and LRU eviction."""

from __future__ import annotations

import numpy as np

from scheduler_core.api.selectors import LabelSelector
from scheduler_core.cluster.store import Cluster
from scheduler_core.nodetable.pod_index import (
    NamespaceFilter,
    SelectorCounts,
    TermIndex,
    domain_counts,
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
