"""Transcript, search, presenter and export as a person uses them, with the console listened to."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.walk_helpers import low_contrast_text
from webapp.core.session import Session
from webapp.web.app import export_session

RICH = "019cadd3-8025-7970-85d9-5954058b4714"
ACTIVE_LEAF = "019cade9-efaa-73c8-98bf-e7ca033e47ff"
SIDE_LEAF = "019cadee-2dfc-787f-b0bc-3fe317eec43c"  # "I'd rather not: 1. `bleach`..."
OPERAND_RESULT = "019cadd9-c9b4-7789-a029-0d19d9b6a93c"  # the only entry with "operand": a tool result, off the active path
XSS_MESSAGE = "019cade3-5750-7062-ae4e-2bd307acf337"


def open_transcript(live_server, page, **params):
    query = "&".join(f"{k}={v}" for k, v in {"tab": "transcript", **params}.items())
    page.goto(live_server.url + live_server.rel(RICH) + "?" + query)
    expect(page.locator(".transcript-panel")).to_be_visible()


def test_clicking_a_leaf_on_the_graph_switches_the_transcript_to_its_path(live_server, page, console, bring_into_view):
    open_transcript(live_server, page, collapse="auto")  # the drawing by turns, bigger than the pane
    panel = page.locator(".transcript-panel")
    expect(panel).to_have_attribute("data-leaf", ACTIVE_LEAF)
    bring_into_view(page.locator(f'#graph g.node[id="e-{SIDE_LEAF}"]'))
    page.locator(f'#graph g.node[id="e-{SIDE_LEAF}"] a').click()
    expect(panel).to_have_attribute("data-leaf", SIDE_LEAF)
    focus = page.locator(".t-item.t-focus")
    expect(focus).to_have_attribute("data-entry", SIDE_LEAF)
    expect(focus).to_be_in_viewport()
    expect(focus).to_contain_text("bleach")
    expect(page).to_have_url(re.compile(f"tab=transcript.*node={SIDE_LEAF}|node={SIDE_LEAF}.*tab=transcript"))
    expect(page.locator(".tab.current")).to_have_text("Transcript")
    assert console == []


def test_a_leaf_in_the_branch_list_switches_the_transcript(live_server, page, console):
    open_transcript(live_server, page)
    # Every word of it reads at AA: highlighted code and diffs, exit codes, times on a tinted turn.
    assert low_contrast_text(page) == []
    page.click("text=Read another branch…")
    page.locator(f'.t-branches-list a[data-select="{SIDE_LEAF}"]').click()
    expect(page.locator(".transcript-panel")).to_have_attribute("data-leaf", SIDE_LEAF)
    expect(page.locator(".t-item.t-focus")).to_have_attribute("data-entry", SIDE_LEAF)
    expect(page.locator(f'#graph g.node[id="e-{SIDE_LEAF}"]')).to_have_class(re.compile("selected"))
    assert console == []


def test_a_branch_link_in_the_transcript_opens_that_branch(live_server, page, console):
    open_transcript(live_server, page, node=ACTIVE_LEAF)
    link = page.locator(".t-branches a").first
    target = link.get_attribute("data-select")
    link.click()
    expect(page.locator(".t-item.t-focus")).to_have_attribute("data-entry", target)
    assert console == []


LARGE = "019c6579-1ae3-78f7-9da1-494c73cf256d"  # an active path of 1,502 entries


def test_scrolling_loads_the_next_window_and_earlier_ones_on_request(live_server, page, console):
    rel = live_server.rel(LARGE)
    tree = Session.open(live_server.root / rel[3:]).tree
    path = tree.path(tree.conversation_leaf(tree.active_leaf))
    page.goto(live_server.url + rel + f"?tab=transcript&node={path[0].id}")
    items = page.locator(".t-item")
    expect(items.first).to_be_visible()
    first = items.count()
    assert first <= 40  # a window, not the whole path
    page.locator(".t-later").scroll_into_view_if_needed()
    expect(items).not_to_have_count(first)
    page.goto(live_server.url + rel + f"?tab=transcript&node={path[-1].id}")
    expect(page.locator(".t-focus")).to_be_in_viewport()
    before = items.count()
    page.click(".t-earlier a")
    expect(items).not_to_have_count(before)
    page.emulate_media(media="print")  # the print stylesheet: turns only, none split
    expect(page.locator(".graph-pane")).to_be_hidden()
    expect(page.locator(".t-toolbar")).to_be_hidden()
    assert items.first.evaluate("el => getComputedStyle(el).breakInside") == "avoid"
    assert console == []


def test_filter_to_user_messages_is_kept_in_the_url_and_across_clicks(live_server, page, console, bring_into_view):
    open_transcript(live_server, page, collapse="auto")  # the drawing by turns, bigger than the pane
    page.click(".t-filters >> text=User only")
    expect(page.locator(".t-filters .chip.current")).to_have_text("User only")
    items = page.locator(".t-item")
    expect(items.first).to_be_visible()
    assert items.count() == page.locator(".t-item.t-user").count() > 1
    expect(page).to_have_url(re.compile("filter=user"))
    bring_into_view(page.locator(f'#graph g.node[id="e-{SIDE_LEAF}"]'))
    page.locator(f'#graph g.node[id="e-{SIDE_LEAF}"] a').click()
    expect(page.locator(".transcript-panel")).to_have_attribute("data-leaf", SIDE_LEAF)
    expect(page.locator(".t-filters .chip.current")).to_have_text("User only")
    assert page.locator(".t-item").count() == page.locator(".t-item.t-user").count()
    page.click(".t-toggles >> text=thinking")
    expect(page).to_have_url(re.compile("thinking=hide"))
    assert console == []


def test_search_finds_a_tool_result_on_a_side_branch_and_selects_it(live_server, page, console):
    open_transcript(live_server, page)
    page.keyboard.press("/")
    expect(page.locator("#session-search")).to_be_focused()
    page.keyboard.type("OPERAND")
    page.keyboard.press("Enter")
    hits = page.locator(".search-hit")
    expect(hits).to_have_count(1)
    expect(hits.locator("mark")).to_have_text("operand")
    hits.locator("a.hit-link").click()
    expect(page.locator(".tab.current")).to_have_text("Transcript")
    result = page.locator(f"#t-e-{OPERAND_RESULT}")  # the result, under its call, opened
    expect(result).to_have_attribute("open", "")
    expect(result).to_contain_text("operand")
    expect(result).to_be_in_viewport()
    expect(page.locator(f'#graph g.node[id="e-{OPERAND_RESULT}"]')).to_have_class(re.compile("selected"))
    assert console == []


def test_presenter_steps_through_turns_with_the_keyboard_and_a_reload_keeps_the_place(live_server, page, console):
    page.goto(live_server.url + live_server.rel(RICH) + f"/present?leaf={ACTIVE_LEAF}&turn=1")
    pos = page.locator(".present-pos")

    def press(key: str) -> None:
        # (each step loads a page: a key pressed once its text shows but before its script ran
        # would be lost, as a person's would in those milliseconds)
        page.wait_for_load_state("load")
        page.keyboard.press(key)

    expect(pos).to_contain_text("Turn 1 of")
    press("ArrowRight")
    expect(pos).to_contain_text("Turn 2 of")
    press("Space")
    expect(pos).to_contain_text("Turn 3 of")
    press("ArrowRight")
    expect(pos).to_contain_text("Turn 4 of")
    press("ArrowLeft")
    expect(pos).to_contain_text("Turn 3 of")
    expect(page).to_have_url(re.compile("turn=3"))
    shown = page.locator(".present-turn .t-user").first.get_attribute("data-entry")
    page.reload()
    expect(pos).to_contain_text("Turn 3 of")
    expect(page.locator(".present-turn .t-user").first).to_have_attribute("data-entry", shown)
    assert page.locator(".present-graph g.node.here").count() >= 1
    assert low_contrast_text(page) == []
    assert console == []


def test_a_script_in_a_message_runs_nowhere(live_server, page, console, tmp_path):
    open_transcript(live_server, page, node=XSS_MESSAGE)
    expect(page.locator(".t-focus")).to_contain_text('<script>alert("xss")</script>')
    page.goto(live_server.url + live_server.rel(RICH) + f"/present?node={XSS_MESSAGE}")
    expect(page.locator(".present-turn")).to_contain_text('<script>alert("xss")</script>')
    out = tmp_path / "export.html"
    out.write_text(export_session(live_server.root / live_server.rel(RICH)[3:]))
    page.goto(out.as_uri())
    expect(page.locator(f"#t-e-{XSS_MESSAGE}")).to_contain_text('<script>alert("xss")</script>')
    page.fill("#export-search", "alert(")  # the export's own script
    expect(page.locator("#export-count")).not_to_have_text("")
    assert console == []  # and page.errors also holds every dialog an alert() would have opened


def test_the_export_reads_from_disk_with_scripts_off(live_server, browser, tmp_path):
    path = live_server.root / live_server.rel(RICH)[3:]
    out = tmp_path / "export.html"
    out.write_text(export_session(path))
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 720})
    page = context.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(out.as_uri())
    tree = Session.open(path).tree
    text = page.inner_text("main")
    first = tree.path(tree.conversation_leaf(tree.active_leaf))
    for e in first[:40]:  # the first screens are there, with scripts off...
        assert f'data-entry="{e.id}"' in out.read_text() or e.role == "toolResult", e.id
    assert "show with scripts on" in page.inner_text("#export-partial")  # ...and what needs scripts is said
    assert page.locator(".export-more").count() >= 1 and "they need scripts" in text
    expect(page.locator("section.branch")).to_have_count(len(tree.leaves()))
    page.click("label[for=f-user]")  # the filters work without a script
    expect(page.locator(".t-item.t-assistant").first).to_be_hidden()
    expect(page.locator(".t-item.t-user").first).to_be_visible()
    assert requests == [out.as_uri()]  # nothing else is fetched
    context.close()
