"""bench/sharding.py: --shard parsing, the cost model, and the partition of the real catalog."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from bench.selection import CATALOG_DIR
from bench.sharding import (
    FEATURE_FACTORS,
    UNSUPPORTED_COST,
    ShardError,
    expected_cost,
    parse_shard,
    plan,
    shard,
    shard_costs,
    workload_features,
)
from tests.ci.conftest import TINY
from workloads.catalog.selection import select
from workloads.config import load_configs


@pytest.fixture(scope="module")
def catalog() -> list:
    return select(load_configs(CATALOG_DIR), "performance", None)


def _names(pairs: list) -> list[tuple[str, str]]:
    return [(tc.topic, w.full_name) for tc, w in pairs]


# --------------------------------------------------------------------------- parse_shard


@pytest.mark.parametrize(("text", "expected"), [
    ("1/1", (1, 1)), ("2/4", (2, 4)), ("4/4", (4, 4)), (" 3 / 8 ", (3, 8)), ("10/12", (10, 12)),
], ids=["only", "middle", "last", "blanks", "two-digits"])
def test_parse_shard_accepts(text: str, expected: tuple[int, int]) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("0/4", "between 1 and 4"),
    ("5/4", "between 1 and 4"),
    ("1/0", "at least 1"),
    ("x", "expected I/N"),
    ("", "expected I/N"),
    ("2", "expected I/N"),
    ("2/4/8", "expected I/N"),
    ("-1/4", "expected I/N"),
    ("1.5/4", "expected I/N"),
    ("a/b", "expected I/N"),
], ids=["zero-index", "index-past-count", "zero-count", "word", "empty", "no-slash",
        "two-slashes", "negative", "fraction", "letters"])
def test_parse_shard_rejects_with_a_clear_message(text: str, message: str) -> None:
    with pytest.raises(ShardError, match=message) as info:
        parse_shard(text)
    assert repr(text) in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(("i", "n"), [(0, 2), (3, 2), (1, 0)], ids=["zero", "past", "no-shards"])
def test_shard_rejects_bad_index(catalog: list, i: int, n: int) -> None:
    with pytest.raises(ShardError):
        shard(catalog, i, n)
    with pytest.raises(ShardError):
        plan(catalog, 0)


# --------------------------------------------------------------------------- expected_cost


def _tiny_case(tmp_path: Path, topic: str = "misc", params: str = "",
               template: str | None = None) -> tuple:
    text = TINY
    if params:
        text = text.replace("{nodes: 5, initPods: 5, measurePods: 20}", params)
    if template is not None:
        (tmp_path / topic).mkdir(parents=True, exist_ok=True)
        (tmp_path / topic / "pod.yaml").write_text(template)
        text = text.replace("  - opcode: createPods\n    countParam: $measurePods\n",
                            "  - opcode: createPods\n    countParam: $measurePods\n"
                            "    podTemplatePath: pod.yaml\n")
    (tmp_path / topic).mkdir(parents=True, exist_ok=True)
    (tmp_path / topic / "performance-config.yaml").write_text(text)
    (tc,) = load_configs(tmp_path / topic / "performance-config.yaml")
    return tc, tc.workloads[0]


POD = """\
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
{extra}  containers:
  - image: registry.k8s.io/pause:3.10
    name: pause
"""
AFFINITY = ("  affinity:\n    podAntiAffinity:\n"
            "      requiredDuringSchedulingIgnoredDuringExecution:"
            "\n      - labelSelector: {matchLabels: {app: x}}\n        topologyKey: zone\n")
SPREAD = ("  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: zone\n"
          "    whenUnsatisfiable: DoNotSchedule\n    labelSelector: {matchLabels: {app: x}}\n")
PRIORITY = "  priority: 10\n"


@pytest.mark.parametrize(("extra", "feature"), [
    (AFFINITY, "inter_pod_affinity"), (SPREAD, "topology_spread"), (PRIORITY, "preemption"),
], ids=["pod-anti-affinity", "topology-spread", "priority"])
def test_features_raise_the_cost_by_their_factor(tmp_path: Path, extra: str,
                                                 feature: str) -> None:
    plain_tc, plain_w = _tiny_case(tmp_path / "a", template=POD.format(extra=""))
    tc, w = _tiny_case(tmp_path / "b", template=POD.format(extra=extra))
    assert workload_features(plain_tc, plain_w) == frozenset()
    assert workload_features(tc, w) == {feature}
    plain, featured = expected_cost(plain_tc, plain_w), expected_cost(tc, w)
    nodes_part = 5 * 0.05
    assert (featured - nodes_part) == pytest.approx((plain - nodes_part)
                                                    * FEATURE_FACTORS[feature])


def test_preemption_topic_is_not_counted_twice(tmp_path: Path) -> None:
    tc, w = _tiny_case(tmp_path / "a", topic="default_preemption",
                       template=POD.format(extra=PRIORITY))
    plain_tc, plain_w = _tiny_case(tmp_path / "b", template=POD.format(extra=PRIORITY))
    assert expected_cost(tc, w) == pytest.approx(expected_cost(plain_tc, plain_w))


@pytest.mark.parametrize(("bigger", "smaller"), [
    ("{nodes: 5, initPods: 5, measurePods: 2000}", "{nodes: 5, initPods: 5, measurePods: 20}"),
    ("{nodes: 5000, initPods: 5, measurePods: 20}", "{nodes: 5, initPods: 5, measurePods: 20}"),
], ids=["more-pods", "more-nodes"])
def test_cost_grows_with_size(tmp_path: Path, bigger: str, smaller: str) -> None:
    big = expected_cost(*_tiny_case(tmp_path / "a", params=bigger))
    small = expected_cost(*_tiny_case(tmp_path / "b", params=smaller))
    assert big > small > 0


def test_pods_dominate_nodes(tmp_path: Path) -> None:
    """10x the pods costs more than 10x the nodes: per-pod work is vectorised over nodes."""
    pods = expected_cost(*_tiny_case(tmp_path / "a", params="{nodes: 50, initPods: 0, "
                                                           "measurePods: 1000}"))
    nodes = expected_cost(*_tiny_case(tmp_path / "b", params="{nodes: 500, initPods: 0, "
                                                            "measurePods: 100}"))
    assert pods > 5 * nodes


def test_unsupported_workloads_cost_little(tmp_path: Path) -> None:
    config = tmp_path / "misc" / "performance-config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(TINY.replace("  workloads:\n", "  - opcode: waitForPodGroups\n"
                                                    "  workloads:\n"))
    (tc,) = load_configs(config)
    assert tc.unsupported_reason is not None
    big = expected_cost(*_tiny_case(tmp_path / "b"))
    assert expected_cost(tc, tc.workloads[0]) == UNSUPPORTED_COST < big


def test_every_catalog_workload_has_a_positive_finite_cost(catalog: list) -> None:
    costs = [expected_cost(tc, w) for tc, w in catalog]
    assert all(0 < c < float("inf") for c in costs)
    preemption = [c for (tc, w), c in zip(catalog, costs, strict=True)
                  if "preemption" in workload_features(tc, w)]
    assert preemption, "the catalog's preemption cases should be recognised"


# --------------------------------------------------------------------------- shard


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8])
def test_shards_partition_the_selection(catalog: list, n: int) -> None:
    shards = plan(catalog, n)
    assert len(shards) == n
    flat = [pair for s in shards for pair in s]
    assert Counter(_names(flat)) == Counter(_names(catalog))
    assert len(flat) == len(catalog)
    for s in shards:  # each shard keeps the selection's order
        positions = [catalog.index(pair) for pair in s]
        assert positions == sorted(positions)


def test_shards_are_deterministic_and_ignore_input_order(catalog: list) -> None:
    first = [_names(s) for s in plan(catalog, 4)]
    assert [_names(shard(catalog, i, 4)) for i in (1, 3)] == [first[0], first[2]]
    again = [_names(s) for s in plan(load_configs_pairs(), 4)]  # freshly loaded objects
    assert again == first
    shuffled = list(catalog)
    random.Random(7).shuffle(shuffled)
    reshuffled = [sorted(_names(s)) for s in plan(shuffled, 4)]
    assert reshuffled == [sorted(s) for s in first]


def load_configs_pairs() -> list:
    return select(load_configs(CATALOG_DIR), "performance", None)


@pytest.mark.parametrize(("n", "bound"), [(2, 1.05), (3, 1.05), (4, 1.05), (8, 1.10)])
def test_shards_are_balanced_on_the_real_catalog(catalog: list, n: int, bound: float) -> None:
    costs = shard_costs(catalog, n)
    assert len(costs) == n
    assert sum(costs) == pytest.approx(sum(expected_cost(tc, w) for tc, w in catalog))
    assert max(costs) / min(costs) <= bound, costs
    for s, total in zip(plan(catalog, n), costs, strict=True):  # totals of their workloads
        assert sum(expected_cost(tc, w) for tc, w in s) == pytest.approx(total)


def test_more_shards_than_workloads_leaves_some_empty(catalog: list) -> None:
    few = catalog[:3]
    assert [len(s) for s in plan(few, 5)] == [1, 1, 1, 0, 0]
    assert shard(few, 5, 5) == []
    assert plan([], 3) == [[], [], []]


def test_the_costliest_workload_goes_to_shard_1(catalog: list) -> None:
    costs = {(tc.topic, w.full_name): expected_cost(tc, w) for tc, w in catalog}
    first_in_lpt_order = min(costs, key=lambda key: (-costs[key], key))
    assert first_in_lpt_order in _names(shard(catalog, 1, 4))
