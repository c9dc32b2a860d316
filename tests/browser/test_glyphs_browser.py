"""Every character of a graph label draws with the fonts `make` installs: an emoji in a label
(👍 in the pi fixture) is drawn in colour with the graph's own font stack, not as an empty box."""

from __future__ import annotations

import shutil
from pathlib import Path

from playwright.sync_api import expect

PI = Path(__file__).resolve().parents[1] / "fixtures" / "pi" / "pi-mono_before-compaction.jsonl"

# Draw the label's text with the font its SVG <text> is given, on a canvas: a colour emoji font
# leaves coloured pixels; a missing glyph is an outlined box in the text's one colour.
_COLOURED_PIXELS = """(text) => {
  const t = [...document.querySelectorAll('#graph g.node text')].find((x) => x.textContent.includes(text));
  if (!t) return -1;
  const style = getComputedStyle(t);
  const canvas = document.createElement('canvas');
  canvas.width = 64; canvas.height = 64;
  const ctx = canvas.getContext('2d');
  ctx.font = `40px ${style.fontFamily}`;
  ctx.fillStyle = '#000';
  ctx.fillText(text, 4, 48);
  const px = ctx.getImageData(0, 0, 64, 64).data;
  let coloured = 0;
  for (let i = 0; i < px.length; i += 4) {
    const [r, g, b, a] = [px[i], px[i + 1], px[i + 2], px[i + 3]];
    if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 40) coloured++;
  }
  return coloured;
}"""


def test_an_emoji_in_a_label_draws_in_colour_with_the_graph_font_stack(live_server, page, console):
    folder = live_server.root / "--pi-mono--"
    folder.mkdir()
    shutil.copy(PI, folder / PI.name)
    page.goto(live_server.url + live_server.rel("pi-mono_before"))
    expect(page.locator("#graph g.node text", has_text="👍")).to_have_count(1)
    assert page.evaluate(_COLOURED_PIXELS, "👍") > 50
