"""The context timeline as an SVG drawn on the server: no script, so it works in the export too.

Points reported by the provider are filled, estimated ones hollow on a dashed line; a compaction
is a drop drawn in its own colour with its summary as the point's `<title>` (the browser shows it
on hover); the model's window is a line across; the path's accumulated cost is a second line
against the right-hand scale. Every point is a link (`link(entry_id)`) to the node it stands for.
"""

from __future__ import annotations

from collections.abc import Callable

from markupsafe import Markup

from ..core.entries import short_id
from ..core.timeline import Point
from ..core.tokens import format_tokens, token_text

WIDTH, HEIGHT = 640, 230
LEFT, RIGHT, TOP, BOTTOM = 52, 56, 14, 34
SUMMARY_CHARS = 600
WINDOW_ON_CHART = 3  # the window is drawn when it is at most this many times the highest point


def _cost(value: float) -> str:
    return f"${value:.4f}" if value < 0.01 else f"${value:.2f}"


def _title(p: Point) -> str:
    head = f"turn {p.turn} · {short_id(p.entry.id)} · {token_text(p.tokens)}"
    if p.cost:
        head += f" · {_cost(p.cost)} so far"
    if p.is_compaction:
        summary = str(p.entry.get("summary") or "")
        cut = summary[:SUMMARY_CHARS] + ("…" if len(summary) > SUMMARY_CHARS else "")
        head = f"compaction {head}\n{cut}"
    return head


def timeline_svg(points: list[Point], window: int | None, link: Callable[[str], str],
                 selected: str | None = None) -> Markup:
    """The chart of `points`; empty markup when there is nothing to draw."""
    if not points:
        return Markup("")
    highest = max(p.tokens.context for p in points)
    # A window far above the context would flatten the line to nothing: then the scale follows
    # the context and a note says where the window is.
    window_on_chart = bool(window) and window <= WINDOW_ON_CHART * max(highest, 1)
    top_tokens = max(highest * 1.1, window if window_on_chart else 0) or 1
    top_cost = max(p.cost for p in points)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / max(len(points) - 1, 1)

    def x(i: int) -> float:
        return LEFT + i * step if len(points) > 1 else LEFT + plot_w / 2

    def y(tokens: float) -> float:
        return TOP + plot_h * (1 - tokens / top_tokens)

    def y_cost(c: float) -> float:
        return TOP + plot_h * (1 - c / top_cost) if top_cost else TOP + plot_h

    out = [Markup('<svg class="timeline" viewBox="0 0 {} {}" width="{}" height="{}" role="img" '
                  'aria-label="context tokens at each turn" xmlns="http://www.w3.org/2000/svg">').format(
        WIDTH, HEIGHT, WIDTH, HEIGHT)]
    out.append(Markup('<line class="tl-axis" x1="{0}" y1="{1}" x2="{0}" y2="{2}"/>'
                      '<line class="tl-axis" x1="{0}" y1="{2}" x2="{3}" y2="{2}"/>').format(
        LEFT, TOP, TOP + plot_h, LEFT + plot_w))
    for frac in (0.5, 1.0):
        value = top_tokens * frac
        out.append(Markup('<text class="tl-label" x="{}" y="{:.1f}" text-anchor="end">{}</text>').format(
            LEFT - 6, y(value) + 4, format_tokens(value)))
    out.append(Markup('<text class="tl-label" x="{}" y="{}" text-anchor="end">0</text>').format(LEFT - 6, TOP + plot_h + 4))
    out.append(Markup('<text class="tl-label" x="{}" y="{}" text-anchor="middle">turn {} … {}</text>').format(
        LEFT + plot_w / 2, HEIGHT - 8, points[0].turn, points[-1].turn))
    if window and not window_on_chart:
        out.append(Markup('<text class="tl-label tl-window-label" x="{}" y="{}">the model\'s window, {}, is far above '
                          '(the highest point uses {}% of it)</text>').format(
            LEFT + 4, TOP + 8, format_tokens(window), round(100 * highest / window)))
    elif window:
        out.append(Markup('<line class="tl-window" x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}"><title>the model\'s '
                          'window: {3} tokens</title></line><text class="tl-label tl-window-label" x="{4}" y="{5:.1f}">'
                          'window {3}</text>').format(LEFT, y(window), LEFT + plot_w, format_tokens(window),
                                                       LEFT + 4, y(window) - 4))
    if top_cost:
        pts = " ".join(f"{x(i):.1f},{y_cost(p.cost):.1f}" for i, p in enumerate(points))
        out.append(Markup('<polyline class="tl-cost" points="{}"><title>cost so far: {}</title></polyline>'
                          '<text class="tl-label tl-cost-label" x="{}" y="{}">{}</text>').format(
            pts, _cost(top_cost), LEFT + plot_w + 4, TOP + 4, _cost(top_cost)))
    for i in range(1, len(points)):
        a, b = points[i - 1], points[i]
        kind = "tl-drop" if b.is_compaction else "tl-line" + ("" if a.reported and b.reported else " tl-est")
        out.append(Markup('<line class="{}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>').format(
            kind, x(i - 1), y(a.tokens.context), x(i), y(b.tokens.context)))
    for i, p in enumerate(points):
        cls = "tl-point " + ("tl-compaction" if p.is_compaction else "tl-reported" if p.reported else "tl-estimated")
        if p.entry.id == selected:
            cls += " tl-selected"
        # data-select: in the app a click selects the node in place (app.js), the tab staying
        out.append(Markup('<a href="{}" class="tl-link" data-entry="{}" data-select="{}" data-tab="context"><circle class="{}" cx="{:.1f}" cy="{:.1f}" '
                          'r="{}"><title>{}</title></circle></a>').format(
            link(p.entry.id), p.entry.id, p.entry.id, cls, x(i), y(p.tokens.context), 6 if p.is_compaction else 4.5, _title(p)))
    out.append(Markup("</svg>"))
    return Markup("").join(out)


def legend() -> Markup:
    return Markup(
        '<p class="tl-legend"><span class="tl-key tl-reported"></span> reported by the provider '
        '<span class="tl-key tl-estimated"></span> estimated <span class="tl-key tl-compaction"></span> compaction '
        '(hover: its summary) <span class="tl-key tl-window"></span> the model\'s window '
        '<span class="tl-key tl-cost"></span> cost so far (right scale)</p>')
