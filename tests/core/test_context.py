"""What the model sees at a leaf (SPEC §5): settings, the latest compaction, message mapping."""

import json

from tests.conftest import Builder
from webapp.core.context import build_context
from webapp.core.messages import BRANCH_PREFIX, COMPACTION_PREFIX
from webapp.core.reader import parse_bytes
from webapp.core.tree import SessionTree


def ctx_of(b: Builder, leaf: str | None = "active"):
    tree = SessionTree(parse_bytes(b.data()))
    return build_context(tree, tree.active_leaf if leaf == "active" else leaf)


def ids(ctx) -> list[str]:
    return [m["entryId"] for m in ctx.messages]


# -- settings --------------------------------------------------------------------------------------


def test_settings_come_from_the_latest_changes_on_the_path():
    b = Builder()
    b.add("model_change", provider="anthropic", modelId="claude")
    b.add("thinking_level_change", thinkingLevel="high")
    b.add("active_tools_change", tools=["read", "bash"])
    b.user("q")
    b.assistant("a", provider="openai", model="gpt")  # an assistant reply sets the model too
    b.add("thinking_level_change", thinkingLevel="low")
    s = ctx_of(b).settings
    assert s.model == {"provider": "openai", "modelId": "gpt"}
    assert s.thinking_level == "low"
    assert s.active_tools == ["read", "bash"]
    b.add("model_change", provider="google", modelId="gemini")
    assert ctx_of(b).settings.model == {"provider": "google", "modelId": "gemini"}


def test_settings_only_from_the_path_not_from_other_branches():
    b = Builder()
    b.user("q")
    b.add("model_change", provider="p", modelId="on-branch")
    b.add("leaf", targetId="e1", parent="e1")
    s = ctx_of(b).settings
    assert s.model is None and s.thinking_level is None and s.active_tools is None


def test_v1_header_seeds_the_settings():
    b = Builder(version=None, provider="anthropic", modelId="claude-opus", thinkingLevel="off")
    b.user("q")
    s = ctx_of(b).settings
    assert s.model == {"provider": "anthropic", "modelId": "claude-opus"}
    assert s.thinking_level == "off"
    b.add("thinking_level_change", thinkingLevel="medium")
    assert ctx_of(b).settings.thinking_level == "medium"


def test_settings_before_a_compaction_still_count():
    b = Builder()
    b.add("model_change", provider="p", modelId="m")
    b.add("active_tools_change", tools=["read"])
    b.user("old")
    u = b.user("kept")
    b.add("compaction", summary="S", firstKeptEntryId=u)
    ctx = ctx_of(b)
    assert ctx.settings.model == {"provider": "p", "modelId": "m"}
    assert ctx.settings.active_tools == ["read"]


# -- compaction ------------------------------------------------------------------------------------


def compacted() -> Builder:
    """u1 a2 u3 a4 C1(keep u3) u6 a7 C2(keep u6) u9."""
    b = Builder()
    b.user("u1")
    b.assistant("a2")
    b.user("u3")
    b.assistant("a4")
    b.add("compaction", summary="FIRST", firstKeptEntryId="e3", tokensBefore=10)
    b.user("u6")
    b.assistant("a7")
    b.add("compaction", summary="SECOND", firstKeptEntryId="e6", tokensBefore=10)
    b.user("u9")
    return b


def test_only_the_latest_compaction_on_the_path_counts():
    ctx = ctx_of(compacted())
    first = ctx.messages[0]
    assert first["role"] == "user" and first["entryId"] == "e8"
    assert "SECOND" in first["content"] and COMPACTION_PREFIX in first["content"]
    assert not any("FIRST" in str(m["content"]) for m in ctx.messages)
    assert ids(ctx) == ["e8", "e6", "e7", "e9"]
    assert ctx.compaction.id == "e8"
    assert ctx.messages[ctx.after_index]["entryId"] == "e9"
    assert ctx.problems == []


def test_context_at_a_leaf_between_the_compactions_uses_the_first():
    ctx = ctx_of(compacted(), "e7")
    assert ids(ctx) == ["e5", "e3", "e4", "e6", "e7"]
    assert "FIRST" in ctx.messages[0]["content"]


def test_the_latest_compaction_may_keep_more_than_an_earlier_one_did():
    b = Builder()
    b.user("u1")
    b.user("u2")
    b.user("u3")
    b.add("compaction", summary="FIRST", firstKeptEntryId="e3")
    b.user("u5")
    b.add("compaction", summary="SECOND", firstKeptEntryId="e2")
    ctx = ctx_of(b)
    # SPEC §5: the latest compaction's summary, then the path from ITS firstKeptEntryId.
    assert ids(ctx) == ["e6", "e2", "e3", "e5"]
    assert ctx.replaced_by == {"e1": "e4"}


def test_replaced_by_maps_each_summarized_entry_to_the_compaction_that_dropped_it():
    ctx = ctx_of(compacted())
    assert ctx.replaced_by == {"e1": "e5", "e2": "e5", "e3": "e8", "e4": "e8"}
    assert set(ctx.replaced_by).isdisjoint(ids(ctx))


def test_first_kept_not_on_the_path_keeps_nothing_before_the_compaction_and_is_reported():
    b = Builder()
    b.user("u1")
    b.user("u2")
    side = b.user("side", parent="e1")
    b.user("u4", parent="e2")
    b.add("compaction", summary="S", firstKeptEntryId=side)
    b.user("after")
    ctx = ctx_of(b)
    assert ids(ctx) == ["e5", "e6"]
    assert len(ctx.problems) == 1 and "not on the path" in ctx.problems[0]
    tree = SessionTree(parse_bytes(b.data()))
    assert [p.kind for p in tree.problems] == ["dangling-first-kept"]


def test_first_kept_naming_nothing_keeps_nothing_before_the_compaction():
    b = Builder()
    b.user("u1")
    b.add("compaction", summary="S", firstKeptEntryId="ghost")
    ctx = ctx_of(b)
    assert ids(ctx) == ["e2"]
    assert "names no entry" in ctx.problems[0]


def test_first_kept_after_the_compaction_is_not_before_it():
    b = Builder()
    b.user("u1")
    b.add("compaction", summary="S", firstKeptEntryId="e3")
    b.user("u3")
    ctx = ctx_of(b)
    assert ids(ctx) == ["e2", "e3"]
    assert ctx.problems


# -- message mapping -------------------------------------------------------------------------------


def test_tool_calls_and_results_in_openai_format():
    b = Builder()
    b.user("read it")
    b.assistant("", calls=[{"id": "call_1", "name": "read", "arguments": {"path": "a.py", "n": 2}}])
    b.tool_result("call_1", "file text")
    b.assistant("done", calls=[{"id": "call_2", "name": "bash", "arguments": {}}])
    m = ctx_of(b).messages
    assert m[1]["role"] == "assistant" and m[1]["content"] is None
    (call,) = m[1]["tool_calls"]
    assert call["id"] == "call_1" and call["type"] == "function"
    assert call["function"]["name"] == "read"
    assert isinstance(call["function"]["arguments"], str)
    assert json.loads(call["function"]["arguments"]) == {"path": "a.py", "n": 2}
    assert m[2] == {"role": "tool", "tool_call_id": "call_1", "content": "file text", "entryId": "e3"}
    assert m[3]["content"] == "done" and m[3]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_plain_assistant_message_has_no_tool_calls_key():
    b = Builder()
    b.assistant("hello")
    (m,) = ctx_of(b).messages
    assert m == {"role": "assistant", "content": "hello", "entryId": "e1"}


def test_user_images_become_content_parts():
    b = Builder()
    b.add("message", message={"role": "user", "content": [
        {"type": "text", "text": "look"},
        {"type": "image", "mimeType": "image/jpeg", "data": "AAAA"},
    ]})
    (m,) = ctx_of(b).messages
    assert m["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
    ]


def test_branch_summary_custom_message_and_custom_role_become_user_messages():
    b = Builder()
    b.user("q")
    b.add("branch_summary", fromId="x", summary="we tried X")
    b.add("branch_summary", fromId="x", summary="   ")
    b.add("custom_message", customType="ext", content="injected", display=True)
    b.add("message", message={"role": "hookMessage", "content": "from a hook"})
    m = ctx_of(b).messages
    assert [x["role"] for x in m] == ["user"] * 4
    assert ids(ctx_of(b)) == ["e1", "e2", "e4", "e5"]
    assert BRANCH_PREFIX in m[1]["content"] and "we tried X" in m[1]["content"]
    assert m[2]["content"] == "injected"
    assert m[3]["content"] == "from a hook"


def test_bash_execution_becomes_a_user_message_unless_excluded():
    b = Builder()
    b.add("message", message={"role": "bashExecution", "command": "ls -l", "output": "total 0", "exitCode": 2})
    b.add("message", message={"role": "bashExecution", "command": "secret", "output": "x",
                               "excludeFromContext": True})
    (m,) = ctx_of(b).messages
    assert m["role"] == "user" and m["entryId"] == "e1"
    assert "ls -l" in m["content"] and "total 0" in m["content"] and "code 2" in m["content"]


def test_meta_entries_contribute_nothing():
    b = Builder()
    b.user("q")
    for t, f in [("model_change", {"provider": "p", "modelId": "m"}), ("thinking_level_change", {"thinkingLevel": "x"}),
                 ("active_tools_change", {"tools": []}), ("session_info", {"name": "n"}),
                 ("label", {"targetId": "e1", "label": "l"}), ("custom", {"customType": "c", "data": 1}),
                 ("mystery", {})]:
        b.add(t, **f)
    b.assistant("a")
    assert ids(ctx_of(b)) == ["e1", "e9"]


def test_every_message_is_tagged_and_llm_messages_strip_the_tag():
    b = compacted()
    ctx = ctx_of(b)
    assert all("entryId" in m for m in ctx.messages)
    assert [s.id for s in ctx.sources] == ids(ctx)
    llm = ctx.llm_messages()
    assert len(llm) == len(ctx.messages)
    assert all("entryId" not in m for m in llm)
    assert [{k: v for k, v in m.items() if k != "entryId"} for m in ctx.messages] == llm
    assert "entryId" in ctx.messages[0]  # the tagged list is left as it was


def test_context_of_another_branch_has_only_that_branch():
    b = Builder()
    b.user("q")
    b.assistant("a1")
    b.assistant("a2", parent="e1")
    assert ids(ctx_of(b)) == ["e1", "e3"]
    assert ids(ctx_of(b, "e2")) == ["e1", "e2"]
