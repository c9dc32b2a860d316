""""Lost in compaction" in the browser: the live audit of a summary being edited, and the tab."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer
from tests.conftest import Builder


@pytest.fixture
def server(tmp_path):
    """One session whose user names a design document no tool ever opened."""
    b = Builder()
    b.user("Write the importer. The format is in docs/design.md, keep it in sync.", id="u1")
    b.assistant("I will start with the parser. " + "Details. " * 40, id="a2")
    b.user("Always run `make check` before you say it is done.", id="u3")
    b.assistant("Understood. " + "More. " * 40, id="a4")
    b.user("Now the exporter.", id="u5")
    b.assistant("On it. " + "Words. " * 40, id="a6")
    b.add("compaction", id="c7", summary="Importer written.", firstKeptEntryId="u5")
    root = tmp_path / "sessions"
    (root / "--home-ana-proj--").mkdir(parents=True)
    b.write(root / "--home-ana-proj--" / "importer.jsonl")
    live = LiveServer(root)
    yield live
    live.stop()


def test_editing_the_summary_updates_its_audit(server, page, console):
    page.goto(server.url + "/s/--home-ana-proj--/importer.jsonl?tab=compact&node=a6&keep_recent_tokens=20")
    page.click("#compact-form button:has-text('Generate the summary')")
    summary = page.locator("#compact-form textarea[name=summary]")
    expect(summary).to_be_visible()
    live = page.locator("#audit-live")
    expect(live.locator(".audit-facts")).to_be_visible()  # audited as soon as there is a summary
    summary.fill("The importer is started.")
    path = live.locator('li.fact.missing[data-fact="docs/design.md"]')
    expect(path).to_be_visible()
    expect(path).to_contain_text("mentioned")
    summary.press("End")
    summary.type(" The format lives in docs/design.md.")
    expect(live.locator('li.fact.covered[data-fact="docs/design.md"]')).to_be_visible()
    expect(path).to_have_count(0)
    expect(live.locator(".audit-live-score")).to_contain_text("carries")
    assert page.errors == [] and console == []


def test_the_tab_marks_the_entries_holding_lost_facts_and_links_to_them(server, page, console):
    page.goto(server.url + "/s/--home-ana-proj--/importer.jsonl?node=c7")
    score = page.locator("#node-panel .audit-score-line a")
    expect(score).to_contain_text("% of")
    score.click()
    panel = page.locator("#audit-panel")
    expect(panel).to_contain_text("Lost in compaction")
    lost = panel.locator('li.fact.missing[data-fact="Always run `make check` before you say it is done."]')
    expect(lost).to_be_visible()
    expect(page.locator("#graph svg.audit-mode")).to_have_count(1)
    expect(page.locator("#graph g.node.audit-missing")).not_to_have_count(0)
    expect(page.locator("#graph g.node.audit-summary")).to_have_count(1)
    lost.locator("a.audit-open").first.click()  # opens the entry that holds the instruction, under it
    expect(lost.locator(".audit-entry")).to_have_attribute("data-entry", "u3")
    expect(lost.locator(".audit-entry")).to_contain_text("Always run")
    expect(panel).to_be_visible()  # the audit stays, and so do its marks
    expect(page.locator("#graph svg.audit-mode")).to_have_count(1)
    expect(page.locator("#graph g.node.audit-focus")).to_have_count(1)
    lost.locator(".audit-entry a.entry-link").click()  # from there, on to the Node tab
    expect(page.locator("#node-panel")).to_have_attribute("data-entry", "u3")
    expect(page.locator("#graph g.node.selected")).to_have_count(1)
    expect(page.locator("#graph svg.audit-mode")).to_have_count(0)  # the marks go with the tab
    assert page.errors == [] and console == []
