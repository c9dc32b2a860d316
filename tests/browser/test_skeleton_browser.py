"""The skeleton as a person sees it at 1280x720: on both branching samples "Fit" shows every
leaf of the session inside the graph pane (its node, or the group that holds it) with text of
11 px or more; a run opens on a click, the URL keeps it, and "Fit" folds it again."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from webapp.core.session import Session
from webapp.web import graph

RICH = "019cadd3-8025-7970-85d9-5954058b4714"  # 101 entries, 4 leaves
LARGE = "019c6579-1ae3-78f7-9da1-494c73cf256d"  # 3,000 entries, 7 leaves

SEEN = """(ids) => { const pane = document.querySelector('#graph').getBoundingClientRect();
  const inside = (id) => { const g = document.getElementById(id); if (!g) return false;
    const b = g.getBoundingClientRect();
    return b.width > 0 && b.left >= pane.left && b.top >= pane.top && b.right <= pane.right && b.bottom <= pane.bottom; };
  const px = [...document.querySelectorAll('#graph svg g.node text')]
    .map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a).sort((a, b) => a - b);
  return {inside: ids.map(inside), median: px[Math.floor(px.length / 2)]}; }"""


def open_graph(page, url):
    page.goto(url)
    expect(page.locator("#graph svg")).to_be_visible()
    page.wait_for_function("() => document.querySelector('#graph svg').getAttribute('preserveAspectRatio')")


def leaf_doms(live_server, name) -> list[str]:
    """Every leaf's drawn node in the skeleton the page shows: itself or the group holding it."""
    tree = Session.open(live_server.root / live_server.rel(name)[3:]).tree
    layout = graph.build_layout(tree, "skeleton")
    leaves = [x for x in tree.leaves() if tree.by_id[x].type not in ("leaf", "label")]
    assert len(leaves) > 1
    return [layout.dom_for(x) for x in leaves]


@pytest.mark.parametrize("name", [RICH, LARGE])
def test_fit_shows_every_leaf_of_a_branching_sample_in_the_pane_at_11px(live_server, page, name):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_graph(page, live_server.url + live_server.rel(name))
    expect(page.locator("#graph .graph-svg")).to_have_attribute("data-level", "skeleton")
    for _ in range(4):
        page.locator('[data-action="zoom-in"]').click()
    page.locator('[data-action="fit"]').click()
    seen = page.evaluate(SEEN, leaf_doms(live_server, name))
    assert all(seen["inside"]), seen
    assert round(seen["median"], 2) >= 11
    expect(page.locator("#minimap")).to_be_hidden()  # the whole skeleton is in view


def test_a_run_opens_to_its_turns_stays_open_after_a_reload_and_fit_folds_it(live_server, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_graph(page, live_server.url + live_server.rel(LARGE))
    runs = page.locator("#graph g.node.skeleton")
    count = runs.count()
    assert count > 3
    label = runs.first.locator("text").first.text_content()
    assert re.fullmatch(r"\d+ turns? · \d+ entries · [\d.]+k? tokens", label)
    users = page.locator("#graph g.node.r-user")
    before = users.count()
    run = page.locator(f'#graph g.node[id="{runs.first.get_attribute("id")}"]')
    run.locator("a").click()
    expect(run).to_have_count(0)
    expect(page).to_have_url(re.compile("expand="))
    assert users.count() > before  # its turns: the user's words drawn
    page.reload()
    expect(page.locator("#graph svg")).to_be_visible()
    expect(run).to_have_count(0)
    assert users.count() > before
    page.locator('[data-action="fit"]').click()
    expect(run).to_have_count(1)
    expect(runs).to_have_count(count)
    expect(page).not_to_have_url(re.compile("expand="))


PRESENTED = """() => { const pane = document.querySelector('.present-graph').getBoundingClientRect();
  const px = [...document.querySelectorAll('.present-graph svg g.node text')]
    .map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a).sort((a, b) => a - b);
  const here = [...document.querySelectorAll('.present-graph g.node.here')].map(g => g.getBoundingClientRect())
    .filter(b => b.left >= pane.left && b.right <= pane.right && b.top >= pane.top && b.bottom <= pane.bottom);
  const cut = [...document.querySelectorAll('.present-graph g.node')].filter(g => getComputedStyle(g).visibility !== 'hidden')
    .map(g => g.getBoundingClientRect())
    .filter(b => (b.left < pane.left && b.right > pane.left) || (b.left < pane.right && b.right > pane.right)
              || (b.top < pane.top && b.bottom > pane.top) || (b.top < pane.bottom && b.bottom > pane.bottom));
  return {median: px[Math.floor(px.length / 2)], smallest: px[0], here: here.length, cut: cut.length,
          skeleton: document.querySelectorAll('.present-graph g.node.skeleton').length,
          nodes: [...document.querySelectorAll('.present-graph g.node')].map(g => g.id)}; }"""


def test_the_presenter_opens_at_turn_1_with_the_skeleton_readable_and_the_turn_marked(live_server, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(LARGE) + "?tab=transcript")
    page.locator("a.button", has_text="Present").click()
    expect(page.locator(".present-pos")).to_contain_text("Turn 1 of")
    expect(page.locator(".present-graph g.node.here").first).to_be_visible()
    seen = page.evaluate(PRESENTED)
    assert round(seen["smallest"], 2) >= 14  # read from afar
    assert seen["here"] >= 1 and seen["skeleton"] >= 1  # the turn marked, in view, on the skeleton
    assert seen["cut"] == 0  # no node shown cut in two at the pane's edge
    # The window stays on the drawing: the root's row at the pane's top, no empty band above it.
    gap = page.evaluate("""() => {
      const pane = document.querySelector('.present-graph').getBoundingClientRect();
      const tops = [...document.querySelectorAll('.present-graph g.node')].map(g => g.getBoundingClientRect().top);
      return Math.min(...tops) - pane.top; }""")
    assert 0 <= gap <= 40
    page.keyboard.press("ArrowRight")
    expect(page.locator(".present-pos")).to_contain_text("Turn 2 of")
    expect(page.locator(".present-graph g.node.here").first).to_be_visible()  # (marked once the page has loaded)
    assert page.evaluate(PRESENTED)["here"] >= 1


def test_the_presenter_draws_the_branch_it_presents_whole_and_larger_on_a_larger_screen(live_server, page):
    """A branch the skeleton groups at the session page ("⊞ 3 more branches here") is the one
    column the presenter draws, its tip included, with no node cut; a 1920x1080 screen gets
    larger text (and a larger turn) than 1280x720."""
    tree = Session.open(next(live_server.root.rglob(f"*{LARGE}*.jsonl"))).tree
    drawn = {e.id for e in graph.build_layout(tree, "skeleton").nodes}
    grouped = next(x for x in tree.leaves() if x not in drawn)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(LARGE) + f"/present?leaf={grouped}&turn=1")
    expect(page.locator(".present-graph g.node.here").first).to_be_visible()
    small = page.evaluate(PRESENTED)
    assert graph.dom_id(grouped) in small["nodes"] and small["cut"] == 0 and round(small["smallest"], 2) >= 14
    assert not any(n.startswith("e-") and n[2:] in tree.by_id and n[2:] not in {e.id for e in tree.path(grouped)}
                   for n in small["nodes"])  # one branch: nothing of another drawn as itself
    turn_px = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.present-turn')).fontSize)")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.reload()
    expect(page.locator(".present-graph g.node.here").first).to_be_visible()
    large = page.evaluate(PRESENTED)
    assert large["cut"] == 0 and large["smallest"] >= small["smallest"] * 1.4
    assert page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.present-turn')).fontSize)") > turn_px * 1.3


def test_compare_mode_picks_a_folded_turn_instead_of_unfolding_it(live_server, page, bring_into_view):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_graph(page, live_server.url + live_server.rel(LARGE) + "?collapse=auto")
    work = page.locator("#graph g.node.turn-work")
    count = work.count()
    page.click("button[data-action=compare-mode]")
    bring_into_view(work.first)
    first = work.first.get_attribute("id")
    work.first.locator("a").click()
    expect(page.locator("#compare-tray .tray-items button")).to_have_count(1)
    expect(page).to_have_url(re.compile("pick="))
    assert page.locator("#graph-state [name=expand]").get_attribute("value") == ""
    expect(work).to_have_count(count)
    expect(page.locator(f'#graph g.node[id="{first}"]')).to_have_class(re.compile(r"\bpicked\b"))
