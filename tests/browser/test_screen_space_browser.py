"""The graph pane's room at 1280x720 as a person uses it: the text tree beside or instead of the
drawing (links, keys, folding), the legend folded to one line, the graph/panel split that stays
put across tabs and is dragged, and the minimap that covers no node. With scripts off the
export's sidebar reads as the same text tree."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import htmx_settled
from tests.browser.walk_helpers import low_contrast_text
from webapp.core.session import Session
from webapp.web.app import export_session

RICH = "019cadd3-8025-7970-85d9-5954058b4714"  # 101 entries, 4 leaves
LARGE = "019c6579-1ae3-78f7-9da1-494c73cf256d"  # 3,000 entries, 7 leaves
TABS = ["Transcript", "Search", "Context", "Branches", "Summaries", "Problems", "Lost", "Node"]


def open_page(page, live_server, name, query=""):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(name) + query)
    expect(page.locator("#panel .tabs")).to_be_visible()


def tree_of(live_server, name):
    return Session.open(live_server.root / live_server.rel(name)[3:]).tree


def focused(page) -> str:
    return page.evaluate("() => document.activeElement.dataset.key || ''")


def test_the_text_view_selects_a_node_by_keys_and_folds_a_branch(live_server, page):
    open_page(page, live_server, RICH, "?view=text")
    expect(page.locator("#graph")).to_be_hidden()
    lines = page.locator("#text-tree .tt-line")
    expect(lines.first).to_be_visible()
    assert low_contrast_text(page, "#text-tree") == []  # (the active path's dots among them)
    tree = tree_of(live_server, RICH)
    active = tree.conversation_leaf(tree.active_leaf)
    expect(page.locator("#text-tree .tt-line.selected")).to_have_attribute("data-select", active)
    page.locator("#text-tree .tt-line.selected").focus()
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # the focus shows
    page.keyboard.press("Home")
    assert focused(page) == lines.first.get_attribute("data-key")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    third = lines.nth(2)
    assert focused(page) == third.get_attribute("data-key")
    page.keyboard.press("Enter")  # selects it: its panel, the address keeps the view
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", third.get_attribute("data-select"))
    expect(third).to_have_class(re.compile(r"\bselected\b"))
    expect(page).to_have_url(re.compile(r"view=text"))
    assert "node=" in page.url
    # ← on a branch's first line folds the branch: its lines hide, and → brings them back
    head = page.locator('#text-tree .tt-line[aria-expanded]').nth(1)
    end, start = int(head.get_attribute("data-end")), lines.evaluate_all(
        "(ls, key) => ls.findIndex(l => l.dataset.key === key)", head.get_attribute("data-key"))
    assert end > start
    head.focus()
    page.keyboard.press("ArrowLeft")
    expect(head).to_have_attribute("aria-expanded", "false")
    for i in range(start + 1, end + 1):
        expect(lines.nth(i)).to_be_hidden()
    expect(head).to_be_visible()  # (itself still shown)
    page.keyboard.press("ArrowDown")  # the folded lines are skipped
    assert focused(page) != lines.nth(start + 1).get_attribute("data-key")
    head.focus()
    page.keyboard.press("ArrowRight")
    expect(head).to_have_attribute("aria-expanded", "true")
    expect(lines.nth(end)).to_be_visible()


def test_the_toggle_shows_text_graph_or_both_and_the_address_keeps_it(live_server, page):
    open_page(page, live_server, LARGE)
    expect(page.locator("#text-tree")).to_have_count(0)
    page.locator(".view-toggle a", has_text="Both").click()
    expect(page.locator("#text-tree")).to_be_visible()
    expect(page.locator("#graph svg")).to_be_visible()
    assert "view=both" in page.url
    # a line selects its node: the panel and the drawing follow, the view stays
    line = page.locator("#text-tree .tt-line[data-select]").nth(3)
    line.click()
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", line.get_attribute("data-select"))
    page.reload()
    expect(page.locator("#text-tree .tt-line.selected")).to_have_attribute("data-select", line.get_attribute("data-select"))
    page.locator(".view-toggle a", has_text="Text").click()
    expect(page.locator("#graph")).to_be_hidden()
    expect(page.locator("#text-tree .tt-line.selected")).to_have_attribute("data-select", line.get_attribute("data-select"))
    page.locator(".view-toggle a", has_text="Graph").click()
    expect(page.locator("#text-tree")).to_have_count(0)
    assert "view=" not in page.url


def test_the_text_tree_works_with_scripts_off(live_server, browser):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 720})
    page = context.new_page()
    live_server.login(page)
    page.goto(live_server.url + live_server.rel(RICH) + "?view=text")
    line = page.locator("#text-tree .tt-line[data-select]").nth(4)
    entry = line.get_attribute("data-select")
    line.click()  # a plain link: the page for that node, in the text view
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", entry)
    expect(page.locator("#text-tree .tt-line.selected")).to_have_attribute("data-select", entry)
    context.close()


EXPORT_TEXT = """() => [...document.querySelectorAll('#text-tree .tt-line')].map(a => {
  const r = a.getBoundingClientRect();
  return {px: parseFloat(getComputedStyle(a).fontSize), shown: r.width > 0 && r.height > 0, href: a.getAttribute('href'),
          text: a.innerText}; })"""


@pytest.mark.parametrize("name", [RICH, LARGE])
def test_the_exports_text_tree_reads_with_scripts_off(live_server, browser, tmp_path, name):
    path = live_server.root / live_server.rel(name)[3:]
    out = tmp_path / "export.html"
    out.write_text(export_session(path))
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.goto(out.as_uri())
    lines = page.evaluate(EXPORT_TEXT)
    tree = Session.open(path).tree
    assert len(lines) > len(tree.leaves())
    assert all(x["shown"] and x["px"] >= 11 for x in lines)
    assert sum("leaf" in x["text"] for x in lines) >= 2  # the branches' tips are marked
    assert sum("● active leaf" in x["text"] for x in lines) == 1
    target = page.locator("#text-tree .tt-line").nth(2)
    target.click()  # a link to its entry in the transcript
    assert page.evaluate("() => document.querySelector(':target') !== null")
    context.close()


BARS = """() => { const t = document.querySelector('.graph-toolbar').getBoundingClientRect();
  const g = document.querySelector('#graph').getBoundingClientRect();
  return {toolbar: t.bottom - t.top, graphTop: g.top, paneWidth: document.querySelector('.graph-pane').getBoundingClientRect().width}; }"""


# What in the panel reaches past its right edge, where no scrolling box of its own holds it (a
# long inline path or test id in a summary's list ran off the page, 1280 px wide).
PAST_THE_PANEL = """() => {
  const panel = document.querySelector('#panel'), edge = panel.getBoundingClientRect().right + 1;
  const held = (el) => { for (let e = el.parentElement; e && e !== panel; e = e.parentElement) {
    if (getComputedStyle(e).overflowX !== 'visible') return true; } return false; };
  return [...panel.querySelectorAll('*')].filter(el => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.right > edge && !held(el);
  }).slice(0, 3).map(el => el.tagName.toLowerCase() + ': ' + (el.textContent || '').slice(0, 60));
}"""


@pytest.mark.parametrize("name", [RICH, LARGE])
def test_toolbar_and_legend_take_one_strip_and_the_split_stays_put_in_every_tab(live_server, page, name):
    """The toolbar and the legend take one strip, the split stays put in every tab, and in none of
    them does anything run past the panel's edge."""
    open_page(page, live_server, name)
    first = page.evaluate(BARS)
    assert first["toolbar"] <= 60, first
    legend = page.locator(".legend-box")
    expect(legend.locator(".lg.user")).to_be_hidden()  # folded to its one line
    legend.locator("summary").click()
    expect(legend.locator(".lg.user")).to_be_visible()
    assert low_contrast_text(page, ".legend-box") == []
    for tab in TABS:
        page.locator("#panel .tabs a", has_text=tab).click()
        expect(page.locator("#panel .tabs a.current")).to_have_text(tab)
        now = page.evaluate(BARS)
        assert now["toolbar"] <= 60 and now["graphTop"] == first["graphTop"], (tab, now)
        assert now["paneWidth"] == first["paneWidth"], (tab, now)
        htmx_settled(page)
        assert page.evaluate(PAST_THE_PANEL) == [], tab
        expect(legend.locator(".lg.user")).to_be_visible()  # still open: the toolbar is not swapped
    legend.locator("summary").click()
    expect(legend.locator(".lg.user")).to_be_hidden()


def test_the_split_is_dragged_moved_by_keys_and_kept_across_tabs_and_reloads(live_server, page):
    open_page(page, live_server, RICH)
    width = lambda: page.evaluate("() => document.querySelector('.session-layout > .side').getBoundingClientRect().width")
    before = width()
    handle = page.locator(".splitter")
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + 300
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 60, y, steps=4)
    page.mouse.move(x - 120, y, steps=4)
    page.mouse.up()
    dragged = width()
    assert abs(dragged - (before + 120)) <= 2, (before, dragged)
    page.locator("#panel .tabs a", has_text="Transcript").click()
    expect(page.locator("#panel .tabs a.current")).to_have_text("Transcript")
    assert width() == dragged
    page.reload()
    expect(page.locator("#panel .tabs")).to_be_visible()
    assert width() == dragged  # this browser keeps it
    page.locator("#panel .tabs a", has_text="Node").click()
    node = page.locator("#node-panel").get_attribute("data-entry")
    handle.focus()
    page.keyboard.press("ArrowRight")  # the panel narrower, the graph wider; not a selection move
    assert width() == dragged - 32
    expect(page.locator("#graph-state [name=node]")).to_have_value(node)  # (a move sets it at once)
    htmx_settled(page)
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", node)
    page.goto(live_server.url + live_server.rel(LARGE))
    expect(page.locator("#panel .tabs")).to_be_visible()
    assert width() == dragged - 32  # every session page


COVERED = """() => { const mm = document.querySelector('#minimap');
  if (!mm || mm.hidden || getComputedStyle(mm).visibility === 'hidden') return null;
  const m = mm.getBoundingClientRect();
  return [...document.querySelectorAll('#graph g.node')].filter(g => { const b = g.getBoundingClientRect();
    return b.width > 0 && b.left < m.right && b.right > m.left && b.top < m.bottom && b.bottom > m.top; }).map(g => g.id); }"""


@pytest.mark.parametrize("name", [RICH, LARGE])
@pytest.mark.parametrize("query", ["?collapse=auto", "?collapse=auto&view=both"])
def test_after_fit_the_minimap_covers_no_node(live_server, page, name, query):
    open_page(page, live_server, name, query)
    expect(page.locator("#minimap")).to_be_visible()  # these drawings are bigger than the pane
    for _ in range(3):
        page.locator('[data-action="zoom-in"]').click()
    page.locator('[data-action="fit"]').click()
    assert page.evaluate(COVERED) == []
    page.mouse.move(400, 400)
    page.mouse.wheel(0, 400)  # zoomed out: the nodes fill more of the pane, the minimap moves off them
    covered = page.evaluate(COVERED)
    assert covered is None or covered == [], covered
