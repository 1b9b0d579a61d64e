"""render_html and the plots: self-contained, escaped, every section present or said empty."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reports.render import parse_report, render_html
from reports.render.html import CSP
from reports.render.plots import _nice_ticks, forest_svg
from tests.reports.render.conftest import SCRIPT_NAME, report_dict

SVG = re.compile(r"<svg\b.*?</svg>", re.S)
ESCAPED_SCRIPT = "&lt;script&gt;alert(1)&lt;/script&gt;"


def _minimal_dict() -> dict[str, Any]:
    """One result in one of two modes, no history or breakdown, a name DejaVu cannot draw."""
    data = report_dict()
    data["results"] = [data["results"][3] | {"workload": "調度/🚀", "mode": "time",
                                             "metric": "SchedulingThroughput"}]
    data["verdict"] = "no change"
    data["environment_differs"] = False
    data["plugin_breakdown"] = {}
    del data["history"]
    return data


@pytest.fixture(scope="module")
def minimal_html() -> str:
    return render_html(parse_report(_minimal_dict()))


def test_one_svg_per_plot(sample_html: str) -> None:
    # a forest plot per mode, two breakdowns, two histories
    assert len(SVG.findall(sample_html)) == 6
    assert sample_html.count('<svg class="plot" role="img"') == 6
    assert "<h3>instructions</h3>" in sample_html and "<h3>time</h3>" in sample_html


def test_names_are_escaped_in_tables_and_plots(sample_html: str) -> None:
    assert not re.search(r"<\s*script", sample_html, re.I)
    assert f'<td class="name">{ESCAPED_SCRIPT}</td>' in sample_html
    in_plots = [svg for svg in SVG.findall(sample_html) if ESCAPED_SCRIPT in svg]
    assert len(in_plots) == 3  # time forest plot, its breakdown and its history
    assert "Cost $5 and $6/10Nodes" in sample_html  # literal, not mathtext
    assert "Pipes|In|Name/100Nodes" in sample_html


def test_nothing_is_fetched_from_anywhere(sample_html: str) -> None:
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in sample_html
    for pattern in (r"<script", r"\bsrc\s*=", r"<link\b", r"<img\b", r"<iframe\b",
                    r"url\(\s*['\"]?\s*(https?:)?//", r"@import", r"<image\b",
                    r"href\s*=\s*['\"](?!#)"):
        assert not re.search(pattern, sample_html, re.I), pattern
    without_namespaces = re.sub(r'\bxmlns(:\w+)?="http://www\.w3\.org/[^"]*"', "", sample_html)
    assert "http://" not in without_namespaces and "https://" not in without_namespaces


def test_svg_ids_are_unique_and_resolve(sample_html: str) -> None:
    ids = re.findall(r'\bid="([^"]+)"', sample_html)
    assert ids and len(ids) == len(set(ids))
    refs = set(re.findall(r'href="#([^"]+)"', sample_html))
    refs |= set(re.findall(r"url\(#([^)]+)\)", sample_html))
    assert refs and refs <= set(ids)


def test_header_and_tables(sample_html: str) -> None:
    assert '<span class="v v-regression badge">regression</span>' in sample_html
    assert "3 regressions, 2 improvements, 1 inconclusive, 4 no change" in sample_html
    assert '<div class="warn" role="alert">' in sample_html
    assert "<li>cpu_model: Xeon 8375C vs EPYC 7R13</li>" in sample_html
    assert ('<tr class="diff"><td class="name">cpu_model</td><td>Xeon 8375C</td>'
            "<td>EPYC 7R13</td></tr>") in sample_html
    assert "a" * 40 in sample_html and "b" * 40 in sample_html
    assert "<h2>Regressions and improvements (5)</h2>" in sample_html
    assert "minDomains support costs ~4 %; tracked in #123" in sample_html
    assert "2 uncommon scenarios checked: Uncommon/GatedPodsChurn, Uncommon/HugeTaints." \
        in sample_html
    assert "<td>PodTopologySpread</td><td>Filter</td>" in sample_html
    assert '<td class="num">120 µs</td><td class="num">162 µs</td>' in sample_html
    assert '<td class="num">~12</td>' in sample_html
    assert "<h2>All results (11)</h2>" in sample_html


def test_sections_without_data_say_so(minimal_html: str) -> None:
    for text in ("No regressions or improvements.", "No accepted regressions.",
                 "No uncommon scenarios in this comparison.", "No plugin attributions",
                 "No inconclusive results.", "No results with a ratio in mode instructions.",
                 "No per-plugin breakdown in this report.", "No history in this report."):
        assert text in minimal_html, text
    assert len(SVG.findall(minimal_html)) == 1
    assert "warn" not in minimal_html.split("<body>")[1].split("<h2>")[0]
    assert "調度/🚀" in minimal_html


def test_output_is_deterministic(minimal_html: str) -> None:
    assert render_html(parse_report(_minimal_dict())) == minimal_html


def test_forest_plot_keeps_the_changed_results_when_capped() -> None:
    report = parse_report(report_dict())
    svg, shown = forest_svg(report.results, mode="time", min_effect=0.03, id_prefix="t-",
                            max_rows=4)
    assert shown == 4
    for name in ("Uncommon/GatedPodsChurn", "TopologySpreading/500Nodes",
                 "Pipes|In|Name/100Nodes", "SchedulingBasic/5000Nodes"):
        assert name in svg
    assert SCRIPT_NAME not in svg and "Preemption" not in svg


@pytest.mark.parametrize(("low", "high", "ticks"), [
    (0.95, 1.05, [0.96, 0.98, 1.0, 1.02, 1.04]),
    (0.5, 2.0, [0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]),
    (0.999, 1.001, [0.999, 1.0, 1.001]),
    (0.05, 1.0, [0.05, 0.1, 0.2, 0.5, 1.0]),  # a factor > 5: 1-2-5 ratios
    (0.01, 20.0, [0.01, 0.1, 1.0, 10.0]),  # 1-2-5 would be 11 ticks: powers of ten
], ids=["narrow", "halves", "tiny", "factor-20", "huge"])
def test_nice_ticks(low: float, high: float, ticks: list[float]) -> None:
    assert _nice_ticks(low, high) == pytest.approx(ticks)
