"""Rendering comparison reports: ``report.json`` from ``schedperf compare`` as Markdown, HTML
or JSON.

    model.py      the typed model and load_report(path) (validation: file + field in errors)
    sections.py   which result goes in which section; number formatting
    markdown.py   PR comment / step summary (size-bounded)
    change_selection.py  the report's change-aware selection (blind spots, added workloads)
    html.py       one self-contained HTML file: tables and inline SVG plots, no scripts
    plots.py      matplotlib figures rendered to inline SVG (imported only for HTML)

``render(report, fmt)`` picks the renderer; ``find_report(path)`` accepts a report.json or a
compare output folder holding one. How to read a report: docs/reports.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from reports.render.html import render_html
from reports.render.markdown import MAX_BYTES, render_markdown
from reports.render.model import (
    KINDS,
    SCHEMA_VERSION,
    VERDICTS,
    Accepted,
    AddedWorkload,
    Attribution,
    BlindSpot,
    Breakdown,
    ChangePoint,
    ChangeSelection,
    Failure,
    History,
    HistoryPoint,
    Report,
    ReportFileError,
    Result,
    Sample,
    Settings,
    Side,
    load_report,
    parse_report,
    report_to_dict,
    report_to_json,
)
from scheduler_core.inputfile import path_problem

__all__ = [
    "FORMATS",
    "KINDS",
    "MAX_BYTES",
    "REPORT_NAME",
    "SCHEMA_VERSION",
    "VERDICTS",
    "Accepted",
    "AddedWorkload",
    "Attribution",
    "BlindSpot",
    "Breakdown",
    "ChangePoint",
    "ChangeSelection",
    "Failure",
    "Format",
    "History",
    "HistoryPoint",
    "Report",
    "ReportFileError",
    "Result",
    "Sample",
    "Settings",
    "Side",
    "find_report",
    "load_report",
    "parse_report",
    "render",
    "render_html",
    "render_markdown",
    "report_to_dict",
    "report_to_json",
]

Format = Literal["md", "html", "json"]
FORMATS: tuple[Format, ...] = ("md", "html", "json")
REPORT_NAME = "report.json"  # what `schedperf compare` writes in its output folder


def find_report(path: Path | str) -> Path:
    """``path`` itself, or ``path/report.json`` when ``path`` is a folder.

    Raises :class:`ReportFileError` for a missing path or a folder without a report.
    """
    path = Path(path)
    if path.is_dir():
        candidate = path / REPORT_NAME
        if not candidate.is_file():
            raise ReportFileError(str(path), "", f"no {REPORT_NAME} in this folder (give a "
                                                 "report.json or a `schedperf compare` output "
                                                 "folder)")
        return candidate
    if not path.exists():
        raise ReportFileError(str(path), "", path_problem(path) or "no such file or folder")
    return path


def render(report: Report, fmt: Format) -> str:
    """The report as text in format ``fmt`` (``md``, ``html`` or ``json``)."""
    if fmt == "md":
        return render_markdown(report)
    if fmt == "html":
        return render_html(report)
    if fmt == "json":
        return report_to_json(report)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
