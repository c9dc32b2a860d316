"""Token counts and compaction (SPEC §6), and branch summaries (SPEC §4)."""

import pytest

from tests.conftest import Builder, storage_bytes
from webapp.core.compaction import (
    is_cut_point,
    plan_branch_summary,
    plan_compaction,
    with_file_lists,
)
from webapp.core.context import build_context
from webapp.core.errors import InvalidWrite
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.messages import IMAGE_TOKENS, estimate_message_tokens
from webapp.core.summary_writes import write_branch_summary, write_compaction
from webapp.core.tokens import context_tokens, usage_tokens
from webapp.core.tree import SessionTree

T100 = "x" * 400  # 100 estimated tokens


def tree_of(b: Builder) -> SessionTree:
    return SessionTree(parse_bytes(b.data()))


def tokens_of(b: Builder):
    tree = tree_of(b)
    return context_tokens(build_context(tree, tree.active_leaf))


# -- tokens ----------------------------------------------------------------------------------------


def test_estimate_counts_text_tool_calls_and_images():
    assert estimate_message_tokens({"content": "x" * 41}) == 11
    call = {"function": {"name": "read", "arguments": '{"path":"a"}'}}  # 4 + 12 chars
    assert estimate_message_tokens({"content": None, "tool_calls": [call]}) == 4
    parts = [{"type": "text", "text": "abcd"}, {"type": "image_url", "image_url": {"url": "u"}}]
    assert estimate_message_tokens({"content": parts}) == 1 + IMAGE_TOKENS


def test_count_is_the_last_usage_plus_an_estimate_of_what_follows():
    b = Builder()
    b.user(T100)
    b.assistant("a", usage=1000)
    b.user(T100)
    b.user("y" * 40)
    t = tokens_of(b)
    assert t.usage_entry_id == "e2"
    assert t.estimated == 110
    assert t.context == 1110


def test_usage_without_total_sums_its_parts():
    b = Builder()
    b.user("q")
    b.add("message", message={"role": "assistant", "content": "a", "stopReason": "stop",
                               "usage": {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 1}})
    assert tokens_of(b).context == 116
    assert usage_tokens(tree_of(b).entry("e2")) == 116


def test_no_usage_at_all_estimates_everything():
    b = Builder()
    b.user(T100)
    b.assistant("y" * 400)
    t = tokens_of(b)
    assert t.usage_entry_id is None
    assert t.context == t.estimated == 200


@pytest.mark.parametrize("stop", ["aborted", "error"])
def test_aborted_and_failed_replies_do_not_anchor_the_count(stop):
    b = Builder()
    b.user("q")
    b.assistant("a", usage=500)
    b.user(T100)
    b.assistant("", usage=99999, stop=stop)
    t = tokens_of(b)
    assert t.usage_entry_id == "e2"
    assert t.context == 500 + 100
    assert usage_tokens(tree_of(b).entry("e4")) is None


def test_usage_from_before_the_latest_compaction_is_ignored():
    b = Builder()
    b.user(T100)
    b.assistant("a", usage=150000)
    b.user(T100)
    kept = b.assistant("k" * 400, usage=160000)  # kept, but measured the uncompacted context
    b.add("compaction", summary="S", firstKeptEntryId="e3")
    b.user(T100)
    tree = tree_of(b)
    ctx = build_context(tree, tree.active_leaf)
    t = context_tokens(ctx)
    assert kept in ctx.entry_ids
    assert t.usage_entry_id is None
    # estimated: the messages, plus what the first reported usage held beyond its messages
    first = 150000 - sum(estimate_message_tokens(m) for m in build_context(tree, "e2").messages)
    assert t.overhead == first
    assert t.context == t.estimated == sum(estimate_message_tokens(m) for m in ctx.messages) + first
    assert t.context < 1000 + first
    b.assistant("after", usage=700)
    assert tokens_of(b).context == 700 and tokens_of(b).usage_entry_id == "e7"


# -- the plan --------------------------------------------------------------------------------------


def tool_session() -> Builder:
    """u1 a2(call) t3(result) a4 u5, each about 100 tokens except the call."""
    b = Builder()
    b.user(T100)
    b.assistant("", calls=[{"id": "c1", "name": "read", "arguments": {"path": "a.py"}}])
    b.tool_result("c1", T100)
    b.assistant(T100)
    b.user(T100)
    return b


def test_cut_point_never_falls_on_a_tool_result():
    tree = tree_of(tool_session())
    plan = plan_compaction(tree, "e5", keep_recent_tokens=250)  # the budget is reached at t3
    assert plan.first_kept_entry_id == "e4"
    assert not is_cut_point(tree.entry("e3"))
    assert is_cut_point(tree.entry("e4"))


def test_a_cut_inside_a_turn_is_a_split_turn_whose_start_is_summarized():
    plan = plan_compaction(tree_of(tool_session()), "e5", keep_recent_tokens=250)
    assert plan.split_turn
    assert [e.id for e in plan.summarize] == []
    assert [e.id for e in plan.turn_prefix] == ["e1", "e2", "e3"]
    assert [e.id for e in plan.entries_to_summarize()] == ["e1", "e2", "e3"]
    assert plan.tokens_kept == 200


def test_a_cut_at_a_user_message_is_not_a_split_turn():
    plan = plan_compaction(tree_of(tool_session()), "e5", keep_recent_tokens=100)
    assert plan.first_kept_entry_id == "e5"
    assert not plan.split_turn
    assert [e.id for e in plan.summarize] == ["e1", "e2", "e3", "e4"]
    assert plan.as_dict()["summarizeEntryIds"] == ["e1", "e2", "e3", "e4"]


def test_nothing_to_compact_when_the_context_fits_or_the_cut_is_at_its_start():
    tree = tree_of(tool_session())
    plan = plan_compaction(tree, "e5", keep_recent_tokens=100000)
    assert not plan.can_compact and "fit" in plan.reason
    plan = plan_compaction(tree, "e5", keep_recent_tokens=400)  # reached at u1
    assert not plan.can_compact and "start" in plan.reason
    with pytest.raises(InvalidWrite):
        write_compaction(None, plan, "summary")


def test_trigger_uses_window_minus_reserve():
    tree = tree_of(tool_session())
    tokens = plan_compaction(tree, "e5", keep_recent_tokens=1).tokens_before
    assert plan_compaction(tree, "e5", 1, reserve_tokens=100, context_window=tokens + 100).should_compact is False
    assert plan_compaction(tree, "e5", 1, reserve_tokens=100, context_window=tokens + 99).should_compact is True
    assert plan_compaction(tree, "e5", 1).should_compact is False  # no window known


def test_what_is_summarized_includes_what_the_previous_compaction_kept():
    b = Builder()
    b.user(T100)
    b.user(T100)
    b.user(T100)
    b.add("compaction", summary="OLD SUMMARY", firstKeptEntryId="e2",
          details={"readFiles": ["r0"], "modifiedFiles": ["m0"]})
    b.user(T100)
    b.user(T100)
    tree = tree_of(b)
    plan = plan_compaction(tree, "e6", keep_recent_tokens=100)
    assert plan.first_kept_entry_id == "e6"
    assert [e.id for e in plan.entries_to_summarize()] == ["e2", "e3", "e5"]
    assert plan.previous_summary == "OLD SUMMARY"
    assert plan.as_dict()["previousCompactionId"] == "e4"
    msgs = plan.messages_to_summarize()
    assert [m["role"] for m in msgs] == ["user"] * 3  # not the old summary itself
    assert plan.read_files == ["r0"] and plan.modified_files == ["m0"]


def test_files_are_cumulative_and_modified_wins_over_read():
    b = Builder()
    b.user("start")
    b.add("compaction", summary="S", firstKeptEntryId="e1",
          details={"readFiles": ["old-read", "both"], "modifiedFiles": ["old-mod"]})
    b.tool_turn("read", "a.py", "c1")
    b.tool_turn("edit", "b.py", "c2")
    b.tool_turn("read", "b.py", "c3")
    b.add("branch_summary", fromId="x", summary="side", details={"readFiles": ["br"], "modifiedFiles": ["both"]})
    b.add("message", message={"role": "assistant", "stopReason": "stop", "content": [
        {"type": "toolCall", "id": "c4", "name": "write", "arguments": {"file_path": "c.py"}}]})
    b.tool_result("c4")
    b.user(T100)
    b.tool_turn("read", "kept.py", "c5")  # after the cut: not summarized yet
    tree = tree_of(b)
    plan = plan_compaction(tree, tree.active_leaf, keep_recent_tokens=100)
    assert tree.entry(plan.first_kept_entry_id).message["content"] == T100
    assert plan.read_files == ["a.py", "br", "old-read"]
    assert plan.modified_files == ["b.py", "both", "c.py", "old-mod"]


def test_file_lists_in_details_must_be_lists_of_paths():
    b = Builder()
    b.user("start")
    b.add("compaction", summary="S", firstKeptEntryId="e1",
          details={"readFiles": "notes.md", "modifiedFiles": ["ok.py", 3, None]})
    b.user(T100)
    b.user(T100)
    plan = plan_compaction(tree_of(b), "e4", keep_recent_tokens=100)
    assert plan.read_files == [] and plan.modified_files == ["ok.py"]


# -- writing ---------------------------------------------------------------------------------------


def test_write_compaction_appends_at_the_leaf_and_the_context_restarts_from_it(make_session):
    b = tool_session()
    b.assistant(T100)
    s = make_session(b.data())
    plan = plan_compaction(s.tree, s.tree.active_leaf, keep_recent_tokens=150)
    assert plan.first_kept_entry_id == "e5"
    entry = write_compaction(s, plan, "## Goal\nread a.py", {"summarizer": "test"})
    assert entry["type"] == "compaction" and entry["parentId"] == "e6"
    assert entry["firstKeptEntryId"] == "e5"
    assert entry["tokensBefore"] == plan.tokens_before
    assert entry["details"] == {"readFiles": ["a.py"], "modifiedFiles": [], "summarizer": "test"}
    assert entry["summary"].startswith("## Goal\nread a.py") and "<read-files>\na.py\n</read-files>" in entry["summary"]
    tree = s.tree
    assert tree.active_leaf == entry["id"]
    ctx = build_context(tree, tree.active_leaf)
    assert [m["entryId"] for m in ctx.messages] == [entry["id"], "e5", "e6"]
    assert ctx.messages[0]["role"] == "user" and "read a.py" in ctx.messages[0]["content"]
    assert tree.problems == []


@pytest.mark.parametrize("bad, why", [("ghost", "names no entry"), ("side", "not on the path"), ("e3", "toolResult")])
def test_write_compaction_refuses_an_invalid_first_kept_entry_and_writes_nothing(make_session, bad, why):
    b = tool_session()
    b.user("side branch", id="side", parent="e1")
    b.add("leaf", targetId="e5", parent="e5")
    s = make_session(b.data())
    plan = plan_compaction(s.tree, s.tree.active_leaf, keep_recent_tokens=100)
    assert plan.can_compact
    plan.first_kept_entry_id = bad
    before = storage_bytes(s)
    with pytest.raises(InvalidWrite, match=why):
        write_compaction(s, plan, "summary")
    assert storage_bytes(s) == before


def test_write_compaction_refuses_an_empty_summary(make_session):
    s = make_session(tool_session().data())
    plan = plan_compaction(s.tree, "e5", keep_recent_tokens=100)
    before = storage_bytes(s)
    with pytest.raises(InvalidWrite, match="empty"):
        write_compaction(s, plan, "  \n")
    assert storage_bytes(s) == before


def test_file_lists_are_appended_replaced_and_idempotent():
    once = with_file_lists("Summary.", ["a"], ["b", "c"])
    assert once == "Summary.\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nb\nc\n</modified-files>"
    assert with_file_lists(once, ["a"], ["b", "c"]) == once
    assert with_file_lists(once, ["z"], []) == "Summary.\n\n<read-files>\nz\n</read-files>"
    assert with_file_lists("Summary.\n", [], []) == "Summary."


# -- branch summaries ------------------------------------------------------------------------------


def test_branch_summary_covers_the_branch_left_back_to_the_common_ancestor(make_session):
    b = Builder()
    b.user("q")
    b.tool_turn("edit", "x.py", "c1")
    b.user("more")
    b.assistant("ok", parent="e1", id="other")
    b.add("leaf", targetId="e4", parent="e4")
    s = make_session(b.data())
    plan = plan_branch_summary(s.tree, "e4", "other")
    assert plan.common_ancestor == "e1"
    assert [e.id for e in plan.entries] == ["e2", "e3", "e4"]
    assert plan.modified_files == ["x.py"]
    assert [m["role"] for m in plan.messages()] == ["assistant", "tool", "user"]
    entry = write_branch_summary(s, plan, "tried editing x.py")
    assert entry["parentId"] == "other" and entry["fromId"] == "e4"
    assert entry["details"]["modifiedFiles"] == ["x.py"]
    tree = s.tree
    assert tree.active_leaf == entry["id"]
    ctx = build_context(tree, tree.active_leaf)
    assert [m["entryId"] for m in ctx.messages] == ["e1", "other", entry["id"]]
    assert "tried editing x.py" in ctx.messages[-1]["content"]


def test_branch_summary_stops_at_a_compaction():
    b = Builder()
    b.user("q")
    b.user("r")
    b.add("compaction", summary="S", firstKeptEntryId="e2")
    b.user("after")
    b.user("alt", parent="e1", id="alt")
    plan = plan_branch_summary(tree_of(b), "e4", "alt")
    assert [e.id for e in plan.entries] == ["e4"]


def test_branch_summary_from_an_empty_conversation_is_refused(make_session):
    s = make_session(tool_session().data())
    with pytest.raises(InvalidWrite):
        write_branch_summary(s, plan_branch_summary(s.tree, None, "e1"), "x")


def test_a_plan_for_the_active_branch_is_refused_once_the_branch_moved_on(tmp_path):
    """Writing it would silently fork the session away from what was appended meanwhile."""
    s = Session.in_memory(b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n')
    for i in range(6):
        s.append({"type": "message", "message": {"role": "user", "content": f"question {i} " + "x" * 400}})
        s.append({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "y" * 400}]}})
    plan = plan_compaction(s.tree, s.tree.active_leaf, keep_recent_tokens=200)
    assert plan.can_compact
    s.append({"type": "message", "message": {"role": "user", "content": "one more"}})
    before = bytes(s.storage.data)
    with pytest.raises(InvalidWrite, match="moved on"):
        write_compaction(s, plan, "summary")
    assert bytes(s.storage.data) == before


def test_a_compaction_keeps_the_system_prompt_and_tools_in_force_as_pi_1_6_writes_them(tmp_path):
    read_tool = {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {}}}
    b = Builder()
    b.add("message", message={"role": "system", "content": "Be brief.", "sections": {"agents": "AGENTS.md"},
                              "toolsAdded": [read_tool, {"name": "bash", "description": "Run", "parameters": {}}]})
    b.user("one " * 200)
    b.assistant("two " * 200, usage=500)
    b.add("message", message={"role": "system", "content": "", "sections": {"agents": None, "date": "today"},
                              "toolsRemoved": [{"name": "bash"}]})
    b.user("three " * 200)
    b.assistant("four " * 200, usage=900)
    session = Session.open(b.write(tmp_path / "s.jsonl"))
    plan = plan_compaction(session.tree, session.tree.active_leaf, keep_recent_tokens=100)
    entry = write_compaction(session, plan, "We talked.", {"usage": {"input": 5, "output": 1, "cost": {"total": 0.25}}})
    checkpoint = entry["systemMessage"]
    assert {k: v for k, v in checkpoint.items() if k != "timestamp"} == {
        "role": "system", "content": "Be brief.", "sections": {"date": "today"}, "toolsAdded": [read_tool]}
    assert entry["usage"]["cost"]["total"] == 0.25 and "usage" not in entry["details"]
    ctx = build_context(session.tree, entry["id"])
    assert ctx.messages[0] == {"role": "system", "content": "Be brief.\n\ntoday", "entryId": entry["id"]}
    assert ctx.messages[1]["role"] == "user" and "We talked." in ctx.messages[1]["content"]
    assert not [m for m in ctx.messages[2:] if m["role"] == "system"]  # the kept ones are in the checkpoint
    assert sum(e.cost for e in session.tree.entries) == 0.25
