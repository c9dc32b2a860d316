"""The request for the model (SPEC §5b): what is repaired, what is reported, and that a strict
OpenAI-compatible server (tests/fake_llm.py) accepts `continue` on every real session we have."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from tests.conftest import PI_FIXTURES, Builder
from tests.fake_llm import strict_problem
from webapp.cli import main
from webapp.core.context import build_context
from webapp.core.continuation import continue_in_new_session
from webapp.core.reader import parse_bytes
from webapp.core.request import ADD_RESULT, NO_RESULT, SKIP_ABORTED, SKIP_EMPTY, SKIP_ERROR, SKIP_ORPHAN, build_request
from webapp.core.session import Session
from webapp.core.tree import SessionTree
from webapp.model.llm import continue_branch

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
SAMPLE_FILES = sorted(SAMPLES.rglob("*.jsonl"))


def broken_session() -> Builder:
    """Every shape a provider refuses: a call left unanswered, an aborted and an errored turn (one
    with a call), an empty assistant message, and a compaction kept from a tool result."""
    b = Builder()
    b.user("Look at the parser.", id="u1")
    b.assistant("", id="a2", calls=[{"id": "k1", "name": "read", "arguments": {"path": "a.py"}},
                                    {"id": "k2", "name": "read", "arguments": {"path": "b.py"}}])
    b.tool_result("k1", "a", id="t3")
    b.user("Stop, look at b.py only.", id="u4")
    b.assistant("Partial", id="a5", stop="aborted", calls=[{"id": "k3", "name": "read", "arguments": {}}])
    b.assistant("", id="a6", stop="error")
    b.user("Again.", id="u7")
    b.assistant("", id="a8")
    b.assistant("", id="a9", calls=[{"id": "k4", "name": "bash", "arguments": {"command": "ls"}}])
    b.tool_result("k4", "a.py b.py", id="t10")
    b.user("Thanks.", id="u11")
    return b


def test_the_request_repairs_what_a_provider_refuses_and_says_why():
    tree = SessionTree(parse_bytes(broken_session().data()))
    ctx = build_context(tree, "u11")
    assert strict_problem(ctx.llm_messages())  # the context as it is would get a 400
    req = build_request(ctx)
    assert strict_problem(req.llm_messages()) is None
    assert [(c.action, c.entry_id, c.reason) for c in req.changes] == [
        ("added", "a2", ADD_RESULT),
        ("skipped", "a5", SKIP_ABORTED),
        ("skipped", "a6", SKIP_ERROR),
        ("skipped", "a8", SKIP_EMPTY),
    ]
    added = req.messages[req.added[0].index]
    assert added == {"role": "tool", "tool_call_id": "k2", "content": NO_RESULT, "entryId": "a2", "added": True}
    assert [m["entryId"] for m in req.messages] == ["u1", "a2", "t3", "a2", "u4", "u7", "a9", "t10", "u11"]
    assert req.messages[-1]["content"] == "Thanks."  # the new user message comes last
    assert all("entryId" not in m and "added" not in m for m in req.llm_messages())


def test_a_compaction_kept_from_a_tool_result_drops_the_orphan_and_validation_warns():
    b = broken_session()
    b.add("compaction", id="c12", parent="u11", summary="Parser work.", firstKeptEntryId="t10", tokensBefore=900)
    b.user("Go on.", id="u13")
    tree = SessionTree(parse_bytes(b.data()))
    req = build_request(build_context(tree, "u13"))
    assert [(c.action, c.entry_id, c.reason) for c in req.changes] == [("skipped", "t10", SKIP_ORPHAN)]
    assert strict_problem(req.llm_messages()) is None
    warnings = {(p.kind, p.entry_id, p.line) for p in tree.all_problems()}
    assert ("first-kept-tool-result", "c12", 13) in warnings
    assert ("unanswered-tool-call", "a2", 3) in warnings and ("unanswered-tool-call", "a5", 6) in warnings


def test_validate_lists_the_warnings_with_their_lines_and_passes(capsys):
    large = next(p for p in PI_FIXTURES if p.name == "pi-mono_large-session.jsonl")
    assert main(["validate", str(large)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and all(": warning: unanswered-tool-call: " in line for line in out)
    assert out[0].startswith(f"{large}:33: warning: unanswered-tool-call: 16 of 16 tool calls have no result")


def test_context_request_prints_what_was_added_and_skipped(capsys, tmp_path):
    path = broken_session().write(tmp_path / "s.jsonl")
    assert main(["context", str(path), "--request"]) == 0
    out = capsys.readouterr().out
    assert "9 messages (1 added, 3 skipped)" in out
    assert f"- skipped [a5]: {SKIP_ABORTED}" in out and f"- skipped [a8]: {SKIP_EMPTY}" in out
    assert f"+ added tool [a2] for k2\n{NO_RESULT}" in out
    assert main(["context", str(path), "--request", "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert {"action": "added", "entryId": "a2", "reason": ADD_RESULT, "index": 3} in data["changes"]


@pytest.mark.parametrize("source", PI_FIXTURES + SAMPLE_FILES, ids=lambda p: p.name)
def test_continue_is_accepted_by_a_strict_server_on_every_real_session(source, tmp_path, llm_server, config):
    """pi v1 files are read-only (SPEC §5c): they are continued in a new v3 session, as a user would."""
    path = tmp_path / source.name
    shutil.copy(source, path)
    session = Session.open(path)
    if session.read_only_reason:
        assert (session.log.header or {}).get("version") != 3
        before = path.read_bytes()
        path = continue_in_new_session(session, session.tree.active_leaf)
        session = Session.open(path)
        assert (tmp_path / source.name).read_bytes() == before  # the source is never changed
    llm_server.behave("stream", pieces=["Accepted."])
    result = continue_branch(session, config, "Carry on.")
    assert llm_server.refused == []
    sent = llm_server.requests[-1]["messages"]
    assert sent[-1] == {"role": "user", "content": "Carry on."}
    assert result["assistantEntry"]["message"]["content"] == [{"type": "text", "text": "Accepted."}]
    assert orjson.loads(path.read_bytes().splitlines()[-1])["id"] == result["assistantEntry"]["id"]


READ = {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}
BASH = {"name": "bash", "description": "Run a command", "parameters": {"type": "object", "properties": {}}}


def test_continue_sends_the_system_prompt_and_the_tools_in_force_as_pi_does(tmp_path, llm_server, config):
    """pi 1.6's system messages: folded into one leading system prompt (pi's rendering for a model
    that takes no system message mid-conversation), their tools declared with the request."""
    b = Builder()
    b.user("Hi.", id="u1")
    b.add("message", id="s1", message={"role": "system", "content": "You are pi.", "sections": {"agents": "Be brief."},
                                       "toolsAdded": [READ, BASH]})
    b.assistant("Hello.", id="a1")
    b.add("message", id="s2", message={"role": "system", "content": "", "sections": {"agents": None, "date": "Monday"},
                                       "toolsRemoved": [{"name": "bash"}]})
    session = Session.open(b.write(tmp_path / "s.jsonl"))
    req = build_request(build_context(session.tree, "s2"))
    assert [(c.action, c.entry_id, c.index) for c in req.changes] == [("added", "s1", 0), ("skipped", "s1", 1),
                                                                     ("skipped", "s2", 3)]
    llm_server.behave("stream", pieces=["Ok."])
    continue_branch(session, config, "Go on.")
    sent = llm_server.requests[-1]
    assert sent["messages"][0] == {"role": "system", "content": "You are pi.\n\nMonday"}
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "user"]
    assert sent["tools"] == [{"type": "function", "function": READ}]
    assert llm_server.refused == []
