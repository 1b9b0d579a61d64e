"""The deep check before any work (issue 16): ``validate`` and the start of ``run`` list every
problem of every selected workload at once; ``run`` refuses a selection with bad input unless
``--keep-going``; unsupported is not bad input; impossible sizes are refused against the
memory available (injected here)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from bench.cli.main import main
from tests.builders import UNMODELLED, tiny_config
from tests.corpus.cases import write_base
from workloads.catalog import check as check_module
from workloads.catalog.check import BYTES_PER_OBJECT, check_workload
from workloads.config import load_configs

BAD_NODE = """\
apiVersion: v1
kind: Node
metadata: {generateName: node-}
status:
  capacity: {cpu: "4x", memory: 32Gi, pods: "110"}
"""
BAD_POD = """\
apiVersion: v1
kind: Pod
metadata: {generateName: pod-}
spec:
  tolerations: [{key: a, operator: Sometimes}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "{{ .Index }}m"}}}]
"""


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """Topic ``good`` (two tiny workloads) and topic ``t`` whose node template, pod template
    and scheduler config are all broken."""
    root = tmp_path / "cfg"
    (root / "good").mkdir(parents=True)
    (root / "good" / "performance-config.yaml").write_text(
        tiny_config(("A4Nodes", [], 4, 0, 6), ("B5Nodes", [], 5, 1, 4)))
    write_base(root)
    (root / "t" / "node.yaml").write_text(BAD_NODE)
    (root / "t" / "pod.yaml").write_text(BAD_POD)
    sched = root / "t" / "sched.yaml"
    sched.write_text(sched.read_text().replace("NodeResourcesFit", "NoSuchPlugin"))
    return root


def test_validate_lists_every_problem_at_once(mixed: Path, capsys) -> None:
    assert main(["validate", str(mixed)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("t/performance-config.yaml")]
    assert len(lines) == 3, err
    assert any("schedulerConfigPath" in ln and 'unknown plugin "NoSuchPlugin"' in ln
               for ln in lines)
    assert any("workloadTemplate[0]" in ln and "node.yaml" in ln
               and 'status.capacity.cpu: invalid quantity "4x"' in ln for ln in lines)
    assert any("workloadTemplate[1]" in ln and "pod.yaml (Index 0)" in ln
               and "spec.tolerations[0].operator" in ln for ln in lines)
    assert err.rstrip().endswith("3 errors")


def test_run_refuses_bad_input_before_starting(mixed: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["run", "--config", str(mixed), "--label", "", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "1 of 3 selected workloads has bad input (above); nothing was run" in err
    assert 'invalid quantity "4x"' in err
    assert not out.exists()


def test_keep_going_runs_the_good_ones_and_exits_2(mixed: Path, tmp_path: Path,
                                                  capsys) -> None:
    out = tmp_path / "out"
    code = main(["run", "--config", str(mixed), "--label", "", "--out", str(out),
                 "--keep-going", "--format", "json"])
    err = capsys.readouterr().err
    assert code == 2
    df = pl.read_parquet(out / "results.parquet")
    ran = df.filter(pl.col("metric") == "workload_status").select("test_case", "workload")
    assert sorted(ran.rows()) == [("Tiny", "A4Nodes"), ("Tiny", "B5Nodes")]
    assert "will not run (--keep-going): Basic/small" in err
    assert "Basic/small: not run (bad input): " in err.splitlines()[-1]


def test_unsupported_is_not_bad_input(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "configs" / "volumes"
    folder.mkdir(parents=True)
    (folder / "pv.yaml").write_text("apiVersion: v1\nkind: VolumeAttachment\n"
                                    "metadata: {name: pv}\n")
    (folder / "performance-config.yaml").write_text(UNMODELLED)
    (tc,) = load_configs(folder)
    check = check_workload(tc, tc.workloads[0])
    assert check.ok and check.problems == []
    assert check.unsupported is not None and "VolumeAttachment" in check.unsupported
    assert main(["validate", str(folder)]) == 0
    assert "(1 workload checked, 1 unsupported)" in capsys.readouterr().out
    out = tmp_path / "out"
    assert main(["run", "--config", str(folder), "--label", "", "--out", str(out),
                 "--format", "json"]) == 0
    assert '"unsupported"' in capsys.readouterr().out


def test_impossible_size_is_refused_against_the_memory_available(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    root = write_base(tmp_path / "cfg")
    (tc,) = load_configs(root)
    (w,) = tc.workloads  # 4 nodes, 6 pods
    need = 4 * BYTES_PER_OBJECT["node"] + 6 * BYTES_PER_OBJECT["pod"]
    assert check_workload(tc, w, memory=need).ok
    small = check_workload(tc, w, memory=need - 1)
    (problem,) = small.problems
    text = str(problem)
    assert problem.yaml_path == "workloadTemplate[0].countParam"  # the nodes: the biggest
    assert "parameter $nodes: 4 nodes" in text and "memory available" in text
    assert text.startswith("t/performance-config.yaml:6: Basic/small: ")

    monkeypatch.setattr(check_module, "available_memory", lambda: need - 1)
    out = tmp_path / "out"
    assert main(["run", "--config", str(root), "--label", "", "--out", str(out)]) == 2
    assert "parameter $nodes: 4 nodes" in capsys.readouterr().err
    assert not out.exists()
