"""Comparing branches as a person does: pick them in the branch list or the graph, read the
columns, expand a turn, summarize a branch, and share the exported file."""

from __future__ import annotations

import hashlib
import re

import orjson
from playwright.sync_api import expect

RICH = "019cadd3-8025-7970-85d9-5954058b4714"
GOOD_APPROACH = "019cadd5-4547-793f-ae6d-00b2e72993a4"  # an inner node, labelled "good approach"


def raw_path(file, tip):
    """The entries from the root to `tip`, read straight from the JSONL (not through the core)."""
    entries = {}
    for line in file.read_bytes().splitlines()[1:]:
        e = orjson.loads(line)
        entries[e["id"]] = e
    out = []
    while tip is not None:
        out.append(entries[tip])
        tip = entries[tip]["parentId"]
    return out[::-1]


def expected_figures(file, tip):
    messages = [e["message"] for e in raw_path(file, tip) if e["type"] == "message"]
    calls = [b for m in messages if m["role"] == "assistant" for b in m["content"] if b.get("type") == "toolCall"]
    return {
        "turns": str(sum(m["role"] == "user" for m in messages)),
        "assistant": str(sum(m["role"] == "assistant" for m in messages)),
        "tools": str(len(calls)),
        "errors": str(sum(m["role"] == "toolResult" and bool(m.get("isError")) for m in messages)),
    }


def compare_from_branch_list(live_server, page, count):
    """Open the rich session's Branches tab, tick the first `count` branches, press Compare."""
    page.goto(live_server.url + live_server.rel(RICH) + "?tab=branches")
    boxes = page.locator(".compare-form input[type=checkbox][name=id]")
    tips = [boxes.nth(i).get_attribute("value") for i in range(count)]
    for i in range(count):
        boxes.nth(i).check()
    page.click("text=Compare selected")
    expect(page).to_have_url(re.compile(r"/compare\?ids=" + re.escape(",".join(tips)) + "$"))
    return tips


def session_file(live_server):
    return live_server.root / live_server.rel(RICH)[len("/s/"):]


def test_two_branches_from_the_branch_list(live_server, page):
    tips = compare_from_branch_list(live_server, page, 2)
    expect(page.locator(".cmp-branch-head")).to_have_count(2)
    divergence = page.locator(".cmp-turn.divergence")
    expect(divergence).to_have_count(1)
    expect(divergence.locator(".divergence-marker")).to_have_text("first divergence")
    expect(page.locator(".cmp-shared summary")).to_contain_text(re.compile(r"shared: \d+ entr"))
    for column, tip in enumerate(tips):
        want = expected_figures(session_file(live_server), tip)
        for name in ("turns", "assistant", "errors"):
            expect(page.locator(f'td[data-figure="{name}"]').nth(column)).to_have_text(want[name])
        expect(page.locator('td[data-figure="tools"] strong').nth(column)).to_have_text(want["tools"])
    # a turn expands to its full content, loaded in place
    cell = divergence.locator(".cmp-cell").first
    cell.locator("details.turn-full > summary").click()
    expect(cell.locator(".cmp-entry").first).to_be_visible()
    assert page.errors == []


def test_summarize_a_branch_in_place_without_writing(live_server, page):
    file = session_file(live_server)
    before = hashlib.sha256(file.read_bytes()).hexdigest()
    compare_from_branch_list(live_server, page, 2)
    slots = page.locator(".cmp-summaries .summary-slot")
    expect(slots.nth(0).locator(".cmp-summary.existing")).to_be_visible()  # the branch summary on file
    slots.nth(1).locator("button.summarize").click()
    expect(slots.nth(1).locator(".cmp-summary.made")).to_contain_text("Goal")
    expect(slots.nth(1).locator("button.summarize")).to_have_count(0)
    assert hashlib.sha256(file.read_bytes()).hexdigest() == before
    assert page.errors == []


def test_three_branches_stay_aligned_and_scroll_together(live_server, page):
    page.set_viewport_size({"width": 760, "height": 900})
    compare_from_branch_list(live_server, page, 3)
    expect(page.locator(".cmp-branch-head")).to_have_count(3)
    tops = page.eval_on_selector_all(  # the top edge of each branch's cell, row by row
        ".cmp-turn", "rows => rows.map(r => [...r.children].slice(1).map(c => Math.round(c.getBoundingClientRect().top)))"
    )
    assert tops and all(len(row) == 3 and len(set(row)) == 1 for row in tops)
    scroll = page.locator(".cmp-scroll")
    assert scroll.evaluate("el => el.scrollWidth > el.clientWidth")
    assert scroll.locator(".cmp-figures").count() == 1 and scroll.locator(".cmp-grid").count() == 1
    assert page.errors == []


def test_export_opens_from_disk_with_the_same_columns(live_server, page, tmp_path):
    compare_from_branch_list(live_server, page, 3)
    heads = page.locator(".cmp-branch-head").all_inner_texts()
    with page.expect_download() as info:
        page.click("#export-comparison")
    download = info.value
    assert re.fullmatch(r"comparison-[\w-]+-3-branches\.html", download.suggested_filename)
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)

    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.context.set_offline(True)
    page.goto(saved.as_uri())
    assert page.locator(".cmp-branch-head").all_inner_texts() == heads
    expect(page.locator(".cmp-turn.divergence .divergence-marker")).to_be_visible()
    expect(page.locator("script")).to_have_count(0)
    assert page.locator(".cmp-grid").evaluate("el => getComputedStyle(el).display") == "grid"  # styles came along
    page.locator(".cmp-turn.divergence details.turn-full > summary").first.click()  # turns are in the file
    expect(page.locator(".cmp-turn.divergence .cmp-entry").first).to_be_visible()
    assert all(u.startswith(("file:", "data:")) for u in requests), requests


def test_compare_mode_in_the_graph_fills_a_tray(live_server, page):
    page.goto(live_server.url + live_server.rel(RICH))
    panel_entry = page.locator("#node-panel").get_attribute("data-entry")
    page.click("button[data-action=fit]")
    page.click("button[data-action=compare-mode]")
    tray = page.locator("#compare-tray")
    expect(tray).to_be_visible()
    leaf = page.locator(".session-layout").get_attribute("data-active-leaf")
    for entry_id in (GOOD_APPROACH, leaf):
        page.locator(f'#graph g.node[id="e-{entry_id}"] a').click()
    expect(tray.locator("[data-unpick]")).to_have_count(2)
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", panel_entry)  # picked, not selected
    expect(page.locator(f'#graph g.node[id="e-{GOOD_APPROACH}"]')).to_have_class(re.compile("picked"))
    tray.locator(f'[data-unpick="{GOOD_APPROACH}"]').click()
    expect(tray.locator("[data-unpick]")).to_have_count(1)
    expect(page.locator(f'#graph g.node[id="e-{GOOD_APPROACH}"]')).not_to_have_class(re.compile("picked"))
    page.locator(f'#graph g.node[id="e-{GOOD_APPROACH}"] a').click()
    tray.locator("#compare-go").click()
    expect(page).to_have_url(re.compile(r"/compare\?ids=" + re.escape(f"{leaf},{GOOD_APPROACH}") + "$"))
    expect(page.locator(".cmp-branch-head")).to_have_count(2)
    assert page.errors == []
