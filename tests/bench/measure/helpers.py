"""A tiny workload config and ways to run the worker on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]  # holds bench/, workloads/ and scheduler_core/

# 20 nodes; 20 set-up pods, then 50 measured pods (and a second, smaller workload)
TINY_CONFIG = """\
- name: Tiny
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $init
  - opcode: createPods
    countParam: $pods
    collectMetrics: true
  workloads:
  - name: 20Nodes_50Pods
    params: {nodes: 20, init: 20, pods: 50}
  - name: 5Nodes_10Pods
    params: {nodes: 5, init: 5, pods: 10}
"""
SMALL = "Tiny/20Nodes_50Pods"
SMALLER = "Tiny/5Nodes_10Pods"

# the default profile without the BalancedAllocation scoring plugin
NO_BALANCED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled:
      - name: NodeResourcesBalancedAllocation
"""


def write_config(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "performance-config.yaml"
    path.write_text(TINY_CONFIG)
    return path


def run_worker(tmp: Path, spec: dict[str, Any], *, pythonpath: list[str] | None = None,
               ) -> tuple[int, dict[str, Any] | None, str]:
    """``python -P -m bench.measure.worker`` in ``tmp``: (exit status, RESULT or None, stderr)."""
    (tmp / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*(pythonpath or []), str(ROOT)])
    proc = subprocess.run([sys.executable, "-P", "-m", "bench.measure.worker", "--spec",
                           "spec.json", "--out", "result.json"], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    out = tmp / "result.json"
    return proc.returncode, json.loads(out.read_text()) if out.exists() else None, proc.stderr
