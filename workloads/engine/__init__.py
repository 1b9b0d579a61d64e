"""The schedulers a workload can run on (``schedperf run --engine``).

* ``schedperf-core`` (:data:`~workloads.result.ENGINE_CORE`): scheduler_core in this process,
  through :mod:`workloads.runner` (virtual or real clock);
* ``kube-scheduler`` (:data:`~workloads.result.ENGINE_KUBE`): the real kube-scheduler loop in
  the reference process (``reference_scheduler/``, engine mode), through :mod:`.kube`, on the
  wall clock; ``manifests`` renders the ops' objects as Kubernetes manifests for it.
"""

from workloads.engine.kube import KubeEngineOptions, run_kube_workload, unsupported_op
from workloads.result import ENGINE_CORE, ENGINE_KUBE, ENGINES

__all__ = ["ENGINES", "ENGINE_CORE", "ENGINE_KUBE", "KubeEngineOptions", "run_kube_workload",
           "unsupported_op"]
