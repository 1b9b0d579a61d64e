"""The dashboard's figures, all inline SVG.

* :func:`sparkline_svg`       a tiny trend line for the index (hand-written SVG: numbers only,
                              no text, so nothing to escape but the ``aria-label``)
* :func:`history_svg`         a workload's headline metric over versions with its change
                              points: :func:`reports.render.plots.history_svg` on the report
                              model's ``History``
* :func:`small_multiples_svg` the other metrics, one small panel each, the headline's
                              change points dashed (hand-written SVG like the sparkline, text
                              escaped: a matplotlib figure per workload costs ~0.4 s)
* :func:`coverage_svg`        statement coverage of the catalog and of the compare set per
                              commit (matplotlib, in the style of the history plot)
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from html import escape

from reports.dashboard.coverage import CoveragePoint
from reports.dashboard.model import MetricHistory
from reports.render.model import ChangePoint as PlotChangePoint
from reports.render.model import History, HistoryPoint

__all__ = ["coverage_svg", "history_svg", "panel_svg", "plot_history", "small_multiples_svg",
           "sparkline_svg"]

LINE_COLOR = "#1565c0"
CHANGE_COLOR = "#c62828"
COMPARE_COLOR = "#e08600"


def _finite(history: MetricHistory,
            mark_versions: Collection[str] = ()) -> tuple[list[float], list[int]]:
    """(means of the points with a value, positions among them of the change points and of
    the versions ``mark_versions``)."""
    finite = history.finite_points
    position = {index: k for k, (index, _) in enumerate(finite)}
    means = [p.mean for _, p in finite if p.mean is not None]
    marks = {position[cp.index] for cp in history.change_points if cp.index in position}
    marks |= {k for k, (_, p) in enumerate(finite) if p.version in mark_versions}
    return means, sorted(marks)


def _polyline(values: Sequence[float], marks: Sequence[int], *, left: float, top: float,
              width: float, height: float) -> tuple[str, float, float]:
    """A polyline of ``values`` in the box (left, top, width, height), change points as
    dashed red lines between versions; returns (svg, x and y of the last point)."""
    low, high = min(values), max(values)
    span = high - low
    step = width / (len(values) - 1) if len(values) > 1 else 0.0

    def x(i: float) -> float:
        return left + i * step if len(values) > 1 else left + width / 2

    def y(v: float) -> float:
        if span == 0 or not math.isfinite(span):
            return top + height / 2
        return top + height - (v - low) / span * height

    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
    ticks = "".join(f'<line x1="{x(m - 0.5):.1f}" x2="{x(m - 0.5):.1f}" y1="{top - 2:.1f}" '
                    f'y2="{top + height + 2:.1f}" stroke="{CHANGE_COLOR}" stroke-width="1" '
                    'stroke-dasharray="3,2"/>' for m in marks)
    svg = (f'{ticks}<polyline fill="none" stroke="{LINE_COLOR}" stroke-width="1.3" '
           f'stroke-linejoin="round" points="{points}"/>')
    return svg, x(len(values) - 1), y(values[-1])


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def sparkline_svg(history: MetricHistory, *, width: int = 120, height: int = 26) -> str:
    """The means per version as a polyline, change points as red ticks, the latest value as
    a dot. Empty string when no version has a value."""
    values, marks = _finite(history)
    if not values:
        return ""
    line, lx, ly = _polyline(values, marks, left=3, top=3, width=width - 6, height=height - 6)
    label = (f"trend of {history.metric} over {_plural(len(values), 'version')}"
             + (f", {_plural(len(marks), 'change point')}" if marks else ""))
    return (f'<svg class="spark" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
            f'{line}<circle cx="{lx:.1f}" cy="{ly:.1f}" r="2" fill="{LINE_COLOR}"/></svg>')


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10_000 else f"{value:.4g}"


def panel_svg(history: MetricHistory, *, mark_versions: Collection[str] = (),
              width: int = 300, height: int = 112) -> str:
    """One small multiple: the metric (unit) as title, its range at the left, means per
    version, dashed lines before ``mark_versions`` (the headline's change points), the latest
    value as a dot. Empty when no version has a value."""
    values, marks = _finite(history, mark_versions)
    if not values:
        return ""
    title = f"{history.metric} ({history.unit})" if history.unit else history.metric
    left, top, right, bottom = 52, 24, 10, 10
    line, lx, ly = _polyline(values, marks, left=left, top=top, width=width - left - right,
                             height=height - top - bottom)
    low, high = min(values), max(values)
    label = (f"{history.metric} over {_plural(len(values), 'version')}: {_number(low)} to "
             f"{_number(high)}")
    text = 'font-size="10" fill="#555" text-anchor="end"'
    if high == low:  # a flat line in the middle: one label beside it
        scale = f'<text x="{left - 6}" y="{ly + 4:.1f}" {text}>{escape(_number(low))}</text>'
    else:
        scale = (f'<text x="{left - 6}" y="{top + 4}" {text}>{escape(_number(high))}</text>'
                 f'<text x="{left - 6}" y="{height - bottom}" {text}>'
                 f"{escape(_number(low))}</text>")
    return (f'<svg class="panel" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
            f'<text x="4" y="13" font-size="11" font-weight="600" fill="#222">'
            f"{escape(_clip(title, 46))}</text>"
            f"{scale}"
            f'<line x1="{left - 3}" x2="{left - 3}" y1="{top}" y2="{height - bottom}" '
            'stroke="#ccc" stroke-width="1"/>'
            f'{line}<circle cx="{lx:.1f}" cy="{ly:.1f}" r="2.2" fill="{LINE_COLOR}"/></svg>')


def plot_history(history: MetricHistory) -> History:
    """``history`` as the report model's ``History`` (points with a value only; change point
    indices among those)."""
    finite = history.finite_points
    position = {index: k for k, (index, _) in enumerate(finite)}
    points = tuple(HistoryPoint(value=p.mean if p.mean is not None else math.nan,
                                commit=p.commit,
                                timestamp=p.timestamp.isoformat() if p.timestamp else None)
                   for _, p in finite)
    cps = tuple(PlotChangePoint(index=position[cp.index],
                                commit=history.points[cp.index].commit,
                                before=cp.before_mean, after=cp.after_mean,
                                change=cp.magnitude if math.isfinite(cp.magnitude) else None)
                for cp in history.change_points if cp.index in position)
    return History(metric=history.metric, unit=history.unit, points=points, change_points=cps)


def history_svg(name: str, history: MetricHistory, *, id_prefix: str) -> str:
    from reports.render import plots  # matplotlib only when a figure is drawn

    return plots.history_svg(name, plot_history(history), id_prefix=id_prefix)


def small_multiples_svg(histories: Sequence[MetricHistory], *,
                        mark_versions: Collection[str] = ()) -> str:
    """A panel per metric with a value (:func:`panel_svg`), wrapped in a flex box; empty
    string when no metric has a value."""
    panels = [svg for svg in (panel_svg(h, mark_versions=mark_versions) for h in histories)
              if svg]
    return f'<div class="multiples">{"".join(panels)}</div>' if panels else ""


def coverage_svg(points: Sequence[CoveragePoint], *, id_prefix: str) -> str:
    """The catalog's and the compare set's coverage of scheduler_core (statements outside
    error-raising branches, %) per commit in the given (git) order; empty string with fewer
    than two commits."""
    if len(points) < 2:
        return ""
    from reports.render import plots  # matplotlib only when a figure is drawn

    xs = range(len(points))
    with plots._style(id_prefix):
        fig = plots._figure(10.0, 3.0, left=0.9, right=1.9, top=0.35, bottom=0.75)
        ax = fig.add_subplot()
        for values, color, name in (
                ([p.catalog for p in points], LINE_COLOR, "catalog"),
                ([p.compare for p in points], COMPARE_COLOR, "compare set")):
            ax.plot(xs, [math.nan if v is None else v for v in values], marker="o",
                    markersize=3, linewidth=1.2, color=color, label=name, zorder=3)
        step = max(1, math.ceil(len(points) / 10))
        ticks = list(range(0, len(points), step))
        ax.set_xticks(ticks, [points[i].commit[:8] for i in ticks], rotation=30, ha="right",
                      fontsize=7, parse_math=False)
        ax.set_ylabel("covered (%)", parse_math=False)
        ax.set_title("scheduler_core statements outside error-raising branches executed",
                     parse_math=False, loc="left")
        ax.grid(axis="y", color="#dddddd", linewidth=0.5)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return plots._to_svg(fig, id_prefix, "statement coverage of the catalog and the "
                             f"compare set over {len(points)} commits")
