"""Regenerating a summary from the Summaries tab, in the browser: the new summary streams into an
editor (elapsed time, Cancel) as the compaction preview's does, and what is written is what was
read. The model is the local server of tests/fake_llm.py."""

from __future__ import annotations

import re

import orjson
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import until
from webapp.web.graph import dom_id

RICH = "019cadd3-8025-7970-85d9-5954058b4714"
PIECES = ["## Goal\n", "Round invoice ", "totals once.", "\n\n## Next Steps\n", "1. Ship it."]


@pytest.fixture
def server(sessions_root, model_server):
    return model_server(sessions_root)


def file_of(server):
    return server.root / server.rel(RICH)[3:]


def branch_summary_card(page):
    return page.locator("article.summary-card").filter(has_text="left branch").first


def test_a_regenerated_summary_streams_into_an_editor_and_is_written_as_edited(server, llm_server, page):
    llm_server.behave("reply", pieces=PIECES, delay=0.5)
    path = file_of(server)
    before = path.read_bytes()
    page.goto(server.url + server.rel(RICH) + "?tab=summaries")
    card = branch_summary_card(page)
    old_id = card.get_attribute("id")
    button, commit = card.locator("button.generate-summary"), card.locator("button.commit-summary")
    expect(commit).to_be_hidden()  # nothing to write before there is a new summary
    button.click()
    arriving = card.locator(".summary-streaming textarea")
    expect(arriving).to_have_value(re.compile(r"^## Goal\nRound invoice"))
    assert "Ship it." not in arriving.input_value()  # part of the text, before the stream ends
    expect(card.locator(".summary-progress .elapsed")).to_be_visible()
    expect(button).to_be_disabled()
    editor = card.locator("#summary-text")
    expect(editor).to_have_value("".join(PIECES))
    expect(card.locator(".summary-editor label")).to_contain_text("drafted by the model")
    assert path.read_bytes() == before  # drafted, not written
    expect(commit).to_be_visible()
    editor.fill("## Goal\nRound invoice totals once, read by a person.")
    commit.click()
    until(page, lambda: path.read_bytes() != before, "the summary written")
    last = orjson.loads(path.read_bytes().splitlines()[-1])
    assert last["type"] == "branch_summary"
    assert last["summary"].startswith("## Goal\nRound invoice totals once, read by a person.")
    assert last["details"]["summarizer"] == "edited" and last["details"]["draftedBy"] == "model"
    assert old_id == "summary-" + dom_id(last["details"]["regenerates"])  # the card's summary


def test_a_regeneration_can_be_cancelled_and_writes_nothing(server, llm_server, page):
    llm_server.behave("generate", delay=0.3, limit=400)  # a small model that would fill its window
    path = file_of(server)
    before = path.read_bytes()
    page.goto(server.url + server.rel(RICH) + "?tab=summaries")
    card = branch_summary_card(page)
    button = card.locator("button.generate-summary")
    button.click()
    progress = card.locator(".summary-progress")
    expect(progress.locator(".elapsed")).to_have_text(re.compile(r"^[1-9][0-9]* s$"))  # the time it has taken, counting
    progress.locator("button.cancel-summary").click()
    expect(card.locator(".summary-outcome")).to_have_text("Cancelled: nothing was written.")
    assert llm_server.client_closed.wait(60) and llm_server.generated < 400  # the model server stopped
    expect(progress).to_be_hidden()
    expect(button).to_be_enabled()
    expect(card.locator("button.commit-summary")).to_be_hidden()
    expect(card.locator("textarea")).to_have_count(0)
    assert path.read_bytes() == before


def test_one_draft_at_a_time_on_the_page(server, llm_server, page):
    llm_server.behave("reply", pieces=PIECES)
    page.goto(server.url + server.rel(RICH) + "?tab=summaries")
    first, second = page.locator("article.summary-card").nth(0), page.locator("article.summary-card").nth(1)
    first.locator("button.generate-summary").click()
    expect(first.locator("#summary-text")).to_have_value("".join(PIECES))
    expect(first.locator("button.commit-summary")).to_be_visible()
    second.locator("button.generate-summary").click()
    expect(second.locator("#summary-text")).to_have_value("".join(PIECES))
    expect(page.locator("#summary-text")).to_have_count(1)  # the first card's draft went
    expect(first.locator("button.commit-summary")).to_be_hidden()
    expect(second.locator("button.commit-summary")).to_be_visible()
