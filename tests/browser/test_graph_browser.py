"""The graph as a person uses it: history, badges, keys, folds, with the console listened to."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import htmx_settled, overlapping_marks
from webapp.core.session import Session

RICH = "019cadd3-8025-7970-85d9-5954058b4714"
LARGE = "019c6579-1ae3-78f7-9da1-494c73cf256d"
LINEAR = "019a966d-4156-7b5f-a5c6-ef5f3ad16722"
GOOD_APPROACH = "019cadd5-4547-793f-ae6d-00b2e72993a4"


def tree_of(live_server, name):
    return Session.open(live_server.root / live_server.rel(name)[3:]).tree


def node(page, entry_id):
    return page.locator(f'#graph g.node[id="e-{entry_id}"]')


def test_every_page_and_tab_loads_without_a_console_error(live_server, page, console):
    page.goto(live_server.url + "/")
    expect(page.locator("tr.session-row").first).to_be_visible()
    page.goto(live_server.url + live_server.rel(RICH))
    expect(page.locator("#graph svg")).to_be_visible()
    for tab in ("Context", "Branches", "Summaries", "Problems", "Node"):
        page.locator("#panel .tabs a", has_text=tab).click()
        expect(page.locator("#panel .tab.current")).to_have_text(tab)
    tree = tree_of(live_server, RICH)
    leaves = tree.leaves()
    page.goto(live_server.url + live_server.rel(RICH) + f"/compare?id={leaves[0]}&id={leaves[1]}")
    expect(page.locator("main")).to_contain_text(re.compile("compar", re.I))
    htmx_settled(page)  # (late console errors of what was asked, before the check)


def test_back_and_forward_restore_the_selection_without_errors(live_server, page, console):
    tree = tree_of(live_server, RICH)
    parent = tree.parent[GOOD_APPROACH]
    page.goto(live_server.url + live_server.rel(RICH) + f"?node={GOOD_APPROACH}")
    page.locator("#graph").focus()
    page.keyboard.press("ArrowUp")
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", parent)
    expect(node(page, parent)).to_have_class(re.compile("selected"))
    page.go_back()
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", GOOD_APPROACH)
    expect(node(page, GOOD_APPROACH)).to_have_class(re.compile("selected"))
    page.go_forward()
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", parent)
    expect(node(page, parent)).to_have_class(re.compile("selected"))
    assert page.locator("#graph g.selected").count() == 1
    htmx_settled(page)  # (late console errors of what was asked, before the check)


def test_compaction_badges_sit_beside_their_node_and_cover_nothing(live_server, page, console):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(RICH) + "?tab=context")
    badges = page.locator("#graph text.replaced-by")
    expect(badges.first).to_contain_text("summarized by compaction")
    assert badges.count() >= 3
    assert overlapping_marks(page) == []
    # Beside: the badge starts right of its node's box or ends left of it.
    sides = page.evaluate(
        """() => [...document.querySelectorAll('#graph text.replaced-by')].map((t) => {
            const s = t.closest('g.node').querySelector('polygon, path').getBoundingClientRect();
            const b = t.getBoundingClientRect();
            return b.left >= s.right - 0.5 || b.right <= s.left + 0.5;
        })"""
    )
    assert all(sides)


def test_the_selected_label_stays_inside_its_box(live_server, page, console):
    page.goto(live_server.url + live_server.rel(RICH) + f"?node={GOOD_APPROACH}")
    expect(node(page, GOOD_APPROACH)).to_have_class(re.compile("selected"))
    inside = page.evaluate(
        """(id) => {
            const g = document.getElementById(id);
            const s = g.querySelector('polygon, path').getBoundingClientRect();
            return [...g.querySelectorAll('text')].every((t) => {
                const b = t.getBoundingClientRect();
                return b.left >= s.left - 0.5 && b.right <= s.right + 0.5;
            });
        }""",
        "e-" + GOOD_APPROACH,
    )
    assert inside


def test_b_and_shift_b_walk_branch_points_from_the_default_selection(live_server, page, console):
    tree = tree_of(live_server, RICH)
    points = set(tree.branch_points())
    page.goto(live_server.url + live_server.rel(RICH))  # the active leaf is selected
    leaf = tree.conversation_leaf(tree.active_leaf)
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", leaf)
    page.locator("#graph").focus()
    page.keyboard.press("b")
    expect(page.locator("#node-panel")).not_to_have_attribute("data-entry", leaf)
    first = page.locator("#node-panel").get_attribute("data-entry")
    assert first in points
    page.keyboard.press("b")
    expect(page.locator("#node-panel")).not_to_have_attribute("data-entry", first)
    second = page.locator("#node-panel").get_attribute("data-entry")
    assert second in points
    page.keyboard.press("Shift+B")
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", first)
    page.keyboard.press("Home")
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", tree.roots[0])
    page.keyboard.press("End")
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", leaf)


def test_b_says_so_when_the_session_never_branches(live_server, page, console):
    page.goto(live_server.url + live_server.rel(LINEAR))
    page.locator("#graph").focus()
    page.keyboard.press("b")
    expect(page.locator("#graph-note")).to_be_visible()
    expect(page.locator("#graph-note")).to_contain_text("No branch point")


def test_selecting_a_node_or_a_branch_highlights_its_path_from_the_root(live_server, page, console):
    tree = tree_of(live_server, RICH)
    page.goto(live_server.url + live_server.rel(RICH) + f"?collapse=auto&node={GOOD_APPROACH}")  # by turns
    path = [e.id for e in tree.path(GOOD_APPROACH)]
    marked = page.locator("#graph g.sel-path")
    expect(marked).to_have_count(len(path))
    assert all(node(page, x).get_attribute("class").count("sel-path") for x in path)
    # A branch picked in the Branches tab: the path to its leaf.
    other = next(x for x in tree.leaves() if GOOD_APPROACH not in tree.path_ids(x))
    page.locator("#panel .tabs a", has_text="Branches").click()
    page.locator(f'#panel a[data-select="{other}"]').first.click()
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", other)
    expect(marked).to_have_count(len(tree.path(other)))
    expect(node(page, other)).to_have_class(re.compile("sel-path"))
    expect(node(page, GOOD_APPROACH)).not_to_have_class(re.compile("sel-path"))


def test_an_unfolded_turn_stays_unfolded_after_a_reload(live_server, page, console, bring_into_view):
    page.goto(live_server.url + live_server.rel(LARGE) + "?collapse=auto")  # by turns
    work = page.locator("#graph g.node.turn-work")
    count = work.count()
    assert count > 3
    label = work.first.locator("text").first.text_content()
    assert re.search(r"assistant · \d+ entries · [\d.]+k? tokens", label)
    bring_into_view(work.first)
    assert page.locator("#graph-state [name=expand]").get_attribute("value") == ""  # the minimap only moved the view
    work.first.locator("a").click()
    expect(work).to_have_count(count - 1)
    expect(page).to_have_url(re.compile("expand="))
    page.reload()
    expect(page.locator("#graph svg")).to_be_visible()
    expect(work).to_have_count(count - 1)


def test_a_minimap_shows_a_big_drawing_whole_and_moves_the_view(live_server, page, console, bring_into_view):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(LARGE) + "?collapse=auto")  # by turns: bigger than the pane
    minimap = page.locator("#minimap")
    expect(minimap).to_be_visible()
    # A copy of the drawing's shapes, without their ids (the drawing's own stay unique).
    shapes = ":is(polygon, path, ellipse, polyline):not(g.bands *)"
    assert page.locator(f"#minimap .mm-copy {shapes}").count() == page.locator(f"#graph svg g.graph {shapes}").count()
    assert page.locator("#minimap svg [id], #minimap svg text").count() == 0
    # The selected node is marked there, and the mark follows a click on another node.
    mark = page.locator("#minimap .mm-selected")
    where = mark.get_attribute("y")
    root = page.locator("#graph svg g.node:not(.segment)").first
    bring_into_view(root)
    root.locator("a").first.click()
    expect(root).to_have_class(re.compile(r"\bselected\b"))
    expect(mark).not_to_have_attribute("y", where)
    page.goto(live_server.url + live_server.rel(LARGE) + "?collapse=auto")
    expect(minimap).to_be_visible()
    before = page.locator("#graph svg").get_attribute("viewBox")
    frame = page.locator("#minimap .mm-view")
    frame_before = frame.get_attribute("y")
    box = minimap.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + 8)  # the top of the drawing
    expect(page.locator("#graph svg")).not_to_have_attribute("viewBox", before)
    assert frame.get_attribute("y") != frame_before
    assert "node=" not in page.url  # the copy's links are not followed: the view moved, nothing else
    # A small drawing that fits the pane at a legible size needs none.
    page.goto(live_server.url + live_server.rel("019cb492-4a02-7f80-bd7c-9ec7081ab44d") + "?collapse=on")
    expect(page.locator("#graph svg")).to_be_visible()
    expect(minimap).to_be_hidden()
