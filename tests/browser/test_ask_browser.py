"""Asking several models at a node as a person does: open the page from a node, see each call's
estimated cost, send, watch the columns fill side by side, cancel one, open the comparison."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer
from webapp.core.session import Session
from webapp.model.llm import ModelConfig

RICH = "019cadd3-8025-7970-85d9-5954058b4714"


@pytest.fixture
def server(sessions_root, llm_server, model_server):
    llm_server.per_model("fast-model", "reply", pieces=["VAT", " is", " applied", " after", " the", " discount."])
    llm_server.per_model("slow-model", "reply", pieces=["Let", " me", " think", " about", " it", " slowly", "."], delay=0.6)
    llm_server.per_model("broken-model", "500")
    llm_server.per_model("other-model", "reply", pieces=["A", " second", " opinion."], delay=0.05, usage=None)
    return model_server(sessions_root, "openai/fast-model",
                        models=("openai/other-model", "openai/broken-model", "openai/slow-model"))


def where_the_branch_ends(server) -> tuple[Path, str, str]:
    """The rich sample's file and URL path, and the last conversation entry of its active branch."""
    file = next(server.root.rglob(f"*{RICH}.jsonl"))
    tree = Session.open(file).tree
    return file, server.rel(RICH), tree.conversation_leaf(tree.active_leaf)


def test_ask_three_models_side_by_side_then_compare(server, llm_server, page):
    file, rel, leaf = where_the_branch_ends(server)
    page.goto(f"{server.url}{rel}?node={leaf}")
    page.get_by_role("link", name="Ask several models…").click()
    expect(page.get_by_role("heading", name="Ask for")).to_have_count(0)  # (a legend, not a heading)
    page.get_by_role("textbox", name="Message").fill("Does the VAT apply before or after the discount?")
    page.get_by_label("openai/other-model", exact=True).check()  # the models the server was started with
    page.get_by_label("openai/broken-model", exact=True).check()
    estimates = page.locator(".ask-estimates tbody tr")
    expect(estimates).to_have_count(3)
    expect(estimates.nth(1)).to_contain_text("unknown")
    page.get_by_role("button", name="Send to these models").click()
    columns = page.locator(".ask-column")
    expect(columns).to_have_count(3)
    expect(columns.nth(0).locator(".ask-text")).to_have_text("VAT is applied after the discount.")
    expect(columns.nth(1).locator(".ask-text")).to_have_text("A second opinion.")
    expect(columns.nth(2).locator(".ask-status")).to_contain_text("Nothing was written for openai/broken-model")
    expect(columns.nth(0).locator(".ask-status")).to_contain_text("written in")
    expect(columns.nth(0).locator(".ask-status")).to_contain_text("context sent: 12 tokens (the server's count)")
    expect(columns.nth(1).locator(".ask-status")).to_contain_text("(estimated)")  # a server that sent no usage
    page.get_by_role("link", name="Compare these 2 branches").click()
    expect(page.locator(".cmp-branch-head")).to_have_count(2)
    expect(page.locator(".cmp-outcome .final-answer").first).to_contain_text("VAT is applied after the discount.")
    assert llm_server.refused == []


def test_a_cancelled_column_writes_no_reply(server, llm_server, page):
    llm_server.per_model("slow-model", "generate", delay=0.3, limit=400)  # a model that would go on for minutes
    file, rel, leaf = where_the_branch_ends(server)
    page.goto(f"{server.url}{rel}/ask?at={leaf}")
    page.get_by_role("textbox", name="Message").fill("Once more, slowly")
    page.get_by_label("openai/slow-model", exact=True).check()
    expect(page.locator(".ask-estimates tbody tr")).to_have_count(2)
    page.get_by_role("button", name="Send to these models").click()
    slow = page.locator(".ask-column").nth(1)
    expect(slow.locator(".ask-text")).not_to_have_text("")  # it has begun
    slow.get_by_role("button", name="Cancel").click()
    expect(slow.locator(".ask-status")).to_have_text("Cancelled: no reply was written.")
    assert llm_server.client_closed.wait(60) and llm_server.generated < 400  # the model server stopped generating
    expect(page.locator("#ask-end")).to_have_text("One model answered: nothing to compare.")
    written = [e for e in Session.open(file).tree.entries
               if e.message.get("model") == "slow-model" or e.get("modelId") == "slow-model"]
    assert written == []  # neither a reply nor a model_change


def test_with_no_model_configured_the_page_says_so_only_once_the_form_is_sent(sessions_root, page):
    live = LiveServer(sessions_root, {"MODEL_CONFIG": ModelConfig(None)})
    try:
        rel = live.rel(RICH)
        page.goto(f"{live.url}{rel}/ask")
        expect(page.locator("#ask-estimates")).to_contain_text("Pick or name a model")
        page.get_by_role("textbox", name="Message").fill("Is this right?")
        expect(page.locator("#ask-estimates")).to_contain_text("Pick or name a model")
        expect(page.locator(".ask-problem")).to_have_count(0)  # nothing is wrong before a submit
        page.get_by_role("button", name="Send to these models").click()
        expect(page.locator(".ask-form .form-status")).to_contain_text("name at least one model")
    finally:
        live.stop()


@pytest.mark.parametrize("content_type, body, said", [
    ("text/plain", "too many models at once (at most 6)", "too many models at once (at most 6)"),
    ("text/html", '<main class="error-page"><p class="error">The model refused the request. Nothing was written.</p>'
                  "<p>Back to the session</p></main>", "The model refused the request. Nothing was written."),
])
def test_a_refused_ask_says_why_and_can_be_sent_again(server, page, console, content_type, body, said):
    """The reason comes from the app's plain-text answer to a stream request or from its error page."""
    rel = server.rel(RICH)
    page.goto(f"{server.url}{rel}/ask")
    page.route("**/-/ask", lambda route: route.fulfill(status=400, content_type=content_type, body=body))
    page.get_by_role("textbox", name="Message").fill("Is this right?")
    page.get_by_role("button", name="Send to these models").click()
    status = page.locator(".ask-form .form-status")
    expect(status).to_have_text(said)
    expect(status).to_have_class(re.compile(r"\berror\b"))
    expect(page.get_by_role("button", name="Send to these models")).to_be_enabled()
    expect(page.locator(".ask-column")).to_have_count(0)
    assert console and all("400" in line for line in console)  # the browser's own line for the refusal
    console.clear()
