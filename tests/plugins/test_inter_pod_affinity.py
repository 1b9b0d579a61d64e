"""InterPodAffinity: filter rules and their order (first pod of its kind, namespaces and
namespace selectors, label keys, existing pods' anti-affinity), PreFilter Skip and
AddPod/RemovePod, symmetric and preferred scoring with normalisation, args, hints, and the
index extensions the plugin relies on."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from scheduler_core.api.objects import Namespace
from scheduler_core.api.pod import Pod
from scheduler_core.api.selectors import LabelSelector
from scheduler_core.cluster.store import Cluster
from scheduler_core.errors import ConfigError
from scheduler_core.framework import interface as fw
from scheduler_core.framework.interface import SKIP, Code, CycleState, QueueingHint
from scheduler_core.nodetable.pod_index import (
    NamespaceFilter,
    TermIndex,
    selector_counts,
    selector_guard,
)
from scheduler_core.plugins import inter_pod_affinity as ipa_module
from scheduler_core.plugins.inter_pod_affinity import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    InterPodAffinity,
)
from scheduler_core.plugins.inter_pod_affinity_terms import pod_terms
from tests.builders import make_node, make_pod, run_filter, run_score

ZONE = "zone"
HOST = "kubernetes.io/hostname"
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


# --------------------------------------------------------------------------- builders
def aterm(labels: dict[str, str] | None = None, key: str = ZONE, *, sel: Any = "labels",
          namespaces: list[str] | None = None, ns_selector: dict | None = None,
          match_keys: list[str] | None = None, mismatch_keys: list[str] | None = None
          ) -> dict[str, Any]:
    """A PodAffinityTerm dict; ``sel=None`` leaves labelSelector out (nil: matches nothing),
    ``sel={}`` is the empty selector (matches everything)."""
    out: dict[str, Any] = {"topologyKey": key}
    if sel == "labels":
        out["labelSelector"] = {"matchLabels": labels or {}}
    elif sel is not None:
        out["labelSelector"] = sel
    if namespaces is not None:
        out["namespaces"] = namespaces
    if ns_selector is not None:
        out["namespaceSelector"] = ns_selector
    if match_keys:
        out["matchLabelKeys"] = match_keys
    if mismatch_keys:
        out["mismatchLabelKeys"] = mismatch_keys
    return out


def pod(name: str = "p", ns: str = "default", *, labels: dict[str, str] | None = None,
        affinity: list[dict] = (), anti: list[dict] = (),
        pref: list[tuple[int, dict]] = (), pref_anti: list[tuple[int, dict]] = ()) -> Pod:
    b = make_pod(name, ns)
    for k, v in (labels or {}).items():
        b.label(k, v)
    m = b.manifest()
    aff: dict[str, Any] = {}
    for kind, req, prf in (("podAffinity", affinity, pref), ("podAntiAffinity", anti, pref_anti)):
        part: dict[str, Any] = {}
        if req:
            part[REQ] = list(req)
        if prf:
            part[PREF] = [{"weight": w, "podAffinityTerm": t} for w, t in prf]
        if part:
            aff[kind] = part
    if aff:
        m["spec"]["affinity"] = aff
    return Pod.from_manifest(m)


def node(name: str, zone: str | None = None):
    b = make_node(name).alloc(cpu="8", memory="32Gi", pods=110).label(HOST, name)
    if zone is not None:
        b.label(ZONE, zone)
    return b.obj()


def cluster(placed: dict[str, list[Pod]] = (), *, namespaces: dict[str, dict] | None = None,
            nodes=None) -> Cluster:
    c = Cluster()
    for ns, labels in (namespaces or {}).items():
        c.add_namespace(Namespace(ns, dict(labels)))
    for n in nodes or [node("n1", "z1"), node("n2", "z1"), node("n3", "z2"), node("n4"),
                       node("n5", "z2")]:
        c.add_node(n)
    for node_name, pods in dict(placed).items():
        for p in pods:
            p.node_name = node_name
            c.add_pod(p)
    return c


def plugin_for(c: Cluster, args: dict | None = None) -> InterPodAffinity:
    handle = SimpleNamespace(table=c.table, cluster=c, namespace_labels=c.namespace_labels)
    return InterPodAffinity(args, handle)


def passing(c: Cluster, incoming: Pod, args: dict | None = None) -> dict[str, Any]:
    """Node name -> None (passes) or (code, reason)."""
    got = run_filter(plugin_for(c, args), incoming, c.table)
    return {n: None if s is None else (s.code, s.reasons[0]) for n, s in got.items()}


AFF = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY)
ANTI = (Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY)
EXIST = (Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY)
ALL = ("n1", "n2", "n3", "n4", "n5")


def expect(**fails: Any) -> dict[str, Any]:
    return {n: fails.get(n) for n in ALL}


# --------------------------------------------------------------------------- Filter
def base_pods() -> dict[str, list[Pod]]:
    return {"n1": [pod("web", labels={"app": "web", "tier": "front"})],
            "n3": [pod("db", labels={"app": "db"})]}


FILTER_CASES = [
    ("affinity-zone", pod(affinity=[aterm({"app": "web"})]),
     expect(n3=AFF, n4=AFF, n5=AFF)),
    ("affinity-hostname", pod(affinity=[aterm({"app": "web"}, HOST)]),
     expect(n2=AFF, n3=AFF, n4=AFF, n5=AFF)),
    ("affinity-node-without-key-is-unresolvable", pod(affinity=[aterm({"app": "db"})]),
     expect(n1=AFF, n2=AFF, n4=AFF)),
    ("first-pod-of-its-kind-passes-where-key-exists",
     pod(labels={"app": "cache"}, affinity=[aterm({"app": "cache"})]), expect(n4=AFF)),
    ("not-first-of-kind-when-pod-does-not-match-itself",
     pod(affinity=[aterm({"app": "cache"})]), expect(**dict.fromkeys(ALL, AFF))),
    ("one-existing-pod-must-match-all-terms",
     pod(affinity=[aterm({"app": "web"}), aterm({"app": "db"})]),
     expect(**dict.fromkeys(ALL, AFF))),
    ("all-terms-matched-by-one-pod-each-key-applies",
     pod(affinity=[aterm({"app": "web"}), aterm({"tier": "front"}, HOST)]),
     expect(n2=AFF, n3=AFF, n4=AFF, n5=AFF)),
    ("nil-selector-matches-nothing",
     pod(labels={"app": "web"}, affinity=[aterm(sel=None)]), expect(**dict.fromkeys(ALL, AFF))),
    ("anti-affinity-zone", pod(anti=[aterm({"app": "web"})]), expect(n1=ANTI, n2=ANTI)),
    ("anti-affinity-hostname", pod(anti=[aterm({"app": "web"}, HOST)]), expect(n1=ANTI)),
    ("anti-affinity-empty-selector-matches-all-pods", pod(anti=[aterm(sel={}, key=HOST)]),
     expect(n1=ANTI, n3=ANTI)),
    ("affinity-checked-before-anti-affinity",
     pod(affinity=[aterm({"app": "web"})], anti=[aterm({"app": "web"}, HOST)]),
     expect(n1=ANTI, n3=AFF, n4=AFF, n5=AFF)),
]


@pytest.mark.parametrize(("incoming", "want"), [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(incoming, want):
    assert passing(cluster(base_pods()), incoming) == want


def test_existing_pods_anti_affinity_blocks_their_domain():
    guard = pod("guard", labels={"app": "guard"}, anti=[aterm({"app": "client"})])
    c = cluster({"n3": [guard]})
    assert passing(c, pod(labels={"app": "client"})) == expect(n3=EXIST, n5=EXIST)
    assert passing(c, pod(labels={"app": "other"})) == expect()


def test_existing_anti_affinity_is_checked_last():
    guard = pod("guard", labels={"app": "web"}, anti=[aterm({"app": "client"})])
    c = cluster({"n3": [guard]})
    incoming = pod(labels={"app": "client"}, anti=[aterm({"app": "web"}, HOST)])
    assert passing(c, incoming) == expect(n3=ANTI, n5=EXIST)


def test_pod_does_not_repel_itself_by_its_own_anti_affinity():
    # the incoming pod matches its own anti-affinity term, but it is not placed yet
    incoming = pod(labels={"app": "solo"}, anti=[aterm({"app": "solo"}, HOST)])
    assert passing(cluster(), incoming) == {n: None for n in ALL}


# --------------------------------------------------------------------------- namespaces
NAMESPACES = {"default": {"team": "a"}, "other": {"team": "b"}, "third": {"team": "b"}}


def ns_pods() -> dict[str, list[Pod]]:
    return {"n1": [pod("web", labels={"app": "web"})],
            "n3": [pod("web", "other", labels={"app": "web"})]}


NAMESPACE_CASES = [
    ("owner-namespace-by-default", aterm({"app": "web"}), ("n1", "n2")),
    ("namespaces-list", aterm({"app": "web"}, namespaces=["other"]), ("n3", "n5")),
    ("namespace-selector", aterm({"app": "web"}, ns_selector={"matchLabels": {"team": "b"}}),
     ("n3", "n5")),
    ("namespace-selector-or-list", aterm({"app": "web"}, namespaces=["default"],
                                         ns_selector={"matchLabels": {"team": "b"}}),
     ("n1", "n2", "n3", "n5")),
    ("empty-namespace-selector-is-all", aterm({"app": "web"}, ns_selector={}),
     ("n1", "n2", "n3", "n5")),
    ("namespace-selector-selecting-nothing", aterm({"app": "web"},
                                                    ns_selector={"matchLabels": {"team": "z"}}),
     ()),
]


@pytest.mark.parametrize(("term", "passes"), [c[1:] for c in NAMESPACE_CASES],
                         ids=[c[0] for c in NAMESPACE_CASES])
def test_affinity_namespaces(term, passes):
    c = cluster(ns_pods(), namespaces=NAMESPACES)
    got = passing(c, pod(affinity=[term]))
    assert {n for n, s in got.items() if s is None} == set(passes)


def test_existing_anti_affinity_namespace_selector_reads_incoming_namespace_labels():
    guard = pod("guard", "other", labels={"app": "guard"},
                anti=[aterm({"app": "web"}, ns_selector={"matchLabels": {"team": "a"}})])
    c = cluster({"n3": [guard]}, namespaces=NAMESPACES)
    plugin = plugin_for(c)
    web_default = pod(labels={"app": "web"})
    web_third = pod("w", "third", labels={"app": "web"})
    blocked = expect(n3=EXIST, n5=EXIST)
    assert run_filter(plugin, web_default, c.table)["n3"].reasons == (
        ERR_REASON_EXISTING_ANTI_AFFINITY,)
    assert passing(c, web_default) == blocked
    assert passing(c, web_third) == expect()
    # namespace labels are read when matching: relabelling "default" lifts the block
    c.update_namespace(Namespace("default", {"team": "c"}))
    assert passing(c, web_default) == expect()
    c.update_namespace(Namespace("third", {"team": "a"}))
    assert passing(c, web_third) == blocked


def test_incoming_namespace_selector_sees_new_namespaces():
    c = cluster(ns_pods(), namespaces={"default": {}})
    incoming = pod(anti=[aterm({"app": "web"}, HOST, ns_selector={"matchLabels": {"x": "y"}})])
    assert passing(c, incoming) == expect()
    c.add_namespace(Namespace("other", {"x": "y"}))
    assert passing(c, incoming) == expect(n3=ANTI)


@pytest.mark.parametrize(("keys", "blocked"), [
    ({"match_keys": ["version"]}, "n3"),
    ({"mismatch_keys": ["version"]}, "n1"),
    ({"match_keys": ["absent"]}, None),
], ids=["match-label-keys", "mismatch-label-keys", "key-not-on-pod-ignored"])
def test_match_label_keys_merge_owner_values(keys, blocked):
    c = cluster({"n1": [pod("v1", labels={"app": "web", "version": "v1"})],
                 "n3": [pod("v2", labels={"app": "web", "version": "v2"})]})
    incoming = pod(labels={"app": "web", "version": "v2"},
                   anti=[aterm({"app": "web"}, HOST, **keys)])
    want = {"n1": ANTI, "n3": ANTI} if blocked is None else {blocked: ANTI}
    assert passing(c, incoming) == expect(**want)


# --------------------------------------------------------------------------- PreFilter
@pytest.mark.parametrize(("placed", "incoming", "skip"), [
    ({}, pod(), True),
    ({"n1": [pod("g", anti=[aterm({"app": "x"})])]}, pod(labels={"app": "y"}), True),
    ({"n1": [pod("g", anti=[aterm({"app": "x"})])]}, pod(labels={"app": "x"}), False),
    ({"n4": [pod("g", anti=[aterm({"app": "x"})])]}, pod(labels={"app": "x"}), True),
    ({}, pod(anti=[aterm({"app": "x"})]), False),
    ({}, pod(affinity=[aterm({"app": "x"})]), False),
    ({}, pod(pref=[(5, aterm({"app": "x"}))]), True),
], ids=["no-terms", "existing-anti-not-matching", "existing-anti-matching",
        "existing-anti-on-node-without-key", "own-anti", "own-affinity", "only-preferred"])
def test_pre_filter_skip(placed, incoming, skip):
    c = cluster(placed)
    _, status = plugin_for(c).pre_filter(CycleState(), incoming, c.table)
    assert (status is SKIP) == skip
    if not skip:
        assert status is None


def filter_names(plugin, state, incoming, c) -> set[str]:
    t = c.table
    mask = plugin.filter(state, incoming, t, slice(0, t.high))
    return {t.node(s).name for s in range(t.high) if mask is None or mask[s]}


def test_add_and_remove_pod_update_a_cloned_state():
    web = pod("web", labels={"app": "web"})
    c = cluster({"n1": [web]})
    plugin = plugin_for(c)
    incoming = pod(anti=[aterm({"app": "web"}, HOST)])
    state = CycleState()
    plugin.pre_filter(state, incoming, c.table)
    assert filter_names(plugin, state, incoming, c) == set(ALL) - {"n1"}
    clone = state.clone()
    plugin.add_pod(clone, incoming, pod("web2", labels={"app": "web"}), c.table.slot_of["n2"])
    assert filter_names(plugin, clone, incoming, c) == {"n3", "n4", "n5"}
    assert filter_names(plugin, state, incoming, c) == set(ALL) - {"n1"}  # original untouched
    plugin.remove_pod(clone, incoming, web, c.table.slot_of["n1"])
    assert filter_names(plugin, clone, incoming, c) == {"n1", "n3", "n4", "n5"}


def test_add_pod_satisfies_affinity_and_removing_it_restores_first_pod_rule():
    c = cluster()
    plugin = plugin_for(c)
    incoming = pod(labels={"app": "db"}, affinity=[aterm({"app": "db"})])
    state = CycleState()
    plugin.pre_filter(state, incoming, c.table)
    first_of_kind = {"n1", "n2", "n3", "n5"}
    assert filter_names(plugin, state, incoming, c) == first_of_kind
    peer = pod("peer", labels={"app": "db"})
    s2 = state.clone()
    plugin.add_pod(s2, incoming, peer, c.table.slot_of["n3"])
    assert filter_names(plugin, s2, incoming, c) == {"n3", "n5"}
    plugin.remove_pod(s2, incoming, peer, c.table.slot_of["n3"])
    assert filter_names(plugin, s2, incoming, c) == first_of_kind


def test_add_pod_with_anti_affinity_blocks_incoming():
    c = cluster()
    plugin = plugin_for(c)
    guard = pod("guard", anti=[aterm({"app": "client"})])
    state = CycleState()
    # (an own term keeps PreFilter from skipping, so the state exists)
    incoming = pod(labels={"app": "client"}, anti=[aterm({"app": "nobody"})])
    plugin.pre_filter(state, incoming, c.table)
    plugin.add_pod(state, incoming, guard, c.table.slot_of["n1"])
    assert filter_names(plugin, state, incoming, c) == {"n3", "n4", "n5"}
    names = run_filter(plugin, incoming, c.table)
    assert all(s is None for s in names.values())  # a fresh PreFilter sees no guard


def test_explain_statuses_and_codes():
    c = cluster(base_pods())
    plugin = plugin_for(c)
    incoming = pod(affinity=[aterm({"app": "web"})], anti=[aterm({"app": "web"}, HOST)])
    state = CycleState()
    plugin.pre_filter(state, incoming, c.table)
    idx = np.asarray([c.table.slot_of[n] for n in ("n1", "n3", "n4")], dtype=np.int64)
    which, statuses = plugin.explain(state, incoming, c.table, idx)
    got = [(statuses[k].code, statuses[k].reasons, statuses[k].plugin) for k in which]
    assert got == [(Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY,), "InterPodAffinity"),
                   (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY,),
                    "InterPodAffinity"),
                   (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY,),
                    "InterPodAffinity")]


def test_indexes_follow_pods_placed_after_first_cycle():
    c = cluster()
    plugin = plugin_for(c)
    incoming = pod(labels={"app": "x"}, anti=[aterm({"app": "x"}, HOST)])
    assert passing(c, incoming) == expect()
    for i, n in enumerate(("n1", "n3")):
        p = pod(f"x{i}", labels={"app": "x"}, anti=[aterm({"app": "x"}, HOST)])
        p.node_name = n
        c.add_pod(p)
    assert run_filter(plugin, incoming, c.table)["n1"].reasons == (ERR_REASON_ANTI_AFFINITY,)
    assert passing(c, incoming) == expect(n1=ANTI, n3=ANTI)
    c.delete_pod("default", "x0")
    assert passing(c, incoming) == expect(n3=ANTI)
    # only the symmetric rule is left when the incoming pod has no terms of its own
    assert passing(c, pod(labels={"app": "x"})) == expect(n3=EXIST)


# --------------------------------------------------------------------------- Score
def scores(c: Cluster, incoming: Pod, args: dict | None = None, *, normalize: bool = True):
    return run_score(plugin_for(c, args), incoming, c.table, normalize=normalize)


def test_symmetric_required_affinity_scoring_uses_hard_weight():
    holder = pod("holder", labels={"app": "srv"}, affinity=[aterm({"app": "client"})])
    c = cluster({"n1": [holder]})
    client = pod(labels={"app": "client"})
    assert scores(c, client, normalize=False) == {"n1": 1, "n2": 1, "n3": 0, "n4": 0, "n5": 0}
    assert scores(c, client, {"hardPodAffinityWeight": 7}, normalize=False)["n2"] == 7
    assert scores(c, client) == {"n1": 100, "n2": 100, "n3": 0, "n4": 0, "n5": 0}
    assert scores(c, client, {"hardPodAffinityWeight": 0}) == "skip"
    assert scores(c, pod(labels={"app": "other"})) == "skip"


def test_preferred_affinity_and_anti_affinity_with_negative_scores():
    c = cluster(base_pods())
    incoming = pod(pref=[(10, aterm({"app": "web"}))], pref_anti=[(5, aterm({"app": "db"}, HOST))])
    assert scores(c, incoming, normalize=False) == {"n1": 10, "n2": 10, "n3": -5, "n4": 0,
                                                    "n5": 0}
    # min -5, max 10: 100 * (s + 5) / 15, truncated
    assert scores(c, incoming) == {"n1": 100, "n2": 100, "n3": 0, "n4": 33, "n5": 33}


def test_preferred_anti_affinity_only_is_normalised_from_the_minimum():
    c = cluster(base_pods())
    incoming = pod(pref_anti=[(7, aterm({"app": "web"}, HOST))])
    assert scores(c, incoming, normalize=False)["n1"] == -7
    assert scores(c, incoming) == {"n1": 0, "n2": 100, "n3": 100, "n4": 100, "n5": 100}


def test_normalisation_truncates_the_float_like_go():
    # 100 * (29 / 100) is 28.999999999999996 in float64: Go's int64() gives 28
    c = cluster({"n1": [pod("a", labels={"app": "a"})], "n2": [pod("b", labels={"app": "b"})]})
    incoming = pod(pref=[(100, aterm({"app": "a"}, HOST)), (29, aterm({"app": "b"}, HOST))])
    assert scores(c, incoming) == {"n1": 100, "n2": 28, "n3": 0, "n4": 0, "n5": 0}


def test_equal_scores_normalise_to_zero():
    c = cluster({"n1": [pod("a", labels={"app": "a"})]},
                nodes=[node("n1", "z1"), node("n2", "z1")])
    assert scores(c, pod(pref=[(10, aterm({"app": "a"}))])) == {"n1": 0, "n2": 0}


def test_existing_pods_preferred_terms_score_the_incoming_pod():
    holder = pod("holder", pref=[(3, aterm({"app": "client"}))],
                 pref_anti=[(4, aterm({"app": "client"}, HOST))])
    c = cluster({"n1": [holder]})
    client = pod(labels={"app": "client"})
    assert scores(c, client, normalize=False) == {"n1": -1, "n2": 3, "n3": 0, "n4": 0, "n5": 0}
    assert scores(c, client) == {"n1": 0, "n2": 100, "n3": 25, "n4": 25, "n5": 25}


def test_each_carrier_pod_adds_its_weight():
    holders = [pod(f"h{i}", pref=[(3, aterm({"app": "client"}))]) for i in range(3)]
    c = cluster({"n1": holders[:2], "n3": holders[2:]})
    raw = scores(c, pod(labels={"app": "client"}), normalize=False)
    assert raw == {"n1": 6, "n2": 6, "n3": 3, "n4": 0, "n5": 3}


@pytest.mark.parametrize(("incoming", "want"), [
    (pod(labels={"app": "client"}), "skip"),
    (pod(labels={"app": "client"}, pref=[(1, aterm({"app": "nobody"}))]),
     {"n1": 0, "n2": 100, "n3": 25, "n4": 25, "n5": 25}),
], ids=["no-own-preferences-skips", "own-preferences-keep-existing-terms"])
def test_ignore_preferred_terms_of_existing_pods(incoming, want):
    holder = pod("holder", pref=[(3, aterm({"app": "client"}))],
                 pref_anti=[(4, aterm({"app": "client"}, HOST))])
    c = cluster({"n1": [holder]})
    assert scores(c, incoming, {"ignorePreferredTermsOfExistingPods": True}) == want


def test_term_matching_with_zero_net_weight_still_scores():
    # +5 and -5 on the same domain: topology score exists (no Skip), every node gets 0
    c = cluster({"n1": [pod("a", labels={"app": "a"})]})
    incoming = pod(pref=[(5, aterm({"app": "a"}))], pref_anti=[(5, aterm({"app": "a"}))])
    assert scores(c, incoming, normalize=False) == dict.fromkeys(ALL, 0)
    assert scores(c, incoming) == dict.fromkeys(ALL, 0)


def test_score_only_over_candidates():
    c = cluster(base_pods())
    plugin = plugin_for(c)
    incoming = pod(pref=[(10, aterm({"app": "web"}))], pref_anti=[(5, aterm({"app": "db"}, HOST))])
    state = CycleState()
    idx = np.asarray([c.table.slot_of[n] for n in ("n3", "n4", "n2")], dtype=np.int64)
    assert plugin.pre_score(state, incoming, c.table, idx) is None
    raw = plugin.score(state, incoming, c.table, idx)
    assert raw.tolist() == [-5, 0, 10]
    assert plugin.normalize(state, incoming, raw).tolist() == [0, 33, 100]


# --------------------------------------------------------------------------- args, protocols
def test_protocols_and_defaults():
    plugin = InterPodAffinity(None, None, args_path="pluginConfig[InterPodAffinity]")
    for proto in (fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin,
                  fw.ScoreExtensions, fw.EnqueueExtensions):
        assert isinstance(plugin, proto), proto.__name__
    assert plugin.hard_weight == 1 and plugin.ignore_preferred is False
    assert InterPodAffinity({"hardPodAffinityWeight": 0}).hard_weight == 0
    assert InterPodAffinity({"kind": "InterPodAffinityArgs",
                             "ignorePreferredTermsOfExistingPods": True}).ignore_preferred


@pytest.mark.parametrize(("args", "field", "problem"), [
    ({"hardPodAffinityWeight": 101}, "a.hardPodAffinityWeight", "not in valid range [0, 100]"),
    ({"hardPodAffinityWeight": -1}, "a.hardPodAffinityWeight", "not in valid range [0, 100]"),
    ({"hardPodAffinityWeight": "1"}, "a.hardPodAffinityWeight", "expected an integer"),
    ({"ignorePreferredTermsOfExistingPods": "yes"}, "a.ignorePreferredTermsOfExistingPods",
     "expected a boolean"),
    ({"weight": 1}, "a.weight", "unknown field"),
], ids=["weight-too-high", "weight-negative", "weight-not-int", "ignore-not-bool",
        "unknown-field"])
def test_bad_args(args, field, problem):
    with pytest.raises(ConfigError) as err:
        InterPodAffinity(args, args_path="a")
    assert err.value.field == field
    assert problem in err.value.problem


# --------------------------------------------------------------------------- hints
def hints() -> dict[str, Any]:
    return {e.event.resource: e for e in InterPodAffinity().events_to_register()}


def test_registered_events():
    ev = hints()
    assert ev["Pod"].event.action == (fw.ActionType.ADD | fw.ActionType.UPDATE_POD_LABEL
                                      | fw.ActionType.DELETE)
    assert ev["Node"].event.action == (fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_LABEL
                                       | fw.ActionType.UPDATE_NODE_TAINT)


def placed(p: Pod, node_name: str = "n1") -> Pod:
    p.node_name = node_name
    return p


TARGET = pod("t", affinity=[aterm({"app": "db"})], anti=[aterm({"app": "web"}, HOST)])
DB, WEB, OTHER = ({"app": "db"}, {"app": "web"}, {"app": "x"})
Q, S = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


@pytest.mark.parametrize(("old", "new", "want"), [
    (None, lambda: placed(pod("a", labels=DB)), Q),
    (None, lambda: placed(pod("a", labels=OTHER)), S),
    (None, lambda: pod("a", labels=DB), S),
    (lambda: placed(pod("a", labels=OTHER)), lambda: placed(pod("a", labels=DB)), Q),
    (lambda: placed(pod("a", labels=WEB)), lambda: placed(pod("a", labels=OTHER)), Q),
    (lambda: placed(pod("a", labels=DB)), lambda: placed(pod("a", labels=DB)), S),
    (lambda: placed(pod("a", labels=WEB)), None, Q),
    (lambda: placed(pod("a", labels=DB)), None, S),
    (lambda: pod("a", labels=WEB), None, S),
], ids=["add-matching-affinity", "add-not-matching", "add-unassigned", "update-starts-matching",
        "update-stops-matching-anti", "update-no-change", "delete-matching-anti",
        "delete-not-matching-anti", "delete-unassigned"])
def test_pod_hint(old, new, want):
    hint = hints()["Pod"].hint
    assert hint(TARGET, old and old(), new and new()) == want


@pytest.mark.parametrize(("labels", "want"), [
    ({ZONE: "z9"}, Q), ({HOST: "n9"}, Q), ({"rack": "r"}, S),
], ids=["has-affinity-key", "has-anti-affinity-key", "no-term-key"])
def test_node_hint(labels, want):
    b = make_node("n9")
    for k, v in labels.items():
        b.label(k, v)
    assert hints()["Node"].hint(TARGET, None, b.obj()) == want


# --------------------------------------------------------------------------- index extensions
def test_selector_counts_conjunction_column_follows_pods():
    c = cluster()
    sc = selector_counts(c.table)
    ns = NamespaceFilter(frozenset({"default"}))
    app = LabelSelector.parse({"matchLabels": {"app": "web"}})
    front = LabelSelector.parse({"matchLabels": {"tier": "front"}})
    c.add_pod(placed(pod("a", labels={"app": "web", "tier": "front"}), "n1"))
    c.add_pod(placed(pod("b", labels={"app": "web"}), "n1"))
    col = sc.counts_all(((ns, app), (ns, front)))
    assert col[c.table.slot_of["n1"]] == 1
    c.add_pod(placed(pod("c", labels={"app": "web", "tier": "front"}), "n2"))
    c.delete_pod("default", "a")
    got = sc.counts_all(((ns, app), (ns, front)))[: c.table.high].tolist()
    assert got == [0, 1, 0, 0, 0]
    assert sc.counts_all(((ns, app),)) is sc.counts(ns, app)  # one pair = the plain key
    with pytest.raises(ValueError):
        sc.counts_all(())


def test_term_index_version_and_cache():
    c = cluster()
    index = TermIndex(c.table, lambda p: tuple(sorted(p.labels)))
    index.cache["k"] = 1
    v = index.version
    c.add_pod(placed(pod("a", labels={"x": "1"})))
    assert index.version > v and not index.cache
    index.cache["k"] = 1
    c.add_pod(placed(pod("b", labels={"x": "2"}), "n2"))  # same term: no change
    assert index.cache == {"k": 1}
    assert index.column("x")[: c.table.high].tolist() == [1, 1, 0, 0, 0]


def test_selector_counts_guard_buckets_match_a_recount():
    # keys are bucketed by their first In requirement; every kind of selector must still be
    # counted exactly through adds, deletes, relabels and LRU eviction
    c = cluster()
    sc = selector_counts(c.table)
    sc._cols.max_keys = 6
    ns = NamespaceFilter(frozenset({"default"}))
    sels = [LabelSelector.parse(s) for s in (
        {"matchLabels": {"app": "a"}},
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
        {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
        {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
        {},
        {"matchLabels": {"tier": "x", "app": "b"}},
    )]
    pairs_list = [((ns, s),) for s in sels] + [((ns, sels[1]), (ns, sels[3]))]
    labels = [{"app": "a"}, {"app": "b", "tier": "x"}, {"tier": "y"}, {}, {"app": "c"}]
    for i in range(10):
        c.add_pod(placed(pod(f"p{i}", labels=labels[i % 5]), ALL[i % 5]))
    for pairs in pairs_list:
        sc.counts_all(pairs)
    c.delete_pod("default", "p1")
    c.update_pod(placed(pod("p2", labels={"app": "a", "tier": "z"}), "n3"))

    def recount(pairs):
        out = []
        for slot in range(c.table.high):
            pods = c.table.pods[slot].values()
            out.append(sum(all(s.matches(p.labels) for _, s in pairs) for p in pods))
        return out

    for pairs in pairs_list:  # the first key was evicted (7 keys, room for 6) and rebuilt
        assert sc.counts_all(pairs)[: c.table.high].tolist() == recount(pairs), pairs
    assert sc.stats["evictions"] >= 1


def test_term_index_guard_narrows_candidates():
    web = LabelSelector.parse({"matchLabels": {"app": "web"}})
    any_tier = LabelSelector.parse({"matchExpressions": [{"key": "tier", "operator": "Exists"}]})
    terms = {"w": web, "t": any_tier}
    c = cluster()
    index = TermIndex(c.table, lambda p: tuple(sorted(p.labels)),
                      lambda t: selector_guard(terms[t]))
    c.add_pod(placed(pod("a", labels={"w": "1", "t": "1"})))
    assert sorted(index.candidates({"app": "web"})) == ["t", "w"]
    assert index.candidates({"app": "db"}) == ["t"]  # unguarded terms are always candidates
    c.delete_pod("default", "a")
    assert index.candidates({"app": "web"}) == []


def test_pod_terms_memoised_per_spec_namespace_and_the_label_values_they_read():
    base = pod("a", labels={"app": "web", "version": "v1", "other": "1"},
               anti=[aterm({"app": "web"}, HOST, match_keys=["version"])])
    same = base.clone("b", labels={"app": "web", "version": "v1", "other": "2"})
    newer = base.clone("c", labels={"app": "web", "version": "v2"})
    elsewhere = base.clone("d", "other-ns")
    assert pod_terms(same) is pod_terms(base)  # "other" is not read by any term
    assert pod_terms(newer).required_anti[0].selector.matches({"app": "web", "version": "v2"})
    assert not pod_terms(newer).required_anti[0].selector.matches(
        {"app": "web", "version": "v1"})
    assert pod_terms(elsewhere).required_anti[0].namespaces.names == frozenset({"other-ns"})


@pytest.mark.parametrize(("placed", "anti", "score"), [
    (pod("plain"), 0, 0),
    (pod("anti", anti=[aterm({"app": "x"})]), 1, 0),
    (pod("aff", affinity=[aterm({"app": "x"})], pref_anti=[(3, aterm({"app": "y"}))]), 0, 2),
], ids=["no-terms", "required-anti", "affinity-and-preferred-anti"])
def test_index_terms_of_a_placed_pod(placed, anti, score):
    assert len(ipa_module._anti_terms(placed)) == anti
    assert len(ipa_module._score_terms(placed)) == score
