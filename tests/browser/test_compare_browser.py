"""Comparing branches as a person does: pick them in the branch list or the graph, read the
columns, expand a turn, summarize a branch, and share the exported file."""

from __future__ import annotations

import hashlib
import re

import orjson
from playwright.sync_api import expect

from tests.browser.walk_helpers import low_contrast

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


def expected_figures(file, tip, skip=0):
    """Turns, assistant messages, tool calls and errors on the path to `tip` after its first `skip` entries."""
    messages = [e["message"] for e in raw_path(file, tip)[skip:] if e["type"] == "message"]
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


def session_file(live_server, name=RICH):
    return live_server.root / live_server.rel(name)[len("/s/"):]


def shared_length(file, tips):
    paths = [[e["id"] for e in raw_path(file, tip)] for tip in tips]
    n = 0
    while all(len(p) > n for p in paths) and len({p[n] for p in paths}) == 1:
        n += 1
    return n


def test_two_branches_from_the_branch_list(live_server, page, console):
    tips = compare_from_branch_list(live_server, page, 2)
    expect(page.locator(".cmp-branch-head")).to_have_count(2)
    divergence = page.locator(".cmp-turn.divergence")
    expect(divergence).to_have_count(1)
    expect(divergence.locator(".divergence-marker")).to_have_text("first divergence")
    expect(page.locator(".cmp-shared summary")).to_contain_text(re.compile(r"shared: \d+ entr"))
    file = session_file(live_server)
    skip = shared_length(file, tips)
    for column, tip in enumerate(tips):
        mine, whole = expected_figures(file, tip, skip), expected_figures(file, tip)
        for name, key in (("turns", "turns"), ("tool_errors", "errors"), ("tool_calls", "tools")):
            cell = page.locator(f'td[data-figure="{name}"]').nth(column)
            expect(cell.locator("strong")).to_have_text(mine[key])  # after the divergence
            expect(cell.locator(".whole")).to_have_text(whole[key])  # the whole path beside it
    # a turn expands to its full content, loaded in place
    cell = divergence.locator("td").first
    cell.locator("details.turn-full > summary").click()
    expect(cell.locator(".cmp-entry").first).to_be_visible()
    assert page.errors == [] and console == []


def test_summarize_a_branch_in_place_without_writing(live_server, page, console):
    file = session_file(live_server)
    before = hashlib.sha256(file.read_bytes()).hexdigest()
    compare_from_branch_list(live_server, page, 2)
    slots = page.locator(".cmp-summaries .summary-slot")
    expect(slots.nth(0).locator(".cmp-summary.existing")).to_be_visible()  # the branch summary on file
    slots.nth(1).locator("button.summarize").click()
    expect(slots.nth(1).locator(".cmp-summary.made")).to_contain_text("Goal")
    expect(slots.nth(1).locator("button.summarize")).to_have_count(0)
    assert hashlib.sha256(file.read_bytes()).hexdigest() == before
    assert page.errors == [] and console == []


def test_export_opens_from_disk_with_the_same_columns(live_server, page, tmp_path, console):
    compare_from_branch_list(live_server, page, 3)
    heads = page.locator(".cmp-branch-head .cmp-head-line, .cmp-branch-head .cmp-title").all_inner_texts()
    page.click("#export-comparison")  # the review comes first: what redaction replaces, each with a "keep" box
    expect(page.locator("h1")).to_have_text("Export the comparison as one HTML file")
    expect(page.locator("#share-redact")).to_be_checked()
    with page.expect_download() as info:
        page.click("#share-download")
    download = info.value
    assert re.fullmatch(r"comparison-[\w-]+-3-branches\.html", download.suggested_filename)
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)

    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.context.set_offline(True)
    page.goto(saved.as_uri())
    assert page.locator(".cmp-branch-head .cmp-head-line, .cmp-branch-head .cmp-title").all_inner_texts() == heads
    expect(page.locator(".cmp-head-tools")).to_have_count(0)  # no links into the app
    expect(page.locator(".cmp-turn.divergence .divergence-marker")).to_be_visible()
    expect(page.locator("script")).to_have_count(0)
    head = page.locator(".cmp-branch-head").first
    assert head.evaluate("el => getComputedStyle(el).position") == "sticky"  # styles came along
    expect(page.locator(".cmp-outcome .final-answer")).to_have_count(3)  # outcomes first, in full
    expect(page.locator(".cmp-matrix tr[data-row=cost] td")).to_have_count(3)  # and the figures
    page.locator(".cmp-turn.divergence details.turn-full > summary").first.click()  # turns are in the file
    expect(page.locator(".cmp-turn.divergence .cmp-entry").first).to_be_visible()
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    assert page.errors == [] and console == []


def test_compare_mode_in_the_graph_fills_a_tray(live_server, page, console, bring_into_view):
    page.goto(live_server.url + live_server.rel(RICH) + "?collapse=auto")  # by turns
    panel_entry = page.locator("#node-panel").get_attribute("data-entry")
    page.click("button[data-action=compare-mode]")
    tray = page.locator("#compare-tray")
    expect(tray).to_be_visible()
    expect(tray.locator("#diff-contexts-go")).to_be_hidden()  # (two picks make a diff of contexts)
    assert low_contrast(page) == []  # (the pressed Compare mode button among them)
    leaf = page.locator(".session-layout").get_attribute("data-active-leaf")
    for entry_id in (GOOD_APPROACH, leaf):
        bring_into_view(page.locator(f'#graph g.node[id="e-{entry_id}"]'))
        page.locator(f'#graph g.node[id="e-{entry_id}"] a').click()
    expect(tray.locator("[data-unpick]")).to_have_count(2)
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", panel_entry)  # picked, not selected
    expect(page.locator(f'#graph g.node[id="e-{GOOD_APPROACH}"]')).to_have_class(re.compile("picked"))
    tray.locator(f'[data-unpick="{GOOD_APPROACH}"]').click()
    expect(tray.locator("[data-unpick]")).to_have_count(1)
    expect(tray.locator("#diff-contexts-go")).to_be_hidden()
    expect(page.locator(f'#graph g.node[id="e-{GOOD_APPROACH}"]')).not_to_have_class(re.compile("picked"))
    bring_into_view(page.locator(f'#graph g.node[id="e-{GOOD_APPROACH}"]'))
    page.locator(f'#graph g.node[id="e-{GOOD_APPROACH}"] a').click()
    tray.locator("#compare-go").click()
    expect(page).to_have_url(re.compile(r"/compare\?ids=" + re.escape(f"{leaf},{GOOD_APPROACH}") + "$"))
    expect(page.locator(".cmp-branch-head")).to_have_count(2)
    assert page.errors == [] and console == []


LARGE = "019c6579-1ae3-78f7-9da1-494c73cf256d"  # the data-pipeline sample: 7 branches


def leaves_of(file):
    """Branch tips read straight from the JSONL: entries that no message or compaction continues."""
    entries = [orjson.loads(line) for line in file.read_bytes().splitlines()[1:]]
    parents = {e["parentId"] for e in entries if e["type"] not in ("label", "leaf")}
    return [e["id"] for e in entries if e["type"] not in ("label", "leaf") and e["id"] not in parents]


def final_answer_lines(file, tip):
    """Plain paragraph lines of the branch's final answer (no headings, lists, tables or code), as
    a reader sees them once the markdown is rendered."""
    for e in reversed(raw_path(file, tip)):
        m = e.get("message") or {}
        if m.get("role") == "assistant":
            text = "\n".join(b["text"] for b in m["content"] if b.get("type") == "text")
            if text.strip():
                text = re.sub(r"```.*?```", "", text, flags=re.S)
                lines = [line.replace("`", "").replace("**", "").strip() for line in text.splitlines()]
                return [x for x in lines if x and not re.match(r"^([#|>]|[-*] |\d+\. )", x)]
    return []


def test_the_outcome_row_shows_each_final_answer_in_full(live_server, page, console):
    page.set_viewport_size({"width": 1280, "height": 720})
    file = session_file(live_server)
    tips = leaves_of(file)[:3]
    page.goto(live_server.url + live_server.rel(RICH) + "/compare?ids=" + ",".join(tips))
    first_row = page.locator(".cmp-table tbody tr").first
    expect(first_row).to_have_class("cmp-outcome")
    answers = first_row.locator(".final-answer")
    expect(answers).to_have_count(3)
    for column, tip in enumerate(tips):
        answer = answers.nth(column)
        shown = " ".join(answer.inner_text().split())
        lines = final_answer_lines(file, tip)
        assert lines and all(" ".join(x.split()) in shown for x in (lines[0], lines[-1]))
        # in full: nothing clipped, no inner scrolling
        assert answer.evaluate("el => el.scrollHeight <= el.clientHeight + 1 && getComputedStyle(el).maxHeight === 'none'")
        expected = "asks a question" if column == 0 else "answered"  # the first is the regression branch
        expect(first_row.locator("td").nth(column).locator(".status").first).to_have_text(expected)
    # the word diff is a toggle per cell, against the baseline (branch 1): off by default
    second = first_row.locator("td").nth(1)
    expect(second.locator(".diff-toggle .word-diff")).to_be_hidden()
    second.locator(".diff-toggle > summary").click()
    expect(second.locator(".diff-toggle .word-diff")).to_be_visible()
    expect(second.locator(".final-answer")).to_be_hidden()
    expect(first_row.locator("td").nth(2).locator(".final-answer")).to_be_visible()  # only that cell
    assert page.errors == [] and console == []


def test_seven_branches_keep_headers_and_row_labels_in_view_while_scrolling_both_ways(live_server, page, console):
    page.set_viewport_size({"width": 1280, "height": 720})
    tips = leaves_of(session_file(live_server, LARGE))
    assert len(tips) == 7
    page.goto(live_server.url + live_server.rel(LARGE) + "/compare?ids=" + ",".join(tips))
    expect(page.locator(".cmp-branch-head")).to_have_count(7)
    frame = page.locator(".cmp-frame")
    frame.evaluate("el => el.scrollIntoView()")
    box = frame.bounding_box()
    assert box["y"] + box["height"] <= 720 + 1  # the frame, and its horizontal scrollbar, fit the window
    assert frame.evaluate("el => el.scrollWidth > el.clientWidth + 500 && el.scrollHeight > el.clientHeight * 5")
    frame.evaluate("el => { el.scrollTop = el.scrollHeight / 2; el.scrollLeft = el.scrollWidth - el.clientWidth; }")
    assert frame.evaluate("el => el.scrollTop > 1000 && el.scrollLeft > 500")
    box = frame.bounding_box()
    head = page.locator(".cmp-branch-head").nth(6)
    hb = head.bounding_box()
    assert abs(hb["y"] - box["y"]) <= 2  # the branch header stays at the top of the frame
    on_top = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('th.cmp-branch-head')?.dataset.tip",
                           [hb["x"] + 20, hb["y"] + 10])
    assert on_top == tips[6]
    label = page.locator(".cmp-turn th").nth(20)
    label.evaluate("el => el.scrollIntoView({block: 'center', inline: 'nearest'})")
    frame.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    lb = label.bounding_box()
    assert abs(lb["x"] - frame.bounding_box()["x"]) <= 2  # row labels stay at the left edge
    under = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('th')?.textContent", [lb["x"] + 10, lb["y"] + 10])
    assert under and "turn" in under
    # the compact figures matrix keeps all seven columns in the window, no horizontal scrolling
    matrix = page.locator(".cmp-matrix")
    assert matrix.evaluate("el => el.getBoundingClientRect().right <= window.innerWidth && el.parentElement.scrollWidth <= el.parentElement.clientWidth")
    assert page.errors == [] and console == []


def heads(page):
    return page.eval_on_selector_all(".cmp-branch-head", "hs => hs.map(h => [h.dataset.tip, h.className])")


def test_baseline_order_and_collapsed_columns_survive_a_reload(live_server, page, console):
    tips = leaves_of(session_file(live_server))[:3]
    page.goto(live_server.url + live_server.rel(RICH) + "/compare?ids=" + ",".join(tips))
    page.locator(f'.cmp-branch-head[data-tip="{tips[1]}"] [data-tool=baseline]').click()
    expect(page.locator(".cmp-branch-head.baseline")).to_have_attribute("data-tip", tips[1])
    expect(page.locator(".cmp-outcome .diff-toggle summary").first).to_have_text("word diff against branch 2")
    page.locator(f'.cmp-branch-head[data-tip="{tips[0]}"] [data-tool=right]').click()
    page.locator(f'.cmp-branch-head[data-tip="{tips[2]}"] [data-tool=fold]').click()
    page.locator("[data-align=number]").click()
    want = [[tips[1], "cmp-branch-head baseline"], [tips[0], "cmp-branch-head"], [tips[2], "cmp-branch-head folded"]]
    assert heads(page) == want
    page.reload()
    assert heads(page) == want
    expect(page.locator('.cmp-controls strong[aria-current="true"]')).to_have_text("by number")
    page.locator(".cmp-unfold").click()
    expect(page.locator(".cmp-branch-head.folded")).to_have_count(0)
    assert page.errors == [] and console == []


def test_the_compare_tray_comes_back_after_a_reload(live_server, page, console, bring_into_view):
    page.goto(live_server.url + live_server.rel(RICH) + "?collapse=auto")  # by turns
    page.click("button[data-action=compare-mode]")
    leaf = page.locator(".session-layout").get_attribute("data-active-leaf")
    for entry_id in (GOOD_APPROACH, leaf):
        bring_into_view(page.locator(f'#graph g.node[id="e-{entry_id}"]'))
        page.locator(f'#graph g.node[id="e-{entry_id}"] a').click()
    tray = page.locator("#compare-tray")
    expect(tray.locator("[data-unpick]")).to_have_count(2)
    expect(page).to_have_url(re.compile(r"[?&]pick=" + re.escape(f"{GOOD_APPROACH},{leaf}")))
    page.reload()
    expect(tray).to_be_visible()
    expect(tray.locator("[data-unpick]")).to_have_count(2)
    expect(page.locator(f'#graph g.node[id="e-{GOOD_APPROACH}"]')).to_have_class(re.compile("picked"))
    tray.locator("#compare-go").click()
    expect(page).to_have_url(re.compile(r"/compare\?ids=" + re.escape(f"{GOOD_APPROACH},{leaf}") + "$"))
    assert page.errors == [] and console == []


def test_fewer_than_two_picks_keep_the_session_page_with_a_message(live_server, page, console):
    url = live_server.url + live_server.rel(RICH)
    page.goto(url + "?tab=branches")
    form = page.locator(".branches-panel .compare-form")
    form.locator("input[name=id]").first.check()
    form.locator(".compare-submit").click()
    expect(form.locator(".compare-message")).to_have_text("Pick at least two branches to compare (1 picked).")
    expect(page).to_have_url(url + "?tab=branches&pick=" + form.locator("input[name=id]").first.get_attribute("value"))
    form.locator("input[name=id]").nth(1).check()
    expect(form.locator(".compare-message")).to_be_hidden()
    # the graph's tray says the same in place
    page.click("button[data-action=compare-mode]")
    page.locator("#compare-tray [data-unpick]").first.click()
    page.locator("#compare-tray [data-unpick]").first.click()
    page.locator("#compare-go").click()
    expect(page.locator("#compare-tray .compare-message")).to_have_text("Pick at least two branches to compare (0 picked).")
    assert "/compare" not in page.url
    assert page.errors == [] and console == []


def test_a_pick_in_the_graph_ticks_its_branch_in_the_branches_tab_and_back(live_server, page, console, bring_into_view):
    page.goto(live_server.url + live_server.rel(RICH) + "?collapse=auto")  # by turns
    leaf = page.locator(".session-layout").get_attribute("data-active-leaf")
    page.click("button[data-action=compare-mode]")
    bring_into_view(page.locator(f'#graph g.node[id="e-{leaf}"]'))
    page.locator(f'#graph g.node[id="e-{leaf}"] a').click()
    tray = page.locator("#compare-tray")
    expect(tray.locator("[data-unpick]")).to_have_count(1)
    page.locator("#panel .tabs a", has_text="Branches").click()  # the list loaded after the pick shows it ticked
    boxes = page.locator(".branches-panel input[name=id]")
    expect(boxes.first).to_be_visible()
    box = page.locator(f'.branches-panel input[name=id][value="{leaf}"]')
    expect(box).to_be_checked()
    expect(page.locator(".branches-panel input[name=id]:checked")).to_have_count(1)
    tray.locator(f'[data-unpick="{leaf}"]').click()  # taken out of the tray: unticked in place
    expect(box).not_to_be_checked()
    other = boxes.filter(has_not=page.locator(f'[value="{leaf}"]')).first
    other_id = other.get_attribute("value")
    other.check()  # ticked in the list: in the tray
    expect(tray.locator(f'[data-unpick="{other_id}"]')).to_have_count(1)
    bring_into_view(page.locator(f'#graph g.node[id="e-{leaf}"]'))
    page.locator(f'#graph g.node[id="e-{leaf}"] a').click()  # picked in the graph while the list shows
    expect(box).to_be_checked()
    expect(page.locator(".branches-panel input[name=id]:checked")).to_have_count(2)
    assert page.errors == [] and console == []
