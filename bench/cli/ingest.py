"""``schedperf ingest PATH...``: add results files to the results store (``--store``).

PATH is a file or a folder: ``schedperf run`` output folders (their results.parquet), asv
results (``results/<machine>/<commit>-<env>.json``), pytest-benchmark JSON and upstream
DataItems JSON (``BenchmarkPerfScheduling_*.json``); the format is detected. The store is
documented in docs/store.md. Also home of ``store_option`` and ``repo_option``, shared with
``history``, ``changes`` and ``dashboard``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from bench.selection import BadInput
from reports.store import (
    DEFAULT_STORE,
    DUPLICATE,
    ERROR,
    FileOutcome,
    GitError,
    IngestReport,
    StoreError,
    ingest_paths,
    store_files,
    store_folder_problem,
)

__all__ = ["ingest", "repo_option", "require_results", "store_option"]


def store_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--store", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_STORE,
        show_default=True, metavar="DIR",
        help="The results store: a Parquet dataset (pl.scan_parquet(f'{DIR}/**/*.parquet')).",
    )(f)


def require_results(store: Path) -> None:
    """BadInput unless ``store`` is a store holding results: a missing store (no such folder)
    and an empty one are both named, differently (docs/store.md)."""
    problem = store_folder_problem(store)
    if problem:
        raise BadInput(f"store {store}: {problem}")
    if not store_files(store):
        raise BadInput(f"store {store} holds no results yet: add some with "
                       "`schedperf ingest PATH --store DIR`")


def repo_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--repo", type=click.Path(file_okay=False, path_type=Path),
                        default=None, metavar="PATH", help=help_text)


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


def _commit_lines(report: IngestReport, repo: Path | None) -> list[str]:
    """What was found out about the commits of the ingested files."""
    lines = [f"note: cannot read repository {p}" for p in report.repo_problems]
    if not report.commits:
        return lines
    found = sorted({r for r in report.commits.values() if r})
    unknown = sorted(c for c, r in report.commits.items() if not r)
    known = len(report.commits) - len(unknown)
    if known:
        lines.append(f"{_plural(known, 'commit')}: date and parents recorded from git ("
                     + ", ".join(found) + ")")
    if unknown:
        shown = ", ".join(c[:10] for c in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        hint = "" if repo else "; pass --repo PATH (a clone that has them)"
        lines.append(f"note: {_plural(len(unknown), 'commit')} ({shown}) not found in any "
                     "repository at hand: their parents are not recorded (their date only "
                     f"where the results file gives one){hint}; history, changes and dashboard "
                     "order them by --repo, else by that date, else not at all")
    return lines


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@store_option
@repo_option("A git repository holding the measured commits: their committer dates and "
             "parents are recorded [default: the checkout of the run's scheduler_core, "
             "of the results file, of the current folder].")
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[Path, ...], store: Path,
           repo: Path | None) -> None:
    """Add results files to the store; ingesting a file twice adds nothing.

    PATH is a file or folder: schedperf run output folders, asv results
    (results/<machine>/<commit>-<env>.json with results/benchmarks.json), pytest-benchmark
    --benchmark-json files, DataItems BenchmarkPerfScheduling_*.json. Files that cannot be
    ingested are reported and skipped, the others are ingested.

    Each commit's committer date and parents are recorded when a git repository at hand
    has it (--repo, else the checkouts of the run and of the current folder): history,
    changes and the dashboard order versions by them.

    Exit status: 0 all ingested (or already in the store), 2 some could not be ingested.
    """
    try:
        report = ingest_paths(paths, store, on_outcome=_echo, repo=repo)
    except (StoreError, GitError) as exc:
        raise BadInput(str(exc)) from exc
    for line in _commit_lines(report, repo):
        click.echo(line)
    summary = (f"store {store}: {_plural(len(report.ingested), 'file')} ingested "
               f"({_plural(report.rows_new, 'new row')}), "
               f"{len(report.duplicates)} already ingested")
    if report.errors:
        click.echo(f"{summary}, {_plural(len(report.errors), 'error')}", err=True)
        ctx.exit(2)
    click.echo(summary)
