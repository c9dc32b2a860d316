"""Claude Code files read as Claude Code (and claude-code-log) read them: one assistant message
for parallel tool calls written between their results, no tips or forks made of side lines,
results past progress lines answered, id-less calls kept apart, 2.0.x sub-agent files read."""

import orjson

from tests.conftest import FIXTURES
from tests.core.test_formats_claude import CC_
from webapp.core.context import build_context
from webapp.core.session import Session

PARALLEL = FIXTURES / "claude-code" / "reduced_2.1_parallel_tools_and_side_lines.jsonl"


def uuid(i: int) -> str:
    return f"00000000-0000-4000-8000-{i:012d}"


def test_parallel_tool_calls_between_their_results_are_one_message():
    tree = Session.open(PARALLEL).tree
    assistants = [e for e in tree.entries if e.role == "assistant"]
    assert len(assistants) == 4
    first = assistants[0]
    assert [b["id"] for b in first.message["content"]] == ["toolu_01", "toolu_02"]
    assert tree.branch_points() == []
    ctx = build_context(tree, tree.active_leaf)
    assert [(m["role"], m.get("tool_call_id")) for m in ctx.messages] == [
        ("user", None), ("assistant", None), ("tool", "toolu_01"), ("tool", "toolu_02"),
        ("assistant", None), ("tool", "toolu_03"), ("assistant", None), ("tool", "toolu_04"), ("assistant", None)]


def test_side_lines_after_the_last_message_and_progress_chains_are_no_tips():
    tree = Session.open(PARALLEL).tree
    assert tree.leaves() == [tree.active_leaf] == [uuid(15)]  # the last message, with nothing beside it
    assert not any(tree.forks(e.id, tree.conversation_children(e.id)) for e in tree.entries)


def test_a_result_past_a_progress_line_answers_its_call():
    tree = Session.open(PARALLEL).tree
    assert [p for p in tree.all_problems() if p.kind == "unanswered-tool-call"] == []


def test_tool_calls_without_an_id_are_not_one_call():
    cc = CC_()
    cc.user("u1", None, "start two agents")
    cc.assistant("a1", "u1", [{"type": "tool_use", "name": "Task", "input": {"prompt": "one"}}], stop="tool_use")
    cc.result("r1", "a1", "t-none", "agent one done", toolUseResult={"agentId": "ag1"})
    # The sub-agent's first line names an agent whose result is not in the file.
    cc.user("s1", None, "two", isSidechain=True, agentId="ag2")
    cc.assistant("s2", "s1", [{"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}], isSidechain=True,
                 agentId="ag2", stop="tool_use")
    cc.result("s3", "s2", "t-x", "ok", isSidechain=True, agentId="ag2")
    tree = cc.tree()
    assert tree.cycle_cuts == []
    assert tree.parent["s1"] != "s2" and not tree.is_ancestor("s2", "s1")


def test_a_2_0_sub_agent_file_beside_the_session_is_read(tmp_path):
    session = "5e551011-0000-4000-8000-000000000001"
    cc = CC_()
    cc.user("u1", None, "review it", sessionId=session, version="2.0.28")
    cc.assistant("a1", "u1", [{"type": "tool_use", "id": "toolu_T", "name": "Task",
                               "input": {"prompt": "Review parser.py", "subagent_type": "reviewer"}}],
                 stop="tool_use", sessionId=session, version="2.0.28")
    cc.result("r1", "a1", "toolu_T", "Looks fine.", sessionId=session, version="2.0.28",
              toolUseResult={"agentId": "9f3b2a1c", "status": "completed"})
    agent = CC_()
    agent.user("x1", None, "Review parser.py", isSidechain=True, agentId="9f3b2a1c", sessionId=session,
               version="2.0.28")
    agent.assistant("x2", "x1", [{"type": "tool_use", "id": "toolu_R", "name": "Read",
                                  "input": {"file_path": "parser.py"}}], isSidechain=True, agentId="9f3b2a1c",
                    sessionId=session, version="2.0.28", stop="tool_use")
    agent.result("x3", "x2", "toolu_R", "def parse(): ...", isSidechain=True, agentId="9f3b2a1c",
                 sessionId=session, version="2.0.28")
    other = CC_()  # a sub-agent of another session in the same project folder: not this one's
    other.user("y1", None, "else", isSidechain=True, agentId="0000", sessionId="another")
    for name, lines in ((f"{session}.jsonl", cc.lines), ("agent-9f3b2a1c.jsonl", agent.lines),
                        ("agent-0000.jsonl", other.lines)):
        (tmp_path / name).write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    tree = Session.open(tmp_path / f"{session}.jsonl").tree
    side = [e for e in tree.entries if e.sidechain]
    assert [e.id for e in side] == ["x1", "x2", "x3"]
    assert tree.is_ancestor("a1", "x1") and side[0].file == "agent-9f3b2a1c.jsonl"
