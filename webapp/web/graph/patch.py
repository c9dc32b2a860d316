"""A drawing changed in place after an append, without running `dot` again: when its shape
stays, the nodes whose text, link or colours changed are written again in their old boxes."""

from __future__ import annotations

import html
import re

from ...core.tree import SessionTree
from .dot import Drawing, drawing_shape
from .layout import GraphLayout


def patch_drawing(tree: SessionTree, layout: GraphLayout, before: Drawing,
                  prepared: tuple[dict, dict]) -> Drawing | None:
    """`before` changed where an append changed it, without `dot` (a live session appends often,
    and laying a big drawing out again for each append is the costliest step): when the drawing
    keeps its shape (the same folds and edges, at most one node standing for another: the old
    active leaf folded into the turn above and the new entry took its place), the nodes whose
    text, link or colours changed are written again in their old boxes. None when the shape
    changed, or a new text would not fit its box (then `dot` lays it out again). `prepared`: the
    new drawing's `drawing_specs`."""
    specs, long_urls = prepared
    shape = drawing_shape(tree, layout)
    nodes, segments, more, edges, collapsed, level, clusters, files = shape
    old_nodes, old_segments, old_more, old_edges, old_collapsed, old_level, old_clusters, old_files = before.shape
    if long_urls or clusters or old_clusters or files or old_files or \
            (segments, more, collapsed, level) != (old_segments, old_more, old_collapsed, old_level):
        return None
    gone, new = set(old_nodes) - set(nodes), set(nodes) - set(old_nodes)
    if len(gone) != len(new) or len(new) > 1:
        return None
    was = {new.pop(): gone.pop()} if new else {}
    if {(was.get(a, a), was.get(b, b)) for a, b in edges} != old_edges:
        return None
    svg = before.svg
    for name, attrs in specs.items():
        old = before.specs[was.get(name, name)]
        if old != attrs:
            svg = _patch_node(svg, was.get(name, name), old, attrs)
            if svg is None:
                return None
    return Drawing(svg, specs, shape)


_NODE_START = re.compile(r'<g id="([^"]*)" class="node[^"]*">\n<g><a [^>]*>\n(<(?:polygon|path) [^>]*/>\n)')
_TEXT = re.compile(r'<text x="([^"]*)" y="([^"]*)"[^>]*>[^<]*</text>\n')
_WIDE = frozenset("MWmw@%#&")
_NARROW = frozenset(" .,:;'|!ilIjft()[]")


def _text_width(text: str) -> float:
    """About how wide a line is, in ems (only ever compared with another line of the same node)."""
    return sum(0.32 if c in _NARROW else 0.95 if c in _WIDE or ord(c) > 0x2000 else 0.64 for c in text)


def _svg_text(text: str) -> str:
    return html.escape(text.replace("\\\\", "\\"))  # dot_text doubled backslashes for dot


def _patch_node(svg: str, old_id: str, old: dict, new: dict) -> str | None:
    """The node `old_id` of `svg` written again from `new` in its old box; None when it cannot be
    (another shape or style, more lines, a line wider than the widest before)."""
    if any(old.get(k) != new.get(k) for k in ("shape", "style", "fontsize")):
        return None
    start = svg.find(f'<g id="{old_id}" class="node')
    end = svg.find("</a>\n</g>\n</g>\n", start)
    m = _NODE_START.match(svg, start) if start >= 0 and end >= 0 else None
    if m is None:
        return None
    texts = _TEXT.findall(svg, m.end(), end)
    old_lines, lines = old["label"].split("\n"), new["label"].split("\n")
    if len(texts) != len(old_lines) or len(lines) > len(old_lines) or (
            max(map(_text_width, lines)) > max(map(_text_width, old_lines)) + 0.5):
        return None
    ys = [float(y) for _, y in texts]
    step = ys[1] - ys[0] if len(ys) > 1 else 0.0
    middle = sum(ys) / len(ys)
    if len(lines) != len(ys):
        ys = [middle + (i - (len(lines) - 1) / 2) * step for i in range(len(lines))]
    fill = new.get("fillcolor", "lightgrey") if "filled" in new.get("style", "") else "none"
    outline = re.sub(r' stroke-width="[^"]*"', "", m.group(2))
    outline = re.sub(r' fill="[^"]*"', f' fill="{fill}"', outline, count=1)
    width = new.get("penwidth")
    stroke = f' stroke="{new.get("color", "black")}"' + (f' stroke-width="{width}"' if width and float(width) != 1 else "")
    outline = re.sub(r' stroke="[^"]*"', stroke, outline, count=1)
    size = f'{float(new.get("fontsize", 10)):.2f}'
    color = f' fill="{new["fontcolor"]}"' if "fontcolor" in new else ""
    block = (f'<g id="{new["id"]}" class="node {new["class"]}">\n'
             f'<g><a xlink:href="{html.escape(new["URL"])}" xlink:title="{_svg_text(new["tooltip"])}">\n{outline}'
             + "".join(f'<text x="{texts[0][0]}" y="{y:.1f}" font-size="{size}"{color}>{_svg_text(line)}</text>\n'
                       for line, y in zip(lines, ys)))
    return svg[:start] + block + svg[end:]
