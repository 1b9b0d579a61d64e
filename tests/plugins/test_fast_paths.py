"""Plugin-side fast paths of commit c7dce9b: the shared read-only zero scores (``zeros`` /
``is_zeros``) and what TaintToleration, ImageLocality and the Framework make of them,
``count`` and ``per_spec``, LeastAllocated's ``(alloc - q) - used`` form (same scores, same
OverflowError), and PodTopologySpread's cached default constraints."""

from __future__ import annotations

import numpy as np
import pytest

import scheduler_core.plugins.pod_topology_spread as pts_mod
from scheduler_core.api.objects import Service
from scheduler_core.api.quantity import INT64_MAX
from scheduler_core.framework.interface import MAX_NODE_SCORE, CycleState
from scheduler_core.framework.runtime import Framework
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import helper
from scheduler_core.plugins.helper import count, default_normalize, is_zeros, per_spec, zeros
from scheduler_core.plugins.image_locality import ImageLocality
from scheduler_core.plugins.node_resources_fit import NodeResourcesFit
from scheduler_core.plugins.pod_topology_spread import PodTopologySpread
from scheduler_core.plugins.pod_topology_spread_common import build_constraints
from scheduler_core.plugins.taint_toleration import TaintToleration
from tests.builders import make_node, make_pod, run_score, table_of

MB = 1024 * 1024
HARD, SOFT = "DoNotSchedule", "ScheduleAnyway"


# --------------------------------------------------------------------------- zeros / is_zeros
@pytest.mark.parametrize("n", [0, 1, 7, 1024], ids=lambda n: f"n{n}")
def test_zeros_is_a_read_only_all_zero_int64_view(n):
    z = zeros(n)
    assert z.dtype == np.int64 and z.shape == (n,)
    assert not z.any()
    assert not z.flags.writeable
    assert is_zeros(z)
    if n:
        with pytest.raises(ValueError, match="read-only"):
            z[0] = 1


def test_zeros_grows_and_old_views_stay_zero_but_are_no_longer_recognised():
    old = zeros(4)
    big = zeros(5000)  # longer than the shared column: a new, longer one replaces it
    assert big.shape == (5000,) and not big.any() and not big.flags.writeable
    assert is_zeros(big) and is_zeros(zeros(4))
    assert not old.any()
    assert not is_zeros(old)  # a view of the replaced column: correct, only not recognised


@pytest.mark.parametrize("arr", [
    np.zeros(3, dtype=np.int64),
    np.zeros(3, dtype=np.int64)[:2],
    np.arange(3, dtype=np.int64),
    zeros(3).copy(),
], ids=["fresh-zeros", "view-of-fresh-zeros", "arange", "copy-of-shared"])
def test_is_zeros_only_recognises_the_shared_column(arr):
    assert not is_zeros(arr)


def test_default_normalize_cannot_write_the_shared_zeros():
    """Why normalizers must not get the shared view unguarded."""
    with pytest.raises(ValueError, match="read-only"):
        default_normalize(zeros(3), reverse=True)


# --------------------------------------------------------------------------- count
@pytest.mark.parametrize(("idx", "want"), [
    (slice(2, 5), 3),
    (slice(0, 0), 0),
    (slice(5, 2), 0),            # empty (start past stop)
    (slice(None), 16),           # the whole capacity
    (slice(0, 16), 16),
    (slice(3, 40), 13),          # clipped at the capacity
    (slice(-3, None), 3),
    (slice(0, 10, 2), 5),
    (slice(10, 0, -3), 4),
    (np.asarray([3, 1, 2], dtype=np.int64), 3),
    (np.zeros(0, dtype=np.int64), 0),
], ids=["run", "empty", "reversed-bounds", "all", "exact-capacity", "past-capacity",
        "negative-start", "step", "negative-step", "array", "empty-array"])
def test_count_matches_the_length_of_a_column_read(idx, want):
    table = NodeTable(capacity=16)
    for i in range(5):
        table.add_node(make_node(f"n{i}").alloc(cpu="1").obj())
    assert table.capacity == 16
    assert count(table, idx) == want
    assert count(table, idx) == len(table.allocatable["cpu"][idx])


# --------------------------------------------------------------------------- per_spec
def test_per_spec_computes_once_per_spec_object():
    calls = []

    def compute(spec):
        calls.append(spec)
        return len(spec.tolerations)

    cache: dict = {}
    pod = make_pod("a").toleration("k", "v", "NoSchedule", operator="Equal").obj()
    clone = pod.clone()
    twin = make_pod("b").toleration("k", "v", "NoSchedule", operator="Equal").obj()
    assert clone.spec is pod.spec and twin.spec is not pod.spec
    assert [per_spec(cache, p.spec, compute) for p in (pod, clone, pod, twin, twin)] == [1] * 5
    assert [s is pod.spec for s in calls] == [True, False]  # one call per distinct spec object
    assert calls[1] is twin.spec


def test_per_spec_ignores_an_entry_left_by_another_object_with_the_same_id():
    spec = make_pod().obj().spec
    cache = {id(spec): (object(), "stale")}
    assert per_spec(cache, spec, lambda s: "fresh") == "fresh"
    assert cache[id(spec)] == (spec, "fresh")


def test_per_spec_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(helper, "_SPEC_CACHE_LIMIT", 3)
    cache: dict = {}
    specs = [make_pod(f"p{i}").req(cpu=f"{i + 1}").obj().spec for i in range(10)]
    for s in specs:
        assert per_spec(cache, s, lambda sp: sp.requests["cpu"]) == s.requests["cpu"]
        assert len(cache) <= 3
    assert [per_spec(cache, s, lambda sp: sp.requests["cpu"]) for s in specs] == \
        [(i + 1) * 1000 for i in range(10)]


def test_taint_toleration_prefer_tolerations_are_per_spec_not_per_plugin():
    """One plugin instance, pods of different specs interleaved: each gets its own answer."""
    plugin = TaintToleration()
    table = table_of([make_node("plain").obj(),
                      make_node("spot").taint("spot", "true", "PreferNoSchedule").obj()])
    tolerant = make_pod("t").toleration("spot", "true", "PreferNoSchedule",
                                        operator="Equal").obj()
    plain = make_pod("p").obj()
    for _ in range(2):
        assert run_score(plugin, tolerant, table) == {"plain": 100, "spot": 100}
        assert run_score(plugin, plain, table) == {"plain": 100, "spot": 0}
        assert run_score(plugin, tolerant.clone(), table) == {"plain": 100, "spot": 100}


# --------------------------------------------------------------------------- shared zero scores
def _untainted(n: int = 4):
    return table_of([make_node(f"n{i}").alloc(cpu="4", memory="8Gi", pods=10)
                     .image(300 * MB, "app:v1" if i % 2 else "other:v1").obj()
                     for i in range(n)])


IDX = [
    pytest.param(lambda t: slice(0, t.high), id="slice"),
    pytest.param(lambda t: np.asarray([3, 0, 2], dtype=np.int64), id="array"),
]


@pytest.mark.parametrize("make_idx", IDX)
def test_taint_toleration_scores_untainted_nodes_with_the_shared_zeros(make_idx):
    table = _untainted()
    idx = make_idx(table)
    plugin, pod, state = TaintToleration(), make_pod().obj(), CycleState()
    assert plugin.pre_score(state, pod, table, idx) is None
    raw = plugin.score(state, pod, table, idx)
    assert is_zeros(raw) and not raw.flags.writeable
    assert len(raw) == count(table, idx)
    out = plugin.normalize(state, pod, raw)
    assert out.tolist() == [MAX_NODE_SCORE] * len(raw)  # reverse: no taint is the best
    assert out.flags.writeable and not is_zeros(out)
    assert not raw.any()  # the shared column was not written


@pytest.mark.parametrize(("raw", "want"), [
    ([0, 0, 0], [100, 100, 100]),
    ([0, 1, 2], [100, 50, 0]),
    ([3, 3, 0], [0, 0, 100]),
    ([], []),
], ids=["all-zero", "graded", "two-max", "empty"])
def test_taint_toleration_normalize_copies_a_read_only_array(raw, want):
    scores = np.asarray(raw, dtype=np.int64)
    scores.flags.writeable = False  # read-only but not the shared zeros (e.g. a cached column)
    assert not is_zeros(scores)
    out = TaintToleration().normalize(CycleState(), make_pod().obj(), scores)
    assert out.tolist() == want
    assert scores.tolist() == raw  # the input is left as it was


def test_taint_toleration_normalize_of_a_stale_shared_view():
    stale = zeros(2)
    zeros(9000)  # replaces the shared column: ``stale`` is read-only and no longer recognised
    assert not is_zeros(stale)
    assert TaintToleration().normalize(CycleState(), make_pod().obj(), stale).tolist() == \
        [100, 100]


def test_taint_toleration_prefer_taints_still_score_normally():
    table = table_of([make_node("a").obj(),
                      make_node("b").taint("x", "1", "PreferNoSchedule").obj(),
                      make_node("c").taint("x", "1", "PreferNoSchedule")
                      .taint("y", "2", "PreferNoSchedule").obj(),
                      make_node("d").taint("z", "3", "NoSchedule").obj()])
    plugin, pod = TaintToleration(), make_pod().obj()
    raw = plugin.score(CycleState(), pod, table, slice(0, table.high))
    assert not is_zeros(raw) and raw.tolist() == [0, 1, 2, 0]
    assert run_score(plugin, pod, table) == {"a": 100, "b": 50, "c": 0, "d": 100}


@pytest.mark.parametrize(("pod_b", "shared", "want"), [
    (make_pod(), True, [0, 0, 0, 0]),                          # no images
    (make_pod().images("missing:v1"), True, [0, 0, 0, 0]),     # on no node
    # 300 MB on half the nodes: 100 * (150 MB - 23 MB) // (1000 MB - 23 MB) = 12
    (make_pod().images("app:v1"), False, [0, 12, 0, 12]),
], ids=["no-images", "image-nowhere", "image-on-half"])
@pytest.mark.parametrize("make_idx", IDX)
def test_image_locality_zero_scores_are_the_shared_view(pod_b, shared, want, make_idx):
    table = _untainted()
    idx = make_idx(table)
    raw = ImageLocality().score(CycleState(), pod_b.obj(), table, idx)
    assert is_zeros(raw) == shared
    assert raw.flags.writeable != shared
    at = np.arange(table.high)[idx]
    assert raw.tolist() == [want[s] for s in at]


@pytest.mark.parametrize("breakdown", [False, True], ids=["plain", "with-breakdown"])
@pytest.mark.parametrize("make_idx", IDX)
def test_framework_totals_with_shared_zero_scores(make_idx, breakdown):
    """TaintToleration (weight 3, all 0 -> 100 after reverse normalisation) plus ImageLocality
    (weight 1, all 0, no NormalizeScore): 300 on every node, nothing written to the shared
    column."""
    table = _untainted()
    idx = make_idx(table)
    n = count(table, idx)
    taint, image = TaintToleration(), ImageLocality()
    fwk = Framework("p", {"PreScore": [taint], "Score": [image, taint]},
                    {taint.name: 3, image.name: 1})
    state, pod = CycleState(), make_pod().images("missing:v1").obj()
    assert fwk.run_pre_score(state, pod, table, idx) is None
    parts: list | None = [] if breakdown else None
    total, status = fwk.run_score(state, pod, table, idx, n, breakdown=parts)
    assert status is None
    assert total.tolist() == [300] * n
    assert not zeros(n).any()
    if breakdown:
        assert [(b.plugin, b.raw.tolist(), b.normalized.tolist(), b.weight) for b in parts] == [
            (image.name, [0] * n, [0] * n, 1), (taint.name, [0] * n, [100] * n, 3)]


# --------------------------------------------------------------------------- LeastAllocated
def _ref_least_allocated(alloc: dict, used: dict, q: dict) -> int:
    """Per node, straight from the spec: Σ w·((cap - req)·100 // cap, 0 when req > cap) // Σ w
    over the resources the node has (cap > 0); weights 1."""
    total = weights = 0
    for r in ("cpu", "memory"):
        cap = alloc[r]
        if cap == 0:
            continue
        req = used[r] + q[r]
        total += 0 if req > cap else (cap - req) * 100 // cap
        weights += 1
    return total // weights if weights else 0


def _random_cluster(rng: np.random.Generator, uniform: bool, n: int = 12):
    nodes, pods = [], {}
    for i in range(n):
        cpu = 4 if uniform else int(rng.choice([1, 2, 4, 8, 16]))
        mem = 8 if uniform else int(rng.choice([2, 4, 8, 32]))
        nodes.append(make_node(f"n{i}").alloc(cpu=str(cpu), memory=f"{mem}Gi", pods=110).obj())
        placed = []
        for j in range(int(rng.integers(0, 6))):
            b = make_pod(f"n{i}-p{j}")
            if rng.random() < 0.2:
                b.container(image="busybox")  # no requests: the non-zero defaults count
            else:
                b.req(cpu=f"{int(rng.integers(1, 30)) * 100}m",
                      memory=f"{int(rng.integers(1, 40)) * 128}Mi")
            placed.append(b.obj())
        pods[f"n{i}"] = placed
    return nodes, pods


@pytest.mark.parametrize("uniform", [True, False], ids=["uniform-nodes", "mixed-nodes"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3], ids=lambda s: f"seed{s}")
def test_least_allocated_equals_the_straight_formula(seed, uniform):
    rng = np.random.default_rng(seed)
    nodes, placed = _random_cluster(rng, uniform)
    table = table_of(nodes, placed)
    plugin = NodeResourcesFit()
    for k in range(5):
        b = make_pod(f"incoming{k}")
        if k == 0:
            b.container(image="busybox")  # best effort: 100m / 200Mi count
        else:
            b.req(cpu=f"{int(rng.integers(1, 60)) * 100}m",
                  memory=f"{int(rng.integers(1, 80)) * 128}Mi")
        pod = b.obj()
        q = {"cpu": pod.spec.non_zero_cpu, "memory": pod.spec.non_zero_memory}
        want = {}
        for node in nodes:
            on = placed[node.name]
            used = {"cpu": sum(p.spec.non_zero_cpu for p in on),
                    "memory": sum(p.spec.non_zero_memory for p in on)}
            want[node.name] = _ref_least_allocated(node.allocatable, used, q)
        assert run_score(plugin, pod, table) == want
        # the same over a shuffled slot array
        idx = rng.permutation(table.high).astype(np.int64)
        state = CycleState()
        plugin.pre_score(state, pod, table, idx)
        got = plugin.score(state, pod, table, idx)
        assert got.tolist() == [want[table.node(int(s)).name] for s in idx]


HUGE = [
    pytest.param({"cpu": "100000000000000000"}, id="cpu-1e17-cores"),
    pytest.param({"memory": "100E"}, id="memory-100E"),
    pytest.param({"cpu": "10000000000000000", "memory": "1Gi"}, id="cpu-1e16-cores"),
    # just past int64: ``alloc - q`` would still fit in int64, so only the guard raises
    pytest.param({"memory": str(INT64_MAX + 1)}, id="memory-int64-max-plus-1"),
    pytest.param({"cpu": f"{INT64_MAX + 1}m"}, id="cpu-int64-max-plus-1-milli"),
]


@pytest.mark.parametrize("uniform", [True, False], ids=["uniform-nodes", "mixed-nodes"])
@pytest.mark.parametrize("req", HUGE)
def test_least_allocated_request_beyond_int64_raises_overflow(req, uniform):
    nodes = [make_node(f"n{i}").alloc(cpu="4" if uniform else str(2 + i),
                                      memory="8Gi", pods=10).obj() for i in range(3)]
    pod = make_pod().req(req).obj()
    assert max(pod.spec.non_zero_cpu, pod.spec.non_zero_memory) > INT64_MAX
    with pytest.raises(OverflowError):
        run_score(NodeResourcesFit(), pod, table_of(nodes))


def _wrap(x: int) -> int:
    """``x`` as numpy int64 arithmetic leaves it (two's complement wrap-around)."""
    return (x + 2**63) % 2**64 - 2**63


@pytest.mark.parametrize("uniform", [True, False], ids=["uniform-nodes", "mixed-nodes"])
def test_least_allocated_request_at_int64_max_scores_as_the_wrapping_formula(uniform):
    """q == INT64_MAX takes the new ``(alloc - q) - used`` form on uniform nodes; it must give
    what ``alloc - (used + q)`` gave in int64 arithmetic (wrap-around included)."""
    nodes = [make_node(f"n{i}").alloc(cpu="4" if uniform else str(2 + i), memory="8Gi",
                                      pods=10).obj() for i in range(3)]
    placed = {"n1": [make_pod("a").req(cpu="500m", memory="1Gi").obj()],
              "n2": [make_pod("b").req(cpu="3", memory="9Gi").obj()]}  # n2 over-committed
    table = table_of(nodes, placed)
    pod = make_pod().req(cpu=f"{INT64_MAX}m", memory=str(INT64_MAX)).obj()
    assert pod.spec.non_zero_cpu == pod.spec.non_zero_memory == INT64_MAX
    want = {}
    for node in nodes:
        parts = []
        for r, used in (("cpu", sum(p.spec.non_zero_cpu for p in placed.get(node.name, []))),
                        ("memory", sum(p.spec.non_zero_memory
                                       for p in placed.get(node.name, [])))):
            cap = node.allocatable[r]
            free = max(_wrap(cap - _wrap(used + INT64_MAX)), 0)
            parts.append(_wrap(free * 100) // cap)
        want[node.name] = sum(parts) // 2
    assert run_score(NodeResourcesFit(), pod, table) == want


# --------------------------------------------------------------------------- PodTopologySpread
class _Handle:
    def __init__(self, *services: Service) -> None:
        self.services = list(services)

    def list_services(self, namespace: str) -> list[Service]:
        return [s for s in self.services if s.namespace == namespace]


def _list_args(*constraints: dict) -> dict:
    return {"defaultingType": "List", "defaultConstraints": list(constraints)}


ZONE_HARD = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": HARD}
HOST_SOFT = {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": SOFT}
ZONE_HARD_KEYS = {**ZONE_HARD, "matchLabelKeys": ["rev"]}


@pytest.fixture
def build_calls(monkeypatch):
    calls: list[tuple] = []

    def counting(raw, labels, when):
        calls.append((tuple(raw), when))
        return build_constraints(raw, labels, when)

    monkeypatch.setattr(pts_mod, "build_constraints", counting)
    return calls


def _pods():
    return [make_pod("a").label("app", "web").label("rev", "1").obj(),
            make_pod("b").label("app", "web").label("rev", "2").obj(),
            make_pod("c").label("app", "web").obj()]


@pytest.mark.parametrize(("args", "cached"), [
    (None, True),                                   # system defaults
    (_list_args(ZONE_HARD, HOST_SOFT), True),
    (_list_args(ZONE_HARD_KEYS, HOST_SOFT), False),  # matchLabelKeys: per pod
    (_list_args(HOST_SOFT, ZONE_HARD_KEYS), False),
], ids=["system", "list", "list-match-label-keys", "list-match-label-keys-second"])
def test_default_constraints_cache_only_without_match_label_keys(args, cached, build_calls):
    handle = _Handle(Service("svc", "default", {"app": "web"}))
    plugin = PodTopologySpread(args, handle)
    pods = _pods()
    got = {(p.name, when): plugin.constraints(p, when) for when in (HARD, SOFT) for p in pods}
    built = [w for _, w in build_calls]
    if cached:
        assert built == [HARD, SOFT]  # once per whenUnsatisfiable
        first = plugin._defaults_by_when[HARD]
        plugin.constraints(make_pod("d").label("app", "web").obj(), HARD)
        assert plugin._defaults_by_when[HARD] is first  # the same object, reused
        assert len(build_calls) == 2
    else:
        assert plugin._defaults_by_when is None
        assert len(built) == len(got)  # built for every pod
    # every answer is what a fresh plugin computes for that pod alone
    for (name, when), constraints in got.items():
        pod = next(p for p in pods if p.name == name)
        assert PodTopologySpread(args, handle).constraints(pod, when) == constraints
    # constraints are filtered by whenUnsatisfiable and carry the Service's selector
    hard = got[("a", HARD)]
    assert all(c.matches({"app": "web"}) and not c.matches({"app": "db"}) for c in hard)


def test_default_constraints_with_match_label_keys_follow_upstream_selector_override():
    """Upstream's buildDefaultConstraints replaces the selector by the Services' one, so
    matchLabelKeys in a default constraint change nothing: two pods whose ``rev`` differs
    get equal constraints (with or without the cache)."""
    handle = _Handle(Service("svc", "default", {"app": "web"}))
    with_keys = PodTopologySpread(_list_args(ZONE_HARD_KEYS), handle)
    without = PodTopologySpread(_list_args(ZONE_HARD), handle)
    a, b, _ = _pods()
    assert with_keys.constraints(a, HARD) == with_keys.constraints(b, HARD) == \
        without.constraints(a, HARD) == without.constraints(b, HARD)


def test_default_constraints_cache_keeps_hard_and_soft_apart():
    plugin = PodTopologySpread(_list_args(ZONE_HARD, HOST_SOFT),
                               _Handle(Service("svc", "default", {"app": "web"})))
    pod = make_pod("a").label("app", "web").obj()
    for _ in range(2):
        assert [(c.key, c.max_skew) for c in plugin.constraints(pod, HARD)] == [("zone", 1)]
        assert [(c.key, c.max_skew) for c in plugin.constraints(pod, SOFT)] == [
            ("kubernetes.io/hostname", 2)]
    # system defaults are all ScheduleAnyway: the empty hard set is cached too
    system = PodTopologySpread(None, _Handle(Service("svc", "default", {"app": "web"})))
    assert system.constraints(pod, HARD) == () == system.constraints(pod, HARD)
    assert system._defaults_by_when[HARD] == ()


def test_own_constraints_bypass_the_defaults_cache(build_calls):
    plugin = PodTopologySpread(_list_args(ZONE_HARD),
                               _Handle(Service("svc", "default", {"app": "web"})))
    m = make_pod("own").label("app", "web").manifest()
    m["spec"]["topologySpreadConstraints"] = [{
        "maxSkew": 3, "topologyKey": "rack", "whenUnsatisfiable": HARD,
        "labelSelector": {"matchLabels": {"app": "web"}}}]
    from scheduler_core.api.pod import Pod
    own = Pod.from_manifest(m)
    assert [(c.key, c.max_skew) for c in plugin.constraints(own, HARD)] == [("rack", 3)]
    assert plugin._defaults_by_when == {}
    plain = make_pod("plain").label("app", "web").obj()
    assert [(c.key, c.max_skew) for c in plugin.constraints(plain, HARD)] == [("zone", 1)]
    assert len(build_calls) == 2
