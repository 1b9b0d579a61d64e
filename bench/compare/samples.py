"""The tidy table every comparison is judged from, whatever produced it.

One row per (side, mode, workload, metric, round): ``side`` is ``base`` or ``head``; ``mode``
``time`` or ``instructions``; ``metric``/``unit`` name what ``value`` measures. Metrics judged:

* time mode: ``SchedulingThroughput`` (pods/s, higher is better) and ``cpu_per_pod``
  (s/pod: process CPU time in the measured windows per pod bound there);
* instructions mode: ``instructions_per_pod`` (instructions/pod of the measured section);

and, for attribution only (never judged on their own), ``plugin:<Plugin>/<ExtensionPoint>``
and ``extension_point:<Name>`` in s/pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

__all__ = [
    "ATTRIBUTION_PREFIXES",
    "JUDGED",
    "SCHEMA",
    "instruction_rows",
    "time_rows",
    "to_frame",
]

SCHEMA = {"side": pl.String, "mode": pl.String, "workload": pl.String, "metric": pl.String,
          "unit": pl.String, "round": pl.Int64, "value": pl.Float64}
JUDGED = {("time", "SchedulingThroughput"): ("pods/s", True),
          ("time", "cpu_per_pod"): ("s/pod", False),
          ("instructions", "instructions_per_pod"): ("instructions/pod", False)}
ATTRIBUTION_PREFIXES = ("plugin:", "extension_point:")


def _row(side: str, mode: str, workload: str, metric: str, unit: str, rnd: int,
         value: float | None) -> dict[str, Any]:
    return {"side": side, "mode": mode, "workload": workload, "metric": metric, "unit": unit,
            "round": rnd, "value": value}


def time_rows(side: str, rnd: int, measurement: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows of one worker measurement (``WorkloadMeasurement.to_dict()`` shape) in time mode;
    none when the workload did not finish ok."""
    if measurement.get("status") != "ok":
        return []
    name = measurement["name"]
    rows = []
    if measurement.get("throughput_avg"):
        rows.append(_row(side, "time", name, "SchedulingThroughput", "pods/s", rnd,
                         float(measurement["throughput_avg"])))
    if measurement.get("cpu_per_pod"):
        rows.append(_row(side, "time", name, "cpu_per_pod", "s/pod", rnd,
                         float(measurement["cpu_per_pod"])))
    pods = measurement.get("measured_pods") or 0
    if pods:
        for prefix, key in (("plugin:", "plugin_seconds"),
                            ("extension_point:", "extension_point_seconds")):
            for k, seconds in (measurement.get(key) or {}).items():
                rows.append(_row(side, "time", name, prefix + k, "s/pod", rnd, seconds / pods))
    return rows


def instruction_rows(side: str, rnd: int, name: str, measured: int | None,
                     measured_pods: int) -> list[dict[str, Any]]:
    if measured is None or measured <= 0 or measured_pods <= 0:
        return []
    return [_row(side, "instructions", name, "instructions_per_pod", "instructions/pod", rnd,
                 measured / measured_pods)]


def to_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(list(rows), schema=SCHEMA)
