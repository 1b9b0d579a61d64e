"""The built-in catalog (workloads/configs/): every config validates, follows upstream's layout
and labels, and every workload runs at its integration-test size."""

from __future__ import annotations

import pytest

from bench.selection import CATALOG_DIR
from workloads.config import load_configs
from workloads.runner import run_workload

SIZE_LABELS = {"integration-test", "short", "performance"}


def _test_cases():
    return load_configs(CATALOG_DIR) if CATALOG_DIR.is_dir() else []


def _integration_workloads():
    out = [pytest.param(tc, w, id=f"{tc.topic}/{w.full_name}")
           for tc in _test_cases() for w in tc.workloads if "integration-test" in w.labels]
    return out or [pytest.param(None, None, marks=pytest.mark.skip(reason="no catalog"))]


def test_catalog_layout_follows_upstream():
    configs = sorted(CATALOG_DIR.glob("*/performance-config.yaml"))
    topics = {p.parent.name for p in configs}
    assert {"misc", "topology_spreading", "affinity", "default_preemption", "event_handling",
            "uncommon"} <= topics
    assert not list(CATALOG_DIR.glob("*.yaml")), "configs live in <topic>/ folders"


def test_every_test_case_has_an_integration_test_workload_and_sizes():
    for tc in _test_cases():
        labels = [set(w.labels) for w in tc.workloads]
        assert any("integration-test" in ls for ls in labels), tc.name
        assert all(ls & SIZE_LABELS for ls in labels), tc.name


def test_names_are_unique_across_the_catalog():
    names = [w.full_name for tc in _test_cases() for w in tc.workloads]
    assert len(names) == len(set(names))


def test_uncommon_catalog_is_large_enough():
    uncommon = [tc for tc in _test_cases() if tc.topic == "uncommon"]
    assert len(uncommon) >= 15
    for tc in uncommon:
        assert all("uncommon" in w.labels for w in tc.workloads), tc.name


@pytest.mark.parametrize(("tc", "w"), _integration_workloads())
def test_catalog_workload_runs_at_integration_test_size(tc, w):
    result = run_workload(tc, w, timeout=60)
    assert result.status == "ok", result.reason
    assert result.scheduled_pods > 0
