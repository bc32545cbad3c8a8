"""Bar charts of results rows as inline SVG geometry: the template draws rects and lines, no script and no chart
library. Each bar is a mean × 100 on a 0–100 axis with its interval as a whisker; its label says mean, interval
and n (a ⚠ marks a small cell), so the chart states what the table states."""

from __future__ import annotations

from typing import Any

SMALL_CELL = 10  # a cell with fewer items is marked: its interval is wide, its mean fragile

# Horizontal bars with interval whiskers, one bar per line under its label. Across: percentages of the chart's
# width (the SVG is as wide as its card and has no viewBox, so the text keeps its size on a phone); down: pixels.

LEFT = 0.5  # % of the width
BAR_WIDTH = 99.0
LINE = 18  # a label line, px
BAR = 12
GAP = 8
HEADING = 24


def _pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def chart(
    groups: list[tuple[str, list[tuple[str, dict[str, Any] | None]]]], *, id: str, title: str, caption: str
) -> dict[str, Any]:
    """SVG geometry for groups of bars: [(group heading, [(bar label, result row or None)])]. Each bar is the
    row's mean (× 100, axis 0–100) with its interval as a whisker; its label says mean, interval and n."""
    y = 0
    shapes: list[dict[str, Any]] = []
    for heading, bars in groups:
        if heading:
            y += HEADING
            shapes.append({"type": "heading", "y": y - 6, "text": heading})
        for label, row in bars:
            y += LINE
            mean = None if row is None else row.get("mean")
            if row is None or mean is None:
                shapes.append({"type": "label", "y": y - 4, "text": f"{label}: no item scored"})
                y += GAP
                continue
            low, high = row.get("ci_low"), row.get("ci_high")
            interval = f" [{_pct(low)}–{_pct(high)}]" if low is not None and high is not None else ""
            small = " ⚠" if row["n"] < SMALL_CELL else ""
            # the label on its line, the numbers on the next (a phone's width holds each), then the bar
            y += LINE
            value = f"{_pct(mean)}{interval}, n={row['n']}{small}"
            bar: dict[str, Any] = {"type": "bar", "label_y": y - LINE - 4, "value_y": y - 4, "y": y, "x": f"{LEFT}%"}
            bar["text"], bar["value"] = label, value
            bar["width"] = f"{BAR_WIDTH * max(0.0, min(1.0, mean)):.2f}%"
            if low is not None and high is not None:
                bar["low"] = f"{LEFT + BAR_WIDTH * max(0.0, low):.2f}%"
                bar["high"] = f"{LEFT + BAR_WIDTH * min(1.0, high):.2f}%"
            bar["mid"] = y + BAR / 2
            bar["bottom"] = y + BAR
            shapes.append(bar)
            y += BAR + GAP
    height = y + 18
    axis = [{"x": f"{LEFT + BAR_WIDTH * tick / 100:.2f}%", "text": str(tick)} for tick in (0, 25, 50, 75, 100)]
    return {
        "id": id,
        "title": title,
        "caption": f"{caption} Bars: the mean × 100 on a 0–100 axis; whiskers: the 95% interval; n on each label; "
        f"⚠ fewer than {SMALL_CELL} items.",
        "height": height,
        "shapes": shapes,
        "axis": axis,
        "axis_y": y + 2,
        "axis_text_y": y + 14,
    }
