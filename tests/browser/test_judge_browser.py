"""A judge asked from the comparison as a person does: open "Judge…", name the judge model, press
Judge, and read its verdicts in the branch headers beside the person's own."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.llm.test_judge import BY, JUDGE, fair
from webapp.core.session import Session
from webapp.core.verdicts import give_verdict

RICH = "019cadd3-8025-7970-85d9-5954058b4714"


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


@pytest.fixture
def server(sessions_root, llm_server, model_server):
    llm_server.per_model("judge-model", "reply", answer=fair)
    return model_server(sessions_root, models=(JUDGE,))


def test_the_judge_button_shows_its_verdict_beside_a_persons(server, llm_server, page):
    rel = server.rel(RICH)
    file = next(server.root.rglob(f"*{RICH}.jsonl"))
    tips = Session.open(file).tree.leaves()
    regression, currency = tips[0], tips[2]  # the branch that stops to ask, and the one that finished
    give_verdict(Session.open(file), regression, "winner", "I liked that it asked")
    page.goto(f"{server.url}{rel}/compare?ids={regression},{currency}")
    page.get_by_text("Judge…").click()
    page.get_by_label("Judge model").select_option(JUDGE)
    page.get_by_role("button", name="Judge", exact=True).click()
    heads = page.locator(".cmp-branch-head")
    judged = heads.nth(1).locator(f".verdict[data-by='{BY}']")
    expect(judged).to_contain_text("better")
    expect(judged).to_contain_text(f"({BY})")
    expect(heads.nth(0).locator(f".verdict[data-by='{BY}']")).to_contain_text("worse")
    expect(heads.nth(0).locator(".verdict[data-by='person']")).to_have_text("winner")  # beside, not replaced
    expect(heads.nth(0).locator(".verdict-note")).to_have_text("I liked that it asked")
    expect(heads.nth(1).locator(".verdict-reasons")).to_have_text(f"{BY}: the other one stopped to ask")  # text, not a hover
    assert len(llm_server.requests) == 2 and llm_server.refused == []


def test_a_judge_that_never_answers_in_the_format_leaves_the_comparison_with_why(sessions_root, llm_server,
                                                                                 model_server, page, console):
    llm_server.per_model("chatty-model", "reply", text="Honestly, both branches did a decent job here.")
    server = model_server(sessions_root, models=(JUDGE, "openai/chatty-model"))
    rel = server.rel(RICH)
    file = next(server.root.rglob(f"*{RICH}.jsonl"))
    before = file.read_bytes()
    tips = Session.open(file).tree.leaves()
    page.goto(f"{server.url}{rel}/compare?ids={tips[0]},{tips[2]}")
    page.get_by_text("Judge…").click()
    page.get_by_label("Judge model").select_option("openai/chatty-model")
    page.get_by_role("button", name="Judge", exact=True).click()
    failure = page.locator(".judge-failure")
    expect(failure).to_contain_text("did not answer with")
    expect(failure).to_contain_text("even when asked again, so no verdict was written")
    expect(failure).to_contain_text("“Honestly, both branches did a decent job here.”")
    expect(page.locator(".cmp-matrix")).to_be_visible()  # still the comparison, not an error page
    expect(page.get_by_label("Judge model")).to_have_value("openai/chatty-model")
    assert file.read_bytes() == before and len(llm_server.requests) == 2  # asked, asked again, given up
    page.set_viewport_size({"width": 1280, "height": 720})
    page.screenshot(path=str(server.root.parent / "judge-failure.png"))
    assert page.errors == [] and console == []
