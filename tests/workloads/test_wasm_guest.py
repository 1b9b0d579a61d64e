"""The WebAssembly guest plugin (workloads/wasm): the shipped TierGate guest, compiled from its
WAT source by wasmtime, decides exactly as the in-process TierGate plugin, whichever way the
node data crosses into it; a bad guest or bad args are one clear config error."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from scheduler_core.cluster.store import Cluster
from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import CycleState
from tests.builders import make_node, make_pod
from workloads.example_plugins.tier_gate import TierGateVectorised
from workloads.extender_server.rule import TIER_LABEL
from workloads.wasm.plugin import DEFAULT_GUEST, WasmTierGate


def _table(seed: int, n: int = 300):
    rng = random.Random(seed)
    cluster = Cluster()
    for i in range(n):
        b = make_node(f"n{i}").alloc(cpu="4", memory="8Gi", pods=rng.choice([10, 110]))
        tier = rng.choice(["gold", "silver", "bronze", "excluded", "golden", "", None])
        if tier is not None:
            b.label(TIER_LABEL, tier)
        cluster.add_node(b.obj())
    return cluster.table


@pytest.mark.parametrize("crossing", ["batched", "per-node"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_guest_decides_as_the_vectorised_plugin(crossing, seed):
    table = _table(seed)
    pod = make_pod("p").obj()
    state = CycleState()
    wasm = WasmTierGate({"crossing": crossing})
    native = TierGateVectorised()
    idx = np.random.default_rng(seed).permutation(table.high)[:200]
    for sel in (idx, slice(0, table.high)):
        assert np.array_equal(wasm.filter(state, pod, table, sel),
                              native.filter(state, pod, table, sel))
        got = wasm.score(state, pod, table, sel)
        assert got.dtype == np.int64
        assert np.array_equal(got, native.score(state, pod, table, sel))
    assert wasm.failure.reasons == ("node(s) excluded by the tier rule",)


def test_nodes_without_the_label_pass_and_score_zero():
    cluster = Cluster()
    cluster.add_node(make_node("plain").alloc(cpu="1", pods=10).obj())
    wasm = WasmTierGate()
    pod, state = make_pod("p").obj(), CycleState()
    assert wasm.filter(state, pod, cluster.table, slice(0, 1)).tolist() == [True]
    assert wasm.score(state, pod, cluster.table, slice(0, 1)).tolist() == [0]


GOOD_EXPORTS = DEFAULT_GUEST.read_text()


@pytest.mark.parametrize(("args", "source", "message"), [
    ({"crossing": "sometimes"}, None, 'args.crossing: "sometimes": expected one of batched, '
     "per-node"),
    ({"labelkey": "x"}, None, "args.labelkey: unknown field"),
    ({"guest": "missing.wat"}, None, "args.guest: cannot read the WebAssembly guest"),
    ({}, "(module (func $f (result i32) (i32.const 1))", "does not load"),
    ({}, "(module (memory (export \"memory\") 1))", "lacks the export(s) "
     "schedperf_abi_version, scratch, reason_ptr, reason_len, filter, score"),
    ({}, GOOD_EXPORTS.replace('(func (export "schedperf_abi_version") (result i32) '
                              "(i32.const 1))",
                              '(func (export "schedperf_abi_version") (result i32) '
                              "(i32.const 7))"),
     "speaks ABI version 7; this host speaks 1"),
])
def test_a_bad_guest_or_bad_args_is_one_config_error(tmp_path: Path, args, source, message):
    if source is not None:
        path = tmp_path / "guest.wat"
        path.write_text(source)
        args = {**args, "guest": str(path)}
    elif "guest" in args:
        args = {**args, "guest": str(tmp_path / args["guest"])}
    with pytest.raises(ConfigError) as exc:
        WasmTierGate(args, args_path="profiles[0].pluginConfig[0].args")
    assert message in str(exc.value)
    assert str(exc.value).startswith("profiles[0].pluginConfig[0].args")
