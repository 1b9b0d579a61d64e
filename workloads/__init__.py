"""scheduler_perf-style workloads, in the order data flows through them:

* ``config/``: parse and resolve upstream ``performance-config.yaml`` files;
* ``catalog/``: choose workloads by label filter and name, and tell which can run;
  ``configs/`` is the built-in catalog (package data);
* ``template/``: the Go ``text/template`` subset object templates use;
* ``ops/``: what each op of a workload template does to the cluster;
* ``runner/``: run one workload against ``scheduler_core`` and report a
  :class:`~workloads.result.WorkloadResult` (``result.py``, the contract with bench and
  reports);
* ``generator/``: random scenarios that combine scheduling features;
* ``example_plugins/``: out-of-tree plugins the catalog names by import path.
"""
