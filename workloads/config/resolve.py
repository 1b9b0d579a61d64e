"""Turn a test case's workload template into one workload's concrete op list.

What upstream does in ``unrollWorkloadTemplate`` + ``patchParams`` + ``runWorkload``:

* every ``...Param: $name`` is replaced by the workload's parameter (numbers truncated to int,
  ``durationParam`` parsed as a Go duration, ``steadyStateParam`` a bool, ``templateParams``
  values ``"$name"`` replaced by the parameter's value of any type, ``"$name|default"`` by the
  default when the workload does not define the parameter: see
  :mod:`workloads.config.param_ref`);
* ``countMultiplierParam`` multiplies the count;
* ``createPodSets`` becomes ``count`` createPods ops in namespaces ``<prefix>-<i>``;
* the op index (after unrolling) names default namespaces ``namespace-<opIndex>`` for
  ``createPods`` and ``churn``; ``createPods`` without a pod template gets the test case's
  default; barrier stage defaults to ``Scheduled``, churn interval to 500 ms, createAny/updateAny
  count to 1 and signatureBatchSize to 1;
* the values are validated again (no negative counts, steadyState needs a positive duration,
  numbers finite and within a 64-bit integer, createPodSets of at most MAX_POD_SETS sets);
* a parameter that no op used is an error.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workloads.config.decode import FrozenDict, parse_go_duration
from workloads.config.errors import ConfigFileError
from workloads.config.ops import (
    Barrier,
    Churn,
    CreateAny,
    CreatePods,
    CreatePodSets,
    Op,
    Sleep,
    UpdateAny,
)
from workloads.config.ops_groups import CreateCompositePodGroups
from workloads.config.ops_unsupported import CreateResourceDriver
from workloads.config.param_ref import parse_param_ref

if TYPE_CHECKING:
    from workloads.config.model import TestCase, Workload

__all__ = ["INT64_MAX", "MAX_POD_SETS", "resolve", "resolve_collect"]

INT64_MAX = 2**63 - 1  # upstream's counts are Go ints
INT64_MIN = -(2**63)
MAX_POD_SETS = 100_000  # createPodSets is unrolled into this many createPods ops at most
# createCompositePodGroups' tree form: (YAML key of the ...Param field, attribute)
_TREE_PARAMS = (("rootCountParam", "root_count"),
                ("childrenCompositePodGroupsPerCPGParam", "children_composite_pod_groups_per_cpg"),
                ("childrenPodGroupsPerCPGParam", "children_pod_groups_per_cpg"))

class _Resolver:
    def __init__(self, test_case: TestCase, workload: Workload) -> None:
        self.tc = test_case
        self.w = workload
        self.used: set[str] = set()
        self.errors: list[ConfigFileError] = []

    # -- errors

    def error(self, op: Op, key: str, problem: str) -> None:
        path = f"{op.yaml_path}.{key}" if key and op.yaml_path else (key or op.yaml_path)
        line = op.field_lines.get(key, op.line) if key else op.line
        self.errors.append(ConfigFileError(
            problem, path=self.tc.source, line=line, test_case=self.tc.name,
            workload=self.w.name, yaml_path=path))

    # -- parameter lookups (upstream getParam: marks the name used even when it fails)

    def _lookup(self, op: Op, key: str, ref: str) -> tuple[bool, Any]:
        name = ref[1:]
        self.used.add(name)
        if name not in self.w.params:
            self.error(op, key, f"parameter {ref} is undefined")
            return False, None
        return True, self.w.params[name]

    def number(self, op: Op, key: str, ref: str, default: int) -> int:
        found, value = self._lookup(op, key, ref)
        if not found:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.error(op, key, f"parameter {ref} has the wrong type {_go_type(value)}, "
                       "want a number")
            return default
        if isinstance(value, float) and not math.isfinite(value):
            self.error(op, key, f"parameter {ref} is {value}, want a finite number")
            return default
        if not INT64_MIN <= int(value) <= INT64_MAX:
            self.error(op, key, f"parameter {ref} = {value} overflows a 64-bit integer "
                       "(upstream's int)")
            return default
        return int(value)

    def string(self, op: Op, key: str, ref: str) -> str | None:
        found, value = self._lookup(op, key, ref)
        if found and not isinstance(value, str):
            self.error(op, key, f"parameter {ref} has the wrong type {_go_type(value)}, "
                       "want a string")
            return None
        return value if found else None

    def boolean(self, op: Op, key: str, ref: str, default: bool) -> bool:
        found, value = self._lookup(op, key, ref)
        if found and not isinstance(value, bool):
            self.error(op, key, f"parameter {ref} has the wrong type {_go_type(value)}, "
                       "want true or false")
            return default
        return value if found else default

    def duration(self, op: Op, key: str, ref: str, default: float) -> float:
        text = self.string(op, key, ref)
        if text is None:
            return default
        try:
            return parse_go_duration(text)
        except ValueError as err:
            self.error(op, key, f"parsing duration parameter {ref}: {err}")
            return default

    def template_params(self, op: Op, params: Mapping[str, Any]) -> FrozenDict[str, Any]:
        out = {}
        for name, value in params.items():
            if isinstance(value, str) and value.startswith("$"):
                try:
                    ref = parse_param_ref(value)
                except ValueError as err:
                    self.error(op, "templateParams", f"{name}: {err}")
                    continue
                if ref.has_default and ref.name not in self.w.params:
                    self.used.add(ref.name)
                    out[name] = copy.deepcopy(ref.default)
                    continue
                found, value = self._lookup(op, "templateParams", "$" + ref.name)
                if not found:
                    continue
                value = copy.deepcopy(value)
            out[name] = value
        return FrozenDict(out)

    # -- patching one op

    def patch(self, op: Op) -> Op:
        changes: dict[str, Any] = {}
        if getattr(op, "count_param", ""):
            changes["count"] = self.number(op, "countParam", op.count_param,
                                           op.count or 0)  # type: ignore[attr-defined]
        if isinstance(op, CreatePods):
            count = changes.get("count", op.count)
            if op.count_multiplier_param:
                multiplier = self.number(op, "countMultiplierParam",
                                         op.count_multiplier_param, 1)
                if not INT64_MIN <= count * multiplier <= INT64_MAX:
                    self.error(op, "countMultiplierParam", f"count {count} times multiplier "
                               f"{multiplier} overflows a 64-bit integer (upstream's int)")
                    multiplier = 1
                count *= multiplier
            changes["count"] = count
            batch = op.signature_batch_size
            if op.signature_batch_size_param:
                batch = self.number(op, "signatureBatchSizeParam",
                                    op.signature_batch_size_param, batch)
            changes["signature_batch_size"] = batch or 1
            if op.duration_param:
                changes["duration"] = self.duration(op, "durationParam", op.duration_param,
                                                    op.duration)
            if op.steady_state_param:
                changes["steady_state"] = self.boolean(op, "steadyStateParam",
                                                       op.steady_state_param, op.steady_state)
        if isinstance(op, Sleep) and op.duration_param:
            changes["duration"] = self.duration(op, "durationParam", op.duration_param,
                                                op.duration)
        if isinstance(op, CreateResourceDriver) and op.max_claims_per_node_param:
            changes["max_claims_per_node"] = self.number(
                op, "maxClaimsPerNodeParam", op.max_claims_per_node_param,
                op.max_claims_per_node)
        if isinstance(op, CreateCompositePodGroups):
            for key, attr in _TREE_PARAMS:
                ref = getattr(op, f"{attr}_param")
                if ref:
                    changes[attr] = self.number(op, key, ref, getattr(op, attr))
        template_params = getattr(op, "template_params", None)
        if template_params:
            changes["template_params"] = self.template_params(op, template_params)
        patched = dataclasses.replace(op, **changes) if changes else op
        self.check(patched)
        return patched

    def check(self, op: Op) -> None:
        """Upstream isValid(allowParameterization=false) on the patched op.

        Literal values were checked when parsing; only what parameters set is checked here.
        """
        count = getattr(op, "count", None)
        if count is not None and count < 0 and (
                getattr(op, "count_param", "") or getattr(op, "count_multiplier_param", "")):
            key = "countParam" if getattr(op, "count_param", "") else "countMultiplierParam"
            self.error(op, key, f"count must not be negative, got {count}")
        if isinstance(op, CreatePods):
            if op.signature_batch_size < 0 and op.signature_batch_size_param:
                self.error(op, "signatureBatchSizeParam",
                           f"must not be negative, got {op.signature_batch_size}")
            if op.skip_wait_to_completion and op.steady_state and op.steady_state_param:
                self.error(op, "steadyStateParam", "skipWaitToCompletion and steadyState cannot "
                           "be true at the same time")
            if op.steady_state and op.duration <= 0 and (op.steady_state_param
                                                          or op.duration_param):
                key = "durationParam" if op.duration_param else "duration"
                self.error(op, key, "when creating pods in a steady state, the test duration "
                           "must be > 0")
        if isinstance(op, CreateCompositePodGroups):
            for key, attr in _TREE_PARAMS:
                if getattr(op, attr) < 0 and getattr(op, f"{attr}_param"):
                    self.error(op, key, f"must not be negative, got {getattr(op, attr)}")
        if (isinstance(op, CreateResourceDriver) and op.max_claims_per_node < 0
                and op.max_claims_per_node_param):
            self.error(op, "maxClaimsPerNodeParam",
                       f"must not be negative, got {op.max_claims_per_node}")

    # -- the whole template

    def run(self, check_unused: bool) -> list[Op]:
        unrolled: list[Op] = []
        for op in self.tc.workload_template:
            patched = self.patch(op)
            if isinstance(patched, CreatePodSets) and patched.count > MAX_POD_SETS:
                key = "countParam" if patched.count_param else "count"
                self.error(patched, key, f"{patched.count} pod sets is over the limit of "
                           f"{MAX_POD_SETS} (each becomes one createPods op)")
            elif isinstance(patched, CreatePodSets):
                for i in range(patched.count):
                    copy = dataclasses.replace(
                        patched.create_pods_op, namespace=f"{patched.namespace_prefix}-{i}")
                    unrolled.append(self.patch(copy))
            else:
                unrolled.append(patched)
        ops = [self.defaults(index, op) for index, op in enumerate(unrolled)]
        if check_unused:
            unused = [name for name in self.w.params if name not in self.used]
            if unused:
                self.errors.append(ConfigFileError(
                    f"the parameters [{' '.join(unused)}] are defined on workload "
                    f"{self.w.name}, but unused. Please make sure there are no typos",
                    path=self.tc.source, line=self.w.params_line, test_case=self.tc.name,
                    workload=self.w.name, yaml_path=f"{self.w.yaml_path}.params"))
        return ops

    def defaults(self, index: int, op: Op) -> Op:
        if isinstance(op, CreatePods):
            changes: dict[str, Any] = {}
            if op.namespace is None:
                changes["namespace"] = f"namespace-{index}"
            if op.pod_template_path is None and self.tc.default_pod_template_path is not None:
                changes["pod_template_path"] = self.tc.default_pod_template_path
            return dataclasses.replace(op, **changes) if changes else op
        if isinstance(op, Churn):
            return dataclasses.replace(
                op, namespace=f"namespace-{index}" if op.namespace is None else op.namespace,
                interval_milliseconds=op.interval_milliseconds or 500)
        if isinstance(op, Barrier) and not op.stage_requirement:
            return dataclasses.replace(op, stage_requirement="Scheduled")
        if isinstance(op, (CreateAny, UpdateAny)) and op.count is None:
            return dataclasses.replace(op, count=1)
        return op


def _go_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return "<nil>" if value is None else type(value).__name__


def resolve_collect(test_case: TestCase, workload: Workload, *,
                    check_unused: bool = True) -> tuple[list[Op], list[ConfigFileError]]:
    """Like :func:`resolve` but returns every error instead of raising the first."""
    resolver = _Resolver(test_case, workload)
    ops = resolver.run(check_unused)
    return ops, resolver.errors


def resolve(test_case: TestCase, workload: Workload) -> list[Op]:
    """The workload's concrete op list: params substituted, createPodSets unrolled, defaults set.

    Raises the first :class:`ConfigFileError` (undefined or mistyped parameter, a bad value
    after substitution, or a parameter no op used).
    """
    ops, errors = resolve_collect(test_case, workload)
    if errors:
        raise errors[0]
    return ops
