"""The tidy table every comparison is judged from, whatever produced it.

One row per (side, mode, workload, metric, round): ``side`` is ``base`` or ``head``; ``mode``
``time`` or ``instructions``; ``metric``/``unit`` name what ``value`` measures. Metrics judged:

* time mode: ``SchedulingThroughput`` (pods/s, higher is better) and ``cpu_per_pod``
  (s/pod: process CPU time in the measured windows per pod bound there);
* instructions mode: ``instructions_per_pod`` (instructions/pod of the measured section);

and, for attribution only (never judged on their own), ``plugin:<Plugin>/<ExtensionPoint>``
and ``extension_point:<Name>`` in s/pod.

Next to it, the outcomes table (:data:`OUTCOME_SCHEMA`): one row per (side, mode, workload,
round) that was run or should have been, with the workload's ``status`` (``ok``,
``threshold-missed``, ``failed``, ``timeout``, ``unsupported``, or ``error`` when the worker
crashed, could not import its code or wrote nothing for it), the ``error`` text (the
runner's reason, or the end of the worker's log) and the workload's ``labels``
(comma-joined, as in results.parquet; null when unknown). Any status but ok and
threshold-missed is a failure of that side (bench.compare.judge). ``schedperf compare``
writes it as ``outcomes.parquet`` next to ``samples.parquet``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

__all__ = [
    "ATTRIBUTION_PREFIXES",
    "JUDGED",
    "MEASURED",
    "OUTCOME_SCHEMA",
    "SCHEMA",
    "UNSUPPORTED",
    "error_tail",
    "instruction_rows",
    "outcome_row",
    "outcomes_frame",
    "time_rows",
    "to_frame",
]

SCHEMA = {"side": pl.String, "mode": pl.String, "workload": pl.String, "metric": pl.String,
          "unit": pl.String, "round": pl.Int64, "value": pl.Float64}
JUDGED = {("time", "SchedulingThroughput"): ("pods/s", True),
          ("time", "cpu_per_pod"): ("s/pod", False),
          ("instructions", "instructions_per_pod"): ("instructions/pod", False)}
ATTRIBUTION_PREFIXES = ("plugin:", "extension_point:")
OUTCOME_SCHEMA = {"side": pl.String, "mode": pl.String, "workload": pl.String,
                  "round": pl.Int64, "status": pl.String, "error": pl.String,
                  "labels": pl.String}
ERROR_LINES = 15  # an outcome keeps this many last lines of its error text
ERROR_CHARS = 3000
# workload statuses whose measurements count (any other status is a failure of that side)
MEASURED = ("ok", "threshold-missed")
UNSUPPORTED = "unsupported"


def _row(side: str, mode: str, workload: str, metric: str, unit: str, rnd: int,
         value: float | None) -> dict[str, Any]:
    return {"side": side, "mode": mode, "workload": workload, "metric": metric, "unit": unit,
            "round": rnd, "value": value}


def time_rows(side: str, rnd: int, measurement: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows of one worker measurement (``WorkloadMeasurement.to_dict()`` shape) in time mode;
    none when the workload did not finish (a missed threshold finished: its data is kept)."""
    if measurement.get("status") not in MEASURED:
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


def error_tail(text: str | None, *, lines: int = ERROR_LINES, chars: int = ERROR_CHARS) -> str:
    """The last ``lines`` lines (at most ``chars`` characters) of an error text: where a
    traceback or a log says what went wrong."""
    if not text:
        return ""
    kept = "\n".join(line.rstrip() for line in text.strip().splitlines()[-lines:])
    return kept if len(kept) <= chars else "…" + kept[len(kept) - chars + 1:]


def outcome_row(side: str, mode: str, workload: str, rnd: int | None, status: str,
                error: str | None, labels: str | None = None) -> dict[str, Any]:
    """One row of the outcomes table (``error`` cut to its end by :func:`error_tail`)."""
    return {"side": side, "mode": mode, "workload": workload, "round": rnd, "status": status,
            "error": error_tail(error) or None, "labels": labels}


def outcomes_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(list(rows), schema=OUTCOME_SCHEMA)
