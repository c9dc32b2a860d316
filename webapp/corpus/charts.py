"""Charts drawn on the server as SVG (no JavaScript library): horizontal bars, each a link to
what is behind it."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape

ROW = 22
LABEL_W = 220
BAR_W = 200
VALUE_W = 190
LABEL_CHARS = 29  # of 12 px monospace in LABEL_W
VALUE_CHARS = 25  # in what VALUE_W leaves after the longest bar (the whole text is the row's title)


@dataclass
class Bar:
    label: str
    value: float
    text: str  # the value as people read it
    href: str | None = None
    parts: tuple[tuple[float, str], ...] = ()  # a stacked bar: (value, css class) pieces


def _cut(text: str, chars: int = LABEL_CHARS) -> str:
    """A label that fits: a path keeps its end (the project's own folder), other text its start."""
    if len(text) <= chars:
        return text
    return "…" + text[-(chars - 1):] if text.startswith("/") else text[: chars - 1] + "…"


def bar_chart(bars: list[Bar], title: str, full: float | None = None) -> Markup:
    """An SVG of one bar per row, scaled to the largest value, or to `full` (100 for a
    percentage: a score of 2% draws a sliver, not a whole bar)."""
    if not bars:
        return Markup('<p class="empty">Nothing to show.</p>')
    top = full or max(b.value for b in bars) or 1
    height = ROW * len(bars) + 4
    width = LABEL_W + BAR_W + VALUE_W
    out = [f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'aria-label="{escape(title)}">']
    for i, b in enumerate(bars):
        y = i * ROW + 2
        row = [f'<title>{escape(b.label)}: {escape(b.text)}</title>',
               f'<text class="chart-label" x="{LABEL_W - 8}" y="{y + 15}" text-anchor="end">{escape(_cut(b.label))}</text>']
        x = LABEL_W
        pieces = b.parts or ((b.value, "chart-bar"),)
        for value, css in pieces:
            w = BAR_W * value / top
            if w > 0:
                row.append(f'<rect class="{escape(css)}" x="{x:.1f}" y="{y + 3}" width="{max(w, 1):.1f}" height="{ROW - 6}"/>')
            x += w
        row.append(f'<text class="chart-value" x="{x + 6:.1f}" y="{y + 15}">{escape(_cut(b.text, VALUE_CHARS))}</text>')
        body = "".join(row)
        out.append(f'<a href="{escape(b.href)}">{body}</a>' if b.href else f"<g>{body}</g>")
    out.append("</svg>")
    return Markup("".join(out))
