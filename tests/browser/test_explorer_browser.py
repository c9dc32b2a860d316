"""The explorer as a person uses it: filter, open, click, expand, reload, inspect the context."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import htmx_settled, until
from webapp.core.session import Session

RICH = "019cadd3-8025-7970-85d9-5954058b4714"
LARGE = "019c6579-1ae3-78f7-9da1-494c73cf256d"
GOOD_APPROACH = "019cadd5-4547-793f-ae6d-00b2e72993a4"  # labelled "good approach"
XSS_MESSAGE = "019cade3-5750-7062-ae4e-2bd307acf337"
COMPACTION_2 = "019cade6-daa7-7c0a-a19a-fb01c3b51464"


def node(page, entry_id):
    return page.locator(f'#graph g.node[id="e-{entry_id}"]')


def test_index_filter_narrows_the_list_as_you_type(live_server, page):
    page.goto(live_server.url + "/")
    rows = page.locator("tr.session-row")
    expect(rows).to_have_count(4)
    page.fill("input[name=q]", "legacy")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("KeyError")
    page.fill("input[name=q]", "invoice")
    expect(rows).to_have_count(2)
    page.fill("input[name=q]", "no such session anywhere")
    expect(page.locator(".empty")).to_contain_text("No session matches")
    assert "q=no+such" in page.url or "q=no%20such" in page.url


def test_click_a_node_reads_its_content_and_reload_keeps_it(live_server, page, bring_into_view):
    page.goto(live_server.url + "/")
    page.click("text=Fix rounding in invoice totals")
    expect(page.locator("#graph svg")).to_be_visible()
    page.click("text=By turns")  # from the skeleton to every turn: a drawing bigger than the pane
    expect(page).to_have_url(re.compile("collapse=auto"))
    expect(page.locator("#minimap")).to_be_visible()
    bring_into_view(node(page, GOOD_APPROACH))  # the labelled node is far from the active leaf
    node(page, GOOD_APPROACH).locator("a").click()
    panel = page.locator("#node-panel")
    expect(panel).to_have_attribute("data-entry", GOOD_APPROACH)
    expect(panel.locator(".tag")).to_contain_text("good approach")
    expect(panel.locator(".tool-call").first).to_be_visible()
    expect(page).to_have_url(re.compile(f"node={GOOD_APPROACH}"))
    expect(node(page, GOOD_APPROACH)).to_have_class(re.compile("selected"))
    page.reload()
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", GOOD_APPROACH)
    expect(node(page, GOOD_APPROACH)).to_have_class(re.compile("selected"))


def test_keyboard_moves_to_the_parent_and_back(live_server, page):
    page.goto(live_server.url + live_server.rel(RICH) + f"?node={GOOD_APPROACH}&collapse=auto")
    tree = Session.open(live_server.root / live_server.rel(RICH)[3:]).tree
    parent = tree.parent[GOOD_APPROACH]
    page.locator("#graph").focus()
    redraws = []
    page.on("request", lambda r: redraws.append(r.url) if "/-/graph" in r.url else None)
    page.keyboard.press("ArrowUp")
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", parent)
    page.keyboard.press("ArrowDown")
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", tree.conversation_children(parent)[0])
    assert redraws == []  # moving between drawn nodes does not fetch the drawing again
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    expect(page.locator("#help")).to_contain_text("next branch point")


def test_a_folded_segment_expands_in_place(live_server, page, bring_into_view):
    page.goto(live_server.url + live_server.rel(LARGE) + "?collapse=auto")
    segments = page.locator("#graph g.node.segment")
    count = segments.count()
    assert count > 3
    drawn_before = page.locator("#graph g.node").count()
    label = segments.first.locator("text").first.text_content()
    folded = int(re.search(r"(\d+) entries", label).group(1))
    bring_into_view(segments.first)
    segments.first.locator("a").click()
    expect(segments).to_have_count(count - 1)
    assert page.locator("#graph g.node").count() == drawn_before - 1 + folded


def test_context_inspector_marks_what_a_compaction_replaced(live_server, page):
    page.goto(live_server.url + live_server.rel(RICH))
    page.click("text=What the model sees here")
    panel = page.locator("#context-panel")
    expect(panel).to_be_visible()
    expect(panel.locator(".cm").first).to_contain_text("compacted into the following summary")
    expect(panel.locator(".compaction-note")).to_contain_text("entries it replaced")
    replaced = page.locator("#graph g.node.ctx-replaced")
    expect(replaced.first).to_be_visible()
    assert replaced.count() >= 5
    expect(replaced.first.locator("text.replaced-by")).to_contain_text("summarized by compaction")
    expect(page.locator("#graph g.node.ctx-in").first).to_be_visible()
    assert page.locator("#graph g.node.ctx-off").count() > 0  # other branches dimmed
    # The compaction that stands in for them is in the context, as the first message.
    first_source = panel.locator(".cm").first.locator("a.cm-src")
    expect(first_source).to_have_attribute("data-select", COMPACTION_2)


def test_a_script_in_a_message_shows_as_text_and_never_runs(live_server, page):
    page.goto(live_server.url + live_server.rel(RICH) + f"?node={XSS_MESSAGE}")
    body = page.locator("#node-panel .entry-body")
    expect(body).to_contain_text('<script>alert("xss")</script>')
    page.click("text=What the model sees here")
    expect(page.locator("#context-panel")).to_contain_text('<script>alert("xss")</script>')
    htmx_settled(page)  # (a script in what was swapped in would have run by now)
    assert page.errors == []
    assert page.evaluate("document.querySelectorAll('#panel script:not([type=\"application/json\"])').length") == 0


def test_keys_move_through_the_tree_from_the_context_tab_too(live_server, page):
    tree = Session.open(live_server.root / live_server.rel(RICH)[3:]).tree
    leaf = tree.conversation_leaf(tree.active_leaf)
    page.goto(live_server.url + live_server.rel(RICH) + "?tab=context")
    expect(page.locator("#context-panel")).to_have_attribute("data-entry", leaf)
    page.keyboard.press("ArrowUp")
    expect(page.locator("#context-panel")).to_have_attribute("data-entry", tree.parent[leaf])


def test_the_context_panel_loads_the_rest_of_its_messages_when_scrolled_to(live_server, page, console):
    from webapp.core.context import build_context

    tree = Session.open(live_server.root / live_server.rel(LARGE)[3:]).tree
    messages = build_context(tree, tree.active_leaf).messages
    last = next(m for m in reversed(messages) if isinstance(m.get("content"), str) and m["content"].strip())
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(LARGE) + "?tab=context")
    panel = page.locator("#context-panel")
    rest = panel.locator("li.more-item")
    expect(rest).to_contain_text("more messages")  # a selection change brings a first screenful
    shown = panel.locator("li.cm").count()
    assert 0 < shown < len(messages)
    # Scrolling down the panel, as a person reads, brings the rest in.
    panel.locator("li.cm").first.hover()

    def scrolled_to_the_end() -> bool:
        page.mouse.wheel(0, 2000)
        return not rest.count()

    until(page, scrolled_to_the_end, "the rest of the messages, scrolled to")
    expect(rest).to_have_count(0)
    expect(panel.locator("li.cm")).to_have_count(len(messages))
    expect(panel.locator("li.cm").last).to_contain_text(last["content"].strip().splitlines()[0][:60])
