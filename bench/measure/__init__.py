"""Measurement workers for ``schedperf compare`` (docs/measurement.md).

    python -P -m bench.measure.worker --spec SPEC.json --out RESULT.json   one fresh process
    WorkerSpec / WorkerResult / WorkloadMeasurement                        SPEC / RESULT files
    count_instructions(spec, jobs=2) -> {name: instructions}               under cachegrind
    measure_instructions(spec, jobs=2) -> {name: InstructionCount}         with the details

Names are imported lazily: the worker process must not pay for modules it does not use
(every import is counted in instructions mode).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "InstructionCount",
    "InstructionCountError",
    "SpecError",
    "WorkerResult",
    "WorkerSpec",
    "WorkloadMeasurement",
    "count_instructions",
    "measure_instructions",
]

_WHERE = {
    "InstructionCount": "bench.measure.instructions",
    "InstructionCountError": "bench.measure.instructions",
    "count_instructions": "bench.measure.instructions",
    "measure_instructions": "bench.measure.instructions",
    "SpecError": "bench.measure.spec",
    "WorkerResult": "bench.measure.spec",
    "WorkerSpec": "bench.measure.spec",
    "WorkloadMeasurement": "bench.measure.spec",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'bench.measure' has no attribute {name!r}")
    return getattr(import_module(module), name)
