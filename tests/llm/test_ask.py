"""Asking several models at one node against the strict local server, where model names answer
differently (one slow, one failing): the entries written, the concurrency, cancel and failure,
the cost estimate, and `session-tree ask`."""

from __future__ import annotations

import time

import pytest

from tests.conftest import Builder, lines_of
from tests.llm.conftest import PATIENT, TEST_MODEL, run
from webapp.core.session import Session
from webapp.model.ask import estimates, parse_models, run as run_ask, start
from webapp.model.llm import ModelConfig

FAST, SLOW, BROKEN, OTHER = "openai/fast-model", "openai/slow-model", "openai/broken-model", "openai/other-model"


@pytest.fixture
def session(tmp_path) -> Session:
    b = Builder()
    b.add("model_change", id="m0", provider="openai", modelId="test-model")
    b.user("Why does test_total_with_discount fail?", id="u1")
    b.assistant("Rounding happens per line, before the discount.", id="a2", **TEST_MODEL)
    return Session.open(b.write(tmp_path / "s.jsonl"))


@pytest.fixture
def base(llm_server) -> ModelConfig:
    llm_server.per_model("fast-model", "reply", pieces=["Fast", " answer."])
    llm_server.per_model("slow-model", "reply", pieces=["Slow", " and", " careful", "."], delay=0.25)
    llm_server.per_model("broken-model", "500")
    llm_server.per_model("other-model", "reply", pieces=["Another", " view."], delay=0.25)
    return ModelConfig(None, api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT)


def entries(session: Session) -> list[dict]:
    return lines_of(session.storage.path.read_bytes())[1:]


def test_one_shared_user_message_and_a_sibling_branch_per_model_that_answered(session, base, llm_server):
    before = len(entries(session))
    ask = run_ask(session, base, start(session, "a2", parse_models(f"{FAST}, {SLOW},{BROKEN}"), "Fix it, minimal."))
    new = entries(session)[before:]
    users = [e for e in new if e["type"] == "message" and e["message"]["role"] == "user"]
    assert len(users) == 1 and users[0]["parentId"] == "a2" and users[0]["id"] == ask.user
    changes = {e["modelId"]: e for e in new if e["type"] == "model_change"}
    assert set(changes) == {"fast-model", "slow-model"}  # the failed column left no model_change behind
    assert all(c["parentId"] == ask.user for c in changes.values())  # siblings under the one message
    for model in ("fast-model", "slow-model"):  # stamped when its call began, before its reply came
        answer = next(e for e in new if e.get("parentId") == changes[model]["id"])
        assert changes[model]["timestamp"] < answer["timestamp"]
    answers = {e["message"]["model"]: e for e in new if e["type"] == "message" and e["message"]["role"] == "assistant"}
    assert set(answers) == {"fast-model", "slow-model"}  # the failed column wrote no assistant entry
    assert answers["fast-model"]["parentId"] == changes["fast-model"]["id"]
    assert answers["slow-model"]["message"]["content"] == [{"type": "text", "text": "Slow and careful."}]
    fast, slow, broken = ask.columns
    assert (fast.status, slow.status, broken.status) == ("done", "done", "failed")
    assert "500" in broken.error and "Nothing was written for openai/broken-model" in broken.error
    assert ask.answers == [fast.entry, slow.entry]
    assert llm_server.refused == [] and len(llm_server.requests) == 3
    assert {r["messages"][-1]["content"] for r in llm_server.requests} == {"Fix it, minimal."}
    tree = Session.open(session.storage.path).tree
    assert set(ask.answers) <= set(tree.leaves())


def test_the_models_answer_at_once_not_one_after_another(session, base, llm_server):
    ask = start(session, "a2", [SLOW, OTHER], "Explain it again.")
    began = time.monotonic()
    run_ask(session, base, ask)
    wall = time.monotonic() - began
    each = [c.seconds for c in ask.columns]
    assert [c.status for c in ask.columns] == ["done", "done"]
    assert wall < 0.8 * sum(each)  # one after another would take the sum
    assert wall >= max(each)


def test_a_cancelled_column_writes_nothing_and_the_others_go_on(session, base, llm_server):
    ask = start(session, "a2", [FAST, SLOW], "Once more.")
    seen: list[str] = []

    def on_event(i, event, data):
        seen.append(event)
        if i == 1 and event == "delta":
            ask.columns[1].cancel.set()

    before = len(entries(session))
    run_ask(session, base, ask, on_event)
    fast, slow = ask.columns
    assert (fast.status, slow.status) == ("done", "cancelled")
    assert slow.entry is None and slow.error == "Cancelled: no reply was written."
    models = [e["message"]["model"] for e in entries(session)[before:]
              if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert models == ["fast-model"]
    assert "cancelled" in seen and "done" in seen and llm_server.refused == []


def test_regenerate_here_answers_the_same_user_message_again(session, base, llm_server):
    before = len(entries(session))
    ask = run_ask(session, base, start(session, "a2", [FAST, "openai/test-model"], None))
    assert ask.user == "u1" and not ask.new_user
    new = entries(session)[before:]
    assert not [e for e in new if e["type"] == "message" and e["message"]["role"] == "user"]
    answers = [e for e in new if e["type"] == "message"]
    # the branch's own model answers right under the message; another one after its model_change
    same = next(e for e in answers if e["message"]["model"] == "test-model")
    assert same["parentId"] == "u1"
    assert [r["messages"][-1] for r in llm_server.requests] == [
        {"role": "user", "content": "Why does test_total_with_discount fail?"}] * 2


def test_estimates_say_unknown_without_a_price(session):
    got = estimates(session, "a2", ["openai/gpt-4o-mini", "openai/no-such-model"], "Try again")
    assert got[0].tokens == got[1].tokens > 0
    assert got[0].cost is not None and got[0].cost > 0
    assert got[1].cost is None


def test_bad_asks_are_refused_before_anything_is_written(session):
    before = session.storage.path.read_bytes()
    with pytest.raises(Exception, match="name at least one model"):
        parse_models(" , ")
    with pytest.raises(Exception, match="the message is empty"):
        start(session, "a2", [FAST], "  ")
    with pytest.raises(Exception, match="nothing waits for a reply there"):
        start(session, "m0", [FAST], None)
    assert session.storage.path.read_bytes() == before


def test_cli_ask_prints_estimates_and_each_column(capsys, session, base, llm_server, monkeypatch):
    monkeypatch.setenv("SESSION_TREE_API_KEY", "dummy")
    path = session.storage.path
    code, out, err = run(capsys, "ask", path, "--at", "a2", "--models", f"{FAST},{BROKEN}", "--models", SLOW,
                         "--message", "Fix it", "--api-base", llm_server.api_base)
    assert code == 1, err  # a column failed
    assert "asking 3 models at a2" in out
    assert f"  {FAST}: ~" in out and "estimated unknown (input only)" in out
    assert "] openai/broken-model failed in" in out
    assert "compare them: session-tree compare" in out
    assert sum(1 for e in lines_of(path.read_bytes()) if e.get("message", {}).get("role") == "assistant") == 3
    assert llm_server.refused == []


def test_cli_ask_estimate_sends_nothing(capsys, session, llm_server):
    before = session.storage.path.read_bytes()
    code, out, _ = run(capsys, "ask", session.storage.path, "--at", "a2", "--models", "openai/gpt-4o-mini",
                       "--estimate", "--api-base", llm_server.api_base)
    assert code == 0 and "openai/gpt-4o-mini: ~" in out and "estimated $" in out
    assert llm_server.requests == [] and session.storage.path.read_bytes() == before
