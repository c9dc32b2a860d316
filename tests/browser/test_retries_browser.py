"""The skeleton as a person sees it on a session retried at every turn, and in the tabs that mark
entries folded inside its runs: the fork points along the path fold into one node that opens on
a click (the URL keeps it), a run partly in the context says how much of it is, the compaction
preview unfolds the run that holds its cut, and the context meter keeps the drawing's level."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

import samplegen
from webapp.core.session import Session
from webapp.web import graph

LARGE = "019c6579-1ae3-78f7-9da1-494c73cf256d"  # 3,000 entries, 3 compactions, 7 leaves
TURNS = 60


@pytest.fixture
def retried(sessions_root):
    header, entries = samplegen.retry_session(TURNS)
    path = sessions_root / "--retried--" / "retried.jsonl"
    path.parent.mkdir()
    samplegen.write_jsonl(path, header, entries)
    return path


def open_graph(page, url):
    page.goto(url)
    expect(page.locator("#graph svg")).to_be_visible()
    page.wait_for_function("() => document.querySelector('#graph svg').getAttribute('preserveAspectRatio')")


def test_fork_points_along_the_path_fold_into_one_node_that_opens_on_a_click(retried, live_server, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_graph(page, live_server.url + "/s/--retried--/retried.jsonl")
    folds = page.locator("#graph g.node.retries")
    expect(folds).to_have_count(1)
    expect(folds.first).to_contain_text(re.compile(r"⋯ \d+ retries along turns 2–\d+ ⋯"))
    # Every leaf is drawn: its own node, or the fold that holds it.
    tree = Session.open(retried).tree
    layout = graph.build_layout(tree, "skeleton")
    leaves = [x for x in tree.leaves() if tree.by_id[x].type not in ("leaf", "label")]
    assert len(leaves) == TURNS + 1
    doms = sorted({layout.dom_for(x) for x in leaves})
    drawn = page.evaluate("(ids) => ids.filter(id => document.getElementById(id))", doms)
    assert drawn == doms
    expect(page.locator("#minimap")).to_be_hidden()  # the whole skeleton is in the pane
    users = page.locator("#graph g.node.r-user")
    before = users.count()
    folds.first.locator("a").click()
    expect(page).to_have_url(re.compile("expand="))
    expect(folds).not_to_have_count(1)  # the parts between the fork points it opened fold again
    assert users.count() > before  # the retries of the fork points it opened are drawn
    opened = folds.count()
    page.reload()
    expect(page.locator("#graph svg")).to_be_visible()
    expect(folds).to_have_count(opened)


def test_a_run_partly_in_the_context_says_how_much_of_it_is(live_server, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_graph(page, live_server.url + live_server.rel(LARGE) + "?tab=context")
    expect(page.locator("#graph .graph-svg")).to_have_attribute("data-level", "skeleton")
    expect(page.locator("#context-panel")).to_be_visible()
    count = page.locator("#graph g.node.skeleton.ctx-in text.ctx-count")
    expect(count.first).to_have_text(re.compile(r"⤷ \d+ of \d+ in context"))
    held, total = map(int, re.findall(r"\d+", count.first.text_content()))
    assert 0 < held < total
    expect(page.locator("#graph g.node.skeleton.ctx-replaced").first).to_be_visible()  # runs summarized


def test_the_compaction_preview_unfolds_the_run_that_holds_its_cut(live_server, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_graph(page, live_server.url + live_server.rel(LARGE))
    expect(page.locator("#graph .graph-svg")).to_have_attribute("data-level", "skeleton")
    page.click("#context-meter")
    expect(page.locator("#compact-panel")).to_be_visible()
    cut = page.locator("#graph g.node.cp-cut")
    expect(cut).to_have_count(1)
    expect(cut).to_have_id(re.compile(r"^e-"))  # the entry itself, not the run that held it
    expect(page).to_have_url(re.compile("expand="))
    assert page.locator("#graph g.node.cp-summarize").count() >= 1
    assert page.locator("#graph g.node.cp-kept").count() >= 1


def test_the_context_meter_keeps_the_level_of_the_drawing(live_server, page):
    open_graph(page, live_server.url + live_server.rel(LARGE) + "?collapse=auto")
    page.click("#context-meter")
    expect(page.locator("#compact-panel")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]collapse=auto(&|$)"))
    page.reload()
    expect(page.locator("#graph .graph-svg")).to_have_attribute("data-level", "auto")
    expect(page.locator("#compact-panel")).to_be_visible()
