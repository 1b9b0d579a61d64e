"""What a measurement worker is asked to do (:class:`WorkerSpec`, the SPEC.json file) and what
it answers (:class:`WorkerResult` with one :class:`WorkloadMeasurement` per workload, the
RESULT.json file). The JSON shapes are documented in docs/measurement.md.

This module imports nothing from scheduler_core or workloads: the parent process (``schedperf
compare``) uses it without importing the code under test.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NoReturn

__all__ = [
    "MODES",
    "RESULT_SCHEMA",
    "STOP_AFTER",
    "TAIL_LINES",
    "SpecError",
    "WorkerResult",
    "WorkerSpec",
    "WorkloadMeasurement",
    "atomic_write_json",
    "exit_with",
    "run_problem",
]

RESULT_SCHEMA = 1
TAIL_LINES = 12  # lines of a failed worker's log kept in its problem (a traceback's end)
MODES = ("time", "instructions")
STOP_AFTER = ("all", "setup")
# default plugin_sample_percent per mode: time every plugin in every cycle when timing
# (upstream samples 10 %), nothing to time when counting instructions (the recorder is off)
DEFAULT_PLUGIN_SAMPLE_PERCENT = 100


class SpecError(ValueError):
    """A SPEC.json that cannot be run (bad field, unknown workload, unreadable config)."""


@dataclass(frozen=True)
class WorkerSpec:
    """SPEC.json. Paths are absolute or relative to the folder of the spec file
    (:meth:`load`); :meth:`to_json` writes them as given."""

    configs: tuple[str, ...]  # performance-config.yaml files or folders of them
    workloads: tuple[str, ...]  # exact "<test case>/<workload>" names, run in this order
    seed: int = 0
    mode: str = "time"  # "time" | "instructions"
    scheduler_config: str | None = None  # overrides every test case's schedulerConfigPath
    stop_after: str = "all"  # "all" | "setup"
    # share of scheduling cycles whose plugins are timed one by one (time mode)
    plugin_sample_percent: int = DEFAULT_PLUGIN_SAMPLE_PERCENT
    timeout: float | None = None  # wall seconds per workload (time mode only)
    sample_interval: float = 0.1  # SchedulingThroughput sampling interval, wall seconds

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise SpecError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.stop_after not in STOP_AFTER:
            raise SpecError(f"stop_after must be one of {', '.join(STOP_AFTER)}, "
                            f"got {self.stop_after!r}")
        if not self.configs:
            raise SpecError("configs is empty: give performance-config.yaml files or folders")
        if not self.workloads:
            raise SpecError("workloads is empty: give exact <test case>/<workload> names")
        for name in self.workloads:
            if name.count("/") != 1 or not all(name.split("/")):
                raise SpecError(f"workload {name!r} is not a <test case>/<workload> name")
        if len(set(self.workloads)) != len(self.workloads):
            raise SpecError("workloads lists a name twice")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise SpecError(f"seed must be an integer, got {self.seed!r}")
        if not 0 <= self.plugin_sample_percent <= 100:
            raise SpecError(f"plugin_sample_percent must be 0-100, got "
                            f"{self.plugin_sample_percent}")
        if self.timeout is not None and self.timeout <= 0:
            raise SpecError(f"timeout must be > 0 seconds, got {self.timeout}")
        if self.mode == "instructions" and self.timeout is not None:
            raise SpecError("timeout is wall time: not allowed in instructions mode")
        if self.sample_interval <= 0:
            raise SpecError(f"sample_interval must be > 0, got {self.sample_interval}")

    # ------------------------------------------------------------------ JSON
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base: str | None = None) -> WorkerSpec:
        """From SPEC.json's object; relative paths are resolved against ``base``."""
        if not isinstance(data, Mapping):
            raise SpecError("the spec must be a JSON object")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise SpecError(f"unknown spec field(s): {', '.join(unknown)} "
                            f"(known: {', '.join(sorted(known))})")
        for key in ("configs", "workloads"):
            value = data.get(key)
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise SpecError(f"{key} must be a list of strings")

        def where(p: str | None) -> str | None:
            if p is None or base is None or os.path.isabs(p):
                return p
            return os.path.join(base, p)

        kw = dict(data)
        kw["configs"] = tuple(where(p) for p in data["configs"])
        kw["workloads"] = tuple(data["workloads"])
        sc = data.get("scheduler_config")
        if sc is not None and not isinstance(sc, str):
            raise SpecError("scheduler_config must be null or a path")
        kw["scheduler_config"] = where(sc)
        try:
            return cls(**kw)
        except TypeError as exc:  # a field of the wrong JSON type
            raise SpecError(str(exc)) from None

    @classmethod
    def load(cls, path: Path | str) -> WorkerSpec:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SpecError(f"{path}: {exc}") from None
        # os.path on strings, not Path.resolve(): pathlib interns every path part, and the
        # interned-string table then holds this run's folder name (see atomic_write_json)
        return cls.from_dict(data, base=os.path.dirname(os.path.realpath(path)))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["configs"] = list(self.configs)
        out["workloads"] = list(self.workloads)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def replace(self, **changes: Any) -> WorkerSpec:
        kw = {**self.to_dict(), **changes}
        kw["configs"] = tuple(kw["configs"])
        kw["workloads"] = tuple(kw["workloads"])
        return WorkerSpec(**kw)


@dataclass
class WorkloadMeasurement:
    """One workload's entry in RESULT.json (seconds are wall or process-CPU seconds of the
    worker; all timing fields are null in instructions mode)."""

    name: str  # "<test case>/<workload>"
    status: str  # the runner's status: ok, failed, unsupported, timeout, threshold-missed
    reason: str | None = None
    scheduled_pods: int = 0  # pods bound during the whole run (set-up pods included)
    measured_pods: int = 0  # pods bound in scope inside the metrics collection windows
    attempts: int = 0  # scheduling attempts during the whole run
    measured_attempts: int = 0  # scheduling attempts inside the windows
    throughput_avg: float | None = None  # SchedulingThroughput Average, pods/s (time mode)
    cpu_seconds: float | None = None  # process CPU time inside the windows
    wall_seconds: float | None = None  # the whole workload, set-up included
    measured_seconds: float | None = None  # wall time inside the windows
    cpu_per_pod: float | None = None  # cpu_seconds / measured_pods
    # window totals; plugin_seconds is scaled by 100 / plugin_sample_percent when < 100
    extension_point_seconds: dict[str, float] | None = None
    plugin_seconds: dict[str, float] | None = None
    instructions: int | None = None  # filled by bench.measure.instructions, never the worker
    virtual_seconds: float = 0.0  # virtual time the run took
    stopped_before_op: int | None = None  # stop_after="setup": the first op not run
    # paced runs (bench.measure.pacing): hand-overs and seconds spent waiting for the turn
    # during this workload (wall_seconds includes the waits, measured_seconds does not)
    paced_turns: int | None = None
    paused_seconds: float | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorkloadMeasurement:
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})


def exit_with(main: Callable[[], int]) -> NoReturn:
    """A worker's ``__main__``: run ``main``; argparse's exit is its status, a crash prints
    the traceback and is status 1; flush and leave with ``os._exit`` (no interpreter
    teardown, so nothing after the work is counted or timed)."""
    try:
        code = main()
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_problem(result: WorkerResult | None, returncode: int, log: str) -> str | None:
    """Why a worker run gave no usable RESULT.json (None when it did): its ``error``, or
    its exit status with the last lines of its log."""
    if result is not None and result.error:
        return result.error
    if returncode != 0 or result is None:
        tail = "\n".join(log.strip().splitlines()[-TAIL_LINES:])
        how = f"exited with status {returncode}"
        if returncode == 0:
            how += " without writing its result"
        return f"worker {how}; the end of its log:\n{tail}" if tail else f"worker {how}"
    return None


@dataclass
class WorkerResult:
    """RESULT.json."""

    core: dict[str, Any]  # path, import_path, commit, dirty, warning
    python: str
    executable: str
    pid: int
    env: dict[str, Any]
    spec: dict[str, Any]
    workloads: list[WorkloadMeasurement] = field(default_factory=list)
    harness: dict[str, str] = field(default_factory=dict)  # where workloads/ and bench/ came from
    numpy: str | None = None
    error: str | None = None  # set when the spec could not be run (exit status 2)
    schema: int = RESULT_SCHEMA

    def to_dict(self) -> dict[str, Any]:
        out = {"schema": self.schema}
        out.update({k: v for k, v in asdict(self).items() if k != "schema"})
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorkerResult:
        if data.get("schema") != RESULT_SCHEMA:
            raise ValueError(f"result schema {data.get('schema')!r}, expected {RESULT_SCHEMA}")
        known = cls.__dataclass_fields__
        kw = {k: v for k, v in data.items() if k in known}
        kw["workloads"] = [WorkloadMeasurement.from_dict(w) for w in data.get("workloads", [])]
        return cls(**kw)

    @classmethod
    def load(cls, path: Path | str) -> WorkerResult:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def workload(self, name: str) -> WorkloadMeasurement:
        for w in self.workloads:
            if w.name == name:
                return w
        raise KeyError(name)


def atomic_write_json(path: Path | str, data: Any) -> Path:
    """Write ``data`` as JSON through a temporary file in the same folder + ``os.replace``
    (readers see no file or the whole file). The temporary name is ``.<name>.<pid>.tmp``, not
    a random one (drawing random names takes a random number of instructions), and a plain
    string, not a Path (pathlib interns path parts: a pid in the interned-string table moves
    dict probes by a few instructions from run to run). Not workloads.output' writer: importing
    that package loads polars and pyarrow, which would inflate every worker start."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = (json.dumps(data, indent=2) + "\n").encode()
    folder, name = os.path.split(os.fspath(path))
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # left by a crashed process that had the same pid
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path
