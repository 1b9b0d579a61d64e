"""The worker in fresh processes (time mode): RESULT.json fields, stop_after="setup", the
scheduler_config override, which scheduler_core ran, spec errors."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.bench.measure.helpers import (
    NO_BALANCED,
    ROOT,
    SMALL,
    SMALLER,
    run_worker,
    write_config,
)


def spec_for(config: Path, workloads: list[str], **kw: object) -> dict[str, object]:
    return {"configs": [str(config)], "workloads": workloads, "seed": 0, "mode": "time",
            "scheduler_config": None, "stop_after": "all", **kw}


@pytest.fixture(scope="module")
def timed(tmp_path_factory):
    """One worker process timing both tiny workloads (throughput sampled every 5 ms)."""
    tmp = tmp_path_factory.mktemp("timed")
    config = write_config(tmp / "cfg")
    code, result, err = run_worker(tmp, spec_for(config, [SMALL, SMALLER],
                                                 sample_interval=0.005))
    assert code == 0, err
    assert result is not None
    return result


def test_result_header_records_the_core_python_and_environment(timed):
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip() or None
    assert timed["schema"] == 1
    assert timed["core"]["path"] == str(ROOT / "scheduler_core")
    assert timed["core"]["commit"] == head
    assert timed["core"]["warning"] is None
    assert timed["python"].count(".") == 2
    assert isinstance(timed["pid"], int)
    assert timed["env"]["clock"] == "virtual"
    assert set(timed["env"]) >= {"PYTHONHASHSEED", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                 "MKL_NUM_THREADS", "POLARS_MAX_THREADS"}
    assert timed["error"] is None
    assert [w["name"] for w in timed["workloads"]] == [SMALL, SMALLER]


@pytest.mark.parametrize(("name", "all_pods", "measured"), [
    pytest.param(SMALL, 70, 50, id="20nodes-50pods"),
    pytest.param(SMALLER, 15, 10, id="5nodes-10pods"),
])
def test_time_mode_fields_are_sane(timed, name, all_pods, measured):
    w = next(w for w in timed["workloads"] if w["name"] == name)
    assert (w["status"], w["reason"]) == ("ok", None)
    assert (w["scheduled_pods"], w["measured_pods"]) == (all_pods, measured)
    assert w["attempts"] >= all_pods and w["measured_attempts"] >= measured
    assert w["cpu_seconds"] > 0
    assert 0 < w["measured_seconds"] <= w["wall_seconds"]
    assert w["cpu_per_pod"] == pytest.approx(w["cpu_seconds"] / measured)
    assert w["instructions"] is None
    points = w["extension_point_seconds"]
    assert {"PreFilter", "Filter", "PreScore", "Score", "Bind"} <= set(points)
    assert all(v > 0 for v in points.values())
    plugins = w["plugin_seconds"]
    # every plugin is timed in every cycle: each extension point's plugins add up to less
    # than the extension point itself
    for point in ("Filter", "Score", "PreFilter"):
        inside = sum(v for k, v in plugins.items() if k.endswith(f"/{point}"))
        assert 0 < inside <= points[point]
    assert "NodeResourcesBalancedAllocation/Score" in plugins


def test_throughput_is_sampled_in_time_mode(timed):
    w = timed["workloads"][0]
    assert w["throughput_avg"] is not None and w["throughput_avg"] > 0


def test_stop_after_setup_runs_only_the_set_up_ops(tmp_path, timed):
    config = write_config(tmp_path / "cfg")
    code, result, err = run_worker(tmp_path, spec_for(config, [SMALL], stop_after="setup"))
    assert code == 0, err
    w = result["workloads"][0]
    full = timed["workloads"][0]
    assert w["status"] == "ok"
    assert (w["scheduled_pods"], w["measured_pods"]) == (20, 0)
    assert w["scheduled_pods"] < full["scheduled_pods"]
    assert w["stopped_before_op"] == 2  # the createPods that collects metrics
    assert w["cpu_seconds"] == 0 and w["extension_point_seconds"] == {}


def test_scheduler_config_override_applies_to_every_test_case(tmp_path, timed):
    config = write_config(tmp_path / "cfg")
    sched = tmp_path / "no-balanced.yaml"
    sched.write_text(NO_BALANCED)
    code, result, err = run_worker(tmp_path, spec_for(config, [SMALL],
                                                      scheduler_config=str(sched)))
    assert code == 0, err
    w = result["workloads"][0]
    assert w["status"] == "ok" and w["measured_pods"] == 50
    before = set(timed["workloads"][0]["plugin_seconds"])
    after = set(w["plugin_seconds"])
    assert before - after == {"NodeResourcesBalancedAllocation/PreScore",
                              "NodeResourcesBalancedAllocation/Score"}
    assert after < before
    assert result["spec"]["scheduler_config"] == str(sched)


def test_scheduler_core_is_imported_through_pythonpath(tmp_path):
    """A copy of scheduler_core first on PYTHONPATH (as compare puts a worktree's) is the one
    that runs, and the result says so; outside a git checkout there is no commit."""
    shim = tmp_path / "other"
    shutil.copytree(ROOT / "scheduler_core", shim / "scheduler_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    config = write_config(tmp_path / "cfg")
    code, result, err = run_worker(tmp_path, spec_for(config, [SMALLER]),
                                   pythonpath=[str(shim)])
    assert code == 0, err
    assert result["core"]["path"] == str(shim / "scheduler_core")
    assert result["core"]["import_path"] == str(shim / "scheduler_core")
    assert result["core"]["commit"] is None
    assert result["harness"]["workloads"] == str(ROOT / "workloads")
    assert result["workloads"][0]["status"] == "ok"


@pytest.mark.parametrize(("change", "message"), [
    pytest.param({"workloads": ["Tiny/nope"]}, "no such workload(s)", id="unknown-workload"),
    pytest.param({"mode": "fast"}, "mode must be one of", id="bad-mode"),
    pytest.param({"stop_after": "half"}, "stop_after must be one of", id="bad-stop"),
    pytest.param({"scheduler_config": "missing.yaml"}, "no such file", id="missing-sched-cfg"),
    pytest.param({"extra": 1}, "unknown spec field(s): extra", id="unknown-field"),
])
def test_a_bad_spec_exits_2_with_the_error_in_the_result(tmp_path, change, message):
    config = write_config(tmp_path / "cfg")
    code, result, err = run_worker(tmp_path, {**spec_for(config, [SMALL]), **change})
    assert code == 2
    assert message in result["error"] and message in err
    assert result["workloads"] == []
