"""``schedperf run``: run the selected scheduler_perf workloads and write their results.

Every finished workload is written at once (workloads.output.RunWriter): a run interrupted by
SIGINT or SIGTERM, or killed, keeps every workload that finished. Interrupted, it says how far
it got and exits 130 (SIGINT) or 143 (SIGTERM).

Also the helpers the other config-reading commands share: the ``--config`` / ``--label``
options, loading the configs (or the built-in catalog) and :class:`BadInput` (exit 2).
"""

from __future__ import annotations

import signal
import sys
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column

from bench.cli.engines import (
    EngineRun,
    engine_options,
    plan_engines,
    reference_binary,
    run_on_kube,
)
from bench.cli.output import WHOLE, output_console
from bench.cli.run_checks import check_before_run, keep_going_option, report_not_run
from bench.cli.run_summary import FORMATS, RunSummary, render
from bench.interrupt import deferred_signals
from bench.profiling import have_pyinstrument, profile_file_stem, profile_workload
from bench.selection import (
    check_name_regex,
    config_option,
    label_option,
    load_test_cases,
    select_workloads,
)
from bench.sharding import ShardError, parse_shard, shard
from workloads.catalog.selection import BENCHMARK_DEFAULT_FILTER
from workloads.config import TestCase, Workload
from workloads.output import RunWriter, environment_fingerprint
from workloads.result import (
    ENGINE_CORE,
    STATUS_FAILED,
    STATUS_THRESHOLD_MISSED,
    STATUS_TIMEOUT,
    WorkloadResult,
)
from workloads.runner import ProgressEvent, run_workload

__all__ = ["WORKLOAD_FINISHED_HOOKS", "run"]

FAILING_STATUSES = (STATUS_THRESHOLD_MISSED, STATUS_FAILED, STATUS_TIMEOUT)
RUN_FAILED = frozenset({STATUS_FAILED, STATUS_TIMEOUT})  # exit 2
# called as hook(finished, planned) after each workload's files are written (finished runs so
# far, of workloads x rounds): for tools that follow a run, and for tests that interrupt one
# at a known point (a hook sends the signal)
WORKLOAD_FINISHED_HOOKS: list[Callable[[int, int], None]] = []


def _default_out_dir(now: datetime) -> Path:
    return Path("schedperf-results") / now.strftime("%Y-%m-%dT%H-%M-%SZ")


def _shard_callback(ctx: click.Context, param: click.Parameter,
                    value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        return parse_shard(value)
    except ShardError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from exc


@click.command()
@config_option
@label_option(BENCHMARK_DEFAULT_FILTER)
@click.option("--name", "name_regex", default=None, metavar="REGEX",
              help="Only workloads whose '<test case>/<workload>' name matches REGEX.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None,
              help="Output folder [default: ./schedperf-results/<UTC timestamp>].")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(min=1),
              help="Run every selected workload N times (rounds).")
@click.option("--record-decisions", is_flag=True,
              help="Record every plugin decision into decisions.parquet (slow).")
@click.option("--timeout-per-workload", "timeout", type=click.FloatRange(min=0, min_open=True),
              default=None, metavar="S", help="Wall-time limit per workload, in seconds.")
@click.option("--clock", type=click.Choice(["virtual", "real"]), default="virtual",
              show_default=True)
@click.option("--profile", "profile_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, metavar="DIR",
              help="Write a cProfile .pstats per workload into DIR (and a speedscope JSON "
                   "from a second, pyinstrument run when pyinstrument is installed). "
                   "Profiled throughput is not comparable with unprofiled runs.")
@click.option("--shard", "shard_spec", default=None, metavar="I/N", callback=_shard_callback,
              help="Run only shard I of N (1-based) of the selected workloads, balanced by "
                   "expected cost: N jobs with --shard 1/N ... N/N run each workload once "
                   "(docs/ci.md).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table",
              show_default=True,
              help="The summary at the end: a table, or JSON / CSV on stdout (progress and "
                   "messages then go to stderr).")
@engine_options
@keep_going_option
@click.pass_context
def run(ctx: click.Context, configs: tuple[Path, ...], label_filter: str | None,
        name_regex: str | None, out_dir: Path | None, seed: int, repeat: int,
        record_decisions: bool, timeout: float | None, clock: str,
        profile_dir: Path | None, shard_spec: tuple[int, int] | None, fmt: str,
        engine: str, gomaxprocs: tuple[int, ...], keep_going: bool) -> None:
    """Run the selected workloads; write DataItems JSON and Parquet results into --out.

    The results of every workload are written as soon as it finishes, so an interrupted
    run keeps the finished ones.

    With --engine kube-scheduler or both, the workloads (also) run on the real kube-scheduler
    loop in the reference process, once per --gomaxprocs value; both prints the engines'
    pods/s, CPU per pod and their ratio side by side.

    Exit status: 0 all ok, 1 a threshold was missed, 2 bad input or a workload that failed or
    timed out, 130 / 143 interrupted by SIGINT / SIGTERM (the finished workloads are in
    --out).
    """
    check_name_regex(name_regex)
    chosen = select_workloads(load_test_cases(configs), label_filter, name_regex)
    selected = len(chosen)
    engines = plan_engines(engine, gomaxprocs)
    binary = reference_binary(engines, chosen)
    if shard_spec is not None:
        chosen = shard(chosen, *shard_spec)
    # issue 16: every workload checked before the first runs (bad input: exit 2, no half run)
    chosen, bad_input = check_before_run(chosen, keep_going=keep_going)
    started = datetime.now(UTC)
    out = out_dir or _default_out_dir(started)
    run_id = f"{started.strftime('%Y%m%dT%H%M%SZ')}-{uuid.uuid4().hex[:8]}"
    env = environment_fingerprint(clock=clock, seed=seed)
    if env.get("scheduler_core_warning"):
        click.echo(f"schedperf: warning: {env['scheduler_core_warning']}", err=True)
    stdout = output_console()  # not a terminal: wide, so names are not cut in logs
    console = stdout if fmt == "table" else output_console(stderr=True)
    if shard_spec is not None:
        console.print(f"shard {shard_spec[0]}/{shard_spec[1]}: {len(chosen)} of {selected} "
                      "selected workloads", highlight=False)
    writer = RunWriter(out, env=env, run_id=run_id, started=started,
                       record_decisions=record_decisions)
    summary = RunSummary(out=out, planned=len(chosen) * repeat * len(engines),
                         results=writer.finished,
                         repeat=repeat)
    profiles: list[Path] = []
    if profile_dir is not None and not have_pyinstrument():
        console.print("--profile: pyinstrument is not installed, writing .pstats only "
                      "(pip install pyinstrument for speedscope JSON)", highlight=False)
    try:
        _run_all(chosen, repeat, writer, console, seed=seed, clock=clock,
                 record_decisions=record_decisions, timeout=timeout, profile_dir=profile_dir,
                 profiles=profiles, engines=engines, binary=binary)
        writer.finish()
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM under bench.interrupt
        summary.interrupted_by = int(getattr(exc, "signum", signal.SIGINT))
    summary.files = writer.file_counts()
    if profile_dir is not None:
        summary.profiles = (profile_dir, len(profiles))
    render(summary, fmt, out=stdout, err=output_console(stderr=True))
    if summary.interrupted_by is not None:
        sys.stdout.flush()
        ctx.exit(128 + summary.interrupted_by)
    statuses = {r.status for _, r in writer.finished}
    if bad_input:  # --keep-going: the bad workloads did not run
        report_not_run(bad_input)
        ctx.exit(2)
    # README's exit codes: 2 a workload that failed or timed out (a run that failed),
    # 1 a missed threshold, 0 ok (unsupported workloads are reported, not failures)
    ctx.exit(2 if statuses & RUN_FAILED else 1 if STATUS_THRESHOLD_MISSED in statuses else 0)


def _run_all(chosen: list[tuple[TestCase, Workload]], repeat: int, writer: RunWriter,
             console: Console, *, seed: int, clock: str, record_decisions: bool,
             timeout: float | None, profile_dir: Path | None, profiles: list[Path],
             engines: list[EngineRun], binary: object | None = None) -> None:
    """Run every workload ``repeat`` times, handing each finished one to ``writer`` (signals
    wait until its files are written) and then to WORKLOAD_FINISHED_HOOKS."""
    planned = len(chosen) * repeat * len(engines)
    with Progress(TextColumn("{task.description}", markup=False,
                             table_column=Column(overflow=WHOLE)),
                  BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                  console=console) as progress:
        for round_no in range(1, repeat + 1):
            for (tc, w), eng in ((c, e) for c in chosen for e in engines):
                label = w.full_name if repeat == 1 else f"{w.full_name} #{round_no}"
                if len(engines) > 1 or eng.engine != ENGINE_CORE:
                    label += f" [{eng.label}]"
                task = progress.add_task(label, total=None, detail="")

                def on_progress(ev: ProgressEvent, task: Any = task) -> None:
                    progress.update(task, total=ev.op_count, completed=ev.op_index,
                                    detail=f"{ev.opcode}: {ev.pods_scheduled} pods")

                def one_run(tc: TestCase = tc, w: Workload = w,
                            on_progress: Callable[[ProgressEvent], None] = on_progress,
                            ) -> WorkloadResult:
                    return run_workload(tc, w, seed=seed, clock=clock,
                                        record_decisions=record_decisions, timeout=timeout,
                                        progress=on_progress)

                if eng.engine != ENGINE_CORE:
                    result = run_on_kube(tc, w, eng, binary, timeout=timeout,
                                         detail=lambda d, task=task: progress.update(
                                             task, detail=d))
                elif profile_dir is None:
                    result = one_run()
                else:
                    result, files = profile_workload(
                        one_run, profile_dir, profile_file_stem(w.full_name, round_no))
                    profiles.extend(files)
                with deferred_signals():  # a finished workload is written whole
                    writer.add(round_no, result)
                total = progress.tasks[task].total or 1
                progress.update(task, total=total, completed=total,
                                detail=f"{result.status} ({result.scheduled_pods} pods)")
                for hook in WORKLOAD_FINISHED_HOOKS:
                    hook(len(writer.finished), planned)
