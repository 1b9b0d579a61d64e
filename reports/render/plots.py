"""Report plots drawn with matplotlib's SVG backend, returned as inline ``<svg>`` text.

* :func:`forest_svg`     ratio HEAD/BASE with its CI per workload for one mode, a line at 1.0
                         and the +-min-effect band shaded
* :func:`history_svg`    a metric over commits, change points marked with the level shift
* :func:`breakdown_svg`  seconds per pod by plugin and extension point, BASE vs HEAD

Inline-safety: text stays text (``svg.fonttype = none``) and matplotlib's SVG writer escapes it,
so a ``<script>`` workload name is inert; ``$`` in names is not mathtext (``parse_math=False``).
The XML prolog, DOCTYPE and RDF metadata (which carry URLs and a date) are dropped, and every
``id`` and reference inside a figure gets the caller's ``id_prefix``, so several figures in one
HTML page never resolve each other's clip paths or markers. Output is deterministic
(``svg.hashsalt`` is the prefix). Figures are built on :class:`matplotlib.figure.Figure` with
the SVG canvas, never through pyplot, so no GUI backend or global figure state is involved.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from reports.render.model import Breakdown, History, Result
from reports.render.sections import fmt_change

__all__ = ["ACCEPTED_COLOR", "VERDICT_COLORS", "breakdown_svg", "forest_svg", "history_svg"]

VERDICT_COLORS = {"regression": "#c62828", "improvement": "#2e7d32",
                  "inconclusive": "#e08600", "no change": "#757575", "error": "#000000"}
ACCEPTED_COLOR = "#7b1fa2"
BASE_COLOR = "#90a4ae"
LABEL_CHARS = 60  # longer tick labels are clipped; the tables keep the whole name
_TICK_STEPS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
_STYLE = {"svg.fonttype": "none", "font.size": 9, "axes.titlesize": 10,
          "axes.spines.top": False, "axes.spines.right": False}
_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_TAG = re.compile(r"<[^>]+>")


def _clip(text: str, limit: int = LABEL_CHARS) -> str:
    """One line of at most ``limit`` characters; the middle gives way, since workload names
    differ at the end (``.../5000Nodes``) as often as at the start."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = (limit - 1) * 2 // 5
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


@contextmanager
def _style(id_prefix: str) -> Iterator[None]:
    with matplotlib.rc_context({**_STYLE, "svg.hashsalt": id_prefix}), \
            warnings.catch_warnings():
        # names in any script: a glyph DejaVu lacks is drawn by the browser's fonts anyway
        warnings.filterwarnings("ignore", message=r"Glyph .* missing from", category=UserWarning)
        yield


def _figure(width: float, height: float, *, left: float, right: float = 0.3,
            top: float = 0.4, bottom: float = 0.5) -> Figure:
    """A figure with margins in inches. Fixed margins, not constrained layout: measuring every
    tick label for the layout costs seconds on a 100-row forest plot."""
    fig = Figure(figsize=(width, height))
    FigureCanvasSVG(fig)
    fig.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height,
                        bottom=bottom / height)
    return fig


def _label_inches(labels: Sequence[str], font_size: float = 8) -> float:
    """Room for right-aligned tick labels: ~0.6 em per character (DejaVu Sans) plus a pad."""
    longest = max((len(label) for label in labels), default=0)
    return 0.35 + longest * font_size * 0.62 / 72


def _to_svg(fig: Figure, id_prefix: str, label: str) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    svg = _METADATA.sub("", _PROLOG.sub("", buffer.getvalue()))

    def prefix_ids(tag: re.Match[str]) -> str:
        text = tag.group(0)
        text = re.sub(r'\bid="', f'id="{id_prefix}', text)
        text = re.sub(r'href="#', f'href="#{id_prefix}', text)
        return text.replace("url(#", f"url(#{id_prefix}")

    svg = _TAG.sub(prefix_ids, svg)
    aria = (label.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))
    return svg.replace("<svg ", f'<svg class="plot" role="img" aria-label="{aria}" ', 1).strip()


def _nice_ticks(low: float, high: float, max_ticks: int = 9) -> list[float]:
    """Tick ratios in [low, high]: round percent changes (1.0 included) for usual ranges;
    1-2-5 ratios when the range spans more than a factor 5 (log axis: even spacing)."""
    if high / low > 5:
        for mantissas in ((1, 2, 5), (1,)):
            ticks = [m * 10.0 ** e for e in range(-6, 7) for m in mantissas
                     if low <= m * 10.0 ** e <= high]
            if len(ticks) <= max_ticks:
                return ticks
        return ticks[::math.ceil(len(ticks) / max_ticks)]
    for step in _TICK_STEPS:
        first = math.ceil((low - 1) / step - 1e-9)  # 1e-9: 1.001 is on a 0.001 step
        last = math.floor((high - 1) / step + 1e-9)
        if last - first + 1 <= max_ticks:
            return [1 + k * step for k in range(first, last + 1)]
    return [1.0]


def _percent(ratio: float, _pos: object = None) -> str:
    change = (ratio - 1) * 100
    return "0" if abs(change) < 1e-9 else f"{change:+.{0 if abs(change) >= 1 else 1}f} %"


def _pick(results: Sequence[Result], max_rows: int) -> list[Result]:
    if len(results) <= max_rows:
        return list(results)
    ranked = sorted(results, key=lambda r: (r.verdict == "no change",
                                            -abs(math.log(r.ratio or 1.0))))
    return ranked[:max_rows]


def forest_svg(results: Sequence[Result], *, mode: str, min_effect: float | None,
               id_prefix: str, max_rows: int = 120) -> tuple[str, int]:
    """Forest plot of one mode's results; returns ``(svg, rows shown)``.

    Rows without a ratio are left out; above ``max_rows`` rows the plot keeps the results with a
    verdict other than "no change", then the largest effects.
    """
    plotted = [r for r in results if r.mode == mode and r.ratio is not None]
    rows = sorted(_pick(plotted, max_rows), key=lambda r: (r.workload, r.metric))
    metrics_per_workload: dict[str, set[str]] = {}
    for r in rows:
        metrics_per_workload.setdefault(r.workload, set()).add(r.metric)
    labels = [_clip(r.workload if len(metrics_per_workload[r.workload]) == 1
                    else f"{r.workload} · {r.metric}") for r in rows]
    with _style(id_prefix):
        fig = _figure(10.0, 1.6 + 0.22 * max(len(rows), 1), left=_label_inches(labels),
                      top=0.4, bottom=0.85)
        ax = fig.add_subplot()
        low, high = 1.0, 1.0
        if min_effect:
            band = (1 / (1 + min_effect), 1 + min_effect)
            ax.axvspan(*band, color="#e6e6e6", zorder=0,
                       label=f"±{min_effect * 100:g} % min effect")
            low, high = band
        ax.axvline(1.0, color="#333333", linewidth=0.8, zorder=1)
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            key = "accepted" if r.verdict == "regression" and r.accepted else r.verdict
            groups.setdefault(key, []).append(i)
        for key in ("error", "regression", "accepted", "improvement", "inconclusive",
                    "no change"):
            if key not in groups:
                continue
            idx = groups[key]
            ratios = [rows[i].ratio or 1.0 for i in idx]
            lows = [rows[i].ci_low if rows[i].ci_low is not None else ratios[j]
                    for j, i in enumerate(idx)]
            highs = [rows[i].ci_high if rows[i].ci_high is not None else ratios[j]
                     for j, i in enumerate(idx)]
            low, high = min(low, *lows, *ratios), max(high, *highs, *ratios)
            color = ACCEPTED_COLOR if key == "accepted" else VERDICT_COLORS[key]
            ax.errorbar(ratios, idx,
                        xerr=[[max(0.0, r - lo) for r, lo in zip(ratios, lows, strict=True)],
                              [max(0.0, hi - r) for r, hi in zip(ratios, highs, strict=True)]],
                        fmt="D" if key == "accepted" else "o", color=color, ecolor=color,
                        markersize=4, capsize=2, linewidth=1.2, zorder=3,
                        label="accepted regression" if key == "accepted" else key)
        ax.set_xscale("log")
        pad = (high / low) ** 0.04
        ax.set_xlim(low / pad, high * pad)
        ax.xaxis.set_major_locator(FixedLocator(_nice_ticks(low / pad, high * pad)))
        ax.xaxis.set_major_formatter(FuncFormatter(_percent))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_yticks(range(len(rows)), labels, parse_math=False, fontsize=8)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.grid(axis="x", color="#dddddd", linewidth=0.5)
        ax.set_xlabel("change HEAD vs BASE (ratio of the metric, log scale)")
        ax.set_title(f"{mode}: ratio HEAD/BASE with confidence interval", parse_math=False)
        fig.legend(loc="lower center", ncols=6, frameon=False, fontsize=8)
        return _to_svg(fig, id_prefix, f"forest plot, {mode} mode"), len(rows)


def history_svg(workload: str, history: History, *, id_prefix: str) -> str:
    """``history.metric`` over commits with the change points: a dashed line where the new
    level starts, the levels before and after, and the change in percent."""
    values = [p.value for p in history.points]
    with _style(id_prefix):
        fig = _figure(10.0, 2.8, left=0.9, top=0.35, bottom=0.75)
        ax = fig.add_subplot()
        ax.plot(range(len(values)), values, marker="o", markersize=3, linewidth=1.2,
                color="#1565c0", zorder=3)
        bounds = [0, *(c.index for c in history.change_points), len(values)]
        for k, cp in enumerate(history.change_points):
            ax.axvline(cp.index - 0.5, color=VERDICT_COLORS["regression"], linestyle="--",
                       linewidth=1, zorder=2)
            if cp.before is not None:
                ax.hlines(cp.before, max(bounds[k] - 0.5, -0.2), cp.index - 0.5,
                          colors="#555555", linestyles=":", linewidth=1)
            if cp.after is not None:
                ax.hlines(cp.after, cp.index - 0.5, min(bounds[k + 2] - 0.5, len(values) - 0.8),
                          colors="#555555", linestyles=":", linewidth=1)
            if cp.change is not None:
                ax.annotate(fmt_change(1 + cp.change), xy=(cp.index - 0.5, 1.0),
                            xycoords=("data", "axes fraction"), xytext=(3, -2),
                            textcoords="offset points", va="top", fontsize=8,
                            color=VERDICT_COLORS["regression"])
        step = max(1, math.ceil(len(values) / 10))
        ticks = list(range(0, len(values), step))
        names = []
        for i in ticks:
            p = history.points[i]
            names.append((p.commit or "")[:8] or (p.timestamp or "")[:10] or str(i))
        ax.set_xticks(ticks, names, rotation=30, ha="right", fontsize=7, parse_math=False)
        ax.set_ylabel(_clip(f"{history.metric} ({history.unit})" if history.unit
                            else history.metric, 40), parse_math=False)
        ax.set_title(_clip(workload, 100), parse_math=False, loc="left")
        ax.grid(axis="y", color="#dddddd", linewidth=0.5)
        return _to_svg(fig, id_prefix, f"history of {history.metric} for {workload}")


def breakdown_svg(workload: str, breakdown: Breakdown, *, id_prefix: str,
                  max_bars: int = 12) -> str:
    """Horizontal bars of microseconds per pod by plugin/extension point, BASE and HEAD,
    largest first; past ``max_bars`` the rest is summed into one "other" bar."""
    keys = sorted(set(breakdown.base) | set(breakdown.head),
                  key=lambda k: (-max(breakdown.base.get(k, 0.0), breakdown.head.get(k, 0.0)),
                                 k))
    rows = [(k, breakdown.base.get(k, 0.0), breakdown.head.get(k, 0.0))
            for k in keys[:max_bars]]
    rest = keys[max_bars:]
    if rest:
        rows.append((f"other ({len(rest)})", sum(breakdown.base.get(k, 0.0) for k in rest),
                     sum(breakdown.head.get(k, 0.0) for k in rest)))
    with _style(id_prefix):
        labels = [_clip(k, 50) for k, _, _ in rows]
        fig = _figure(10.0, 1.2 + 0.42 * max(len(rows), 1), left=_label_inches(labels),
                      top=0.35, bottom=0.55)
        ax = fig.add_subplot()
        ys = range(len(rows))
        base = [b * 1e6 for _, b, _ in rows]
        head = [h * 1e6 for _, _, h in rows]
        ax.barh([y - 0.2 for y in ys], base, height=0.38, color=BASE_COLOR, label="BASE")
        ax.barh([y + 0.2 for y in ys], head, height=0.38, color=VERDICT_COLORS["regression"],
                label="HEAD")
        for y, b, h in zip(ys, base, head, strict=True):
            if b > 0:
                ax.annotate(fmt_change(h / b), xy=(max(b, h), y + 0.2), xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=7)
        ax.set_yticks(list(ys), labels, parse_math=False, fontsize=8)
        ax.set_ylim(len(rows) - 0.5, -0.6)
        ax.margins(x=0.12)
        ax.set_xlabel("µs of CPU per pod")
        ax.set_title(_clip(workload, 100), parse_math=False, loc="left")
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=2, frameon=False,
                  fontsize=8)
        return _to_svg(fig, id_prefix, f"per-plugin time of {workload}")
