"""Replaying a branch on another model as a person does: from the Branches tab, pick the start
and the model, watch the steps stream in, open the branch the replay wrote and read what it is."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.llm.test_replay import recorded_session
from webapp.core.session import Session


def replies():
    """The other model's work: a read the recording has, one it does not, then an answer each."""
    left = [{"calls": [("read", {"path": "src/app.py"}), ("read", {"path": "notes.txt"})]},
            {"text": "The add function adds now."}, {"text": "Docstring written."}]
    return lambda body: left.pop(0) if left else {"calls": [("read", {"path": "src/app.py"})]}


@pytest.fixture
def server(tmp_path, llm_server, model_server):
    root = tmp_path / "sessions"
    root.mkdir()
    recorded_session(root)
    llm_server.per_model("other-model", "script", script=replies())
    llm_server.per_model("loop-model", "script", script=lambda body: {"calls": [("read", {"path": "src/app.py"})]})
    return model_server(root, models=("openai/other-model", "openai/loop-model"))


def test_replay_a_branch_from_the_branches_tab_and_open_what_it_wrote(server, llm_server, page):
    page.goto(f"{server.url}/s/s.jsonl?node=a8&tab=branches")
    page.locator(".branches").get_by_role("link", name="replay…").click()
    expect(page.get_by_label("Branch", exact=True)).to_have_value("a8")
    expect(page.get_by_label("Start from", exact=True)).to_have_value("u1")
    page.get_by_label("Model", exact=True).select_option("openai/other-model")
    page.get_by_role("button", name="Replay on this model").click()
    steps = page.locator(".replay-step")
    expect(steps).to_have_count(3)
    expect(steps.nth(0).locator(".replay-tools")).to_have_text("calls read, read: read recorded read not recorded")
    expect(steps.nth(1).locator(".replay-text")).to_have_text("The add function adds now.")
    expect(steps.nth(2).locator(".replay-prompt")).to_have_text("user: Now add a docstring.")
    end = page.locator("#replay-end")
    expect(end).to_contain_text("recorded tools: 1 hit, 1 miss (not a fair comparison")
    expect(end).to_contain_text("does not hold); finished")
    page.get_by_role("link", name="Open the replayed branch").click()
    info = page.locator(".branches .replay-info")
    expect(info).to_have_text("replay of leaf a8 from u1 on other-model, recorded tools: 1 hit, 1 miss "
                              "(not a fair comparison: the model often asked for what the recording does not hold)")
    expect(page.locator(".branches .status-answered")).to_have_count(2)
    assert llm_server.refused == []
    replayed = Session.open(server.root / "s.jsonl").tree.leaves()[-1]
    page.goto(f"{server.url}/s/s.jsonl/replay?leaf=a8")
    page.get_by_label("Branch", exact=True).select_option(replayed)  # another branch: its own starts (htmx)
    expect(page.locator(".replay-info")).to_contain_text("This branch is a replay of leaf a8 from u1")
    expect(page.get_by_label("Start from", exact=True)).to_have_value("u1")
    expect(page.get_by_label("Start from", exact=True).locator("option")).to_have_count(6)  # u1, a read, 2 results, an answer, u7


def test_a_step_limit_from_the_form_stops_the_replay_and_the_branch_says_so(server, llm_server, page):
    page.goto(f"{server.url}/s/s.jsonl?node=a6")
    page.get_by_role("link", name="Replay on another model…").click()
    expect(page.get_by_label("Start from", exact=True)).to_have_value("a6")
    page.get_by_label("Model", exact=True).select_option("openai/loop-model")
    page.get_by_label("model calls at most").fill("2")
    page.get_by_role("button", name="Replay on this model").click()
    expect(page.locator(".replay-stopped")).to_have_text("stopped: step limit 2 reached")
    page.get_by_role("link", name="Open the replayed branch").click()
    expect(page.locator(".branches .status-replay_stopped")).to_have_text("replay stopped")
    expect(page.locator(".branches .replay-info")).to_contain_text("; stopped: step limit 2 reached")
    tree = Session.open(server.root / "s.jsonl").tree
    stops = [e for e in tree.entries if e.type == "custom" and e.get("customType") == "session-tree.replay-stop"]
    assert len(stops) == 1 and stops[0].get("data")["steps"] == 2 and llm_server.refused == []


def test_the_sandbox_is_offered_only_by_a_server_started_with_it(tmp_path, llm_server, model_server, page):
    root = tmp_path / "sessions"
    root.mkdir()
    _, project = recorded_session(root)
    left = [{"calls": [("bash", {"command": "echo from the copy > made.txt && cat made.txt"})]}]
    llm_server.per_model("bash-model", "script", script=lambda body: left.pop(0) if left else {"text": "Ran it."})
    plain = model_server(root, models=("openai/bash-model",))
    page.goto(f"{plain.url}/s/s.jsonl/replay?leaf=a6")
    tools = page.locator(".replay-tools")
    expect(tools).to_contain_text("Sandbox tools are off")
    expect(tools.get_by_label("sandbox")).to_have_count(0)
    expect(tools.get_by_label("allow bash in the sandbox")).to_have_count(0)
    allowing = model_server(root, models=("openai/bash-model",), ALLOW_BASH=True)
    page.goto(f"{allowing.url}/s/s.jsonl/replay?leaf=a6")
    expect(tools).to_contain_text("each tool call runs in bubblewrap: no network")
    page.get_by_label("Model", exact=True).select_option("openai/bash-model")
    tools.get_by_role("radio", name="sandbox").check()
    tools.get_by_label("allow bash in the sandbox").check()
    page.get_by_role("button", name="Replay on this model").click()
    expect(page.locator("#replay-end")).to_contain_text("sandbox tools: 1 run, 0 refused; finished")
    page.get_by_role("link", name="Open the replayed branch").click()
    expect(page.locator(".branches .replay-info")).to_contain_text("sandbox tools: 1 call run")
    result = [e for e in Session.open(root / "s.jsonl").tree.entries if e.role == "toolResult"][-1]
    assert result.message["content"][0]["text"] == "from the copy\n"
    assert not (project / "made.txt").exists() and llm_server.refused == []


def test_cancel_closes_the_model_call_at_once_and_writes_nothing_before_the_first_reply(server, llm_server,
                                                                                      model_server, page):
    llm_server.per_model("endless-model", "generate", delay=0.3, limit=400)
    live = model_server(server.root, models=("openai/endless-model",))
    before = (server.root / "s.jsonl").read_bytes()
    page.goto(f"{live.url}/s/s.jsonl/replay?leaf=a8")
    page.get_by_label("Model", exact=True).select_option("openai/endless-model")
    page.get_by_role("button", name="Replay on this model").click()
    expect(page.locator(".replay-step .replay-text")).to_contain_text("word word")
    page.get_by_role("button", name="Cancel").click()
    expect(page.locator(".replay-failed")).to_have_text("Cancelled before the first reply: nothing was written.")
    assert llm_server.client_closed.wait(60) and llm_server.generated < 400  # the model server stopped
    assert (server.root / "s.jsonl").read_bytes() == before
