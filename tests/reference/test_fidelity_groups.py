"""``schedperf fidelity`` on pod-group workloads: the lockstep runs them against the reference's
v1.37 build and compares every evaluation of a group member inside a group cycle, in every
placement it is tried in, with the members tried before it assumed on both sides."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from click.testing import CliRunner

from bench.cli.main import cli
from scheduler_core.plugins import balanced_allocation

PODGROUP = Path("upstream/scheduler_perf-next/podgroup")
RACKS = "^GangsPackedIntoRacks/30Nodes$"


def _fidelity(reference_binary_v137, tmp_path, *args: str) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(cli, [
        "fidelity", "--out", str(tmp_path / "fid"), "--format", "json",
        "--reference-cache", str(reference_binary_v137.path.parent.parent), *args])
    start = result.output.find("[\n")
    assert start >= 0, result.output[-3000:]
    return result.exit_code, json.loads(result.output[start:])


def test_pod_group_members_agree_with_v137_in_every_placement(
        shared_dir, reference_binary_v137, tmp_path):
    code, summaries = _fidelity(reference_binary_v137, tmp_path,
                                "--config", str(shared_dir / PODGROUP))
    assert code == 0, summaries
    compared = {s["workload"]: s for s in summaries if s["status"] == "compared"}
    assert {"GangScheduling/10Nodes_3Gangs", "BasicScheduling/10Nodes_3Groups",
            "TopologyAwareScheduling/100Nodes_10Gangs"} <= set(compared)
    assert all(s["attempts"] == s["attempts_run"] > 0 for s in compared.values())
    assert not [d for s in summaries for d in s["disagreements"]]
    # the newer placement limit is not v1.37.2's: refused by the reference, said so
    refused = [s for s in summaries if s["status"] == "unsupported"]
    assert refused and all("percentageOfPlacementsToScore" in s["reason"] for s in refused)
    rows = pl.read_parquet(tmp_path / "fid" / "fidelity.parquet")
    assert set(rows["kubernetes"].drop_nulls()) == {"v1.37.2"}
    assert set(rows["reference_sha256"]) == {reference_binary_v137.sha256}
    members = rows.filter(pl.col("kind") == "attempt")
    # upstream's small TAS cases have one rack: a placement of every node, no restriction
    assert set(members["placement"]) == {"*"}


def test_gangs_tried_rack_by_rack_agree_including_the_ones_that_fail(
        reference_binary_v137, tmp_path):
    code, summaries = _fidelity(reference_binary_v137, tmp_path, "--name", RACKS)
    assert code == 0, summaries
    (s,) = summaries
    assert s["status"] == "compared" and s["attempts"] > 100
    attempts = pl.read_parquet(tmp_path / "fid" / "fidelity.parquet").filter(
        pl.col("kind") == "attempt")
    assert set(attempts["placement"]) == {f"rack-{i}" for i in range(6)}
    # members that find no node in a full rack, with the same message on both sides
    assert set(attempts["core_outcome"]) == {"Scheduled", "Unschedulable"}
    assert (attempts["core_outcome"] == attempts["reference_outcome"]).all()


def test_a_v134_balanced_allocation_is_caught_in_a_pod_group_workload(
        reference_binary_v137, tmp_path, monkeypatch):
    # v1.37 scores how much a pod improves a node's balance; v1.34 scored the balance with it
    monkeypatch.setattr(balanced_allocation.NodeResourcesBalancedAllocation, "_v137",
                        staticmethod(lambda handle: False))
    code, summaries = _fidelity(reference_binary_v137, tmp_path, "--name", RACKS)
    assert code == 1
    (s,) = summaries
    assert {(d["stage"], d["plugin"]) for d in s["disagreements"]} >= {
        ("Score", "NodeResourcesBalancedAllocation")}


def test_generated_gang_scenarios_agree_with_v137(reference_binary_v137, tmp_path):
    """`schedperf generate` scenarios with gangs (tag pod-groups:gang) against v1.37.2: four
    seeds whose gang groups carry other features (anti-affinity, spreading, priorities)."""
    from workloads.generator import generate

    seeds = [s for s in range(40) if "pod-groups:gang" in generate(s, 1).scenarios[0].tags]
    assert len(seeds) >= 4
    out = tmp_path / "generated"
    for seed in seeds[:4]:
        folder = out / str(seed)
        for path, text in generate(seed, 1).files.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text)
    args = [a for seed in seeds[:4] for a in ("--config", str(out / str(seed)))]
    code, summaries = _fidelity(reference_binary_v137, tmp_path, "--label", "generated", *args)
    assert code == 0, summaries
    assert len(summaries) == 4 and all(s["status"] == "compared" for s in summaries)
    assert sum(s["attempts"] for s in summaries) > 50
