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


# Every piece of visible text below WCAG AA: each element holding text against what lies behind it
# (its ancestors' backgrounds laid over one another, half-transparent ones blended), its own
# opacity and colour's alpha blended in. Text in closed <details>, in SVG (drawn by dot, checked
# apart), in disabled controls and decoration marked aria-hidden (the text tree's ├─ lines) is
# left out, as WCAG leaves disabled controls and decoration out.
LOW_CONTRAST_TEXT = """(root) => {
  const rgb = (s) => { const m = s.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(',').map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const over = (top, under) => ({r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a),
    b: top.b * top.a + under.b * (1 - top.a), a: 1});
  const behind = (el) => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; } }
    return layers.reduceRight((acc, c) => over(c, acc), {r: 255, g: 255, b: 255, a: 1}); };
  const out = [], seen = new Set();
  const walker = document.createTreeWalker(document.querySelector(root) || document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || seen.has(el)) continue;
    seen.add(el);
    const closed = el.closest('details:not([open])');
    if (el.closest('svg') || (closed && !el.closest('summary')) || el.closest('[disabled], .disabled, [aria-hidden=true]')) continue;
    const box = el.getBoundingClientRect(), style = getComputedStyle(el);
    if (!box.width || !box.height || style.visibility === 'hidden') continue;
    let opacity = 1; for (let e = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
    const bg = behind(el), text = rgb(style.color);
    const fg = over({...text, a: text.a * opacity}, bg);
    const a = lum(fg), b = lum(bg), ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
    if (ratio < (size >= 24 || (bold && size >= 18.66) ? 3 : 4.5))
      out.push(`${n.textContent.trim().slice(0, 40)} (${el.tagName.toLowerCase()}.${[...el.classList].join('.')}): ${ratio.toFixed(2)}:1`);
  }
  return out;
}"""

# Every visible text field whose edge stands less than 3:1 from what surrounds it (WCAG's 1.4.11
# for the parts of a control a person needs to find it): its border, or its own fill if it has one.
FAINT_FIELDS = """() => {
  const rgb = (s) => { const m = s.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(',').map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const ratio = (x, y) => { const a = lum(x), b = lum(y); return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
  const behind = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
    if (c && c.a > 0.5) return c; } return {r: 255, g: 255, b: 255, a: 1}; };
  const out = [];
  for (const el of document.querySelectorAll('input[type=text], input[type=search], input:not([type]), input[type=password], textarea')) {
    const box = el.getBoundingClientRect(), s = getComputedStyle(el);
    const closed = el.closest('details:not([open])');
    if (!box.width || !box.height || s.visibility === 'hidden' || el.disabled || closed) continue;
    const around = behind(el.parentElement), fill = rgb(s.backgroundColor);
    const edge = parseFloat(s.borderTopWidth) > 0 && s.borderTopStyle !== 'none' ? ratio(rgb(s.borderTopColor), around) : 1;
    const best = Math.max(edge, fill && fill.a > 0.5 ? ratio(fill, around) : 1);
    if (best < 3) out.push(`${el.name || el.id || el.getAttribute('aria-label')}: ${best.toFixed(2)}:1`);
  }
  return out;
}"""


def low_contrast_text(page, root: str = "body") -> list[str]:
    """The text under `root` below AA, each as "text (element): ratio" (none: an empty list)."""
    return page.evaluate(LOW_CONTRAST_TEXT, root)


def faint_fields(page) -> list[str]:
    """The text fields whose edge is below 3:1 against their surroundings, each as "name: ratio"."""
    return page.evaluate(FAINT_FIELDS)


# The words the pages add to the drawing (the "summarized by" badges, the bands' labels) below AA:
# each text's fill, faded by every group's opacity above it, against white blended with the
# band's tint where the text lies on a band.
FAINT_GRAPH_WORDS = """(selector) => {
  const rgb = (s) => { const m = s.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(',').map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const over = (t, u) => ({r: t.r * t.a + u.r * (1 - t.a), g: t.g * t.a + u.g * (1 - t.a), b: t.b * t.a + u.b * (1 - t.a), a: 1});
  const faded = (el) => { let o = 1; for (let e = el; e && e.tagName !== 'svg'; e = e.parentElement) o *= Number(getComputedStyle(e).opacity); return o; };
  const out = [];
  for (const t of document.querySelectorAll(selector)) {
    if (!t.getBoundingClientRect().width) continue;
    let bg = {r: 255, g: 255, b: 255, a: 1};
    const tint = t.parentElement.querySelector(':scope > rect.band-bg');
    if (tint) { const s = getComputedStyle(tint), f = rgb(s.fill);
      if (f) bg = over({...f, a: f.a * Number(s.fillOpacity) * faded(tint)}, bg); }
    const fill = rgb(getComputedStyle(t).fill), fg = over({...fill, a: fill.a * faded(t)}, bg);
    const a = lum(fg), b = lum(bg), ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) out.push(`${t.textContent.slice(0, 40)}: ${ratio.toFixed(2)}:1`);
  }
  return out;
}"""


def faint_graph_words(page, selector: str = "#graph text.replaced-by, #graph g.bands text") -> list[str]:
    """The badges and band labels on the drawing below AA, each as "text: ratio"."""
    return page.evaluate(FAINT_GRAPH_WORDS, selector)
