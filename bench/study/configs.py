"""The scheduler configs of the study: the default profile plus InjectedSlowdown
(workloads/example_plugins/slowdown.py) at a size and with a calibration."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from bench.study.settings import PLUGIN, PLUGIN_PATH

__all__ = ["scheduler_config_text", "write_config"]


def scheduler_config_text(fraction: float, feature: str,
                          calibration: str | Mapping[str, float] = "time") -> str:
    """A KubeSchedulerConfiguration: the default profile plus InjectedSlowdown."""
    cal: Any = calibration if isinstance(calibration, str) else dict(calibration)
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "pluginRegistry": {PLUGIN: PLUGIN_PATH},
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": PLUGIN}]}},
            "pluginConfig": [{"name": PLUGIN, "args": {
                "fraction": float(fraction), "feature": feature, "calibration": cal}}],
        }],
    }
    head = (f"# written by bench/study_detector.py: InjectedSlowdown {fraction:g} on pods "
            f"with feature {feature}\n")
    return head + yaml.safe_dump(doc, sort_keys=False)


def write_config(path: Path, fraction: float, feature: str,
                 calibration: str | Mapping[str, float] = "time") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scheduler_config_text(fraction, feature, calibration), encoding="utf-8")
    return path
