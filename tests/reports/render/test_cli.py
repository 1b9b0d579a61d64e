"""``schedperf report``: formats, inputs, and exit 2 with one line for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli.report import report
from reports.render import load_report, report_to_json
from tests.reports.render.conftest import report_dict


def _run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(report, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def _tiny(tmp_path: Path) -> Path:
    """One result, no plots but one forest plot: cheap to render as HTML."""
    data = report_dict()
    data["results"] = data["results"][:1]
    data["plugin_breakdown"], data["history"] = {}, {}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_markdown_to_stdout_by_default(report_file: Path) -> None:
    code, out, _ = _run(report_file)
    assert code == 0
    assert out.startswith("### schedperf: REGRESSION — 3 regressions")


def test_a_compare_folder_is_read_like_its_report(report_file: Path) -> None:
    assert _run(report_file.parent)[1] == _run(report_file)[1]


@pytest.mark.parametrize(("args", "name", "starts"), [
    ((), "out.json", "{\n  \"schema\": 1,"),
    ((), "out.md", "### schedperf"),
    (("--format", "md"), "out.html", "### schedperf"),  # an explicit --format wins
    (("--format", "json"), "out.txt", "{"),
], ids=["json-by-suffix", "md-by-suffix", "format-over-suffix", "json-any-suffix"])
def test_out_file(report_file: Path, tmp_path: Path, args: tuple[str, ...], name: str,
                  starts: str) -> None:
    out = tmp_path / "sub" / name
    code, stdout, stderr = _run(report_file, *args, "--out", out)
    assert code == 0 and stdout == ""
    assert out.read_text(encoding="utf-8").startswith(starts)
    assert f"wrote {out}" in stderr


def test_json_output_is_the_validated_model(report_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "again.json"
    assert _run(report_file, "--out", out)[0] == 0
    assert out.read_text(encoding="utf-8") == report_to_json(load_report(report_file))
    assert load_report(out) == load_report(report_file)


def test_html_file(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert _run(_tiny(tmp_path), "--out", out)[0] == 0
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") == 1


def _broken(tmp_path: Path) -> Path:
    data = report_dict()
    data["results"][2]["ci_high"] = "wide"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(("make", "message"), [
    (lambda tmp: [tmp / "missing.json"], "{tmp}/missing.json: no such file or folder"),
    (lambda tmp: [tmp], "{tmp}: no report.json in this folder"),
    (lambda tmp: [_broken(tmp)],
     "{tmp}/broken.json: results[2].ci_high: expected a number, got a string"),
    (lambda tmp: [_broken(tmp), _broken(tmp)], "give exactly one report, got 2"),
], ids=["missing", "folder-without-report", "bad-field", "two-reports"])
def test_bad_input_exits_2_with_one_line(tmp_path: Path, make, message: str) -> None:
    code, stdout, stderr = _run(*make(tmp_path))
    assert code == 2 and stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and message.format(tmp=tmp_path) in lines[0]


def test_unknown_format_is_a_usage_error(report_file: Path) -> None:
    code, _, stderr = _run(report_file, "--format", "pdf")
    assert code == 2 and "'pdf' is not one of" in stderr
