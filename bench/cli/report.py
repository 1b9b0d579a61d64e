"""``schedperf report RESULTS --format md|html|json --out PATH``: render a comparison report.

RESULTS is a ``report.json`` written by ``schedperf compare`` or the compare output folder that
holds it. Exactly one: reports are not merged, because each carries its own false-discovery
family (q-values), headline verdict and BASE/HEAD pair, and concatenating them would misstate
all three. Render several reports with one call each.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import click

from bench.selection import BadInput
from reports.render import FORMATS, Format, ReportFileError, find_report, load_report, render
from workloads.output import atomic_write_bytes

__all__ = ["report", "report_text"]

_SUFFIXES: dict[str, Format] = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html",
                                ".json": "json"}


def report_text(path: Path, fmt: Format) -> str:
    """Load the report at ``path`` (file or compare folder) and render it as ``fmt``.

    Raises :class:`ReportFileError` for bad input.
    """
    return render(load_report(find_report(path)), fmt)


def _format_for(fmt: str | None, out: Path) -> Format:
    if fmt is not None:
        return cast(Format, fmt)  # click.Choice(FORMATS) checked it
    return _SUFFIXES.get(out.suffix.lower(), "md") if str(out) != "-" else "md"


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format [default: from the --out suffix (.md, .html, .json), "
                   "else md].")
@click.option("--out", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              default=Path("-"), show_default=True,
              help="Output file ('-': standard output, e.g. to append to "
                   "$GITHUB_STEP_SUMMARY).")
def report(results: tuple[Path, ...], fmt: str | None, out: Path) -> None:
    """Render a comparison report (report.json from `schedperf compare`, or its output
    folder) as Markdown for a PR comment, one self-contained HTML file, or normalised JSON.

    Exit status: 0 written, 2 bad input (missing file, invalid report, several inputs).
    """
    if len(results) != 1:
        raise BadInput(f"give exactly one report, got {len(results)}: reports are not merged "
                       "(each has its own BASE/HEAD, verdict and q-values); render each alone")
    chosen = _format_for(fmt, out)
    try:
        text = report_text(results[0], chosen)
    except ReportFileError as exc:
        raise BadInput(str(exc)) from exc
    if str(out) == "-":
        click.echo(text, nl=False)
    else:
        atomic_write_bytes(out, text.encode("utf-8"))
        click.echo(f"wrote {out} ({chosen})", err=True)
