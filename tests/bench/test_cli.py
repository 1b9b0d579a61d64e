"""schedperf list / validate / run through click's CliRunner on a tiny two-workload config."""

from __future__ import annotations

import json
import pstats
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from bench import selection as selection_module
from bench.cli import run as run_module
from bench.cli.main import cli, main
from tests.builders import UNMODELLED, tiny_config
from workloads.catalog.support import support_reason
from workloads.config import load_configs

CONFIG = tiny_config(("5Nodes", ["integration-test", "short"], 5, 5, 20),
                     ("10Nodes", ["integration-test"], 10, 2, 30),
                     thresholds={"10Nodes": "THRESHOLD"})


def write_config(tmp_path: Path, threshold: str = "0") -> Path:
    folder = tmp_path / "configs"
    (folder / "misc").mkdir(parents=True)
    (folder / "misc" / "performance-config.yaml").write_text(
        CONFIG.replace("THRESHOLD", threshold))
    return folder


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def config(tmp_path):
    return write_config(tmp_path)


# --------------------------------------------------------------------------- list / validate


def test_list_shows_workloads_sizes_and_support(config):
    result = invoke("list", "--config", str(config))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    five = next(line for line in lines if "Tiny/5Nodes" in line)
    ten = next(line for line in lines if "Tiny/10Nodes" in line)
    assert [c.strip() for c in five.split("│")[3:6]] == ["5", "25", "yes"]
    assert [c.strip() for c in ten.split("│")[3:6]] == ["10", "32", "yes"]


def test_list_label_filter(config):
    result = invoke("list", "--config", str(config), "--label", "short")
    assert result.exit_code == 0
    assert "Tiny/5Nodes" in result.output and "Tiny/10Nodes" not in result.output


def test_validate_ok(config):
    result = invoke("validate", str(config))
    assert result.exit_code == 0, result.output
    assert "ok" in result.output


def test_validate_prints_every_error(tmp_path, config):
    bad = tmp_path / "bad" / "performance-config.yaml"
    bad.parent.mkdir()
    bad.write_text(CONFIG.replace("countParam: $nodes", "countParam: $nodez")
                   .replace("THRESHOLD", "0").replace("labels: [performance]",
                                                      "labels: [performance]\n  bogus: 1"))
    result = invoke("validate", str(config), str(bad), str(tmp_path / "missing.yaml"))
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert any("bogus" in line for line in lines), result.output
    assert any("missing.yaml" in line for line in lines)
    assert lines[-1].endswith("errors")


# --------------------------------------------------------------------------- run


def test_run_writes_all_outputs_and_exits_0(config, tmp_path):
    out = tmp_path / "out"
    result = invoke("run", "--config", str(config), "--out", str(out), "--record-decisions",
                    "--repeat", "2", "--seed", "3")
    assert result.exit_code == 0, result.output
    assert "Tiny/5Nodes" in result.output and "attempts/pod" in result.output
    files = sorted(p.name for p in out.iterdir())
    jsons = [f for f in files if f.endswith(".json")]
    assert len(jsons) == 2  # one per topic and round, unique names
    assert all(f.startswith("BenchmarkPerfScheduling_benchmark_misc_") for f in jsons)
    assert {"results.parquet", "placements.parquet", "decisions.parquet"} <= set(files)
    assert not [f for f in files if f.endswith(".tmp")]
    doc = json.loads((out / jsons[0]).read_text())
    names = {d["labels"]["Name"] for d in doc["dataItems"]}
    assert {n.rsplit("/", 1)[0] for n in names} == {"Tiny/5Nodes", "Tiny/10Nodes"}
    df = pl.read_parquet(out / "results.parquet")
    status = df.filter(pl.col("metric") == "workload_status")
    assert sorted(status.select("round", "workload", "bucket").rows()) == [
        (1, "10Nodes", "ok"), (1, "5Nodes", "ok"), (2, "10Nodes", "ok"), (2, "5Nodes", "ok")]
    assert df["seed"].unique().to_list() == [3]
    placements = pl.read_parquet(out / "placements.parquet")
    assert placements.filter(pl.col("round") == 1).height == 25 + 32
    assert pl.read_parquet(out / "decisions.parquet").height > 0


def test_threshold_miss_exits_1_and_still_writes(tmp_path):
    config = write_config(tmp_path, threshold="1000000000")
    out = tmp_path / "out"
    result = invoke("run", "--config", str(config), "--out", str(out))
    assert result.exit_code == 1, result.output
    assert "threshold-missed" in result.output
    files = {p.name for p in out.iterdir()}
    assert {"results.parquet", "placements.parquet"} <= files
    assert any(f.endswith(".json") for f in files)
    assert "decisions.parquet" not in files


@pytest.mark.parametrize(("args", "message"), [
    (["--label", "nope"], "label filter 'nope'"),
    (["--label", "performance,-performance"], "label filter 'performance,-performance'"),
    (["--name", "NoSuchCase"], "--name 'NoSuchCase'"),
    (["--name", "("], "not a valid regular expression"),
], ids=["unknown-label", "contradictory-filter", "name-matches-nothing", "bad-regex"])
def test_bad_selection_exits_2_naming_it(config, tmp_path, args, message):
    result = invoke("run", "--config", str(config), "--out", str(tmp_path / "o"), *args)
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "o").exists()


def test_empty_label_selects_everything(config, tmp_path):
    out = tmp_path / "out"
    result = invoke("run", "--config", str(config), "--out", str(out), "--label", "",
                    "--name", "5Nodes")
    assert result.exit_code == 0, result.output
    df = pl.read_parquet(out / "results.parquet")
    assert df["workload"].unique().to_list() == ["5Nodes"]


def test_config_error_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "performance-config.yaml"
    bad.write_text("- name: X\n  workloadTemplate: []\n  workloads: []\n  bogus: 1\n")
    result = invoke("run", "--config", str(bad))
    assert result.exit_code == 2
    assert "performance-config.yaml" in result.output


def test_no_builtin_catalog_exits_2(tmp_path, monkeypatch):
    monkeypatch.setattr(selection_module, "CATALOG_DIR", tmp_path / "absent")
    result = invoke("run")
    assert result.exit_code == 2
    assert "no built-in catalog exists yet" in result.output


def test_main_returns_exit_codes(config, tmp_path, capsys):
    assert main(["run", "--config", str(config), "--label", "nope"]) == 2
    assert "label filter 'nope'" in capsys.readouterr().err
    assert main(["validate", str(config)]) == 0
    assert main(["run", "--config", str(config), "--out", str(tmp_path / "o"),
                 "--name", "5Nodes"]) == 0


# --------------------------------------------------------------------------- --profile


@pytest.mark.parametrize("speedscope", [False, True], ids=["pstats-only", "with-pyinstrument"])
def test_profile_writes_one_pstats_per_workload(config, tmp_path, monkeypatch, speedscope):
    if speedscope:
        pytest.importorskip("pyinstrument")
    else:
        monkeypatch.setattr(run_module, "have_pyinstrument", lambda: False)
        monkeypatch.setattr("bench.profiling.have_pyinstrument", lambda: False)
    prof = tmp_path / "prof"
    result = invoke("run", "--config", str(config), "--out", str(tmp_path / "out"),
                    "--profile", str(prof))
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in prof.iterdir())
    expected = ["Tiny_10Nodes.pstats", "Tiny_5Nodes.pstats"]
    if speedscope:
        expected = sorted([*expected, "Tiny_10Nodes.speedscope.json",
                           "Tiny_5Nodes.speedscope.json"])
        doc = json.loads((prof / "Tiny_5Nodes.speedscope.json").read_text())
        assert doc["$schema"].startswith("https://www.speedscope.app/")
    else:
        assert "pyinstrument is not installed" in result.output
    assert names == expected
    stats = pstats.Stats(str(prof / "Tiny_5Nodes.pstats"))
    functions = {fn for _, _, fn in stats.stats}  # type: ignore[attr-defined]
    assert "schedule_one" in functions


def test_profile_dir_that_is_a_file_exits_2(config, tmp_path):
    target = tmp_path / "afile"
    target.write_text("x")
    result = invoke("run", "--config", str(config), "--profile", str(target))
    assert result.exit_code == 2
    assert "Invalid value for '--profile'" in result.output and "is a file" in result.output


def test_list_marks_workloads_needing_unmodelled_objects(tmp_path):
    folder = tmp_path / "configs" / "volumes"
    folder.mkdir(parents=True)
    (folder / "pv.yaml").write_text("apiVersion: v1\nkind: VolumeAttachment\n"
                                    "metadata: {name: pv}\n")
    (folder / "performance-config.yaml").write_text(UNMODELLED)
    (tc,) = load_configs(folder)
    reason = support_reason(tc, tc.workloads[0])
    assert reason is not None and "kind VolumeAttachment is not modelled" in reason
    result = CliRunner().invoke(cli, ["list", "--config", str(folder)],
                                catch_exceptions=False, terminal_width=400)
    assert result.exit_code == 0
    row = next(line for line in result.output.splitlines() if "Volumes/small" in line)
    assert "no: op 1 createAny" in row


def test_a_failed_workload_exits_2_and_still_writes(tmp_path):
    """A workload that fails at run time is a failed run (exit 2), not a missed threshold."""
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    (folder / "big.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: big-\nspec:\n  containers:\n"
        "  - name: c\n    image: x\n    resources:\n      requests:\n        cpu: '1000'\n")
    (folder / "performance-config.yaml").write_text(
        "- name: NeverFits\n  workloadTemplate:\n  - opcode: createNodes\n    count: 2\n"
        "  - opcode: createPods\n    count: 1\n    podTemplatePath: big.yaml\n"
        "    collectMetrics: true\n  workloads:\n  - name: 2Nodes\n")
    out = tmp_path / "out"
    result = invoke("run", "--config", str(folder.parent), "--label", "", "--out", str(out))
    assert result.exit_code == 2, result.output
    assert "failed" in result.output
    status = pl.read_parquet(out / "results.parquet").filter(
        pl.col("metric") == "workload_status")
    assert status["bucket"].to_list() == ["failed"]
