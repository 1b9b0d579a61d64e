"""reports.store.coverage: coverage maps in the results store (round trip, replacement per
commit and scope, dirty and restricted maps, atomic replacement) and coverage figures."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest

import reports.store.coverage as store_coverage
from reports.store import scan_store, store_files
from reports.store.coverage import (
    IMPORT_TIME,
    ORIGIN_GENERATED,
    CoverageMap,
    GeneratedOrigin,
    coverage_figures,
    list_maps,
    map_commits,
    read_map,
    write_map,
)
from reports.store.problems import StoreError

A = "a" * 40
B = "b" * 40
F = "scheduler_core/x.py"
G = "scheduler_core/pkg/__init__.py"


def make_map(commit: str = A, *, workloads: tuple[str, ...] = ("T/one", "T/two"),
             dirty: bool = False, include: tuple[str, ...] | None = None) -> CoverageMap:
    labels = {"T/one": ["integration-test", "compare"], "T/two": ["integration-test"],
              "T/bad": ["integration-test", "compare"]}
    lines = [(IMPORT_TIME, F, "line", 1, None), (IMPORT_TIME, G, "line", 1, None)]
    per = {"T/one": [2, 3], "T/two": [3, 4, 5], "T/bad": [6]}
    for w in workloads:
        lines += [(w, F, "line", x, None) for x in per[w]]
        lines.append((w, F, "arc", -1, per[w][0]))
    status = {"T/bad": "failed"}
    return CoverageMap(
        commit=commit, dirty=dirty, include=include,
        lines=pl.DataFrame(lines, schema={"workload": pl.String, "file": pl.String,
                                          "kind": pl.String, "line": pl.Int32,
                                          "to_line": pl.Int32}, orient="row"),
        workloads=pl.DataFrame(
            [(w, labels[w], 1.5, status.get(w, "ok"), "boom" if w in status else None)
             for w in workloads],
            schema={"workload": pl.String, "labels": pl.List(pl.String),
                    "cost_seconds": pl.Float64, "status": pl.String, "error": pl.String},
            orient="row"),
        # x.py: statements 1..6, 6 inside an error branch; pkg/__init__.py: 1 statement
        statements=pl.DataFrame(
            [(F, x, x != 6) for x in range(1, 7)] + [(G, 1, True)],
            schema={"file": pl.String, "line": pl.Int32, "outside_error_branch": pl.Boolean},
            orient="row"),
        meta={"label_filter": "integration-test"})


def test_round_trip(tmp_path: Path) -> None:
    cmap = make_map()
    write_map(tmp_path, cmap)
    got = read_map(tmp_path, A)
    assert got is not None
    assert (got.commit, got.dirty, got.include, got.packages) == (A, False, None,
                                                                  ("scheduler_core",))
    for name in ("lines", "workloads", "statements"):
        assert getattr(got, name).equals(getattr(cmap, name)), name
    assert got.meta == {"label_filter": "integration-test"}
    assert got.line_sets() == {"T/one": {F: {2, 3}}, "T/two": {F: {3, 4, 5}}}
    assert got.import_lines() == {F: {1}, G: {1}}
    assert got.costs() == {"T/one": 1.5, "T/two": 1.5}
    assert got.statement_totals().rows() == [(G, 1, 1), (F, 6, 5)]
    assert map_commits(tmp_path) == [A]
    # a coverage map is no results part: the results store stays empty
    assert store_files(tmp_path) == [] and scan_store(tmp_path).collect().height == 0


def test_a_map_replaces_the_one_of_its_commit_and_leaves_others(tmp_path: Path) -> None:
    write_map(tmp_path, make_map(A))
    write_map(tmp_path, make_map(B))
    write_map(tmp_path, make_map(A, workloads=("T/two",)))
    got = read_map(tmp_path, A)
    assert got is not None and got.workload_names() == ["T/two"]
    other = read_map(tmp_path, B)
    assert other is not None and other.workload_names() == ["T/one", "T/two"]
    folder = tmp_path / "_coverage" / A / "all"
    assert len(list(folder.glob("*.arrow"))) == 3  # the replaced tables are gone
    assert map_commits(tmp_path) == [A, B]


def test_the_map_of_one_commit_is_never_the_map_of_another(tmp_path: Path) -> None:
    write_map(tmp_path, make_map(A))
    assert read_map(tmp_path, B) is None
    assert read_map(tmp_path, A[:12]) is None  # looked up by the hash it was written with


def test_dirty_restricted_and_incomplete_maps_do_not_do(tmp_path: Path) -> None:
    write_map(tmp_path, make_map(A, dirty=True))
    assert read_map(tmp_path, A) is None
    assert read_map(tmp_path, A, allow_dirty=True) is not None
    write_map(tmp_path, make_map(B, include=(F,)))
    assert read_map(tmp_path, B) is None                 # not every file
    assert read_map(tmp_path, B, files=[F]) is not None  # the file asked for
    assert read_map(tmp_path, B, files=[F, G]) is None
    # a restricted map never replaces the full one of its commit
    write_map(tmp_path, make_map(B))
    full = read_map(tmp_path, B, files=[F])
    assert full is not None and full.include is None
    assert {m.scope != "all" for m in list_maps(tmp_path) if m.commit == B} == {False, True}
    assert read_map(tmp_path, B, workloads=["T/one"]) is not None
    assert read_map(tmp_path, B, workloads=["T/one", "T/three"]) is None


def test_a_writer_killed_before_its_manifest_leaves_the_old_map(tmp_path: Path,
                                                                monkeypatch) -> None:
    write_map(tmp_path, make_map(A))
    real = store_coverage.atomic_write_bytes

    def killed(path: Path, data: bytes) -> Path:
        if Path(path).name == "map.json":
            raise KeyboardInterrupt("killed")
        return real(path, data)

    monkeypatch.setattr(store_coverage, "atomic_write_bytes", killed)
    with pytest.raises(KeyboardInterrupt):
        write_map(tmp_path, make_map(A, workloads=("T/two",)))
    monkeypatch.undo()
    got = read_map(tmp_path, A)
    assert got is not None and got.workload_names() == ["T/one", "T/two"]
    write_map(tmp_path, make_map(A, workloads=("T/two",)))  # the next write tidies up
    assert len(list((tmp_path / "_coverage" / A / "all").glob("*.arrow"))) == 3


def test_a_newer_or_damaged_map_is_an_error(tmp_path: Path) -> None:
    manifest = write_map(tmp_path, make_map(A))
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "coverage_schema_version": 99}))
    with pytest.raises(StoreError, match="coverage_schema_version 99"):
        read_map(tmp_path, A)
    manifest.write_text("{not json")
    with pytest.raises(StoreError, match=r"map\.json"):
        read_map(tmp_path, A)


def test_figures_per_module_and_total_for_a_label_subset() -> None:
    cmap = make_map(workloads=("T/one", "T/two", "T/bad"))
    everything = coverage_figures(cmap)
    assert everything.workloads == ("T/one", "T/two")  # T/bad failed: its lines do not count
    x = everything.per_module.filter(pl.col("file") == F).row(0, named=True)
    assert (x["module"], x["statements"], x["covered"]) == ("scheduler_core.x", 6, 5)
    assert (x["outside_statements"], x["outside_covered"]) == (5, 5)
    assert everything.total["statements"] == 7 and everything.total["covered"] == 6
    assert everything.total["percent"] == pytest.approx(100 * 6 / 7)
    compare = coverage_figures(cmap, label_filter="compare")
    assert compare.workloads == ("T/one",)
    x = compare.per_module.filter(pl.col("file") == F).row(0, named=True)
    assert (x["covered"], x["outside_covered"], x["percent"]) == (3, 3, 50.0)
    pkg = compare.per_module.filter(pl.col("file") == G).row(0, named=True)
    assert pkg["module"] == "scheduler_core.pkg" and pkg["percent"] == 100.0  # import-time


def with_generated(cmap: CoverageMap) -> CoverageMap:
    """``cmap`` plus a generated scenario that ran and executes x.py line 6 (the error branch)
    and line 4."""
    gen = "Generated_3_1/7Nodes_9Pods"
    lines = pl.concat([cmap.lines, pl.DataFrame(
        [(gen, F, "line", 4, None), (gen, F, "line", 6, None)], schema=cmap.lines.schema,
        orient="row")])
    workloads = pl.concat([cmap.workloads, pl.DataFrame(
        [(gen, ["integration-test", "generated"], 0.5, "ok", None)],
        schema=cmap.workloads.schema, orient="row")])
    origin = GeneratedOrigin(gen, 3, 1, ("hostPort", "racks"),
                             "schedperf generate --seed 3 --count 2",
                             "schedperf run --config schedperf-generated --label generated "
                             "--name '^Generated_3_1/'")
    return dataclasses.replace(cmap, lines=lines, workloads=workloads, generated=(origin,))


def test_generated_scenarios_are_marked_and_apart_from_the_catalog(tmp_path: Path) -> None:
    cmap = with_generated(make_map(workloads=("T/one",)))
    manifest = write_map(tmp_path, cmap)
    assert json.loads(manifest.read_text())["coverage_schema_version"] == 2
    got = read_map(tmp_path, A)
    assert got is not None and got.generated == cmap.generated
    gen = cmap.generated[0].workload
    assert got.origins()[gen].test_case == "Generated_3_1"
    assert got.workload_names() == ["T/one"]  # the catalog's: what compare can measure
    assert got.workload_names(origin=ORIGIN_GENERATED) == [gen]
    assert got.workload_names(origin=None) == ["T/one", gen]
    assert set(got.line_sets()) == {"T/one"}
    assert got.line_sets([gen]) == {gen: {F: {4, 6}}}
    # figures: the catalog's by default; the generated scenario only when asked
    assert coverage_figures(got).total["covered"] == 4  # x.py 1, 2, 3 and pkg 1
    both = coverage_figures(got, origin=None)
    assert both.workloads == ("T/one", gen) and both.total["covered"] == 6
    assert both.total["outside_covered"] == 5  # line 6 is in an error branch
    with pytest.raises(ValueError, match="origin 'elsewhere'"):
        got.workload_names(origin="elsewhere")


def test_a_map_without_generated_scenarios_stays_version_1(tmp_path: Path) -> None:
    manifest = write_map(tmp_path, make_map())
    data = json.loads(manifest.read_text())
    assert data["coverage_schema_version"] == 1 and "generated" not in data
    got = read_map(tmp_path, A)
    assert got is not None and got.generated == ()
    manifest.write_text(json.dumps({**data, "generated": [{"workload": "G/x"}]}))
    with pytest.raises(StoreError, match="generated scenario entry"):
        read_map(tmp_path, A)
