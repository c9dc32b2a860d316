"""Writing from the browser: fork and continue, edit and resend, compact, and a failing model.

The model is the local OpenAI-compatible server of tests/fake_llm.py; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer
from webapp.core.session import Session
from webapp.model.llm import ModelConfig

RICH = "019cadd3-8025-7970-85d9-5954058b4714"
GOOD_APPROACH = "019cadd5-4547-793f-ae6d-00b2e72993a4"  # an assistant message inside the tree
EDITED_ORIGINAL = "019cadd4-11fc-768e-9ae0-a30dfef64997"  # a user message


@pytest.fixture
def server(sessions_root, model_server):
    return model_server(sessions_root)


def reply_written(page, text):
    """The reply streamed in, was appended, and the panel now shows it as a node of its own
    (the composer goes away when the panel reloads after the write)."""
    expect(page.locator("#fork-form")).to_have_count(0)
    expect(page.locator("#node-panel .entry-body")).to_contain_text(text)


def tree_of(server):
    return Session.open(server.root / server.rel(RICH)[3:]).tree


def test_fork_at_a_node_and_continue_with_the_model_reply(server, llm_server, page):
    llm_server.behave("reply", pieces=["Forked", " and", " answered."])
    page.goto(server.url + server.rel(RICH) + f"?node={GOOD_APPROACH}")
    page.click("#node-panel button:has-text('Fork here')")
    form = page.locator("#fork-form")
    expect(form).to_contain_text("The active leaf moves to")
    form.locator("textarea[name=message]").fill("Use integers of cents instead")
    form.locator("button[type=submit]").click()
    panel = page.locator("#node-panel")
    reply_written(page, "Forked and answered.")
    tree = tree_of(server)
    reply = tree.by_id[tree.active_leaf]
    assert reply.role == "assistant" and reply.message["model"] == "test-model"
    # The branch used another model: the change is recorded between the message and the reply.
    change = tree.by_id[tree.parent[reply.id]]
    assert change.type == "model_change" and change.get("modelId") == "test-model"
    user = tree.by_id[tree.parent[change.id]]
    assert user.message["content"][0]["text"] == "Use integers of cents instead"
    assert tree.parent[user.id] == GOOD_APPROACH
    expect(panel).to_have_attribute("data-entry", reply.id)
    expect(page.locator(f'#graph g.node[id="e-{reply.id}"]')).to_have_class(re.compile("active-leaf"))
    # What the model was sent is exactly the core's context for the new message.
    sent = llm_server.requests[-1]["messages"]
    assert sent[-1] == {"role": "user", "content": "Use integers of cents instead"}


def test_edit_and_resend_makes_a_sibling(server, llm_server, page):
    page.goto(server.url + server.rel(RICH) + f"?node={EDITED_ORIGINAL}")
    page.click("#node-panel button:has-text('Edit and resend')")
    box = page.locator("#fork-form textarea[name=message]")
    original = tree_of(server).by_id[EDITED_ORIGINAL].message["content"][0]["text"]
    expect(box).to_have_value(original)
    box.fill("Please fix the rounding with Decimal, and add a test first.")
    page.click("#fork-form button:has-text('Send as a new branch')")
    reply_written(page, "Hello from the stream.")
    tree = tree_of(server)
    siblings = tree.conversation_children(tree.parent[EDITED_ORIGINAL])
    new = [tree.by_id[s] for s in siblings if s != EDITED_ORIGINAL]
    assert any(e.role == "user" and "add a test first" in e.message["content"][0]["text"] for e in new)
    assert EDITED_ORIGINAL in siblings  # the original branch stays


def test_compact_with_an_edited_summary(server, llm_server, page):
    page.goto(server.url + server.rel(RICH) + "?collapse=auto")  # by turns: the entries a cut falls between are drawn
    page.click("#context-meter")
    expect(page.locator("#compact-panel")).to_be_visible()
    expect(page).to_have_url(re.compile(r"collapse=auto.*tab=compact|tab=compact.*collapse=auto"))
    expect(page.locator("#graph g.node.cp-cut")).to_have_id(re.compile(r"^e-"))  # its fold opened
    compactions_before = page.locator("#graph g.node.t-compaction").count()
    panel = page.locator("#compact-panel")
    expect(panel).to_be_visible()
    panel.locator("#keep-number").fill("300")
    panel.locator("button:has-text('Plan again')").click()
    expect(page.locator("#compact-form")).to_be_visible()
    assert page.locator("#graph g.node.cp-cut").count() == 1
    assert page.locator("#graph g.node.cp-summarize").count() >= 1
    page.click("#compact-form button:has-text('Generate the summary')")
    summary = page.locator("#compact-form textarea[name=summary]")
    expect(summary).to_have_value("Hello from the stream.")  # the model's summary, streamed, to edit
    expect(page.locator("#compact-form .summary-editor")).to_contain_text("drafted by the model openai/test-model")
    summary.fill("EDITED BY A PERSON: rounding is fixed, currency option done.")
    page.click("#compact-form button:has-text('Commit the compaction')")
    context = page.locator("#context-panel")
    expect(context).to_be_visible()
    expect(context.locator(".cm").first).to_contain_text("EDITED BY A PERSON")
    expect(page.locator("#graph g.node.t-compaction")).to_have_count(compactions_before + 1)
    expect(page.locator("#graph g.node.ctx-replaced").first).to_be_visible()
    assert page.errors == []
    tree = tree_of(server)
    entry = tree.by_id[tree.active_leaf]
    assert entry.type == "compaction" and entry.get("summary").startswith("EDITED BY A PERSON")
    # The model was given the previous compaction's summary to update, not to lose.
    prompt = llm_server.requests[-1]["messages"][-1]["content"]
    assert "Fix the rounding bug" in prompt  # the goal in the previous summary


def test_a_model_error_is_shown_and_nothing_partial_is_written(server, llm_server, page):
    llm_server.behave("401")
    page.goto(server.url + server.rel(RICH))
    before = tree_of(server)
    page.click("#node-panel button:has-text('Continue here')")
    page.fill("#fork-form textarea[name=message]", "Now add a changelog entry")
    page.click("#fork-form button:has-text('Send')")
    status = page.locator("#fork-form .form-status")
    expect(status).to_contain_text("refused the API key")
    expect(status).to_have_class(re.compile("error"))
    tree = tree_of(server)
    new = tree.entries[len(before.entries):]
    assert [e.role or e.type for e in new] == ["user"]  # no assistant entry, partial or not, and no model_change
    user = new[0]
    llm_server.behave("reply", pieces=["Changelog", " updated."])
    page.click("#fork-form button.retry")
    reply_written(page, "Changelog updated.")
    tree = tree_of(server)
    assert tree.parent[tree.parent[tree.active_leaf]] == user.id  # the retry wrote the model change with its reply
    assert len(tree.entries) == len(before.entries) + 3


def test_a_second_reply_from_the_same_model_records_no_other_model_change(sessions_root, llm_server, page):
    """A bare model name behind --api-base answers as openai/<name>: one model_change, not one a turn."""
    config = ModelConfig("test-model", api_base=llm_server.api_base, api_key="dummy")
    server = LiveServer(sessions_root, {"MODEL_CONFIG": config})
    page.goto(server.url + server.rel(RICH))
    for text in ("First question", "Second question"):
        page.click("#node-panel button:has-text('Continue here')")
        page.fill("#fork-form textarea[name=message]", text)
        page.click("#fork-form button:has-text('Send')")
        reply_written(page, "Hello from the stream.")
    tree = tree_of(server)
    changes = [e for e in tree.path(tree.active_leaf) if e.type == "model_change" and e.get("modelId") == "test-model"]
    assert len(changes) == 1 and changes[0].get("provider") == "openai"
    server.stop()


def test_cancel_stops_the_model_and_writes_no_reply(server, llm_server, page):
    """A small model that would generate for minutes: Cancel closes the stream, the app closes
    its connection to the model server (which stops generating), and only the message stays."""
    llm_server.behave("generate", delay=0.2, limit=600)
    page.goto(server.url + server.rel(RICH))
    before = tree_of(server)
    page.click("#node-panel button:has-text('Continue here')")
    page.fill("#fork-form textarea[name=message]", "Write the whole changelog")
    page.click("#fork-form button:has-text('Send')")
    expect(page.locator("#fork-form .reply-text")).to_contain_text("word word")
    page.click("#fork-form button.cancel-reply")
    status = page.locator("#fork-form .form-status")
    expect(status).to_have_text("Cancelled: no reply was written; your message was kept.")
    assert llm_server.client_closed.wait(60)  # the model server saw its client go: it stopped generating
    assert llm_server.generated < 600
    new = tree_of(server).entries[len(before.entries):]
    assert [e.role or e.type for e in new] == ["user"]
    expect(page.locator("#fork-form button.retry")).to_be_visible()
    assert page.errors == []


def test_a_reply_cut_at_the_length_limit_is_said_to_be_cut(sessions_root, model_server, llm_server, page):
    """A reply that stops at max_tokens is written as what it is (stopReason length) and the page
    says it was cut, in the status and on the node."""
    server = model_server(sessions_root, max_tokens=12)
    llm_server.behave("generate")
    page.goto(server.url + server.rel(RICH))
    page.click("#node-panel button:has-text('Continue here')")
    page.fill("#fork-form textarea[name=message]", "Explain everything")
    page.click("#fork-form button:has-text('Send')")
    expect(page.locator("#node-panel .reply-cut")).to_contain_text("cut at the length limit")
    assert llm_server.requests[-1]["max_tokens"] == 12
    tree = tree_of(server)
    reply = tree.by_id[tree.active_leaf]
    assert reply.message["stopReason"] == "length" and reply.message["content"][0]["text"] == " word" * 12
    page.set_viewport_size({"width": 1280, "height": 720})
    page.screenshot(path=str(sessions_root.parent / "cut-reply.png"))
    assert page.errors == []
