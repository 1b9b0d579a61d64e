"""InjectedSlowdown: an out-of-tree PreFilter plugin that makes some pods slower on purpose.

Used by ``bench/study_detector.py`` (docs/detector-study.md) to check that ``schedperf
compare`` catches a known slowdown, in the workloads that have it and nowhere else, and names
the plugin that caused it. Loaded like any out-of-tree plugin::

    pluginRegistry:
      InjectedSlowdown: "workloads.example_plugins.slowdown:InjectedSlowdown"
    profiles:
    - schedulerName: default-scheduler
      plugins:
        multiPoint:
          enabled:
          - name: InjectedSlowdown
      pluginConfig:
      - name: InjectedSlowdown
        args: {fraction: 0.01, feature: minDomains}

What it does: in PreFilter, when (and only when) the pod has ``feature``, it runs
``fraction * (perPod + perNode * nodes)`` *work units* (:func:`work`), ``nodes`` being the
number of nodes in the cluster at that moment. It never rejects a pod, never narrows the node
set and writes nothing to the cycle state, so placements are exactly those of the same
profile without it (or with ``fraction: 0``); only the time and the instructions spent
change. Its time shows up in the plugin timings as ``InjectedSlowdown/PreFilter``, so the
attribution of ``schedperf compare`` can name it. PreFilter runs once per scheduling attempt,
so a pod that is retried pays again, like a real slow PreFilter would.

The work is deterministic: a fixed sequence of small numpy ufunc calls on a 64-element int64
array plus a little Python arithmetic, never a clock-based spin. The same pods in the same
order run exactly the same instructions, so an instruction count sees the slowdown exactly.
Fractional units carry over from one attempt to the next (a running remainder), so the total
over a workload is exact however small one attempt's share.

Features (``feature``):

* ``minDomains``: a topology spread constraint with ``minDomains`` set;
* ``spread``: any topology spread constraint;
* ``affinity``: any inter-pod affinity or anti-affinity term (required or preferred; node
  affinity does not count);
* ``all``: every pod.

Calibration (``calibration``). The normal cost of one scheduling attempt is modelled as
``perPod + perNode * nodes`` work units; an affected attempt owes ``fraction`` of that. What
is owed accumulates, and a call of :func:`work` with ``n`` units settles ``perCall + n``
(``perCall`` is what a call costs beyond its units: in time, the first unit of a call runs
with cold caches). Two presets, measured once in the compare workloads
(docs/detector-study.md, "Calibration"):

* ``time`` (the default): :data:`COST_MODEL` seconds per attempt, :data:`UNIT_SECONDS` per
  unit and :data:`CALL_SECONDS` per call;
* ``instructions``: :data:`COST_MODEL` instructions per attempt, :data:`UNIT_INSTRUCTIONS` per
  unit and :data:`CALL_INSTRUCTIONS` per call.

A work unit executes more instructions per second than the scheduler's own code (which waits
on memory more), hence two presets. An explicit ``{perPod: <units>, perNode: <units>,
perCall: <units>}`` replaces them. No model fits every workload (the cost of an attempt
varies about fourfold between them), so the study (bench/study_detector.py) sets ``perPod``
per workload from that workload's measured BASE cost and reports the slowdown each one
actually got.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.pod import Pod, PodSpec
from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import (
    ClusterEventWithHint,
    CycleState,
    Handle,
    PreFilterResult,
    Status,
)
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins.helper import check_keys, require_mapping, require_str

__all__ = [
    "CALL_INSTRUCTIONS",
    "CALL_SECONDS",
    "COST_MODEL",
    "FEATURES",
    "NAME",
    "PRESETS",
    "UNIT_INSTRUCTIONS",
    "UNIT_SECONDS",
    "WORK_LENGTH",
    "InjectedSlowdown",
    "has_feature",
    "preset_units",
    "settle",
    "simulate",
    "work",
]

NAME = "InjectedSlowdown"
WORK_LENGTH = 64  # elements of the arrays one work unit computes over (a power of two)
# measured once inside compare workloads (docs/detector-study.md, "Calibration"): what a
# work unit costs, and what a call of work() costs beyond its units (numpy re-resolving its
# ufunc loops, cold caches after the scheduler's own work)
UNIT_INSTRUCTIONS = 21_450
CALL_INSTRUCTIONS = 3_700
UNIT_SECONDS = 5.6e-6
CALL_SECONDS = 6.0e-6
# the normal cost of one scheduling attempt of a pod with spread constraints in the compare
# set, per mode: (per attempt, per node in the cluster), instructions or seconds; between 10
# and 500 nodes the data show no node dependence
COST_MODEL: dict[str, tuple[float, float]] = {
    "instructions": (920_000.0, 0.0),
    "time": (450e-6, 0.0),
}
_UNIT_COST = {"instructions": float(UNIT_INSTRUCTIONS), "time": UNIT_SECONDS}
_CALL_COST = {"instructions": float(CALL_INSTRUCTIONS), "time": CALL_SECONDS}
PRESETS = tuple(COST_MODEL)


def preset_units(preset: str) -> tuple[float, float, float]:
    """(perPod, perNode, perCall) in work units for calibration preset ``time`` or
    ``instructions``."""
    per_pod, per_node = COST_MODEL[preset]
    unit = _UNIT_COST[preset]
    return per_pod / unit, per_node / unit, _CALL_COST[preset] / unit


def _min_domains(spec: PodSpec) -> bool:
    return any(c.min_domains is not None for c in spec.topology_spread_constraints)


def _spread(spec: PodSpec) -> bool:
    return bool(spec.topology_spread_constraints)


def _affinity(spec: PodSpec) -> bool:
    return spec.affinity.has_pod_affinity


def _every(spec: PodSpec) -> bool:
    return True


FEATURES: dict[str, Callable[[PodSpec], bool]] = {
    "minDomains": _min_domains,
    "spread": _spread,
    "affinity": _affinity,
    "all": _every,
}


def has_feature(pod: Pod, feature: str) -> bool:
    """Whether ``pod`` has ``feature`` (a key of :data:`FEATURES`)."""
    return FEATURES[feature](pod.spec)


def work(units: int, a: np.ndarray, b: np.ndarray, acc: int) -> int:
    """Run ``units`` work units over the int64 arrays ``a`` and ``b`` (length
    :data:`WORK_LENGTH`, both overwritten) and return the updated checksum ``acc``. One unit:
    a linear congruential step of the whole array in three ufunc calls, and one element
    folded into the checksum."""
    mask = WORK_LENGTH - 1
    for _ in range(units):
        np.multiply(a, 1103515245, out=b)
        np.add(b, 12345, out=b)
        np.bitwise_and(b, 0x7FFFFFFF, out=b)
        acc = (acc * 31 + int(b[acc & mask])) & 0x3FFFFFFF
        a, b = b, a
    return acc


def settle(owed: float, per_call: float) -> tuple[int, float]:
    """(units to run now, what stays owed) when ``owed`` units are due: a call runs
    ``int(owed - per_call)`` units once that is at least one, and settles ``per_call`` more
    than it runs."""
    if owed < per_call + 1:
        return 0, owed
    units = int(owed - per_call)
    return units, owed - per_call - units


def simulate(per_attempt: float, per_call: float, attempts: int, skip: int = 0
             ) -> tuple[int, int]:
    """(calls of :func:`work`, units run) over ``attempts`` affected attempts that each owe
    ``per_attempt`` units, after ``skip`` earlier ones (the set-up's) whose calls are not
    counted: what the plugin does, without doing it."""
    carry = 0.0
    calls = units = 0
    for i in range(skip + attempts):
        n, carry = settle(carry + per_attempt, per_call)
        if n and i >= skip:
            calls += 1
            units += n
    return calls, units


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"expected a number, got {value!r}", field=path)
    number = float(value)
    if not np.isfinite(number) or number < 0:
        raise ConfigError(f"expected a finite number >= 0, got {value!r}", field=path)
    return number


class InjectedSlowdown:
    """PreFilter: extra deterministic work for pods with the configured feature."""

    name: ClassVar[str] = NAME

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        data = require_mapping(args, args_path)
        check_keys(data, args_path, ("fraction", "feature", "calibration"))

        def at(key: str) -> str:
            return f"{args_path}.{key}" if args_path else key

        self.fraction = _number(data.get("fraction", 0.01), at("fraction"))
        if self.fraction > 10:
            raise ConfigError(f"expected a fraction of the per-attempt cost (0.01 = 1 %) of "
                              f"at most 10, got {self.fraction:g}", field=at("fraction"))
        self.feature = require_str(data.get("feature", "minDomains"), at("feature"))
        if self.feature not in FEATURES:
            raise ConfigError(f"expected one of {', '.join(FEATURES)}, got {self.feature!r}",
                              field=at("feature"))
        cal = data.get("calibration", "time")
        if isinstance(cal, str):
            if cal not in PRESETS:
                raise ConfigError(f"expected one of {', '.join(PRESETS)} or a mapping with "
                                  f"perPod, perNode and perCall, got {cal!r}",
                                  field=at("calibration"))
            self.per_pod, self.per_node, self.per_call = preset_units(cal)
        else:
            cal = require_mapping(cal, at("calibration"))
            check_keys(cal, at("calibration"), ("perPod", "perNode", "perCall"))
            self.per_pod = _number(cal.get("perPod", 0.0), at("calibration.perPod"))
            self.per_node = _number(cal.get("perNode", 0.0), at("calibration.perNode"))
            self.per_call = _number(cal.get("perCall", 0.0), at("calibration.perCall"))
        self._has = FEATURES[self.feature]
        self._a = np.arange(WORK_LENGTH, dtype=np.int64)
        self._b = np.zeros(WORK_LENGTH, dtype=np.int64)
        self._carry = 0.0  # units owed from earlier attempts
        self.checksum = 0  # keeps the work observable
        self.affected_calls = 0  # PreFilter calls for pods with the feature
        self.units_done = 0
        self.work_calls = 0

    def units_for(self, nodes: int) -> float:
        """Work units (fractional) owed for one attempt of a pod with the feature in a cluster
        of ``nodes`` nodes."""
        return self.fraction * (self.per_pod + self.per_node * nodes)

    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        if not self._has(pod.spec):
            return None, None
        self.affected_calls += 1
        units, self._carry = settle(self._carry + self.units_for(table.num_nodes),
                                    self.per_call)
        if units:
            self.checksum = work(units, self._a, self._b, self.checksum)
            self.units_done += units
            self.work_calls += 1
        return None, None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """None: the plugin never rejects a pod, so no event can make one schedulable."""
        return []
