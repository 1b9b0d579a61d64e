"""Upstream scheduler_perf's built-in default node and pod (used when no template is given)."""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_NODE", "DEFAULT_POD"]

# scheduler_perf's base node: 4 CPU, 32Gi, 110 pods, Ready.
DEFAULT_NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"generateName": "scheduler-perf-"},
    "spec": {},
    "status": {
        "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "conditions": [{"status": "True", "type": "Ready"}],
        "phase": "Running",
    },
}

# scheduler_perf's default pod: one pause container requesting 100m CPU and 500Mi.
DEFAULT_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"generateName": "pod-"},
    "spec": {
        "containers": [{
            "image": "registry.k8s.io/pause:3.10.1",
            "name": "pause",
            "ports": [{"containerPort": 80}],
            "resources": {
                "limits": {"cpu": "100m", "memory": "500Mi"},
                "requests": {"cpu": "100m", "memory": "500Mi"},
            },
        }],
    },
}
