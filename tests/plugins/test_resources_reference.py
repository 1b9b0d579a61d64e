"""NodeResourcesFit and BalancedAllocation against a per-node scalar reference written straight
from the rules on random clusters: homogeneous and mixed node sizes, missing and extended
resources, slot slices and shuffled slot arrays.

The rules: docs/scheduling-model.md, "NodeResourcesFit", and
docs/scheduling-model.md, "NodeResourcesBalancedAllocation".
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from scheduler_core.framework.interface import Code, CycleState
from scheduler_core.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from scheduler_core.plugins.node_resources_fit import NodeResourcesFit
from tests.builders import make_node, make_pod, table_of

GPU = "example.com/gpu"
EPH = "ephemeral-storage"
NATIVE = ("cpu", "memory", EPH, "pods")


# --------------------------------------------------------------------------- reference
def go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def ref_filter(pod, node, pods) -> tuple[tuple[str, ...], bool]:
    """(reasons, unresolvable): unresolvable when some failing request is above the node's
    whole allocatable of that resource (v1.34; "Too many pods" never is)."""
    alloc = node.allocatable
    used: dict[str, int] = {}
    for p in pods:
        for r, v in p.spec.requests.items():
            used[r] = used.get(r, 0) + v
    reasons = []
    unresolvable = False
    if len(pods) + 1 > alloc.get("pods", 0):
        reasons.append("Too many pods")
    req = pod.spec.requests
    checks = [(r, req.get(r, 0)) for r in ("cpu", "memory", EPH)]
    checks += [(r, q) for r, q in req.items() if r not in NATIVE]
    for r, q in checks:
        if q > 0 and q > alloc.get(r, 0) - used.get(r, 0):
            reasons.append(f"Insufficient {r}")
            unresolvable = unresolvable or q > alloc.get(r, 0)
    return tuple(reasons), unresolvable


def ref_alloc_req(pod, node, pods, name, use_requested):
    spec = pod.spec
    if not use_requested and name == "cpu":
        q = spec.non_zero_cpu
    elif not use_requested and name == "memory":
        q = spec.non_zero_memory
    else:
        q = spec.requests.get(name, 0)
    if q == 0 and name not in NATIVE:
        return 0, 0
    if name in ("cpu", "memory") and not use_requested:
        attr = "non_zero_cpu" if name == "cpu" else "non_zero_memory"
        used = sum(getattr(p.spec, attr) for p in pods)
    else:
        used = sum(p.spec.requests.get(name, 0) for p in pods)
    return node.allocatable.get(name, 0), used + q


def ref_score(kind, resources, shape, pod, node, pods) -> int:
    node_score = weight_sum = 0
    for name, w in resources:
        cap, req = ref_alloc_req(pod, node, pods, name, False)
        if cap == 0:
            continue
        if kind == "LeastAllocated":
            s = 0 if req > cap else (cap - req) * 100 // cap
        elif kind == "MostAllocated":
            s = min(req, cap) * 100 // cap
        else:
            pts = [(u, sc * 10) for u, sc in shape]

            def f(p: int, pts=pts) -> int:
                for i, (u, sc) in enumerate(pts):
                    if p <= u:
                        if i == 0:
                            return sc
                        pu, ps = pts[i - 1]
                        return ps + go_div((sc - ps) * (p - pu), u - pu)
                return pts[-1][1]

            s = f(100) if req > cap else f(req * 100 // cap)
            if s <= 0:
                continue
        node_score += s * w
        weight_sum += w
    if weight_sum == 0:
        return 0
    if kind == "RequestedToCapacityRatio":
        return math.floor(node_score / weight_sum + 0.5)
    return node_score // weight_sum


def ref_balanced(resources, pod, node, pods) -> int:
    fractions = []
    total = 0.0
    for name in resources:
        cap, req = ref_alloc_req(pod, node, pods, name, True)
        if cap == 0:
            continue
        f = min(req / cap, 1.0)
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * 100)


# --------------------------------------------------------------------------- random clusters
def random_pod(rng, name):
    b = make_pod(name)
    for _ in range(int(rng.integers(1, 3))):
        res = {}
        if rng.random() < 0.8:
            res["cpu"] = f"{int(rng.integers(0, 3000))}m"
        if rng.random() < 0.8:
            res["memory"] = str(int(rng.integers(0, 4 * 2**30)))
        if rng.random() < 0.2:
            res[EPH] = str(int(rng.integers(0, 2**30)))
        if rng.random() < 0.2:
            res[GPU] = str(int(rng.integers(0, 3)))
        b.req(res)
    if rng.random() < 0.2:
        b.init_req(cpu=f"{int(rng.integers(0, 4000))}m", sidecar=bool(rng.random() < 0.5))
    return b.obj()


def random_cluster(rng, homogeneous):
    nodes = []
    for i in range(24):
        if homogeneous:
            alloc = {"cpu": "8", "memory": "16Gi", "pods": "12", EPH: "10Gi"}
        else:
            alloc = {"cpu": f"{int(rng.choice([0, 1000, 4000, 8000, 16000]))}m",
                     "memory": str(int(rng.choice([0, 2**30, 8 * 2**30, 32 * 2**30]))),
                     "pods": str(int(rng.choice([0, 3, 110])))}
            if rng.random() < 0.5:
                alloc[EPH] = str(int(rng.choice([0, 2**30, 10 * 2**30])))
            if rng.random() < 0.4:
                alloc[GPU] = str(int(rng.integers(0, 5)))
        nodes.append(make_node(f"n{i}").alloc(alloc).obj())
    pods = {n.name: [random_pod(rng, f"{n.name}-p{j}") for j in range(int(rng.integers(0, 5)))]
            for n in nodes}
    return nodes, pods


def _idx(rng, table, as_array):
    if not as_array:
        return slice(0, table.high), list(range(table.high))
    slots = rng.permutation(table.high).astype(np.int64)
    return slots, slots.tolist()


STRATEGIES = [
    ("LeastAllocated", [("cpu", 1), ("memory", 1)], None),
    ("MostAllocated", [("cpu", 3), ("memory", 1), (GPU, 2), (EPH, 1)], None),
    ("RequestedToCapacityRatio", [("cpu", 2), ("memory", 1), (GPU, 5)],
     [(0, 0), (40, 3), (100, 10)]),
    ("RequestedToCapacityRatio", [("cpu", 1), ("memory", 1)], [(10, 10), (70, 2), (90, 0)]),
]


@pytest.mark.parametrize("homogeneous", [True, False], ids=["homogeneous", "mixed"])
@pytest.mark.parametrize("as_array", [False, True], ids=["slice", "slot-array"])
def test_against_reference(homogeneous, as_array):
    rng = np.random.default_rng(7 + 2 * homogeneous + as_array)
    seen_codes: set[bool] = set()  # unresolvable or not, over the rejected nodes
    for _ in range(6):
        nodes, pods = random_cluster(rng, homogeneous)
        table = table_of(nodes, pods)
        columns = {k: v.copy() for k, v in table.requested.items()}
        columns["nonzero_cpu"], columns["nonzero_memory"] = (table.nonzero_cpu.copy(),
                                                            table.nonzero_memory.copy())
        by_slot = {table.slot_of[n.name]: n for n in nodes}
        for k in range(4):
            pod = random_pod(rng, f"incoming{k}")
            idx, slots = _idx(rng, table, as_array)
            # filter + explain
            plugin = NodeResourcesFit()
            state = CycleState()
            plugin.pre_filter(state, pod, table)
            mask = plugin.filter(state, pod, table, idx)
            rejected = np.flatnonzero(~mask)
            which, statuses = plugin.explain(state, pod, table,
                                             np.asarray(slots, dtype=np.int64)[rejected])
            got = {slots[i]: statuses[w].reasons for i, w in zip(rejected, which, strict=True)}
            for s in slots:
                node = by_slot[s]
                want, unresolvable = ref_filter(pod, node, pods[node.name])
                assert got.get(s, ()) == want, (node, pod.spec.requests)
                if want:
                    assert statuses[which[list(rejected).index(slots.index(s))]].code == (
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable
                        else Code.UNSCHEDULABLE), (node, pod.spec.requests)
                    seen_codes.add(unresolvable)
            # scores
            for kind, resources, shape in STRATEGIES:
                strategy = {"type": kind,
                            "resources": [{"name": n, "weight": w} for n, w in resources]}
                if shape:
                    strategy["requestedToCapacityRatio"] = {
                        "shape": [{"utilization": u, "score": sc} for u, sc in shape]}
                plugin = NodeResourcesFit({"scoringStrategy": strategy})
                state = CycleState()
                plugin.pre_score(state, pod, table, idx)
                scores = plugin.score(state, pod, table, idx).tolist()
                want = [ref_score(kind, resources, shape, pod, by_slot[s], pods[by_slot[s].name])
                        for s in slots]
                assert scores == want, kind
            for resources in (["cpu", "memory"], ["cpu", "memory", EPH, GPU]):
                plugin = NodeResourcesBalancedAllocation(
                    {"resources": [{"name": r} for r in resources]})
                state = CycleState()
                if plugin.pre_score(state, pod, table, idx) is not None:
                    assert not any(pod.spec.requests.get(r, 0) for r in resources)
                    continue
                scores = plugin.score(state, pod, table, idx).tolist()
                want = [ref_balanced(resources, pod, by_slot[s], pods[by_slot[s].name])
                        for s in slots]
                assert scores == want, resources
        # plugins only read the table
        for k, v in table.requested.items():
            assert np.array_equal(v, columns[k])
        assert np.array_equal(table.nonzero_cpu, columns["nonzero_cpu"])
        assert np.array_equal(table.nonzero_memory, columns["nonzero_memory"])
    # the random clusters reject nodes both ways, so both codes were checked
    assert seen_codes == {True, False}
