"""The model's side in the browser: a reply that is not one, and the compaction preview.

The model is the strict local server of tests/fake_llm.py; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer
from webapp.core.session import Session
from webapp.llm import ModelConfig

RICH = "019cadd3-8025-7970-85d9-5954058b4714"


@pytest.fixture
def server(sessions_root, llm_server):
    config = ModelConfig("openai/test-model", api_base=llm_server.api_base, api_key="dummy", timeout=3)
    live = LiveServer(sessions_root, {"MODEL_CONFIG": config})
    yield live
    live.stop()


@pytest.fixture
def console(page):
    """Console errors of the page: every test here ends with none."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


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
    expect(status).to_contain_text("answered with text/html, not a model reply", timeout=10000)
    expect(status).not_to_contain_text("replied")
    fold = page.locator("#fork-form details.error-details")
    expect(fold).to_be_visible()
    fold.locator("summary").click()
    expect(fold.locator("pre")).to_contain_text("content-type: text/html")
    expect(fold.locator("pre")).to_contain_text('"content": "Is anyone there?"')
    new = tree_of(server).entries[len(before.entries):]
    assert [e.role or e.type for e in new] == ["user", "model_change"]  # no assistant entry
    assert page.errors == [] and console == []
