"""The ops of a workload template: what each one does to the cluster while the runner
schedules.

Each op has an optional ``prepare_*`` step, run for every op before the first one executes
(templates read and parsed, unmodelled kinds and volumes found up front), and a ``run_*`` step.

Modules: create (createNodes, createNamespaces, createPods, createAny, updateAny), flow
(barrier, sleep, deletePods, churn, start/stopCollectingMetrics), api (FakeApi: the
API-server-like facade over the fake cluster), factories (pods and nodes per index), templates
(object template files), manifests (rendered manifests -> typed objects), defaults (upstream's
built-in node and pod), errors (WorkloadError, UnsupportedWorkload).
"""
