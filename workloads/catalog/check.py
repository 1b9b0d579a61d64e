"""Deep validation of workloads before any of them runs (``schedperf validate``, the start of
``schedperf run``).

For every workload: its ``$params`` are resolved (every error kept), its object counts are
checked against what can fit (an estimate per object against the memory available; counts
that overflow a 64-bit integer are refused by the resolution already), its scheduler config is
loaded and every profile built (out-of-tree plugins imported), and every op is prepared by the
runner's own code (templates read and parsed, kinds and volume fields checked) and its objects
rendered and parsed with the same strict API at the first and the last index. Nothing is
scheduled and no node is built beyond those samples.

A problem names the config file and line of the op (or test case), the workload, the YAML path
and what is wrong (the template file and field inside it where known): a
:class:`~workloads.config.ConfigFileError`. A workload needing objects the core does not model
is *unsupported* (its reason is kept), which is not bad input.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_core.errors import SchedulerCoreError
from workloads.config import ConfigFileError, Op, TestCase, Workload
from workloads.config.ops import (
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    UpdateAny,
)
from workloads.config.resolve import resolve_collect
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.ops.factories import NodeFactory, PodFactory
from workloads.ops.registry import PREPARE
from workloads.ops.templates import TemplateFile
from workloads.runner.options import RunOptions
from workloads.runner.run import Run, op_label

__all__ = [
    "BYTES_PER_OBJECT",
    "WorkloadCheck",
    "available_memory",
    "check_selection",
    "check_workload",
    "estimated_bytes",
    "estimated_bytes_of",
]

# A deliberately generous estimate of what one object costs a run (the Python object, its
# node-table / queue / cache entries, its share of the collectors): measured ~1-2 KiB per node
# and per pod in a 5000-node run; x2-4 for headroom. A workload whose objects need more than
# the memory available is refused before it starts.
BYTES_PER_OBJECT = {"node": 8192, "pod": 4096, "object": 4096, "namespace": 1024}


def available_memory() -> int:
    """Bytes of memory available now (psutil when installed, else /proc/meminfo, else the
    physical memory); tests replace it."""
    try:
        import psutil  # optional

        return int(psutil.virtual_memory().available)
    except ImportError:  # pragma: no cover - psutil is a dependency of the harness
        pass
    try:  # pragma: no cover
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")  # pragma: no cover


@dataclass
class WorkloadCheck:
    """What the deep check found for one workload: ``problems`` (bad input) and, when the
    workload needs something the core does not model, ``unsupported`` (its reason)."""

    test_case: TestCase
    workload: Workload
    problems: list[ConfigFileError] = field(default_factory=list)
    unsupported: str | None = None

    @property
    def ok(self) -> bool:
        """No bad input (an unsupported workload is ok: it is reported when run)."""
        return not self.problems

    @property
    def name(self) -> str:
        return self.workload.full_name


_PARAM_ATTRS = {"countParam": "count_param", "countMultiplierParam": "count_multiplier_param"}


def _count_key(op: Op) -> str:
    if isinstance(op, CreatePods) and op.count_multiplier_param:
        return "countMultiplierParam" if not op.count_param else "countParam"
    return "countParam" if getattr(op, "count_param", "") else "count"


def _objects(op: Op) -> tuple[str, int]:
    """(kind of object, how many at once) an op creates."""
    if isinstance(op, CreateNodes):
        return "node", op.count
    if isinstance(op, CreatePods):
        return "pod", op.count
    if isinstance(op, CreateNamespaces):
        return "namespace", op.count
    if isinstance(op, (CreateAny, UpdateAny)):
        return "object", op.count or 1
    if isinstance(op, Churn):
        return "object", max(op.number, 1) * max(len(op.template_paths), 1)
    return "", 0


def estimated_bytes_of(op: Op) -> int:
    """The memory the objects of one op need, by :data:`BYTES_PER_OBJECT`."""
    kind, n = _objects(op)
    return max(n, 0) * BYTES_PER_OBJECT[kind] if kind else 0


def estimated_bytes(ops: Sequence[Op]) -> int:
    """The memory the objects of ``ops`` need, by :data:`BYTES_PER_OBJECT`."""
    return sum(estimated_bytes_of(op) for op in ops)


def _gib(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


class _Checker:
    def __init__(self, tc: TestCase, w: Workload) -> None:
        self.tc = tc
        self.w = w
        self.result = WorkloadCheck(tc, w)

    def problem(self, message: str, *, op: Op | None = None, key: str = "") -> None:
        if op is not None:
            path = f"{op.yaml_path}.{key}" if key and op.yaml_path else (key or op.yaml_path)
            line = op.field_lines.get(key, op.line) if key else op.line
        else:
            path, line = key, self.tc.line
        self.result.problems.append(ConfigFileError(
            " ".join(message.split()), path=self.tc.source, line=line, test_case=self.tc.name,
            workload=self.w.name, yaml_path=path))

    def sizes(self, ops: Sequence[Op], available: int) -> bool:
        need = estimated_bytes(ops)
        if need <= available:
            return True
        worst = max(ops, key=estimated_bytes_of)
        kind, n = _objects(worst)
        key = _count_key(worst)
        param = getattr(worst, _PARAM_ATTRS.get(key, ""), "")
        what = f"parameter {param}: " if param else ""
        self.problem(f"{what}{n} {kind}s: the workload's objects need about {_gib(need)} "
                     f"(estimated {BYTES_PER_OBJECT[kind]} bytes per {kind}), more than the "
                     f"{_gib(available)} of memory available", op=worst, key=key)
        return False

    def scheduler(self, run_factory: Callable[[], Run]) -> Run | None:
        try:
            return run_factory()
        except SchedulerCoreError as exc:  # the scheduler config, its plugins
            self.problem(f"scheduler config: {exc}", key="schedulerConfigPath")
        except UnsupportedWorkload as exc:
            self.result.unsupported = str(exc)
        except WorkloadError as exc:
            self.problem(str(exc), key="schedulerConfigPath")
        return None

    def op(self, run: Run, index: int, op: Op) -> None:
        prep = PREPARE.get(type(op))
        if prep is None:
            return
        try:
            prepared = prep(run, index, op)
            _sample(run, op, prepared)
        except UnsupportedWorkload as exc:
            if self.result.unsupported is None:
                self.result.unsupported = f"{op_label(index, op)}: {exc}"
        except (WorkloadError, SchedulerCoreError) as exc:
            self.problem(f"{op.opcode}: {exc}", op=op)
        except Exception as exc:  # a bug rather than bad input, but never a traceback here
            self.problem(f"{op.opcode}: unexpected {type(exc).__name__} while checking "
                         f"(a schedperf bug?): {exc}", op=op)


def _indices(count: int) -> list[int]:
    return [0] if count <= 1 else [0, count - 1]


def _sample(run: Run, op: Op, prepared: Any) -> None:
    """Render and parse the objects of ``op`` at the first and the last index."""
    if isinstance(prepared, (NodeFactory, PodFactory)):
        count = max(getattr(op, "count", 1), 1)
        for i in _indices(count):
            prepared.make(i, count)
    elif isinstance(prepared, TemplateFile) and isinstance(op, (CreateAny, UpdateAny)):
        count = max(op.count or 1, 1)
        for i in _indices(count):
            run.api.parse(prepared.manifest(i, count), source=prepared.source,
                          namespace=op.namespace, index=i)
    elif isinstance(prepared, list) and isinstance(op, Churn):
        for tf in prepared:
            manifest = tf.manifest(0, 1)
            kind = manifest.get("kind") if isinstance(manifest, dict) else None
            run.api.parse(manifest, source=tf.source,
                          namespace="" if kind in ("Node", "Namespace", "PriorityClass")
                          else op.namespace or "", index=0)


def _checkable(test_case: TestCase) -> bool:
    """Whether every unsupported op of the test case can still be checked deeply (it has a
    prepare step that validates its objects, as createPodGroups does)."""
    return all(type(op) in PREPARE for op in test_case.workload_template
               if op.unsupported_reason)


def check_workload(test_case: TestCase, workload: Workload, *,
                   memory: int | None = None) -> WorkloadCheck:
    """Every problem of one workload (module docstring); ``memory`` is the bytes available
    (default: :func:`available_memory`)."""
    checker = _Checker(test_case, workload)
    if test_case.unsupported_reason:
        checker.result.unsupported = test_case.unsupported_reason
        if not _checkable(test_case):
            return checker.result
    ops, errors = resolve_collect(test_case, workload)
    if errors:
        checker.result.problems.extend(errors)
        return checker.result
    if not checker.sizes(ops, available_memory() if memory is None else memory):
        return checker.result

    def make_run(tc: TestCase) -> Run:
        run = Run(tc, workload, [], RunOptions(wall_clock_metrics=False))
        run.ops = list(ops)  # the cluster is sized for no nodes: nothing is built
        return run

    run = checker.scheduler(lambda: make_run(test_case))
    if run is None:  # the ops with the default config (the config is bad or unsupported)
        run = checker.scheduler(lambda: make_run(
            dataclasses.replace(test_case, scheduler_config_path=None)))
    if run is not None:
        for index, op in enumerate(ops):
            checker.op(run, index, op)
        if checker.result.unsupported is None:
            checker.result.unsupported = run.gates.unsupported
    if checker.result.problems:
        checker.result.problems.sort(key=lambda e: e.line or 0)
    return checker.result


def check_selection(chosen: Iterable[tuple[TestCase, Workload]], *,
                    memory: int | None = None) -> list[WorkloadCheck]:
    """:func:`check_workload` for every (test case, workload) pair, in order."""
    avail = available_memory() if memory is None else memory
    return [check_workload(tc, w, memory=avail) for tc, w in chosen]
