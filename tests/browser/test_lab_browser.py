"""The compaction lab as a person uses it: from a compaction's node, a lab of three candidates
(the recorded summary, pi's prompt, ours) run end to end, each summary streaming into its card,
then its audit, its test beside the recorded replies and the judge's word, the ranked table, a
diff of two candidates, and the winner kept as a compaction of the session."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.lab_session import lab_session
from tests.llm.test_lab import script
from webapp.core.session import Session


@pytest.fixture
def server(tmp_path, llm_server, model_server):
    root = tmp_path / "sessions"
    root.mkdir()
    lab_session().write(root / "s.jsonl")
    llm_server.behave("script", script=script)
    return model_server(root)


def test_a_lab_of_three_candidates_end_to_end(server, llm_server, page, tmp_path):
    page.goto(f"{server.url}/s/s.jsonl?node=k1")
    page.get_by_role("link", name="Compaction lab…").click()
    expect(page.locator(".lab-target")).to_contain_text("At the compaction k1")
    expect(page.get_by_role("checkbox", name="openai/test-model")).to_be_checked()
    expect(page.get_by_role("checkbox", name="pi's own (pi 1.6.0)")).to_be_checked()
    expect(page.get_by_role("checkbox", name="ours")).to_be_checked()
    page.get_by_label("turns").fill("2")
    expect(page.get_by_role("button", name="Cancel")).to_be_hidden()  # (nothing runs yet to cancel)
    page.get_by_role("button", name="Run the lab").click()
    table = page.locator(".lab-table")
    expect(table.locator("tbody tr")).to_have_count(3, timeout=60_000)
    expect(page.locator(".form-status")).to_have_text("done")
    cards = page.locator("#lab-results article.lab-card")
    expect(cards).to_have_count(3)
    expect(table).to_contain_text("recorded · recorded · recorded cut")
    expect(table).to_contain_text("openai/test-model · pi · recorded cut")
    expect(table.locator(".verdict-as-well")).to_have_count(3)
    card = cards.filter(has=page.locator("header", has_text="openai/test-model · ours"))
    expect(card.locator(".lab-figures")).to_contain_text("audit")
    expect(card.locator(".lab-turns tbody tr")).to_have_count(2)
    expect(card.locator(".lab-turns tbody tr").first.locator(".lab-reply.recorded")).to_have_text("All 3 tests pass.")
    expect(card.locator(".lab-judge")).to_contain_text("as well")
    card.get_by_label("Diff against").select_option(label="recorded · recorded · recorded cut")
    expect(card.locator(".lab-diff-body del").first).to_be_visible()
    assert "run=lab-" in page.url  # the run's own page, to come back to
    assert llm_server.refused == []

    page.set_viewport_size({"width": 1280, "height": 720})
    page.locator("#lab-table").scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "lab-table.png"))  # (read by a person: docs/compaction-lab.png is one)
    card.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "lab-card.png"))

    before = Session.open(server.root / "s.jsonl").tree
    table.locator("tr", has_text="openai/test-model · ours").get_by_role("button", name="Keep").click()
    expect(page.locator("#panel")).to_contain_text("compaction", timeout=30_000)
    tree = Session.open(server.root / "s.jsonl").tree
    [kept] = [e for e in tree.entries if e.id not in before.by_id]
    assert kept.type == "compaction" and tree.parent[kept.id] == "e2" and kept.get("details")["lab"]["prompt"] == "ours"
    assert f"node={kept.id}" in page.url
