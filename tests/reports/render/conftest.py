"""A report.json model built in Python: every section of a report has something in it.

``report_dict()`` returns a fresh dict each call, so a test can break one field of it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from reports.render import Report, parse_report

SCRIPT_NAME = "<script>alert(1)</script>"
PIPE_NAME = "Pipes|In|Name/100Nodes"
DOLLAR_NAME = "Cost $5 and $6/10Nodes"  # would be mathtext to matplotlib


def _result(workload: str, mode: str, verdict: str, ratio: float, *, metric: str | None = None,
            spread: float = 0.02, uncommon: bool = False, **extra: Any) -> dict[str, Any]:
    time = mode == "time"
    metric = metric or ("SchedulingThroughput" if time else "instructions_per_pod")
    higher = metric == "SchedulingThroughput"
    base = 812.0 if time else 2.5e6
    values = [base * (1 + 0.01 * i) for i in range(-2, 3)]
    row = {
        "workload": workload, "uncommon": uncommon, "mode": mode, "metric": metric,
        "unit": "pods/s" if higher else "instructions/pod", "higher_is_better": higher,
        "base": {"n": 5, "median": base, "values": values},
        "head": {"n": 5, "median": base * ratio, "values": [v * ratio for v in values]},
        "ratio": ratio, "ci_low": ratio * (1 - spread), "ci_high": ratio * (1 + spread),
        "p_value": 0.004 if verdict in ("regression", "improvement") else 0.4,
        "q_value": 0.02 if verdict in ("regression", "improvement") else 0.6,
        "verdict": verdict, "more_rounds": None, "accepted": None, "attribution": [],
    }
    row.update(extra)
    return row


_ATTRIBUTION = [
    {"plugin": "PodTopologySpread", "extension_point": "Filter", "base_per_pod": 1.2e-4,
     "head_per_pod": 1.62e-4, "change": 0.35, "text": "PodTopologySpread Filter +35 %"},
    {"plugin": "InterPodAffinity", "extension_point": "PreFilter", "base_per_pod": 5.0e-5,
     "head_per_pod": 5.4e-5, "change": 0.08, "text": "InterPodAffinity PreFilter +8 %"},
]


def _base_report() -> dict[str, Any]:
    env = {"machine": "ci-1", "cpu_model": "Xeon 8375C", "cpu_count": 8, "python": "3.11.7",
           "numpy_version": "1.26.4"}
    results = [
        _result("TopologySpreading/500Nodes", "time", "regression", 0.952,
                attribution=_ATTRIBUTION),
        _result("TopologySpreading/500Nodes", "instructions", "regression", 1.06),
        _result("SchedulingBasic/5000Nodes", "time", "improvement", 1.12),
        _result("SchedulingBasic/5000Nodes", "instructions", "no change", 1.001),
        _result("Preemption/500Nodes", "time", "inconclusive", 0.975, spread=0.05,
                more_rounds=12),
        _result("NodeAffinity/500Nodes", "time", "regression", 0.96, accepted={
            "why": "minDomains support costs ~4 %; tracked in #123",
            "source": ".schedperf/accepted.yaml:3"}),
        _result("Uncommon/GatedPodsChurn", "time", "regression", 0.9, uncommon=True),
        _result("Uncommon/HugeTaints", "time", "no change", 1.003, uncommon=True),
        _result(SCRIPT_NAME, "time", "no change", 0.998),
        _result(PIPE_NAME, "time", "improvement", 1.2),
        _result(DOLLAR_NAME, "time", "no change", 1.01),
    ]
    history_points = [{"commit": f"c{i:06x}", "timestamp": f"2024-05-{i + 1:02d}T00:00:00Z",
                       "value": 812.0 if i < 12 else 700.0} for i in range(20)]
    return {
        "schema": 1, "generated": "2024-05-21T10:00:00Z", "kind": "refs",
        "base": {"label": "main", "commit": "a" * 40, "core_path": "/tmp/wt/base",
                 "config": None, "environment": env},
        "head": {"label": "pr-42", "commit": "b" * 40, "core_path": "/tmp/wt/head",
                 "config": None, "environment": {**env, "cpu_model": "EPYC 7R13"}},
        "environment_differs": True,
        "environment_notes": ["cpu_model: Xeon 8375C vs EPYC 7R13"],
        "settings": {"modes": ["instructions", "time"], "repeat": 5,
                     "min_effect": {"time": 0.03, "instructions": 0.01}, "q": 0.05,
                     "seed": 0, "label": "short", "wall_seconds": 412.0},
        "verdict": "regression",
        "results": results,
        "plugin_breakdown": {
            "TopologySpreading/500Nodes": {
                "base": {"PodTopologySpread/Filter": 1.2e-4, "InterPodAffinity/PreFilter": 5e-5,
                         "NodeResourcesFit/Filter": 3e-5},
                "head": {"PodTopologySpread/Filter": 1.62e-4,
                         "InterPodAffinity/PreFilter": 5.4e-5,
                         "NodeResourcesFit/Filter": 3e-5}},
            SCRIPT_NAME: {"base": {SCRIPT_NAME + "/Filter": 1e-5},
                          "head": {SCRIPT_NAME + "/Filter": 2e-5}},
        },
        "history": {
            "TopologySpreading/500Nodes": {
                "metric": "SchedulingThroughput", "unit": "pods/s", "points": history_points,
                "change_points": [{"index": 12, "commit": "c00000c", "before": 812.0,
                                   "after": 700.0, "change": -0.138}]},
            SCRIPT_NAME: {"metric": "SchedulingThroughput", "unit": "pods/s",
                          "points": history_points[:5], "change_points": []},
        },
    }


_REPORT = _base_report()


def report_dict() -> dict[str, Any]:
    return copy.deepcopy(_REPORT)


def many_results_dict(n: int = 200) -> dict[str, Any]:
    """A report with ``n`` results and long names: for the size bound."""
    data = report_dict()
    verdicts = ["no change"] * 6 + ["regression", "improvement", "inconclusive"]
    data["results"] = [
        _result(f"Scale|Test<{i}>/" + "VeryLongWorkloadNameSegment" * 3, "time",
                verdicts[i % len(verdicts)], 0.9 + (i % 20) / 100, more_rounds=7,
                attribution=_ATTRIBUTION if i % 9 == 6 else [])
        for i in range(n)]
    return data


@pytest.fixture
def report() -> Report:
    return parse_report(report_dict(), source="fixture")


@pytest.fixture
def report_file(tmp_path: Path) -> Path:
    path = tmp_path / "cmp" / "report.json"
    path.parent.mkdir()
    path.write_text(json.dumps(report_dict()), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def sample_html() -> str:
    """The fixture report as HTML, rendered once (matplotlib takes a few seconds)."""
    from reports.render import render_html

    return render_html(parse_report(report_dict(), source="fixture"))
