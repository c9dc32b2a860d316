"""What the three users' walks read besides text: the contrast of every control a person may press
(WCAG AA), and a screenshot of each step at 1280x720 (in $WALK_SHOTS when set, for a person to
open and read; else in the test's own folder)."""

from __future__ import annotations

import os
from pathlib import Path

# Every visible button-like control below WCAG AA: its text against the first opaque background
# behind it (4.5:1, or 3:1 for large text: 24 px, or 18.66 px bold). Disabled controls are exempt,
# as WCAG exempts them.
LOW_CONTRAST = """(selector) => {
  const rgb = (s) => { const m = s.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(',').map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const behind = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
    if (c && c.a > 0.5) return c; } return {r: 255, g: 255, b: 255, a: 1}; };
  const out = [];
  for (const el of document.querySelectorAll(selector)) {
    const box = el.getBoundingClientRect(), style = getComputedStyle(el);
    if (!box.width || !box.height || style.visibility === 'hidden' || el.disabled || el.classList.contains('disabled')) continue;
    const fg = rgb(style.color), bg = behind(el);
    const opacity = [...function* () { for (let e = el; e; e = e.parentElement) yield Number(getComputedStyle(e).opacity); }()]
      .reduce((a, b) => a * b, 1);
    const mix = (c) => ({r: c.r * opacity + bg.r * (1 - opacity), g: c.g * opacity + bg.g * (1 - opacity), b: c.b * opacity + bg.b * (1 - opacity)});
    const a = lum(mix(fg)), b = lum(bg);
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < need) out.push(`${el.textContent.trim().slice(0, 40)}: ${ratio.toFixed(2)}:1`);
  }
  return out;
}"""

CONTROLS = "button, a.button, .button, input[type=submit]"


def low_contrast(page, selector: str = CONTROLS) -> list[str]:
    """The controls of the page below AA, each as "text: ratio" (none: an empty list)."""
    return page.evaluate(LOW_CONTRAST, selector)


class Shots:
    """Screenshots of a walk, numbered in the order taken, at the page's own size."""

    def __init__(self, folder: Path, walk: str):
        self.folder = Path(os.environ.get("WALK_SHOTS") or folder) / walk
        self.folder.mkdir(parents=True, exist_ok=True)
        self.n = 0

    def __call__(self, page, name: str, full_page: bool = False) -> Path:
        self.n += 1
        path = self.folder / f"{self.n:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path
