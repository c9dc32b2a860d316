"""The model's side in the browser: a reply that is not one, and the compaction preview.

The model is the strict local server of tests/fake_llm.py; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import re
import shutil

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer
from tests.conftest import PI_FIXTURES
from webapp.core.session import Session

RICH = "019cadd3-8025-7970-85d9-5954058b4714"


@pytest.fixture
def server(sessions_root, model_server):
    return model_server(sessions_root)


def tree_of(server):
    return Session.open(server.root / server.rel(RICH)[3:]).tree


def test_an_html_page_with_a_200_is_an_error_with_its_details_and_no_reply(server, llm_server, page, console):
    llm_server.behave("html")
    page.goto(server.url + server.rel(RICH))
    before = tree_of(server)
    page.click("#node-panel button:has-text('Continue here')")
    page.fill("#fork-form textarea[name=message]", "Is anyone there?")
    page.click("#fork-form button:has-text('Send')")
    status = page.locator("#fork-form .form-status")
    expect(status).to_contain_text("answered with text/html, not a model reply")
    expect(status).not_to_contain_text("replied")
    fold = page.locator("#fork-form details.error-details")
    expect(fold).to_be_visible()
    fold.locator("summary").click()
    expect(fold.locator("pre")).to_contain_text("content-type: text/html")
    expect(fold.locator("pre")).to_contain_text('"content": "Is anyone there?"')
    new = tree_of(server).entries[len(before.entries):]
    assert [e.role or e.type for e in new] == ["user"]  # no assistant entry, no model_change left behind
    assert page.errors == [] and console == []


def test_the_compaction_preview_shows_a_cut_by_default_and_commits_only_with_a_summary(server, llm_server, page, console):
    llm_server.behave("reply", pieces=["## Goal\n", "Fix the rounding of invoice totals."])  # streamed
    page.goto(server.url + server.rel(RICH))
    page.click("#context-meter")
    panel = page.locator("#compact-panel")
    expect(panel).to_be_visible()
    expect(panel.locator(".problem")).to_have_count(0)  # the default budget makes a cut here
    expect(panel.locator("dt:has-text('cut point') + dd a")).to_be_visible()
    cut = page.locator("#graph svg g.node.cp-cut")
    expect(cut).to_have_count(1)
    assert not cut.evaluate("g => g.classList.contains('segment')")  # not inside a fold
    assert page.locator("#graph svg g.node.cp-summarize").count() > 0
    commit = page.locator("#commit-compaction")
    expect(commit).to_be_disabled()
    before = len(tree_of(server).entries)
    page.click("#generate-summary")
    editor = page.locator("#summary-text")
    expect(editor).to_have_value("## Goal\nFix the rounding of invoice totals.")
    expect(commit).to_be_enabled()
    editor.fill("")
    expect(commit).to_be_disabled()
    editor.fill("## Goal\nRounding, edited by a person.")
    expect(commit).to_be_enabled()
    commit.click()
    expect(page.locator("#compact-panel")).to_have_count(0)
    tree = tree_of(server)
    entry = tree.by_id[tree.active_leaf]
    assert len(tree.entries) == before + 1 and entry.type == "compaction"
    assert entry.get("details")["summarizer"] == "edited" and entry.get("details")["draftedBy"] == "model"
    assert page.errors == [] and console == []


def test_moving_the_keep_budget_redraws_the_cut(server, page, console):
    page.goto(server.url + server.rel(RICH) + "?tab=compact")
    first = page.locator("#compact-panel dt:has-text('cut point') + dd").inner_text()
    page.fill("#keep-number", "300")
    expect(page.locator("#compact-panel dt:has-text('cut point') + dd")).not_to_have_text(first)
    expect(page.locator("#keep-range")).to_have_value("300")
    expect(page.locator("#graph svg g.node.cp-cut")).to_have_count(1)
    assert page.errors == [] and console == []


def test_a_cut_inside_a_fold_is_unfolded_and_brought_into_view(tmp_path, page, console):
    """pi's large session folds its 1,000 entries; the preview's cut must not stay hidden in a fold."""
    (tmp_path / "--pi--").mkdir()
    shutil.copy(next(p for p in PI_FIXTURES if p.name == "pi-mono_large-session.jsonl"), tmp_path / "--pi--" / "large.jsonl")
    live = LiveServer(tmp_path)
    try:
        page.goto(live.url + "/s/--pi--/large.jsonl")
        expect(page.locator("#graph svg g.segment").first).to_be_visible()
        page.click("#context-meter")
        cut = page.locator("#graph svg g.node.cp-cut")
        expect(cut).to_have_count(1)
        expect(cut).to_have_id("e-L839")  # the entry itself, not the fold that held it
        expect(cut).to_be_in_viewport()
        # only the turn that holds the cut is opened: the one its user message (line 837) starts
        assert page.locator("#graph-state [name=expand]").input_value() == "L837"
        assert page.errors == [] and console == []
    finally:
        live.stop()


def test_a_summary_being_made_shows_its_time_and_can_be_cancelled(server, llm_server, page, console):
    llm_server.behave("hang")
    page.goto(server.url + server.rel(RICH) + "?tab=compact")
    generate = page.locator("#generate-summary")
    generate.click()
    progress = page.locator("#summary-progress")
    expect(progress).to_be_visible()
    expect(generate).to_be_disabled()  # one summary at a time
    expect(progress.locator(".elapsed")).to_have_text(re.compile(r"^[1-9][0-9]* s$"))  # the time it has taken, counting
    progress.locator("button.cancel-summary").click()
    expect(page.locator(".summary-outcome")).to_have_text("Cancelled: nothing was written.")
    expect(progress).to_be_hidden()
    expect(generate).to_be_enabled()
    expect(page.locator("#summary-text")).to_have_count(0)
    expect(page.locator("#commit-compaction")).to_be_disabled()
    llm_server.behave("500")  # a failure says why, beside the button
    generate.click()
    expect(page.locator(".summary-outcome")).to_contain_text("The model server failed (500)")
    expect(page.locator("#commit-compaction")).to_be_disabled()
    assert page.errors == [] and console == []  # the failure is an event of the stream, not a 502


def test_a_summary_streams_into_the_editor_and_a_cancel_mid_stream_writes_nothing(server, llm_server, page, console):
    pieces = ["## Goal\n", "Fix the rounding ", "of invoice totals.", "\n\n## Next Steps\n", "1. Ship it."]
    llm_server.behave("reply", pieces=pieces, delay=0.6)
    page.goto(server.url + server.rel(RICH) + "?tab=compact")
    before = (server.root / server.rel(RICH)[3:]).read_bytes()
    generate, commit = page.locator("#generate-summary"), page.locator("#commit-compaction")
    generate.click()
    arriving = page.locator("#compact-summary-slot .summary-streaming textarea")
    expect(arriving).to_have_value(re.compile(r"^## Goal\nFix the rounding"))
    assert "Ship it." not in arriving.input_value()  # part of the text, before the stream ends
    expect(generate).to_be_disabled()
    expect(commit).to_be_disabled()  # nothing to commit until the summary is whole
    expect(page.locator("#summary-progress")).to_be_visible()
    editor = page.locator("#summary-text")
    expect(editor).to_have_value("".join(pieces))
    expect(page.locator("#compact-summary-slot .summary-streaming")).to_have_count(0)
    expect(page.locator("#compact-summary-slot .summary-editor label")).to_contain_text("drafted by the model")
    expect(commit).to_be_enabled()
    expect(generate).to_be_enabled()

    generate.click()  # again, and given up halfway: the summary before it comes back, nothing is written
    expect(arriving).to_have_value(re.compile(r"Fix the rounding"))
    page.locator("#summary-progress button.cancel-summary").click()
    expect(page.locator(".summary-outcome")).to_have_text("Cancelled: nothing was written.")
    assert llm_server.client_closed.wait(60)  # the app closed its connection: the model server stopped
    expect(arriving).to_have_count(0)
    expect(editor).to_have_value("".join(pieces))
    assert (server.root / server.rel(RICH)[3:]).read_bytes() == before
    assert page.errors == [] and console == []


def test_the_branch_summary_of_a_fork_streams_too(server, llm_server, page, console):
    llm_server.behave("reply", pieces=["## Goal\n", "Try the ", "other rounding."], delay=0.3)
    page.goto(server.url + server.rel(RICH))
    tree = tree_of(server)
    first_user = next(e.id for e in tree.entries if e.role == "user")
    page.goto(server.url + server.rel(RICH) + f"?node={first_user}")
    page.click("#node-panel button:has-text('Fork here')")
    button = page.locator("#fork-form .generate-summary")
    button.click()
    expect(button).to_be_disabled()
    expect(page.locator("#fork-form .summary-progress .elapsed")).to_be_visible()
    expect(page.locator("#branch-summary-slot #summary-text")).to_have_value("## Goal\nTry the other rounding.")
    expect(button).to_be_enabled()
    assert page.errors == [] and console == []


def test_a_drafted_summary_that_would_not_shrink_the_context_keeps_commit_off_and_says_why(server, llm_server, page,
                                                                                            console):
    long = "## Goal\n" + "Everything, at length. " * 20000
    llm_server.behave("reply", pieces=[long])
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(server.url + server.rel(RICH) + "?tab=compact")
    commit = page.locator("#commit-compaction")
    page.locator("#generate-summary").click()
    refusal = page.locator("#compact-summary-slot .shrink-refusal")
    expect(refusal).to_contain_text("This compaction would not shrink the context:")
    expect(refusal).to_contain_text("tokens now,")
    expect(commit).to_be_disabled()
    expect(page.locator("#compact-form .commit-hint")).to_contain_text("it would not shrink the context")
    page.fill("#summary-text", "## Goal\nFix the rounding of invoice totals.")  # changed: the server judges it again
    expect(commit).to_be_enabled()
    assert page.errors == [] and console == []
