"""``schedperf ingest PATH...``: add results files to the results store (``--store``).

PATH is a file or a folder: ``schedperf run`` output folders (their results.parquet), asv
results (``results/<machine>/<commit>-<env>.json``), pytest-benchmark JSON and upstream
DataItems JSON (``BenchmarkPerfScheduling_*.json``); the format is detected. The store is
documented in docs/store.md. Also home of ``store_option``, shared with ``history``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from bench.cli.run import BadInput
from reports.store import (
    DEFAULT_STORE,
    DUPLICATE,
    ERROR,
    FileOutcome,
    StoreError,
    ingest_paths,
)

__all__ = ["ingest", "store_option"]


def store_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--store", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_STORE,
        show_default=True, metavar="DIR",
        help="The results store: a Parquet dataset (pl.scan_parquet(f'{DIR}/**/*.parquet')).",
    )(f)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _echo(outcome: FileOutcome) -> None:
    if outcome.status == ERROR:
        click.echo(f"error: {outcome.path}: {outcome.message}", err=True)
        return
    if outcome.status == DUPLICATE:
        click.echo(f"already ingested: {outcome.path}")
    else:
        rows = _plural(outcome.rows, "row")
        if outcome.rows_new != outcome.rows:
            rows += f", {outcome.rows_new} new (the others were already in the store)"
        click.echo(f"ingested: {outcome.path} ({outcome.kind}, {rows})")
    if outcome.message:
        click.echo(f"  note: {outcome.message}")


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@store_option
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[Path, ...], store: Path) -> None:
    """Add results files to the store; ingesting a file twice adds nothing.

    PATH is a file or folder: schedperf run output folders, asv results
    (results/<machine>/<commit>-<env>.json with results/benchmarks.json), pytest-benchmark
    --benchmark-json files, DataItems BenchmarkPerfScheduling_*.json. Files that cannot be
    ingested are reported and skipped, the others are ingested.

    Exit status: 0 all ingested (or already in the store), 2 some could not be ingested.
    """
    try:
        report = ingest_paths(paths, store, on_outcome=_echo)
    except StoreError as exc:
        raise BadInput(str(exc)) from exc
    summary = (f"store {store}: {_plural(len(report.ingested), 'file')} ingested "
               f"({_plural(report.rows_new, 'new row')}), "
               f"{len(report.duplicates)} already ingested")
    if report.errors:
        click.echo(f"{summary}, {_plural(len(report.errors), 'error')}", err=True)
        ctx.exit(2)
    click.echo(summary)
