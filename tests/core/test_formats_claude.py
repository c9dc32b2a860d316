"""Claude Code transcripts read through the format seam (shared/formats/claude-code.md), one test
per construct of the mapping, on the fixtures and on small hand-built files."""

import os

import orjson
import pytest

from tests.conftest import FIXTURES
from webapp.core.context import build_context
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.tokens import context_tokens
from webapp.core.tree import SessionTree

CC = FIXTURES / "claude-code"
DAG = CC / "daaain_dag_compact_after_rewind.jsonl"
KIMUSON = CC / "d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
SMALL = CC / "agent-sessions_claude_small.jsonl"


class CC_:
    """Claude Code lines, written the way Claude Code writes them."""

    def __init__(self):
        self.lines: list[dict] = []
        self.n = 0

    def _line(self, type, uuid, parent, **fields) -> str:
        self.n += 1
        line = {"type": type, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "version": "2.1.0",
                "cwd": "/work/p", "isSidechain": False, "timestamp": f"2025-07-01T10:{self.n:02d}:00.000Z"}
        line.update(fields)
        self.lines.append(line)
        return uuid

    def user(self, uuid, parent, content, **kw):
        return self._line("user", uuid, parent, message={"role": "user", "content": content}, **kw)

    def assistant(self, uuid, parent, blocks, msg_id=None, usage=None, stop="end_turn", **kw):
        msg = {"id": msg_id or f"msg_{uuid}", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
               "content": blocks, "stop_reason": stop,
               "usage": usage or {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100,
                                  "cache_creation_input_tokens": 20}}
        return self._line("assistant", uuid, parent, message=msg, **kw)

    def result(self, uuid, parent, call_id, text="done", is_error=False, **kw):
        block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}
        return self.user(uuid, parent, [block], **kw)

    def meta(self, **fields):
        self.lines.append(fields)

    def tree(self) -> SessionTree:
        return SessionTree(parse_bytes(b"".join(orjson.dumps(x) + b"\n" for x in self.lines)))


def test_the_file_is_claude_code_with_a_synthetic_header():
    log = Session.open(DAG).log
    assert log.format == "claude-code"
    assert log.header == {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-07-01T10:00:00.000Z",
                          "cwd": "/tmp", "source": "claude-code", "sourceVersion": "2.1.0"}


def test_the_rewind_shows_two_branches_and_the_compaction_is_a_node_whose_context_starts_with_the_summary():
    tree = Session.open(DAG).tree
    assert tree.branch_points() == ["a1"]
    assert tree.children["a1"] == ["b1u", "b2u"]
    assert sorted(tree.leaves()) == ["b1a", "p1a"]
    cb = tree.entry("cb")
    assert cb.type == "compaction" and tree.parent["cb"] == "b2a2"  # logicalParentUuid
    assert cb.get("tokensBefore") == 150000 and cb.get("details") == {"trigger": "auto"}
    assert "cs" not in tree.by_id  # the summary line is consumed by the compaction
    assert tree.parent["p1u"] == "cb"  # and its child hangs on the compaction
    assert [o["uuid"] for o in cb.source] == ["cb", "cs"]
    assert tree.active_leaf == "p1a"
    ctx = build_context(tree, tree.active_leaf)
    assert ctx.messages[0]["role"] == "user" and ctx.messages[0]["entryId"] == "cb"
    assert "the user asked for a plan" in ctx.messages[0]["content"]
    assert [m["content"] for m in ctx.messages[1:]] == ["After compaction", "Final answer"]
    assert ctx.problems == [] and tree.problems == []  # no firstKeptEntryId is not a problem here


def test_the_other_branch_has_its_own_context():
    tree = Session.open(DAG).tree
    ctx = build_context(tree, "b1a")
    assert [m["content"] for m in ctx.messages] == ["Start", "Ready", "First attempt", "First answer"]


def test_five_sidechains_hang_under_their_task_calls_off_the_main_path():
    tree = Session.open(KIMUSON).tree
    roots = [e for e in tree.entries if e.sidechain and not tree.by_id[tree.parent[e.id]].sidechain]
    assert len(roots) == 5
    for root in roots:
        owner = tree.by_id[tree.parent[root.id]]
        prompts = [b["arguments"]["prompt"] for b in owner.message["content"]
                   if b.get("type") == "toolCall" and b["name"] == "Task"]
        assert root.message["content"][0]["text"].strip() in [p.strip() for p in prompts]
    assert len(tree.roots) == 1  # every sub-agent is attached: one root, the session's
    main = tree.path(tree.active_leaf)
    assert not any(e.sidechain for e in main)
    assert sum(e.sidechain for e in tree.entries) > 300


def test_split_assistant_lines_are_one_message_named_by_the_last_uuid():
    tree = Session.open(KIMUSON).tree
    lines = [orjson.loads(x) for x in KIMUSON.read_bytes().splitlines()]
    # Lines 4-6 are one message (msg id ...kdjvaD): text, then two tool_use lines.
    merged = tree.entry(lines[5]["uuid"])
    assert merged.line == 4 and [o["uuid"] for o in merged.source] == [lines[i]["uuid"] for i in (3, 4, 5)]
    assert [b["type"] for b in merged.message["content"]] == ["text", "toolCall", "toolCall"]
    assert lines[3]["uuid"] not in tree.by_id and lines[4]["uuid"] not in tree.by_id
    assert tree.children[merged.id][0] == lines[6]["uuid"]  # the first tool result follows it


def test_the_main_leaf_context_has_the_real_messages_and_the_recorded_usage():
    tree = Session.open(KIMUSON).tree
    ctx = build_context(tree, tree.active_leaf)
    roles = [m["role"] for m in ctx.messages]
    assert roles.count("assistant") >= 5 and roles.count("tool") >= 5 and roles[0] == "user"
    count = context_tokens(ctx)
    last = tree.entry(count.usage_entry_id)
    u = orjson.loads(KIMUSON.read_bytes().splitlines()[last.line - 1 + len(last.source) - 1]
                     if isinstance(last.source, list) else KIMUSON.read_bytes().splitlines()[last.line - 1])
    usage = u["message"]["usage"]
    expected = (usage["input_tokens"] + usage["output_tokens"] + usage["cache_read_input_tokens"]
                + usage["cache_creation_input_tokens"])
    assert count.context == expected and count.estimated == 0
    assert ctx.settings.model_name == "anthropic/claude-sonnet-4-20250514"


def test_usage_and_stop_reason_come_from_the_last_split_line():
    b = CC_()
    b.user("u", None, "go")
    b.assistant("a1", "u", [{"type": "thinking", "thinking": "hmm"}], msg_id="m", stop=None,
                usage={"input_tokens": 7, "output_tokens": 1, "cache_read_input_tokens": 50})
    b.assistant("a2", "a1", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}}],
                msg_id="m", stop="tool_use", usage={"input_tokens": 7, "output_tokens": 30,
                                                   "cache_read_input_tokens": 50})
    tree = b.tree()
    msg = tree.entry("a2").message
    assert msg["usage"] == {"input": 7, "output": 30, "cacheRead": 50, "cacheWrite": 0, "totalTokens": 87}
    assert msg["stopReason"] == "toolUse" and msg["provider"] == "anthropic" and msg["model"] == "claude-sonnet-4"
    assert msg["content"] == [{"type": "thinking", "thinking": "hmm"},
                              {"type": "toolCall", "id": "t1", "name": "Read", "arguments": {"file_path": "/a"}}]


def test_a_child_of_an_earlier_split_uuid_hangs_on_the_merged_message():
    b = CC_()
    b.user("u", None, "go")
    b.assistant("a1", "u", [{"type": "text", "text": "x"}], msg_id="m")
    b.assistant("a2", "a1", [{"type": "text", "text": "y"}], msg_id="m")
    b.user("late", "a1", "points at the first line")
    tree = b.tree()
    assert tree.parent["late"] == "a2" and "a1" not in tree.by_id


def test_tool_results_become_tool_result_messages_one_per_block():
    b = CC_()
    b.user("u", None, "go")
    b.assistant("a", "u", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                           {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/x"}}])
    b.user("r", "a", [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"},
                      {"type": "tool_result", "tool_use_id": "t2", "is_error": True,
                       "content": [{"type": "text", "text": "no such file"}]}], toolUseResult={"stdout": "a.txt"})
    tree = b.tree()
    first, second = tree.entry("r:1"), tree.entry("r")
    assert tree.parent["r:1"] == "a" and tree.parent["r"] == "r:1"
    assert first.message == {"role": "toolResult", "toolCallId": "t1", "toolName": "Bash",
                             "content": [{"type": "text", "text": "a.txt"}], "isError": False}
    assert second.message["isError"] is True and second.message["toolName"] == "Read"
    assert second.message["details"] == {"stdout": "a.txt"}  # the raw toolUseResult is kept
    ctx = build_context(tree, "r")
    assert [(m["role"], m.get("tool_call_id")) for m in ctx.messages[1:]] == [
        ("assistant", None), ("tool", "t1"), ("tool", "t2")]


def test_meta_user_lines_stay_in_the_context_and_are_marked():
    b = CC_()
    b.user("u", None, "<command-name>/init</command-name>", isMeta=True)
    tree = b.tree()
    assert tree.entry("u").message["isMeta"] is True
    assert build_context(tree, "u").messages[0]["content"] == "<command-name>/init</command-name>"


def test_other_system_lines_attachments_and_progress_are_custom_entries_never_in_the_context():
    b = CC_()
    b.user("u", None, "go")
    b._line("system", "s", "u", subtype="turn_duration", durationMs=5)
    b._line("progress", "p", "s", data={"type": "hook"})
    tree = b.tree()
    assert tree.entry("s").type == "custom" and tree.entry("s").get("customType") == "claude-code/system:turn_duration"
    assert tree.entry("p").get("customType") == "claude-code/progress"
    assert [m["entryId"] for m in build_context(tree, "p").messages] == ["u"]


def test_lines_without_uuid_are_metadata_and_give_the_title():
    b = CC_()
    b.meta(type="summary", summary="Old summary", leafUuid="u")
    b.user("u", None, "go")
    b.meta(type="file-history-snapshot", messageId="u", snapshot={})
    tree = b.tree()
    assert [e.id for e in tree.entries] == ["u"]
    assert tree.name == "Old summary" and [n for n, _ in tree.metadata] == [1, 3]
    b.meta(type="ai-title", sessionId="s1", aiTitle="AI title")
    assert b.tree().name == "AI title"
    b.meta(type="custom-title", sessionId="s1", customTitle="Mine")
    assert b.tree().name == "Mine"


def test_a_summary_of_another_session_is_not_the_title():
    b = CC_()
    b.meta(type="summary", summary="Elsewhere", leafUuid="not-here")
    b.user("u", None, "go")
    assert b.tree().name is None


def test_a_session_started_by_a_slash_command_is_named_by_the_command():
    b = CC_()
    b.user("m", None, "Caveat: the messages below were generated by the user", isMeta=True)
    b.user("u", "m", "<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n"
                     "<command-args>the parser</command-args>")
    assert b.tree().name == "/review the parser"
    assert Session.open(KIMUSON).tree.name == "/orchestrator create TODO app by Next.js"
    b.meta(type="ai-title", sessionId="s1", aiTitle="AI title")
    assert b.tree().name == "AI title"  # a title the agent wrote comes first


def test_tool_flow_side_lines_are_not_forks():
    b = CC_()
    b.user("u", None, "go")
    b.assistant("a", "u", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}])
    b.result("r1", "a", "t1")  # a result beside the next line: hangs on the assistant, no children
    b._line("attachment", "att", "a", attachment={"type": "hook"})
    b.assistant("a2", "a", [{"type": "text", "text": "next"}])
    tree = b.tree()
    assert tree.branch_points() == []
    assert [e.id for e in tree.path("a2")] == ["u", "a", "r1", "att", "a2"]


def test_a_rewind_with_tool_side_lines_still_forks_at_the_prompt():
    b = CC_()
    b.user("u", None, "go")
    b.assistant("a", "u", [{"type": "text", "text": "ok"}])
    b.user("p1", "a", "first try")
    b.assistant("x1", "p1", [{"type": "text", "text": "1"}])
    b.user("p2", "a", "second try")
    b.assistant("x2", "p2", [{"type": "text", "text": "2"}])
    tree = b.tree()
    assert tree.branch_points() == ["a"] and tree.active_leaf == "x2"


def test_a_missing_parent_is_a_root_with_a_note_and_duplicates_keep_the_first():
    b = CC_()
    b.user("u", "gone", "resumed")
    b.user("u", None, "copy")
    tree = b.tree()
    assert tree.roots == ["u"] and tree.orphans == []
    assert tree.entry("u").message["content"] == [{"type": "text", "text": "resumed"}]
    kinds = {p.kind: p for p in tree.problems}
    assert kinds["resumed-root"].line == 1 and kinds["duplicate-id"].line == 2


def test_active_leaf_is_the_last_main_user_or_assistant_line():
    b = CC_()
    b.user("u", None, "go")
    b.assistant("a", "u", [{"type": "text", "text": "ok"}])
    b.user("side", None, "sub task", isSidechain=True)
    b._line("system", "s", "a", subtype="turn_duration")
    assert b.tree().active_leaf == "a"


def test_a_preserved_segment_head_is_the_first_kept_entry():
    b = CC_()
    b.user("u", None, "go")
    b.assistant("a", "u", [{"type": "text", "text": "ok"}])
    b._line("system", "cb", None, subtype="compact_boundary", logicalParentUuid="a",
            compactMetadata={"trigger": "manual", "preTokens": 9, "preservedSegment": {"headUuid": "a"}})
    b.user("cs", "cb", "Summary: did things", isCompactSummary=True)
    b.user("next", "cs", "more")
    tree = b.tree()
    cb = tree.entry("cb")
    assert cb.get("firstKeptEntryId") == "a" and cb.get("summary") == "Summary: did things"
    ctx = build_context(tree, "next")
    assert [m["entryId"] for m in ctx.messages] == ["cb", "a", "next"]


def test_the_schema_coverage_file_loads_every_line():
    s = Session.open(SMALL)
    tree = s.tree
    assert tree.name == "Stage0 small fixture"
    # Two compact boundaries; the second reuses a trimmed uuid already read, so it is reported.
    assert [c.id for c in tree.compactions()] == ["s4"]
    assert tree.entry("s4").get("tokensBefore") == 120000
    assert 51 in [p.line for p in tree.problems if p.kind == "duplicate-id"]
    assert {e.get("customType") for e in tree.entries if e.type == "custom"} >= {
        "claude-code/attachment", "claude-code/progress", "claude-code/system:stop_hook_summary"}
    build_context(tree, tree.active_leaf)
    for leaf in tree.leaves():
        build_context(tree, leaf)


def test_a_growing_file_is_read_again_and_stays_right(tmp_path):
    lines = DAG.read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:9]))  # up to the compact boundary, without its summary
    s = Session.open(path)
    assert s.tree.entry("cb").get("summary") == ""
    with open(path, "ab") as f:
        f.write(b"".join(lines[9:]))
    tree = s.tree
    assert "the user asked for a plan" in tree.entry("cb").get("summary")
    assert tree.active_leaf == "p1a" and len(tree.entries) == 11


@pytest.mark.parametrize("cut", [1000, 2500, 4000])
def test_a_torn_last_line_is_reported_and_the_rest_loads(tmp_path, cut):
    data = DAG.read_bytes()
    path = tmp_path / "s.jsonl"
    path.write_bytes(data[:cut])
    tree = Session.open(path).tree
    assert tree.format == "claude-code"
    assert [b.torn for b in tree.bad_lines] == [True]


def _write(path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def _session_with_a_subagent(tmp_path):
    """A session whose Task call ran a sub-agent written to `<sessionId>/subagents/agent-<id>.jsonl`
    (its prompt differs from the first line's text: the link is the `agentId` of the result)."""
    b = CC_()
    b.user("u", None, "look around")
    b.assistant("a", "u", [{"type": "tool_use", "id": "t1", "name": "Task",
                            "input": {"description": "explore", "prompt": "Explore the repo", "subagent_type": "Explore"}}])
    b.result("r", "a", "t1", "found two modules",
             toolUseResult={"status": "completed", "agentId": "ab12", "prompt": "Explore the repo",
                            "content": [{"type": "text", "text": "found two modules"}]})
    b.assistant("a2", "r", [{"type": "text", "text": "done"}])
    main = tmp_path / "p" / "s1.jsonl"
    _write(main, b.lines)
    sub = CC_()
    sub.user("s-u", None, "Explore the repo (with the agent's preamble)", isSidechain=True, agentId="ab12")
    sub.assistant("s-a", "s-u", [{"type": "text", "text": "two modules"}], isSidechain=True, agentId="ab12")
    agent = tmp_path / "p" / "s1" / "subagents" / "agent-ab12.jsonl"
    _write(agent, sub.lines)
    return main, agent, sub


def test_a_subagent_file_is_read_with_its_session_under_the_task_call_off_the_main_path(tmp_path):
    main, _, _ = _session_with_a_subagent(tmp_path)
    tree = Session.open(main).tree
    assert tree.parent["s-u"] == "a" and tree.parent["s-a"] == "s-u"
    assert tree.entry("s-u").sidechain and tree.entry("s-a").sidechain
    assert tree.roots == ["u"] and tree.active_leaf == "a2"
    assert [e.id for e in tree.path("a2")] == ["u", "a", "r", "a2"]
    assert tree.entry("s-u").line == 1  # its line in its own file


def test_a_growing_subagent_file_is_read_again_and_never_written(tmp_path):
    main, agent, sub = _session_with_a_subagent(tmp_path)
    session = Session.open(main)
    assert "s-b" not in session.tree.by_id
    before = {p: p.stat().st_mtime_ns for p in (main, agent)}
    sub.user("s-b", "s-a", "and a third?", isSidechain=True, agentId="ab12")
    with open(agent, "ab") as f:
        f.write(orjson.dumps(sub.lines[-1]) + b"\n")
    os.utime(agent, ns=(before[agent] + 10**9, before[agent] + 10**9))  # a new mtime, as any write gives
    tree = session.tree
    assert tree.parent["s-b"] == "s-a" and tree.entry("s-b").sidechain
    assert main.stat().st_mtime_ns == before[main] and session.rewrites == 0


def test_compaction_files_and_bad_lines_of_subagents_do_not_break_the_session(tmp_path):
    main, agent, _ = _session_with_a_subagent(tmp_path)
    _write(agent.parent / "agent-acompact-9.jsonl", [{"type": "user", "uuid": "c1", "parentUuid": None,
                                                     "isSidechain": True, "message": {"role": "user", "content": "x"}}])
    with open(agent, "ab") as f:
        f.write(b"{not json\n")
    tree = Session.open(main).tree
    assert "c1" not in tree.by_id and "s-a" in tree.by_id
    assert [p.kind for p in tree.problems] == ["subagent-line"]
    assert "agent-ab12.jsonl line 3" in tree.problems[0].message


def test_children_with_one_timestamp_under_a_compaction_are_a_replay_keeping_the_first():
    b = CC_()
    b.user("u", None, "go")
    b.assistant("a", "u", [{"type": "text", "text": "ok"}])
    b._line("system", "cb", None, subtype="compact_boundary", logicalParentUuid="a",
            compactMetadata={"trigger": "auto", "preTokens": 900})
    b.user("cs", "cb", "summary of it", isCompactSummary=True)
    b.user("p1", "cb", "continue")
    b.user("p1-again", "cb", "continue", timestamp=b.lines[-1]["timestamp"])
    b.assistant("x", "p1-again", [{"type": "text", "text": "continuing"}])
    tree = b.tree()
    assert "p1-again" not in tree.by_id
    assert tree.parent["x"] == "p1" and tree.branch_points() == []
    assert tree.active_leaf == "x"
    replay = [p for p in tree.problems if p.kind == "replay"]
    assert len(replay) == 1 and replay[0].line == 6 and replay[0].entry_id == "p1"


def test_children_of_a_compaction_at_different_times_are_a_real_fork():
    b = CC_()
    b.user("u", None, "go")
    b._line("system", "cb", None, subtype="compact_boundary", logicalParentUuid="u", compactMetadata={})
    b.user("p1", "cb", "one way")
    b.user("p2", "cb", "another way")
    tree = b.tree()
    assert tree.branch_points() == ["cb"] and not any(p.kind == "replay" for p in tree.problems)


def test_a_subagent_entry_names_the_file_its_line_counts_in(tmp_path):
    main, agent, sub = _session_with_a_subagent(tmp_path)
    sub.user("s-a", "s-u", "the same uuid again", isSidechain=True, agentId="ab12")  # a duplicate, on line 3
    with open(agent, "ab") as f:
        f.write(orjson.dumps(sub.lines[-1]) + b"\n")
    tree = Session.open(main).tree
    assert tree.entry("s-a").file == "agent-ab12.jsonl" and tree.entry("s-a").where == "agent-ab12.jsonl line 2"
    assert tree.entry("a").file is None and tree.entry("a").where == "line 2"
    (dup,) = [p for p in tree.problems if p.kind == "duplicate-id"]
    assert dup.where == "agent-ab12.jsonl line 3" and "already used on agent-ab12.jsonl line 2" in dup.message
    assert dup.as_dict()["file"] == "agent-ab12.jsonl"


def test_where_a_subagent_ends_is_not_a_branch_of_the_session(tmp_path):
    main, _, _ = _session_with_a_subagent(tmp_path)
    tree = Session.open(main).tree
    assert not tree.conversation_children("s-a")  # the sub-agent's run ends there...
    assert tree.leaves() == ["a2"]  # ...and the session has one branch
    inline = Session.open(CC / "d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl").tree  # inline sub-agents
    tips = [e.id for e in inline.entries if e.sidechain and not inline.conversation_children(e.id)]
    assert len(tips) == 5
    assert inline.leaves() == [inline.active_leaf]


def test_show_json_names_the_file_of_a_subagent_entry_and_the_tree_parent_of_each(tmp_path, capsys):
    from webapp.cli import main as cli

    session_file, _, _ = _session_with_a_subagent(tmp_path)
    assert cli(["show", str(session_file), "--json"]) == 0
    rows = {r["id"]: r for r in orjson.loads(capsys.readouterr().out)["entries"]}
    assert rows["s-a"] == {"id": "s-a", "type": "message", "parentId": "s-u", "line": 2, "file": "agent-ab12.jsonl"}
    assert rows["s-u"]["parentId"] == "a" and "file" not in rows["a"] and rows["u"]["parentId"] is None


def test_a_task_call_that_starts_sub_agents_is_no_branch_point():
    tree = Session.open(KIMUSON).tree
    callers = {tree.parent[e.id] for e in tree.entries if e.sidechain and not tree.by_id[tree.parent[e.id]].sidechain}
    assert len(callers) == 2 and all(len(tree.conversation_children(c)) > 2 for c in callers)
    assert tree.branch_points() == [] and len(tree.leaves()) == 1
    b = CC_()  # a real fork at a prompt under a Task call's turn still is one
    b.user("u", None, "go")
    b.assistant("a", "u", [{"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "look"}}])
    b.user("s", "a", "look", isSidechain=True)
    b.result("r", "a", "t1")
    b.user("p1", "r", "first try")
    b.user("p2", "r", "second try")
    tree = b.tree()
    assert tree.branch_points() == ["r"]
