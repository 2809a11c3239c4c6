"""Tiny server-rendered SVG charts: bars over time and a share bar.

No chart library and no JavaScript: each chart is an `<svg role="img">` with a `<title>`
and `<desc>` (what a screen reader says), a `<title>` per bar (the tooltip), and a
viewBox so it scales down to a phone's width. Every label passes through `escape`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import date, timedelta

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

_ids = itertools.count()
Point = tuple[str, float]


def fill_days(points: Sequence[tuple[date, int]]) -> list[Point]:
    """(day, n) rows with their missing days added as 0, labelled YYYY-MM-DD."""
    if not points:
        return []
    by_day = {d: n for d, n in points}
    first, last = points[0][0], points[-1][0]
    span = (last - first).days
    days = (first + timedelta(days=i) for i in range(span + 1))
    return [(d.isoformat(), float(by_day.get(d, 0))) for d in days]


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:.1f}"


def bar_chart(
    points: Sequence[Point], *, title: str, unit: str = "", width: int = 600, height: int = 150
) -> SafeString:
    """Vertical bars, one per point, the first and last labels under the axis."""
    uid = f"chart-{next(_ids)}"
    top = max((v for _, v in points), default=0.0) or 1.0
    pad, base = 4, height - 18
    step = (width - 2 * pad) / max(1, len(points))
    bars = []
    for i, (label, value) in enumerate(points):
        h = (base - 14) * value / top
        x = pad + i * step
        tip = escape(f"{label}: {_number(value)} {unit}".strip())
        bars.append(
            f'<rect class="bar" x="{x + step * 0.1:.1f}" y="{base - h:.1f}"'
            f' width="{max(1.0, step * 0.8):.1f}" height="{h:.1f}"><title>{tip}</title></rect>'
        )
    axis = ""
    if points:
        first, last = escape(points[0][0]), escape(points[-1][0])
        axis = (
            f'<text class="axis" x="{pad}" y="{height - 4}">{first}</text>'
            f'<text class="axis" x="{width - pad}" y="{height - 4}" text-anchor="end">{last}</text>'
        )
    total = sum(v for _, v in points)
    desc = escape(
        f"{len(points)} bars, total {_number(total)} {unit}, highest {_number(top)}".strip()
        if points
        else "no data yet"
    )
    return mark_safe(  # noqa: S308 - every label above is escaped
        f'<svg class="chart" role="img" viewBox="0 0 {width} {height}"'
        f' aria-labelledby="{uid}-t {uid}-d">'
        f'<title id="{uid}-t">{escape(title)}</title><desc id="{uid}-d">{desc}</desc>'
        f'<text class="peak" x="{pad}" y="11">max {_number(top)}</text>'
        f'<line class="base" x1="0" x2="{width}" y1="{base}" y2="{base}"/>'
        f"{''.join(bars)}{axis}</svg>"
    )


def share_bar(
    parts: Sequence[tuple[str, int]], *, title: str, width: int = 600, height: int = 28
) -> SafeString:
    """One horizontal bar split into each part's share; segment class `seg-<label>`."""
    uid = f"chart-{next(_ids)}"
    total = sum(n for _, n in parts) or 1
    x, segs = 0.0, []
    for label, n in parts:
        w = width * n / total
        tip = escape(f"{label}: {n:,} ({100 * n / total:.0f} %)")
        segs.append(
            f'<rect class="seg seg-{escape(label)}" x="{x:.1f}" y="0" width="{w:.1f}"'
            f' height="{height}"><title>{tip}</title></rect>'
        )
        x += w
    desc = escape(", ".join(f"{label} {n:,}" for label, n in parts) or "no data yet")
    return mark_safe(  # noqa: S308 - every label above is escaped
        f'<svg class="chart share" role="img" viewBox="0 0 {width} {height}"'
        f' aria-labelledby="{uid}-t {uid}-d" preserveAspectRatio="none">'
        f'<title id="{uid}-t">{escape(title)}</title><desc id="{uid}-d">{desc}</desc>'
        f"{''.join(segs)}</svg>"
    )
