"""One coverage map from several coverage processes: the shards are dealt round robin, and
the merged map is the map one process makes (same lines, workloads in selection order)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from bench.coverage.collect import MapRequest, code_version
from bench.coverage.shards import collect_sharded, merge_maps, shard_names
from reports.store.coverage import IMPORT_TIME, CoverageMap
from tests.builders import tiny_config

NODE_PORTS = "scheduler_core/plugins/node_ports.py"
SCHEDULE_POD = "scheduler_core/cycle/schedule_pod.py"


def test_names_are_dealt_round_robin() -> None:
    assert shard_names(["a", "b", "c", "d", "e"], 2) == [["a", "c", "e"], ["b", "d"]]
    assert shard_names(["a"], 4) == [["a"]]
    assert shard_names(["a", "b"], 1) == [["a", "b"]]


def _part(workloads: list[str], lines: list[tuple[str, int]]) -> CoverageMap:
    rows = [(w, NODE_PORTS, "line", x, None) for w, x in lines]
    return CoverageMap(
        commit="c" * 40, dirty=False,
        lines=pl.DataFrame(rows, schema={"workload": pl.String, "file": pl.String,
                                         "kind": pl.String, "line": pl.Int32,
                                         "to_line": pl.Int32}, orient="row"),
        workloads=pl.DataFrame({"workload": workloads, "labels": [["x"]] * len(workloads),
                                "cost_seconds": [1.0] * len(workloads),
                                "status": ["ok"] * len(workloads),
                                "error": [None] * len(workloads)},
                               schema={"workload": pl.String, "labels": pl.List(pl.String),
                                       "cost_seconds": pl.Float64, "status": pl.String,
                                       "error": pl.String}),
        include=(NODE_PORTS,))


def test_merging_keeps_each_line_once_and_the_selection_order() -> None:
    one = _part(["T/a", "T/c"], [(IMPORT_TIME, 1), ("T/a", 5), ("T/c", 7)])
    two = _part(["T/b"], [(IMPORT_TIME, 1), ("T/b", 5)])
    merged = merge_maps([one, two], ["T/a", "T/b", "T/c"], meta={"processes": 2})
    assert merged.workload_names() == ["T/a", "T/b", "T/c"]
    assert merged.import_lines() == {NODE_PORTS: frozenset({1})}
    assert merged.line_sets() == {"T/a": {NODE_PORTS: frozenset({5})},
                                  "T/b": {NODE_PORTS: frozenset({5})},
                                  "T/c": {NODE_PORTS: frozenset({7})}}
    assert merged.meta["processes"] == 2
    with pytest.raises(ValueError, match="different commits"):
        merge_maps([one, CoverageMap(commit="d" * 40, dirty=False, include=(NODE_PORTS,))],
                   ["T/a"])


@pytest.mark.slow
def test_two_processes_make_the_map_one_process_makes(tmp_path: Path) -> None:
    folder = tmp_path / "cfg" / "misc"
    folder.mkdir(parents=True)
    (folder / "performance-config.yaml").write_text(tiny_config(
        ("A", [], 4, 0, 6), ("B", [], 6, 2, 5), ("C", [], 3, 1, 4), labels="x"))
    request = MapRequest(configs=(folder.parent,), label_filter="x",
                         include=(NODE_PORTS, SCHEDULE_POD))
    commit, dirty, _ = code_version()
    alone = collect_sharded(request, commit=commit, dirty=dirty, jobs=1)
    shared = collect_sharded(request, commit=commit, dirty=dirty, jobs=2)
    assert (alone.cmap.meta["processes"], shared.cmap.meta["processes"]) == (1, 2)
    assert shared.cmap.workload_names() == ["Tiny/A", "Tiny/B", "Tiny/C"]
    columns = ["workload", "file", "kind", "line", "to_line"]
    assert shared.cmap.lines.sort(columns).equals(alone.cmap.lines.sort(columns))
    assert shared.cmap.lines.height > 0
    assert shared.cmap.statements.sort("file", "line").equals(
        alone.cmap.statements.sort("file", "line"))
