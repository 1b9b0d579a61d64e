"""``schedperf coverage --generated N``: generated scenarios mapped beside the catalog, marked
with their origin; a blind spot of the catalog that a generated scenario covers suggests the
``schedperf generate`` command line, and that command writes a scenario whose workload, run
as the map's ``run_command`` selects it, executes the line again (tiny sizes: a 2-node catalog
and generator seed 53, whose scenario 0 has 24 nodes, 5 pods and host ports)."""

from __future__ import annotations

import dataclasses
import json
import shlex
import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from bench.cli.main import main
from bench.coverage import COMPARE_LABEL
from bench.coverage.changed import ChangedStatements
from bench.coverage.collect import MapRequest, MapResult, code_version, load_or_collect
from bench.coverage.cover import choose_for_change
from bench.coverage.generated import generate_command, prepare_generated, run_command
from bench.coverage.statements import parse_statements
from bench.selection import BadInput
from reports.dashboard.coverage import COMPARE_LABEL as DASHBOARD_COMPARE_LABEL
from reports.store.coverage import ORIGIN_GENERATED, GeneratedOrigin, read_map
from reports.store.gitinfo import commit_details
from tests.bench.coverage.test_collect import fake_map
from tests.shared import REPO_ROOT
from workloads.generator import generate

NODE_PORTS = "scheduler_core/plugins/node_ports.py"
SEED = 53  # scenario 0: 24 nodes, 5 pods, a host port
TINY = textwrap.dedent("""\
    - name: Tiny
      labels: [integration-test]
      workloadTemplate:
      - opcode: createNodes
        countParam: $nodes
      - opcode: createPods
        countParam: $pods
        collectMetrics: true
      workloads:
      - name: 2Nodes
        params: {nodes: 2, pods: 3}
    """)


def tiny_config(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "performance-config.yaml").write_text(TINY)
    return folder


def line_of(path: Path, text: str) -> int:
    found = [i for i, x in enumerate(path.read_text().splitlines(), 1) if x.strip() == text]
    assert len(found) == 1, text
    return found[0]


def test_the_generated_scenarios_are_those_of_schedperf_generate(tmp_path: Path) -> None:
    part = prepare_generated(tmp_path / "a", seed=SEED, count=2, run_seed=4)
    again = prepare_generated(tmp_path / "b", seed=SEED, count=2, run_seed=4)
    assert part.origins == again.origins  # the same seed: the same scenarios
    written = sorted(p.relative_to(tmp_path / "a").as_posix()
                     for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert written == sorted(f"generated/{rel}" for rel in generate(SEED, 2).files)
    first = part.origins[0]
    assert first.workload.startswith(f"Generated_{SEED}_0/") and first.index == 0
    assert first.command == generate_command(SEED, 0) == (
        f"schedperf generate --seed {SEED} --count 1 --out schedperf-generated-{SEED}")
    assert first.run_command == run_command(SEED, 0, 4)
    assert "hostPort" in first.tags and list(first.tags) == sorted(first.tags)
    assert part.origins[1].command.startswith(f"schedperf generate --seed {SEED} --count 2 ")
    assert part.spec["names"] == [o.workload for o in part.origins]
    with pytest.raises(BadInput, match="also in the selection"):
        prepare_generated(tmp_path / "c", seed=SEED, count=1, run_seed=0,
                          taken=[first.workload])


@pytest.mark.slow
def test_a_blind_spot_a_generated_scenario_covers_names_the_command_that_reproduces_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    code = main(["coverage", "--config", str(tiny_config(tmp_path / "cfg")),
                 "--generated", "1", "--generated-seed", str(SEED), "--file", NODE_PORTS,
                 "--store", str(store), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    (row,) = out["generated"]
    assert row["status"] == "ok" and row["seed"] == SEED and row["index"] == 0
    assert row["beyond_catalog"] > 0
    # the catalog figures leave the generated scenario out; the third row has it
    assert out["selection"]["workloads"] == ["Tiny/2Nodes"]
    assert (out["with_generated"]["total"]["covered"]
            > out["selection"]["total"]["covered"])
    commit = code_version()[0]
    cmap = read_map(store, commit, files=[NODE_PORTS], allow_dirty=True)
    assert cmap is not None
    (origin,) = cmap.generated
    assert cmap.meta["generated"] == {"seed": SEED, "count": 1}
    # the commit's date and parents, for the dashboard's git order without --repo
    head = commit_details(REPO_ROOT, [commit])[commit]
    assert datetime.fromisoformat(cmap.meta["commit_date"]) == head[0]
    assert tuple(cmap.meta["commit_parents"]) == head[1]
    assert cmap.workload_names() == ["Tiny/2Nodes"]
    assert cmap.workload_names(origin=ORIGIN_GENERATED) == [origin.workload]

    # a change to the line that stores a pod's host ports: the catalog never runs it
    source = REPO_ROOT / NODE_PORTS
    line = line_of(source, "state.write(_STATE_KEY, ports)")
    assert line not in cmap.line_sets()["Tiny/2Nodes"][NODE_PORTS]
    change = ChangedStatements(base="0" * 40, head=commit, lines={NODE_PORTS: frozenset({line})},
                               statements={NODE_PORTS: parse_statements(source.read_text())})
    (spot,) = choose_for_change(cmap, change).blind_spots
    assert spot.command == origin.command and spot.covers_all
    assert spot.generated[0].workload == origin.workload and spot.generated[0].covered == (line,)

    # the command writes the scenario again; run as run_command selects it, it runs the line
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(spot.command)
    assert argv[:2] == ["schedperf", "generate"]
    assert main(argv[1:]) == 0
    capsys.readouterr()
    run = shlex.split(spot.generated[0].run_command)
    assert run[:2] == ["schedperf", "run"]
    again = tmp_path / "again"
    assert main(["coverage", *run[2:], "--file", NODE_PORTS, "--store", str(again),
                 "--format", "json"]) == 0
    assert [w["workload"] for w in json.loads(capsys.readouterr().out)["workloads"]] == [
        origin.workload]
    remapped = read_map(again, commit, files=[NODE_PORTS], allow_dirty=True)
    assert remapped is not None
    assert line in remapped.line_sets()[origin.workload][NODE_PORTS]
    # the same scenario: the very lines it ran in the first map
    assert (remapped.line_sets()[origin.workload]
            == cmap.line_sets([origin.workload])[origin.workload])


def test_a_stored_map_is_reused_only_with_the_generated_scenarios_asked_for(
        tmp_path: Path) -> None:
    calls: list[MapRequest] = []

    def collect(req: MapRequest, *, commit: str, dirty: bool, core_root: Path | None,
                ) -> MapResult:
        calls.append(req)
        cmap = fake_map(commit, dirty, ["Tiny/2Nodes"])
        origins = tuple(GeneratedOrigin(f"Generated_{req.generated_seed}_{i}/x",
                                        req.generated_seed, i, (), "", "")
                        for i in range(req.generated))
        return MapResult(dataclasses.replace(cmap, generated=origins,
                                             meta={"seed": req.seed}))

    config = tiny_config(tmp_path / "cfg")
    a = "a" * 40

    def get(**kw: int) -> bool:
        request = MapRequest(configs=(config,), generated=kw.get("n", 0),
                             generated_seed=kw.get("gseed", 0), seed=kw.get("seed", 0))
        return load_or_collect(tmp_path / "store", request, commit=a, dirty=False,
                               collect=collect)[1] is not None

    assert get(n=2, gseed=5)
    assert not get(n=2, gseed=5) and not get(n=1, gseed=5) and not get()  # all there
    assert get(n=3, gseed=5)  # one more scenario than the stored map holds
    assert get(n=1, gseed=6)  # another generator seed
    assert get(n=1, gseed=6, seed=1)  # the same scenarios, run with another seed
    assert len(calls) == 4


def test_the_dashboard_means_the_same_compare_set() -> None:
    # reports cannot import bench: the label is written twice, and must stay the same
    assert DASHBOARD_COMPARE_LABEL == COMPARE_LABEL
