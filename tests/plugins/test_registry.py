"""The in-tree registry and each plugin's declared extension points (the Python version of
kube's ``var _ framework.FilterPlugin = &Fit{}`` lines)."""

from __future__ import annotations

import pytest

from scheduler_core.errors import ConfigError
from scheduler_core.framework import interface as fw
from scheduler_core.plugins import names
from scheduler_core.plugins.registry import IN_TREE, build_registry

EXPECTED = {
    names.DEFAULT_PREEMPTION: (fw.PostFilterPlugin,),
    names.INTER_POD_AFFINITY: (fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin,
                               fw.ScorePlugin, fw.ScoreExtensions, fw.EnqueueExtensions),
    names.POD_TOPOLOGY_SPREAD: (fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin,
                                fw.ScorePlugin, fw.ScoreExtensions, fw.EnqueueExtensions),
    names.SCHEDULING_GATES: (fw.PreEnqueuePlugin, fw.EnqueueExtensions),
    names.PRIORITY_SORT: (fw.QueueSortPlugin,),
    names.NODE_UNSCHEDULABLE: (fw.FilterPlugin, fw.EnqueueExtensions),
    names.NODE_NAME: (fw.FilterPlugin, fw.EnqueueExtensions),
    names.TAINT_TOLERATION: (fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin,
                             fw.ScoreExtensions, fw.EnqueueExtensions),
    names.NODE_AFFINITY: (fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin,
                          fw.ScorePlugin, fw.ScoreExtensions, fw.EnqueueExtensions),
    names.NODE_PORTS: (fw.PreFilterPlugin, fw.FilterPlugin, fw.EnqueueExtensions),
    names.NODE_RESOURCES_FIT: (fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin,
                               fw.ScorePlugin, fw.EnqueueExtensions),
    names.NODE_RESOURCES_BALANCED_ALLOCATION: (fw.PreScorePlugin, fw.ScorePlugin),
    names.IMAGE_LOCALITY: (fw.ScorePlugin,),
    names.DEFAULT_BINDER: (fw.BindPlugin,),
}
NO_NORMALIZE = {names.NODE_RESOURCES_FIT, names.NODE_RESOURCES_BALANCED_ALLOCATION,
                names.IMAGE_LOCALITY}
REJECTING = (fw.PreEnqueuePlugin, fw.PreFilterPlugin, fw.FilterPlugin, fw.ReservePlugin,
             fw.PermitPlugin)


def test_registry_names():
    assert set(EXPECTED) <= set(IN_TREE)
    for name, cls in IN_TREE.items():
        assert cls.name == name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_protocols(name):
    plugin = IN_TREE[name](None, None, args_path=f"pluginConfig[{name}]")
    for proto in EXPECTED[name]:
        assert isinstance(plugin, proto), proto.__name__
    if name in NO_NORMALIZE:
        assert not hasattr(plugin, "normalize")
    # every plugin that can reject a pod says which events may undo that
    if any(isinstance(plugin, p) for p in REJECTING):
        assert isinstance(plugin, fw.EnqueueExtensions)
        for e in plugin.events_to_register():
            assert isinstance(e, fw.ClusterEventWithHint)


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n not in (
    names.NODE_RESOURCES_FIT, names.NODE_RESOURCES_BALANCED_ALLOCATION, names.NODE_AFFINITY,
    names.POD_TOPOLOGY_SPREAD, names.INTER_POD_AFFINITY, names.DEFAULT_PREEMPTION)))
def test_plugins_without_args_reject_args(name):
    with pytest.raises(ConfigError) as err:
        IN_TREE[name]({"x": 1}, None, args_path="p.args")
    assert err.value.field == "p.args"


def test_duplicate_names_refused():
    cls = IN_TREE[names.NODE_NAME]
    with pytest.raises(ValueError, match="registered twice"):
        build_registry(cls, cls)


def test_plugins_claiming_score_range_keep_it():
    """Plugins marked score_in_range skip the framework's range check, so check them here on
    a cluster that stresses the formulas (overcommitted, tainted, imaged, heterogeneous)."""
    import numpy as np

    from scheduler_core.framework.interface import CycleState
    from scheduler_core.plugins.registry import IN_TREE
    from tests.builders import make_node, make_pod, table_of

    nodes = [make_node(f"n{i}").alloc(cpu=str(1 + i % 3), memory=f"{1 + i}Gi", pods=5)
             .label("zone", "ab"[i % 2]).taint("t", str(i % 3), "PreferNoSchedule")
             .image(10**9 * (i % 4), "img:1").obj() for i in range(12)]
    existing = {f"n{i}": [make_pod(f"e{i}").req(cpu="2", memory="3Gi").obj()] for i in range(6)}
    table = table_of(nodes, existing)
    pod = make_pod("p").req(cpu="500m", memory="1Gi").images("img:1") \
        .preferred(5, {"matchExpressions": [{"key": "zone", "operator": "In",
                                             "values": ["a"]}]}).obj()
    idx = np.asarray(table.order())
    for cls in IN_TREE.values():
        if not getattr(cls, "score_in_range", False):
            continue
        plugin = cls(None, None)
        state = CycleState()
        if hasattr(plugin, "pre_filter"):
            plugin.pre_filter(state, pod, table)
        if hasattr(plugin, "pre_score"):
            status = plugin.pre_score(state, pod, table, idx)
            if status is not None and status.is_skip:
                continue
        scores = plugin.score(state, pod, table, idx)
        if hasattr(plugin, "normalize"):
            scores = plugin.normalize(state, pod, scores)
        assert scores.min() >= 0 and scores.max() <= 100, cls.name
