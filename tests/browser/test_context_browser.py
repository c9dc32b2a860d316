"""The Context tab's timeline and its way to the before/after view, clicked as a person does."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.test_audit_browser import server as audit_server  # noqa: F401 (a fixture)
from tests.browser.walk_helpers import low_contrast_text

COMPACTION = "019cade2-0005-77b9-affb-86ab4d0a0b37"
LATER = "019cade9-efaa-73c8-98bf-e7ca033e47ff"  # an assistant reply after both compactions


def test_timeline_point_selects_its_node_and_before_after_opens(live_server, page, console):
    rel = live_server.rel("2026-03-02")
    page.goto(f"{live_server.url}{rel}?tab=context&node={LATER}")
    chart = page.locator("#context-panel svg.timeline")
    expect(chart).to_be_visible()
    expect(chart.locator("circle.tl-compaction")).to_have_count(2)
    chart.locator(f'a[data-entry="{COMPACTION}"]').click()
    expect(page).to_have_url(re.compile(f"node={COMPACTION}"))
    expect(page.locator("#context-panel")).to_have_attribute("data-entry", COMPACTION)
    page.click("#before-after-link")
    expect(page.locator("#before-after")).to_contain_text("33 entries (33 messages) left the context")
    expect(page.locator("#cx-summary")).to_contain_text("## Goal")
    page.locator("#cx-left details.cx-turn > summary").first.click()
    expect(page.locator("#cx-left .cx-msg").first).to_be_visible()
    assert low_contrast_text(page) == []  # (the roles on the summary's tinted message among them)
    page.click("text=As a diff")
    expect(page.locator("#context-diff")).to_contain_text("33 only in A")
    assert page.errors == [] and console == []


IN_VIEW = """(id) => {
  const svg = document.querySelector('#graph svg'), vb = svg.viewBox.baseVal;
  const b = window.SessionTreeBands.nodeBox(svg, id);
  const cx = b[0] + b[2] / 2, cy = b[1] + b[3] / 2;
  return cx > vb.x && cx < vb.x + vb.width && cy > vb.y && cy < vb.y + vb.height;
}"""


STROKE = "(id) => getComputedStyle(document.querySelector(`#graph g.node#${id} polygon`)).stroke"
RED, AMBER = "rgb(220, 38, 38)", "rgb(245, 158, 11)"  # audit.css: a lost fact's entry, the one opened


def test_the_lost_tab_shows_the_summarized_span_and_keeps_the_audit(live_server, page, console):
    rel = live_server.rel("2026-03-02")
    page.goto(f"{live_server.url}{rel}?node={COMPACTION}")
    page.click("#node-panel .audit-score-line a")  # from the node panel to the Lost tab
    panel = page.locator("#audit-panel")
    expect(panel).to_contain_text("Lost in compaction")
    focus = page.evaluate("JSON.parse(document.getElementById('overlay').textContent).audit.focus")
    assert focus and page.evaluate(IN_VIEW, focus)  # the start of the summarized span is in view
    link = panel.locator("li.fact.missing a.audit-open").last
    dom = link.get_attribute("data-dom")
    # The entries holding lost facts lie on the selected path: they read red, not in its purple.
    assert page.evaluate(STROKE, dom) == RED
    link.click()
    expect(panel.locator(".audit-entry")).to_be_visible()
    expect(panel).to_contain_text("Lost in compaction")  # the audit stays
    expect(page.locator(f"#graph g.node.audit-focus#{dom}")).to_have_count(1)
    assert page.evaluate(STROKE, dom) == AMBER  # highlighted in place
    page.wait_for_function(IN_VIEW, arg=dom)  # the graph moved to the entry
    assert page.errors == [] and console == []


def test_the_summary_editor_says_edited_once_the_text_changed(audit_server, page, console):
    page.goto(audit_server.url + "/s/--home-ana-proj--/importer.jsonl?tab=compact&node=a6&keep_recent_tokens=20")
    page.click("#compact-form button:has-text('Generate the summary')")
    editor = page.locator("#compact-form .summary-editor")
    expect(editor.locator(".draft-state")).to_have_text("edit it before it is written")
    expect(editor.locator(".draft-warning")).to_be_visible()
    editor.locator("textarea").fill("The importer is written; the exporter is next.")
    expect(editor.locator(".draft-state")).to_have_text("edited by you: it is written as “edited”")
    expect(editor.locator(".draft-warning")).to_be_hidden()
    assert page.errors == [] and console == []
