"""A person's verdict on a branch, as given in the comparison and read in every list of branches."""

from __future__ import annotations

import orjson
import pytest
from playwright.sync_api import expect

from webapp.core.session import Session

RICH = "019cadd3-8025-7970-85d9-5954058b4714"


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


def test_a_verdict_given_in_the_comparison_shows_everywhere_and_sorts_first(live_server, page):
    rel = live_server.rel(RICH)
    file = next(live_server.root.rglob(f"*{RICH}.jsonl"))
    tips = Session.open(file).tree.leaves()[:3]
    page.goto(f"{live_server.url}{rel}/compare?ids={','.join(tips)}")
    head = page.locator(".cmp-branch-head").nth(2)
    head.get_by_text("Verdict…").click()
    head.get_by_label("winner").check()
    head.get_by_label("note").fill("adds the option without touching totals")
    head.get_by_role("button", name="Save verdict").click()
    expect(page.locator(".cmp-branch-head").nth(2).locator(".verdict")).to_have_text("winner")
    expect(page.locator(".cmp-branch-head").nth(2).locator(".verdict-note")).to_have_text("adds the option without touching totals")
    expect(page.locator(".cmp-branch-head").nth(0).locator(".verdict")).to_have_count(0)
    written = orjson.loads(file.read_bytes().splitlines()[-1])
    assert written["customType"] == "session-tree.verdict" and written["data"]["targetId"] == tips[2]

    page.goto(f"{live_server.url}{rel}/compare/all")
    page.get_by_role("link", name="Verdict").click()
    first = page.locator("tr.branch-row").first
    expect(first).to_have_attribute("data-leaf", tips[2])
    expect(first.locator(".verdict")).to_have_text("winner")

    page.goto(f"{live_server.url}{rel}?tab=branches")
    row = page.locator("tr.branch-row", has=page.locator(f"input[value='{tips[2]}']"))
    expect(row.locator(".verdict")).to_have_text("winner")


def test_statuses_and_an_inherited_label_in_the_branch_list(live_server, page):
    page.goto(f"{live_server.url}{live_server.rel(RICH)}?tab=branches")
    regression = page.locator("tr.branch-row", has=page.get_by_text("regression", exact=True))
    expect(regression.locator(".status")).to_have_text("asks a question")
    inherited = page.locator(".tag.inherited", has_text="good approach").first
    expect(inherited).to_be_visible()
    expect(page.locator(".inherited-note").first).to_have_text("from the shared part")
