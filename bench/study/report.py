"""The study's summary on the console: rich tables of the workloads, the false alarms, the
detection per size and the time-mode slowdowns and noise."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.study.settings import PLUGIN, PLUGIN_KEY, size_key

__all__ = ["pct", "print_summary"]


def pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{100 * x:.{digits}f} %"


def print_summary(results: Mapping[str, Any], console: Console) -> None:
    """The rich summary tables."""
    _print_workloads(results, console)
    _print_aa(results, console)
    _print_detection(results, console)
    tm = results.get("time")
    if tm:
        _print_time_tables(tm, console)
    for line in _closing_lines(results):
        console.print(line, highlight=False)
    for p in results["problems"]:
        console.print(f"[yellow]{p}[/]", highlight=False)


def _print_workloads(results: Mapping[str, Any], console: Console) -> None:
    """The affected workloads per mode, with their share of attempts with the feature."""
    wl = results["workloads"]
    feature = results["settings"]["feature"]
    t = Table(title=f"Workloads with pods that have feature {feature} (after set-up)")
    for col in ("mode", "workload", "attempts", "with the feature", "share"):
        t.add_column(col)
    for mode in results["modes"]:
        for n in results["affected"][mode]:
            p = wl[n]
            t.add_row(mode, n, str(p["attempts"]), str(p["affected"]), pct(p["share"], 0))
    console.print(t)
    for mode in results["modes"]:
        console.print(f"{mode}: {len(results['sets'][mode])} workloads, "
                      f"{len(results['affected'][mode])} affected", highlight=False)


def _print_aa(results: Mapping[str, Any], console: Console) -> None:
    """False alarms with BASE = HEAD, per mode."""
    t = Table(title="A/A (BASE = HEAD): false alarms")
    for col in ("mode", "rounds", "decisions", "backed by", "any alarm / decision",
                "alarm / workload", "note"):
        t.add_column(col)
    ir = results.get("instructions")
    if ir and ir["aa"]:
        aa = ir["aa"]
        t.add_row("instructions", "1 count/side", "1", f"{aa['workloads']} workloads x 2 "
                  "counts", pct(1.0 if aa["false_alarms"] else 0.0, 0),
                  f"{pct(aa['false_alarm_rate'])} (mean)",
                  f"identical counts {aa['identical']}/{aa['workloads']} (largest "
                  f"difference {pct(aa['max_relative_difference'], 4)})")
    tm = results.get("time")
    if tm:
        pool = tm["independent_rounds"]["aa"]
        for n, cell in tm["aa"].items():
            worst = max(cell["per_workload"].items(), key=lambda kv: kv[1], default=("-", 0.0))
            t.add_row("time", f"{n} paced", str(cell["draws"]), f"{pool} paced rounds",
                      pct(cell["any_alarm_per_draw"]), f"{pct(worst[1])} (worst)",
                      f"worst: {worst[0]}; draws overlap")
    console.print(t)


def _print_detection(results: Mapping[str, Any], console: Console) -> None:
    """The injected slowdowns per size: caught or not, per mode."""
    ir, tm = results.get("instructions"), results.get("time")
    t = Table(title="Injected slowdowns: detection")
    t.add_column("size")
    if ir:
        t.add_column("instructions: flagged/affected, controls flagged, change, named")
    levels = [str(n) for n in tm["rounds"]] if tm else []
    for n in levels:
        t.add_column(f"time {n} paced rounds: power per affected workload, controls' alarms")
    for key in [size_key(s) for s in results["settings"]["sizes"]]:
        row = [pct(float(key), 0)]
        if ir:
            row.append(_instruction_detection(ir["slowdown"].get(key)))
        for n in levels:
            power = tm["power"].get(n, {}).get(key)
            if power is None:
                row.append("-")
                continue
            lines = [f"{w}: {pct(power.get(w))}" for w in tm["affected"]]
            lines.append(f"controls: {pct(tm['controls'][n].get(key))}")
            row.append("\n".join(lines))
        t.add_row(*row)
    if tm:
        row = [f"named {PLUGIN_KEY}"] + (["-"] if ir else [])
        for n in levels:
            a = tm["attribution"].get(n) or {"flagged": 0, "names_plugin": None}
            row.append(f"{pct(a['names_plugin'])} of {a['flagged']} flagged draws")
        t.add_row(*row)
    console.print(t)


def _closing_lines(results: Mapping[str, Any]) -> list[str]:
    """The headline figures, the cost of a compare, the machine and the study's duration."""
    ir, tm = results.get("instructions"), results.get("time")
    lines = []
    if ir:
        caught = [float(k) for k, c in ir["slowdown"].items() if c["exact"]]
        lines.append(f"instructions: smallest size caught in every affected workload with no "
                     f"control flagged: {pct(min(caught), 0) if caught else 'none'}")
    if tm:
        for n, sz in tm["smallest_detected"].items():
            lines.append(f"time, {n} paced rounds: smallest size detected with >= 90 % power "
                         f"in every affected workload: {pct(float(sz), 0) if sz else 'none'}")
        ind = tm["independent_rounds"]
        lines.append(f"time: {tm['draws']} overlapping draws per cell rest on {ind['aa']} A/A "
                     f"paced rounds and {ind['per_size_and_workload']} per size and affected "
                     f"workload ({ind['total']} independent rounds in all)")
    for mode, wall in results["compare_wall_seconds"].items():
        lines.append(f"schedperf compare (A/A, {mode} only): {wall:.0f} s wall")
    load = results["machine"]["load_1min"]
    lines.append(f"machine: {results['machine']['cpu_count']} cores, 1-min load "
                 f"{load['min']:.1f}-{load['max']:.1f} (mean {load['mean']:.1f}); study took "
                 f"{results['durations_seconds']['total'] / 60:.1f} min")
    return lines


def _instruction_detection(cell: Mapping[str, Any] | None) -> str:
    """The instructions column of the detection table for one size."""
    if not cell:
        return "-"
    flagged = [i for i in cell["workloads"].values()
               if i["affected"] and i["verdict"] == "regression"]
    named = [i for i in flagged if str(i.get("attribution")).startswith(PLUGIN)]
    checked = [i for i in flagged if i.get("attribution") != "not checked"]
    changes = [i["change"] for i in cell["workloads"].values()
               if i["affected"] and i["change"] is not None]
    span = f"{pct(min(changes), 2)}-{pct(max(changes), 2)}" if changes else "-"
    return (f"{cell['detected']}/{cell['affected']}, {cell['controls_flagged']}, {span}, "
            + (f"{len(named)}/{len(checked)}" if checked else "-"))


def _print_time_tables(tm: Mapping[str, Any], console: Console) -> None:
    """Time mode: the slowdowns achieved and the A/A pool's per-round noise."""
    t = Table(title="Time mode: slowdown achieved")
    t.add_column("size (achieved: median per-round HEAD/BASE cpu_per_pod - 1)")
    for w in tm["affected"]:
        t.add_column(w)
    for key, per in tm["achieved"].items():
        t.add_row(pct(float(key), 0), *[pct(per.get(w)) for w in tm["affected"]])
    console.print(t)
    t = Table(title="Time mode: per-round noise in the A/A pool (sd of log values)")
    for col in ("workload", "rounds", "cpu_per_pod HEAD/BASE", "cpu_per_pod BASE",
                "SchedulingThroughput HEAD/BASE", "SchedulingThroughput BASE"):
        t.add_column(col)
    for w, per in tm["noise"].items():
        cells = []
        for m in ("cpu_per_pod", "SchedulingThroughput"):
            x = per.get(m) or {}
            cells += [pct(x.get("sd_log_ratio"), 2), pct(x.get("sd_log_base"), 2)]
        rounds = max((x.get("rounds", 0) for x in per.values()), default=0)
        t.add_row(w, str(rounds), *cells)
    console.print(t)
