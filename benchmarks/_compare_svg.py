"""A log-log line plot written as SVG text by hand (no plotting library).

:func:`log_log_plot` takes series of ``(x, y)`` points (both positive) and
returns a complete SVG document: decade grid lines and tick labels on both
axes, one polyline with point markers per series, a legend, a title and the
axis labels.  Series whose name starts with one of ``dashed_prefixes`` are
drawn dashed (``compare.py`` dashes the asyncio side).
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 760, 460
LEFT, RIGHT, TOP, BOTTOM = 70, 190, 40, 55
PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#17becf",
    "#bcbd22",
)


def _decades(low: float, high: float) -> tuple[int, int]:
    """The smallest range of whole powers of ten holding ``low .. high``."""
    first = math.floor(math.log10(low))
    last = math.ceil(math.log10(high))
    if last == first:
        last += 1
    return first, last


def _tick_label(exponent: int) -> str:
    value = 10.0**exponent
    if exponent >= 0:
        return f"{int(value):,}"
    return f"{value:g}"


def log_log_plot(
    series: dict[str, list[tuple[float, float]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    dashed_prefixes: tuple[str, ...] = (),
    note: str = "",
    colours: dict[str, str] | None = None,
) -> str:
    """An SVG document plotting every series on log-log axes.

    Args:
        series: name -> points ``(x, y)``; points with a non-positive
            coordinate are left out (a log axis cannot show them).
        title / x_label / y_label: the texts drawn on the plot.
        dashed_prefixes: series whose name starts with one of these are dashed.
        note: a line of text under the legend (what the dashes mean, say).
        colours: series name -> stroke colour; the others take the palette in turn.

    Returns:
        The SVG text (UTF-8, with an XML declaration).

    Raises:
        ValueError: no series has a plottable point.
    """
    kept = {
        name: sorted((x, y) for x, y in points if x > 0 and y > 0)
        for name, points in series.items()
    }
    kept = {name: points for name, points in kept.items() if points}
    if not kept:
        raise ValueError("nothing to plot: no series has a positive point")
    xs = [x for points in kept.values() for x, _ in points]
    ys = [y for points in kept.values() for _, y in points]
    x_first, x_last = _decades(min(xs), max(xs))
    y_first, y_last = _decades(min(ys), max(ys))
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (math.log10(x) - x_first) / (x_last - x_first) * plot_w

    def py(y: float) -> float:
        return TOP + plot_h - (math.log10(y) - y_first) / (y_last - y_first) * plot_h

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{TOP - 16}" text-anchor="middle" '
        f'font-size="14">{escape(title)}</text>',
    ]
    for exponent in range(x_first, x_last + 1):
        x = px(10.0**exponent)
        out.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + plot_h}" stroke="#ddd"/>'
        )
        out.append(
            f'<text x="{x:.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">'
            f"{escape(_tick_label(exponent))}</text>"
        )
    for exponent in range(y_first, y_last + 1):
        y = py(10.0**exponent)
        out.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" stroke="#ddd"/>'
        )
        out.append(
            f'<text x="{LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">'
            f"{escape(_tick_label(exponent))}</text>"
        )
    out.append(
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" '
        'fill="none" stroke="black"/>'
    )
    out.append(
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 14}" text-anchor="middle">'
        f"{escape(x_label)}</text>"
    )
    out.append(
        f'<text x="18" y="{TOP + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 18 {TOP + plot_h / 2:.1f})">{escape(y_label)}</text>'
    )
    chosen = colours or {}
    free = iter(c for c in PALETTE * 2 if c not in chosen.values())
    for index, (name, points) in enumerate(kept.items()):
        colour = chosen.get(name) or next(free, "#000000")
        dash = ' stroke-dasharray="6 4"' if name.startswith(dashed_prefixes) else ""
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
        out.append(f'<g class="series" data-name="{escape(name, {chr(34): "&quot;"})}">')
        out.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        out.extend(
            f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>' for x, y in points
        )
        legend_y = TOP + 10 + index * 20
        legend_x = LEFT + plot_w + 14
        out.append(
            f'<line x1="{legend_x}" y1="{legend_y}" x2="{legend_x + 24}" y2="{legend_y}" '
            f'stroke="{colour}" stroke-width="2"{dash}/>'
        )
        out.append(f'<text x="{legend_x + 30}" y="{legend_y + 4}">{escape(name)}</text>')
        out.append("</g>")
    if note:
        out.append(
            f'<text x="{LEFT + plot_w + 14}" y="{TOP + 20 + len(kept) * 20}" font-size="11" '
            f'fill="#555">{escape(note)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
