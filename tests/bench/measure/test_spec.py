"""SPEC.json parsing and RESULT.json round trips."""

from __future__ import annotations

import json
import re

import pytest

from bench.measure.spec import (
    SpecError,
    WorkerResult,
    WorkerSpec,
    WorkloadMeasurement,
    atomic_write_json,
)

BASE = {"configs": ["cfg"], "workloads": ["Case/w"]}


def test_defaults_and_relative_paths_resolve_against_the_spec_folder(tmp_path):
    path = tmp_path / "sub" / "spec.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**BASE, "configs": ["cfg", "/abs/cfg"],
                                "scheduler_config": "s.yaml"}))
    spec = WorkerSpec.load(path)
    assert spec.configs == (str(tmp_path / "sub" / "cfg"), "/abs/cfg")
    assert spec.scheduler_config == str(tmp_path / "sub" / "s.yaml")
    assert (spec.seed, spec.mode, spec.stop_after, spec.plugin_sample_percent) == (
        0, "time", "all", 100)
    assert WorkerSpec.from_dict(json.loads(spec.to_json())) == spec


@pytest.mark.parametrize(("change", "message"), [
    pytest.param({"mode": "wall"}, "mode must be one of time, instructions", id="mode"),
    pytest.param({"stop_after": "measure"}, "stop_after must be one of all, setup", id="stop"),
    pytest.param({"workloads": []}, "workloads is empty", id="no-workloads"),
    pytest.param({"configs": []}, "configs is empty", id="no-configs"),
    pytest.param({"configs": "cfg"}, "configs must be a list of strings", id="configs-str"),
    pytest.param({"workloads": ["w"]}, "not a <test case>/<workload> name", id="short-name"),
    pytest.param({"workloads": ["A/b", "A/b"]}, "lists a name twice", id="duplicate"),
    pytest.param({"seed": "0"}, "seed must be an integer", id="seed-type"),
    pytest.param({"seed": True}, "seed must be an integer", id="seed-bool"),
    pytest.param({"plugin_sample_percent": 101}, "plugin_sample_percent must be 0-100",
                 id="percent"),
    pytest.param({"mode": "instructions", "timeout": 5}, "not allowed in instructions mode",
                 id="timeout-when-counting"),
    pytest.param({"scheduler_config": 3}, "scheduler_config must be null or a path",
                 id="sched-type"),
    pytest.param({"jobs": 2}, "unknown spec field(s): jobs", id="unknown"),
])
def test_bad_specs_are_rejected_with_the_field_named(change, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        WorkerSpec.from_dict({**BASE, **change})


def test_unreadable_spec_file(tmp_path):
    bad = tmp_path / "spec.json"
    bad.write_text("{not json")
    with pytest.raises(SpecError, match=r"spec\.json"):
        WorkerSpec.load(bad)


def test_result_round_trip_and_atomic_write(tmp_path):
    result = WorkerResult(
        core={"path": "/x/scheduler_core", "commit": None}, python="3.11.7", executable="py",
        pid=1, env={"PYTHONHASHSEED": "0"}, spec=WorkerSpec(("c",), ("A/b",)).to_dict(),
        workloads=[WorkloadMeasurement("A/b", "ok", scheduled_pods=3,
                                       plugin_seconds={"P/Filter": 0.5})])
    path = atomic_write_json(tmp_path / "out" / "result.json", result.to_dict())
    data = json.loads(path.read_text())
    assert next(iter(data)) == "schema" and data["schema"] == 1
    assert data["workloads"][0]["instructions"] is None
    assert WorkerResult.load(path) == result
    assert [p.name for p in path.parent.iterdir()] == ["result.json"]  # no temporary left


def test_result_of_another_schema_is_refused():
    with pytest.raises(ValueError, match="schema"):
        WorkerResult.from_dict({"schema": 2})
