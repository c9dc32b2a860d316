"""The drawing reads at "Fit": its direction (chosen or toggled, kept in the URL), text never
smaller than 11 px, and the first view on the active leaf, whole and clear of the minimap."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

RICH = "019cadd3-8025-7970-85d9-5954058b4714"
SMALL = "019cb492-4a02-7f80-bd7c-9ec7081ab44d"

# The smallest text on screen (computed size times the drawing's scale), and the text boxes.
TEXT_SIZES = """() => [...document.querySelectorAll('#graph .graph-svg svg text')].map(t => ({
  px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a,
  h: t.getBoundingClientRect().height}))"""
BOXES = """() => {
  const r = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const mm = document.querySelector('#minimap');
  return {pane: r(document.querySelector('#graph')), leaf: r(document.querySelector('#graph g.active-leaf')),
          minimap: mm && !mm.hidden ? r(mm) : null};
}"""
ASPECT = "() => { const b = document.querySelector('#graph svg').getBBox(); return b.width / b.height; }"


@pytest.fixture
def small_page(page):
    page.set_viewport_size({"width": 1280, "height": 720})
    return page


def open_graph(page, url):
    page.goto(url)
    expect(page.locator("#graph svg")).to_be_visible()
    # app.js has taken the drawing over (and set its first view).
    page.wait_for_function("() => document.querySelector('#graph svg').getAttribute('preserveAspectRatio')")


def assert_legible(page):
    texts = page.evaluate(TEXT_SIZES)
    assert texts
    assert round(min(t["px"] for t in texts), 2) >= 11
    assert min(t["h"] for t in texts) >= 11


def inside(box, pane):
    return box[0] >= pane[0] and box[1] >= pane[1] and box[2] <= pane[2] and box[3] <= pane[3]


def apart(a, b):
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


@pytest.mark.parametrize("rankdir", ["", "TB", "LR"])
def test_fit_never_zooms_out_below_legible_text_on_the_rich_sample(live_server, small_page, rankdir):
    page = small_page
    open_graph(page, live_server.url + live_server.rel(RICH) + "?collapse=auto" + (f"&dir={rankdir}" if rankdir else ""))  # by turns
    assert_legible(page)  # the first view
    for _ in range(6):
        page.locator('[data-action="zoom-out"]').click()
    texts = page.evaluate(TEXT_SIZES)
    assert min(t["px"] for t in texts) < 11  # zooming out by hand still may
    page.locator('[data-action="fit"]').click()
    assert_legible(page)
    # The whole tree does not fit at that size: Fit shows the active leaf, the minimap the rest.
    boxes = page.evaluate(BOXES)
    assert boxes["minimap"] is not None
    assert inside(boxes["leaf"], boxes["pane"])


def test_fit_shows_a_small_drawing_whole_and_legible(live_server, small_page):
    page = small_page
    open_graph(page, live_server.url + live_server.rel(SMALL) + "?collapse=on")
    page.locator('[data-action="fit"]').click()
    assert_legible(page)
    pane = page.evaluate(BOXES)["pane"]
    nodes = page.evaluate("() => [...document.querySelectorAll('#graph g.node')].map(g => { const b = g.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })")
    assert len(nodes) > 3 and all(inside(n, pane) for n in nodes)
    expect(page.locator("#minimap")).to_be_hidden()


@pytest.mark.parametrize("rankdir", ["TB", "LR"])
@pytest.mark.parametrize("size", [(1280, 720), (1000, 620)])
def test_the_first_view_shows_the_active_leaf_whole_and_not_under_the_minimap(live_server, page, rankdir, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_graph(page, live_server.url + live_server.rel(RICH) + f"?collapse=auto&dir={rankdir}")  # by turns
    boxes = page.evaluate(BOXES)
    assert boxes["minimap"] is not None
    assert inside(boxes["leaf"], boxes["pane"])
    assert apart(boxes["leaf"], boxes["minimap"])
    page.locator('[data-action="fit"]').click()
    boxes = page.evaluate(BOXES)
    assert inside(boxes["leaf"], boxes["pane"]) and apart(boxes["leaf"], boxes["minimap"])


def test_the_direction_toggle_redraws_and_stays_in_the_url(live_server, small_page):
    page = small_page
    open_graph(page, live_server.url + live_server.rel(RICH) + "?collapse=auto")  # by turns
    toggle = page.locator("[data-direction]")
    expect(toggle).to_have_text("↓ top-down")  # a long thin tree: chosen top-down
    assert page.evaluate(ASPECT) < 1
    toggle.click()
    expect(page).to_have_url(re.compile(r"[?&]dir=LR"))
    expect(page.locator("[data-direction]")).to_have_text("→ left-right")
    open_graph(page, page.url)
    assert page.evaluate(ASPECT) > 1
    page.reload()
    open_graph(page, page.url)
    expect(page.locator("[data-direction]")).to_have_text("→ left-right")
    assert page.evaluate(ASPECT) > 1
    assert_legible(page)
    # Selecting a node keeps the direction in the address, and the toggle brings top-down back.
    page.locator("#graph").focus()
    page.keyboard.press("ArrowUp")
    expect(page).to_have_url(re.compile(r"node=.*"))
    expect(page).to_have_url(re.compile(r"[?&]dir=LR"))
    page.locator("[data-direction]").click()
    expect(page).to_have_url(re.compile(r"[?&]dir=TB"))
    open_graph(page, page.url)
    assert page.evaluate(ASPECT) < 1


def test_the_active_leaf_in_the_corner_of_a_big_drawing_is_moved_out_from_under_the_minimap(
        live_server, sessions_root, small_page):
    """A long path, then many tries side by side: the active leaf (the last try) sits in the
    bottom-right corner of the drawing, where the minimap is."""
    from tests.conftest import Builder

    b = Builder()
    for i in range(30):
        b.user(f"question {i}")
        b.assistant(f"answer {i}")
    fork = b.user("which way?")
    for i in range(8):
        b.assistant(f"try number {i} of the same question", parent=fork)
    folder = sessions_root / "--home-ana-corner--"
    folder.mkdir()
    b.write(folder / "corner.jsonl")
    page = small_page
    open_graph(page, live_server.url + "/s/--home-ana-corner--/corner.jsonl?collapse=auto&dir=TB")  # by turns
    expect(page.locator("#graph g.active-leaf")).to_contain_text("try number 7")
    boxes = page.evaluate(BOXES)
    assert boxes["minimap"] is not None
    assert inside(boxes["leaf"], boxes["pane"])
    assert apart(boxes["leaf"], boxes["minimap"])
