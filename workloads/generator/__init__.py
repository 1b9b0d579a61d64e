"""Random scheduler_perf scenarios that combine scheduling features at small scale.

    generate(seed, count) -> Generated   # pure: same seed and count -> byte-identical files

Scenario ``i`` of seed ``s`` is the test case ``Generated_<s>_<i>``; it depends only on
``(s, i)`` (its own ``random.Random``), so scenario 3 of ``--count 10`` equals scenario 3 of
``--count 4``. The files are relative to one topic folder (``generated/``):
``performance-config.yaml`` (one test case per scenario, each with a workloadTemplate and one
``integration-test``/``generated`` workload) and ``templates/generated-<s>-<i>-*.yaml`` (nodes,
pods, PriorityClasses, a namespace, churn objects, a KubeSchedulerConfiguration). A comment
above each test case records every feature choice, so a failing scenario can be read and
regenerated from its seed.

Every scenario is meant to finish with status ``ok``: each pod that some op waits for can be
placed. The generator models the nodes it creates (labels, taints, cordons, allocatable) and
sizes the pod groups conservatively:

* a node's *slots* = how many of the largest pod request it holds (0 for cordoned nodes and
  for the nodes filled by preemption victims); a group's usable nodes pass its node selection,
  tolerations and extended-resource needs and have a slot;
* all workload pods together fit in half of the slots of the smallest set any group can be
  confined to (its usable nodes; for required pod (anti-)affinity or a zone/rack
  DoNotSchedule spread, its smallest topology domain), so that set never fills up;
* per-group caps for the "at most k per domain" constraints: required anti-affinity and host
  ports (one per node or zone), DoNotSchedule spreading whose global minimum may stay 0
  (hostname, a domain without usable nodes, minDomains above the domain count), extended
  resources (shared by the groups requesting them); for per-node limits the nodes that the
  other pods could fill are subtracted;
* each group has at most one required placement constraint (required pod affinity, required
  anti-affinity, a host port or a DoNotSchedule spread; none with an extended resource), any
  number of soft ones; a choice that confines a group to too few slots is relaxed (required
  to preferred, then the extended resource, node selection, missing tolerations) and the
  comment says so;
* preemption only happens where it is planned: low-priority "fill" pods pack one node pool
  exactly, then high-priority preemptors (at most one per two pool nodes) evict some; no
  other group counts on the pool's capacity.

A group may be scheduled as gangs (tag ``pod-groups:gang``, the GenericWorkload gate on):
PodGroups of 2-4 pods, each needing all of them (minCount), created before the pods, the
group's count cut to whole gangs. The choice comes from a random stream of its own
(``groups._choose_gang``), so scenarios without gangs are unchanged by it.

Pods that are never meant to schedule (scheduling-gated, or larger than every node) live in
their own namespaces, are waited for with ``barrier stageRequirement: Attempted`` and are left
out of every Scheduled barrier.

Modules, in the order a scenario is built: draft (the scenario under construction and its
random stream), cluster (nodes), profiles (priorities, preemption pool, scheduler profiles),
groups (pod groups), budget (feasibility and sizes), ops (the workload template), manifests
(template file text), scenario (the test case; :func:`generate`); model holds the constants
and data types. Modules inside this package import from each other, never from this facade.
"""

from __future__ import annotations

from workloads.generator.model import (
    CONFIG_FILE,
    FEATURES,
    LABELS,
    TEMPLATE_DIR,
    TOPIC,
    Generated,
    ScenarioInfo,
    scenario_name,
)
from workloads.generator.scenario import generate

__all__ = [
    "CONFIG_FILE",
    "FEATURES",
    "LABELS",
    "TEMPLATE_DIR",
    "TOPIC",
    "Generated",
    "ScenarioInfo",
    "generate",
    "scenario_name",
]
