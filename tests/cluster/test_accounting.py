"""Pods' loads as arrays (``nodetable.accounting``): adding them to the table's accounting
columns gives exactly what ``add_pod`` gives, taking them off restores the table, and a
SlotPods adds only the pods meant for the slots asked about."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.api.pod import Pod
from scheduler_core.nodetable.accounting import PodLoads, SlotPods, load_of
from scheduler_core.nodetable.table import NodeTable
from tests.builders import make_node, make_pod


def _table(n: int) -> NodeTable:
    t = NodeTable()
    for i in range(n):
        t.add_node(make_node(f"n{i}").alloc(cpu="8", memory="32Gi", pods=110).obj())
    return t


def _accounting(t: NodeTable) -> dict[str, list[int]]:
    """Every accounting column, zero columns left out (a new resource or port leaves one)."""
    h = t.high
    cols = {f"requested[{r}]": c[:h] for r, c in t.requested.items()}
    cols |= {f"port{k}": c[:h] for k, c in {**t.port_any_ip, **t.port_by_ip}.items()}
    cols |= {"nonzero_cpu": t.nonzero_cpu[:h], "nonzero_memory": t.nonzero_memory[:h],
             "pod_count": t.pod_count[:h]}
    return {k: c.tolist() for k, c in cols.items() if c.any()}


SPECS = [  # distinct templates: cloned pods share a PodSpec, as in the benchmarks
    make_pod("a").req(cpu="100m", memory="100Mi").obj(),
    make_pod("b").obj(),  # no requests: non-zero defaults, pod count only
    make_pod("c").req(cpu="1", **{"example.com/gpu": "2"}).host_port(8080).obj(),
    make_pod("d").req(memory="1Gi", **{"ephemeral-storage": "1Gi"}).host_port(53, "10.0.0.1",
                                                                                "UDP").obj(),
    make_pod("e").req(cpu="200m").init_req(cpu="2").overhead(cpu="50m").obj(),
]

pods_st = st.lists(st.tuples(st.integers(0, len(SPECS) - 1), st.integers(0, 3)), max_size=12)


def _pods(picks: list[tuple[int, int]]) -> tuple[list[Pod], np.ndarray]:
    pods = [SPECS[k].clone(f"p{j}") for j, (k, _) in enumerate(picks)]
    return pods, np.asarray([s for _, s in picks], dtype=np.int64)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(pods_st, pods_st)
def test_loads_equal_add_pod_and_come_off_again(placed_picks, extra_picks):
    placed, placed_slots = _pods(placed_picks)
    extra, extra_slots = _pods(extra_picks)
    by_add, by_loads = _table(4), _table(4)
    for p, s in zip(placed + extra, [*placed_slots.tolist(), *extra_slots.tolist()],
                    strict=True):
        by_add.add_pod(p, s)
    for p, s in zip(placed, placed_slots.tolist(), strict=True):
        by_loads.add_pod(p, s)
    before = _accounting(by_loads)
    loads = PodLoads(extra)
    rows = np.arange(len(extra), dtype=np.int64)
    with loads.placed(by_loads, extra_slots):
        assert _accounting(by_loads) == _accounting(by_add)
    assert _accounting(by_loads) == before
    loads.apply(by_add, rows, extra_slots, -1)  # taking loads off mirrors remove_pod too
    assert _accounting(by_add) == before


def test_load_of_is_memoised_per_spec():
    pod = SPECS[2]
    assert load_of(pod.spec) is load_of(pod.clone("x").spec)
    requests, nz_cpu, nz_memory, ports = load_of(pod.spec)
    assert dict(requests) == pod.spec.requests == {"cpu": 1000, "example.com/gpu": 2}
    assert (nz_cpu, nz_memory, ports) == (pod.spec.non_zero_cpu, pod.spec.non_zero_memory,
                                          pod.spec.host_ports)


@pytest.mark.parametrize(("idx", "want"), [
    ([0, 1, 2, 3], {0: 1000, 2: 300}),  # every slot with pods
    ([2, 3], {0: 0, 2: 300}),  # only slot 2's pods
    ([1], {0: 0, 2: 0}),  # no pods there
], ids=["all", "some", "none"])
def test_placement_adds_only_the_pods_for_the_slots_asked(idx, want):
    t = _table(4)
    small = make_pod("s").req(cpu="100m").obj()
    placement = SlotPods.by_slot({0: [make_pod("big").req(cpu="1").obj()],
                                   2: [small.clone("s1"), small.clone("s2"), small.clone("s3")]},
                                  t.capacity)
    assert [p.name for p in placement.pods_on(2)] == ["s1", "s2", "s3"]
    assert placement.on(np.asarray([3, 2, 1, 0])).tolist() == [1, 3]
    with placement.placed(t, np.asarray(idx, dtype=np.int64)):
        assert {s: int(t.requested["cpu"][s]) for s in (0, 2)} == want
    assert not t.requested["cpu"].any()
