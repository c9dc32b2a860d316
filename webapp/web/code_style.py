"""The colours of highlighted code: Pygments' "friendly" style with every token colour that reads
below WCAG AA on the code blocks' background darkened until it reads at 4.5:1.

"friendly" keeps the look the pages were drawn with; several of its colours (inserted diff lines
#00A000, output #888, numbers #40A070, entities, prompts) fall to 3.1-4.0:1 on the light grey the
blocks sit on, and no light style Pygments ships passes everywhere. Darkening only those keeps
each token's hue, so a diff still reads green and red.
"""

from __future__ import annotations

import re

from pygments.style import Style
from pygments.styles import get_style_by_name

BASE_STYLE = "friendly"
# The darkest background a code block sits on (Pygments' own for the style: the pages' #f9fafb
# and the panels' tints are lighter), and the ratio every token colour must reach on it.
BLOCK_BACKGROUND = "#f0f0f0"
AA_RATIO = 4.5

_HEX = re.compile(r"#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    digits = hex_colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


def luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG's relative luminance."""
    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def readable(hex_colour: str, background: str = BLOCK_BACKGROUND, ratio: float = AA_RATIO) -> str:
    """`hex_colour`, or the same hue darkened in small steps until it reads at `ratio` on
    `background`."""
    rgb, bg = _rgb(hex_colour), _rgb(background)
    scale = 1.0
    while contrast(rgb, bg) < ratio and scale > 0:
        scale -= 0.02
        rgb = tuple(round(c * scale) for c in _rgb(hex_colour))
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _readable_definition(definition: str) -> str:
    # Only the text colour: "bg:#..." and "border:#..." are not text.
    def fix(match: re.Match) -> str:
        before = definition[:match.start()]
        if before.endswith(("bg:", "border:")):
            return match.group(0)
        return readable(match.group(0))
    return _HEX.sub(fix, definition)


def readable_style() -> type[Style]:
    """BASE_STYLE with each token's text colour made to read at AA on the blocks' background."""
    base = get_style_by_name(BASE_STYLE)
    styles = {token: _readable_definition(definition) for token, definition in base.styles.items()}
    return type("ReadableFriendly", (base,), {"styles": styles})
