"""Codex rollouts read through the format seam (shared/formats/codex.md), one test per construct
of the mapping, on the fixture and on small hand-built rollouts."""

import orjson

from tests.conftest import FIXTURES
from webapp.core.context import build_context
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.tokens import context_tokens
from webapp.core.tree import SessionTree

ROLLOUT = FIXTURES / "codex" / "agent-sessions_codex_small.jsonl"
TS = "2026-08-03T10:48:56.000Z"


def rollout(*items: tuple[str, dict]) -> SessionTree:
    lines = [{"timestamp": TS, "type": t, "payload": p} for t, p in items]
    return SessionTree(parse_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines)))


META = ("session_meta", {"id": "sess-1", "timestamp": TS, "cwd": "/repo", "cli_version": "0.146.0",
                         "model_provider": "openai", "forked_from_id": "sess-0"})
TURN = ("turn_context", {"model": "gpt-5", "effort": "medium", "cwd": "/repo"})


def item(type: str, **fields) -> tuple[str, dict]:
    return ("response_item", {"type": type, **fields})


def user(text: str) -> tuple[str, dict]:
    return item("message", role="user", content=[{"type": "input_text", "text": text}])


def said(text: str) -> tuple[str, dict]:
    return item("message", role="assistant", content=[{"type": "output_text", "text": text}])


def test_session_meta_is_the_header_with_links_to_other_sessions():
    tree = rollout(META, user("hi"))
    assert tree.format == "codex"
    assert tree.header == {"type": "session", "version": 3, "id": "sess-1", "timestamp": TS, "cwd": "/repo",
                           "source": "codex", "sourceVersion": "0.146.0", "modelProvider": "openai",
                           "forked_from_id": "sess-0"}


def test_a_rollout_is_linear_with_ids_from_line_numbers():
    tree = rollout(META, TURN, user("hi"), said("hello"), user("more"))
    assert [(e.id, e.parent_id) for e in tree.entries] == [
        ("L2", None), ("L2:2", "L2"), ("L3", "L2:2"), ("L4", "L3"), ("L5", "L4")]
    assert tree.active_leaf == "L5" and tree.branch_points() == []
    assert all(e.generated_id for e in tree.entries)


def test_turn_context_gives_model_and_thinking_level_changes_only_when_they_change():
    tree = rollout(META, TURN, user("a"), TURN, ("turn_context", {"model": "gpt-5-mini", "effort": "medium"}))
    kinds = [(e.type, e.get("modelId") or e.get("thinkingLevel")) for e in tree.entries]
    assert kinds == [("model_change", "gpt-5"), ("thinking_level_change", "medium"), ("message", None),
                     ("model_change", "gpt-5-mini")]
    assert [n for n, _ in tree.metadata] == [1, 4]  # the header line and the unchanged turn context
    ctx = build_context(tree, tree.active_leaf)
    assert ctx.settings.model_name == "openai/gpt-5-mini" and ctx.settings.thinking_level == "medium"


def test_messages_keep_their_role_and_developer_text_is_a_hidden_custom_message():
    tree = rollout(META, item("message", role="developer", content=[{"type": "input_text", "text": "rules"}]),
                   user("hi"), said("hello"))
    dev = tree.entries[0]
    assert dev.type == "custom_message" and dev.get("display") is False and dev.get("customType") == "codex/developer"
    ctx = build_context(tree, tree.active_leaf)
    assert [(m["role"], m["content"]) for m in ctx.messages] == [("user", "rules"), ("user", "hi"),
                                                                  ("assistant", "hello")]


def test_reasoning_goes_on_the_next_assistant_message_and_calls_made_together_are_one_message():
    tree = rollout(META, user("list"),
                   item("reasoning", summary=[{"type": "summary_text", "text": "look first"}], encrypted_content="x"),
                   item("function_call", call_id="c1", name="shell", arguments='{"command":["ls"]}'),
                   item("custom_tool_call", call_id="c2", name="apply_patch",
                        input="*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch"),
                   item("function_call_output", call_id="c1", output='{"output":"a.py\\n","metadata":{"exit_code":0}}'),
                   item("custom_tool_call_output", call_id="c2", output=[{"type": "input_text", "text": "Done"}]),
                   said("ok"))
    call = tree.entry("L4")
    assert [o["payload"]["type"] for o in call.source] == ["reasoning", "function_call", "custom_tool_call"]
    content = call.message["content"]
    assert content[0] == {"type": "thinking", "thinking": "look first"}
    assert content[1] == {"type": "toolCall", "id": "c1", "name": "shell", "arguments": {"command": ["ls"]}}
    assert content[2]["name"] == "apply_patch" and content[2]["arguments"]["input"].startswith("*** Begin Patch")
    r1, r2 = tree.entry("L6"), tree.entry("L7")
    assert r1.message == {"role": "toolResult", "toolCallId": "c1", "toolName": "shell",  # as the model got it
                          "content": [{"type": "text", "text": '{"output":"a.py\\n","metadata":{"exit_code":0}}'}],
                          "isError": False}
    assert r2.message["toolName"] == "apply_patch" and r2.message["content"][0]["text"] == "Done"
    ctx = build_context(tree, tree.active_leaf)
    assert [m["role"] for m in ctx.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert [c["id"] for c in ctx.messages[1]["tool_calls"]] == ["c1", "c2"]


def test_a_failed_command_is_an_error_result():
    tree = rollout(META, item("function_call", call_id="c1", name="shell", arguments='{"command":["false"]}'),
                   item("function_call_output", call_id="c1", output='{"output":"","metadata":{"exit_code":1}}'))
    assert tree.entry("L3").message["isError"] is True


def test_token_count_events_give_the_usage_of_the_preceding_assistant_message():
    usage = {"input_tokens": 1000, "cached_input_tokens": 600, "output_tokens": 50, "total_tokens": 1050}
    tree = rollout(META, user("hi"), said("hello"),
                   ("event_msg", {"type": "token_count", "info": {"last_token_usage": usage}}))
    assert tree.entry("L3").message["usage"] == {"input": 400, "output": 50, "cacheRead": 600, "cacheWrite": 0,
                                                 "totalTokens": 1050}
    count = context_tokens(build_context(tree, tree.active_leaf))
    assert count.context == 1050 and count.usage_entry_id == "L3"
    assert [n for n, _ in tree.metadata] == [1, 4]  # events are not nodes


def test_compacted_is_a_compaction_whose_context_is_exactly_the_replacement_history():
    history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "the task"}]},
               {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "summary"}]}]
    tree = rollout(META, user("old"), said("old answer"),
                   ("compacted", {"message": "a summary", "replacement_history": history}), user("new"))
    c = tree.entry("L4")
    assert c.type == "compaction" and c.get("summary") == "a summary" and c.get("firstKeptEntryId") is None
    ctx = build_context(tree, tree.active_leaf)
    assert [(m["role"], m["content"], m["entryId"]) for m in ctx.messages] == [
        ("user", "the task", "L4"), ("assistant", "summary", "L4"), ("user", "new", "L5")]
    assert ctx.replaced_by == {"L2": "L4", "L3": "L4"}
    assert ctx.problems == [] and tree.problems == []


def test_a_second_session_meta_continues_the_rollout():
    tree = rollout(META, user("a"), ("session_meta", {"id": "sess-2"}), user("b"))
    assert tree.roots == ["L2"] and tree.parent["L3"] == "L2"
    assert tree.entry("L3").get("customType") == "codex/session_meta"
    assert tree.parent["L4"] == "L3"


def test_ghost_snapshots_and_other_items_are_custom_entries():
    tree = rollout(META, item("ghost_snapshot", ghost_commit={"id": "g"}), ("world_state", {"full": True}))
    assert [e.get("customType") for e in tree.entries] == ["codex/ghost_snapshot", "codex/world_state"]
    assert build_context(tree, tree.active_leaf).messages == []


def test_the_fixture_reads_as_one_line_with_messages_tool_calls_results_and_compactions():
    s = Session.open(ROLLOUT)
    tree = s.tree
    assert tree.format == "codex" and tree.branch_points() == []
    assert len(tree.roots) == 1 and len(tree.leaves()) == 1  # its 7 session_meta lines are no branches
    assert all(len(tree.children.get(e.id, [])) <= 1 for e in tree.entries)
    roles = [e.role for e in tree.entries if e.type == "message"]
    assert {"user", "assistant", "toolResult"} <= set(roles)
    assert len(tree.compactions()) == 6
    first = tree.entry("L9")  # custom_tool_call + function_call, after their reasoning
    assert [b["type"] for b in first.message["content"]] == ["thinking", "toolCall", "toolCall"]
    ctx = build_context(tree, "L28")
    assert ctx.messages[0]["entryId"] == "L26" and ctx.messages[0]["role"] == "user"
    assert ctx.problems == []
    for leaf in tree.leaves():
        build_context(tree, leaf)
