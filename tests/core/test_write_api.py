"""The typed write API of Session: one method per kind of entry, each validated like the reader."""

from __future__ import annotations

import pytest

from tests.conftest import Builder, lines_of, storage_bytes
from webapp.core.context import build_context
from webapp.core.errors import InvalidWrite, UnknownEntry


def _conversation() -> Builder:
    b = Builder()
    b.user("one", id="u1")
    b.assistant("a1", id="a1")
    b.user("two", id="u2")
    b.assistant("a2", id="a2")
    return b


def test_each_method_writes_its_entry_type(make_session):
    s = make_session(_conversation().data())
    s.append_message({"role": "user", "content": "three"})
    s.append_custom_message("note", "injected", display=False, details={"k": 1})
    s.append_model_change("anthropic", "claude-x")
    s.append_thinking_level_change("high")
    s.set_label("u1", "  start ")
    s.set_name("my session")
    written = lines_of(storage_bytes(s))[-6:]
    assert [e["type"] for e in written] == [
        "message", "custom_message", "model_change", "thinking_level_change", "label", "session_info"]
    assert written[1]["customType"] == "note" and written[1]["display"] is False and written[1]["details"] == {"k": 1}
    assert (written[2]["provider"], written[2]["modelId"]) == ("anthropic", "claude-x")
    assert written[4]["label"] == "start" and written[5]["name"] == "my session"
    # each continues from the one before it (the active leaf)
    assert [e["parentId"] for e in written[1:]] == [e["id"] for e in written[:-1]]
    settings = build_context(s.tree, s.tree.active_leaf).settings
    assert (settings.model_id, settings.thinking_level) == ("claude-x", "high")
    assert s.tree.labels["u1"] == "start"


@pytest.mark.parametrize("fields, message", [
    ({"type": "message"}, "needs message"),
    ({"type": "custom_message", "customType": "x"}, "needs content"),
    ({"type": "model_change", "provider": "p"}, "needs modelId"),
    ({"type": "branch_summary", "summary": "s"}, "needs fromId"),
    ({"type": "label", "id": "mine", "targetId": "u1"}, "do not set id"),
    ({"no": "type"}, "string `type`"),
    (["not", "an", "object"], "string `type`"),
])
def test_append_entry_refuses_what_the_reader_would_report(make_session, fields, message):
    s = make_session(_conversation().data())
    before = storage_bytes(s)
    with pytest.raises(InvalidWrite, match=message):
        s.append_entry(fields)
    assert storage_bytes(s) == before


def test_typed_methods_validate_their_arguments(make_session):
    s = make_session(_conversation().data())
    before = storage_bytes(s)
    with pytest.raises(InvalidWrite, match="string `role`"):
        s.append_message({"content": "no role"})
    with pytest.raises(InvalidWrite, match="thinking level"):
        s.append_thinking_level_change("extreme")
    with pytest.raises(InvalidWrite, match="model id"):
        s.append_model_change("p", "")
    with pytest.raises(UnknownEntry):
        s.set_label("nope", "x")
    assert storage_bytes(s) == before


def test_append_compaction_checks_the_first_kept_entry(make_session):
    s = make_session(_conversation().data())
    before = storage_bytes(s)
    with pytest.raises(InvalidWrite, match="names no entry"):
        s.append_compaction("sum", "ghost", 100)
    with pytest.raises(InvalidWrite, match="empty"):
        s.append_compaction("  ", "u2", 100)
    assert storage_bytes(s) == before
    entry = s.append_compaction("sum", "u2", 100, 40, {"readFiles": []})
    assert (entry["parentId"], entry["firstKeptEntryId"], entry["tokensAfter"]) == ("a2", "u2", 40)
    ctx = build_context(s.tree, s.tree.active_leaf)
    assert ctx.compaction is not None and ctx.compaction.id == entry["id"]


def test_fork_and_fork_with_summary(make_session):
    s = make_session(_conversation().data())
    result = s.fork("u2", "before")
    assert (result.leaf_id, result.edit_text, result.entry["type"]) == ("a1", "two", "leaf")
    s.fork("a2", "at")
    result = s.fork_with_summary("a1", "at", "what the second turn did", {"summarizer": "provided"})
    entry = result.entry
    assert (entry["type"], entry["parentId"], entry["fromId"]) == ("branch_summary", "a1", "a2")
    assert s.tree.active_leaf == result.leaf_id == entry["id"]
    with pytest.raises(InvalidWrite, match="position"):
        s.fork("u1", "after")
