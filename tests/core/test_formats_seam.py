"""The format seam: which reader a file gets, pi's migrations done once in memory, pi v3 read
incrementally and untouched, and the one place that knows every agent's tool names."""

import orjson
import pytest

from tests.conftest import FIXTURES, Builder, header
from webapp.core.errors import SessionError
from webapp.core.agents.tools import ToolAction, tool_action
from webapp.core.reader import parse_bytes
from webapp.core.session import Session


@pytest.mark.parametrize("path, fmt", [
    (FIXTURES / "pi" / "agent-sessions_pi_small.jsonl", "pi-v3"),
    (FIXTURES / "pi" / "pi-mono_large-session.jsonl", "pi-v1"),
    (FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl", "claude-code"),
    (FIXTURES / "claude-code" / "d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "claude-code"),
    (FIXTURES / "claude-code" / "agent-sessions_claude_small.jsonl", "claude-code"),
    (FIXTURES / "codex" / "agent-sessions_codex_small.jsonl", "codex"),
], ids=lambda x: getattr(x, "name", x))
def test_the_format_is_told_from_the_first_lines(path, fmt):
    assert Session.open(path).log.format == fmt


def test_the_read_only_formats_are_those_of_the_other_agents_readers():
    from webapp.core.agents import read_only_formats
    from webapp.core.agents.claude_code.reader import ClaudeReader
    from webapp.core.agents.codex.reader import CodexReader

    assert read_only_formats() == {ClaudeReader.name, CodexReader.name}


def test_a_bad_first_line_does_not_hide_the_format():
    data = b"{torn\n" + (FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl").read_bytes()
    log = parse_bytes(data)
    assert log.format == "claude-code" and [b.line for b in log.bad_lines] == [1]


def test_lines_of_no_known_format_are_read_as_pi_without_a_header():
    log = parse_bytes(b'{"type":"message","id":"a","message":{"role":"user","content":"x"}}\n')
    assert log.format == "unknown" and [p.kind for p in log.problems] == ["no-header"]


def test_pi_v3_lines_are_the_entries_as_read():
    b = Builder()
    b.user("q")
    b.assistant("a")
    data = b.data()
    log = parse_bytes(data)
    for e, line in zip(log.entries, data.splitlines()[1:]):
        assert e.raw == orjson.loads(line) and e.source is None and e.original is e.raw
        assert e.sidechain is False


def test_pi_v1_is_migrated_in_memory_with_the_line_kept_as_source():
    lines = [header(None), {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "a"}},
             {"type": "compaction", "timestamp": "t", "summary": "s", "firstKeptEntryIndex": 1, "tokensBefore": 9}]
    data = b"".join(orjson.dumps(x) + b"\n" for x in lines)
    log = parse_bytes(data)
    user, comp = log.entries
    assert log.format == "pi-v1"
    assert user.raw == {**lines[1], "id": "L2", "parentId": None} and user.source == lines[1]
    assert comp.raw == {"type": "compaction", "timestamp": "t", "summary": "s", "tokensBefore": 9,
                        "id": "L3", "parentId": "L2", "firstKeptEntryId": "L2"}
    assert comp.source == lines[2] and comp.original == lines[2]


def test_pi_v2_hook_message_is_a_custom_message_with_the_line_kept():
    b = Builder(version=2)
    b.add("message", id="h", message={"role": "hookMessage", "content": "x"})
    e = parse_bytes(b.data()).entries[0]
    assert e.message["role"] == "custom" and e.source["message"]["role"] == "hookMessage"


def test_a_growing_pi_v3_file_is_read_only_from_where_it_stopped(tmp_path):
    b = Builder()
    b.user("q", id="u1")
    path = b.write(tmp_path / "s.jsonl")
    s = Session.open(path)
    first = s.log.entries[0]
    offset = s.log.offset
    with open(path, "ab") as f:
        f.write(orjson.dumps({"type": "message", "id": "a2", "parentId": "u1", "timestamp": "t",
                              "message": {"role": "assistant", "content": "ok"}}) + b"\n")
    log = s.refresh()
    assert log.entries[0] is first  # earlier entries are not read again
    assert log.offset > offset and [e.id for e in log.entries] == ["u1", "a2"]


CALLS = [
    ({"name": "read", "arguments": {"path": "a.py", "offset": 3}}, ToolAction("read", "a.py", paths=("a.py",), shown=("path",))),
    ({"name": "edit", "arguments": {"path": "a.py", "oldText": "x", "newText": "y"}},
     ToolAction("edit", "a.py", old="x", new="y", paths=("a.py",), shown=("path", "oldText", "newText"))),
    ({"name": "write", "arguments": {"path": "b.py", "content": "z"}},
     ToolAction("write", "b.py", content="z", paths=("b.py",), shown=("path", "content"))),
    ({"name": "bash", "arguments": {"command": "make"}}, ToolAction("bash", command="make", shown=("command",))),
    ({"name": "Read", "arguments": {"file_path": "/r"}}, ToolAction("read", "/r", paths=("/r",), shown=("file_path",))),
    ({"name": "Edit", "arguments": {"file_path": "/e", "old_string": "a", "new_string": "b"}},
     ToolAction("edit", "/e", old="a", new="b", paths=("/e",), shown=("file_path", "old_string", "new_string"))),
    ({"name": "MultiEdit", "arguments": {"file_path": "/m", "edits": []}},
     ToolAction("edit", "/m", paths=("/m",), shown=("file_path",))),
    ({"name": "Write", "arguments": {"file_path": "/w", "content": "c"}},
     ToolAction("write", "/w", content="c", paths=("/w",), shown=("file_path", "content"))),
    ({"name": "NotebookEdit", "arguments": {"notebook_path": "/n.ipynb"}},
     ToolAction("edit", "/n.ipynb", paths=("/n.ipynb",), shown=("notebook_path",))),
    ({"name": "Bash", "arguments": {"command": "ls"}}, ToolAction("bash", command="ls", shown=("command",))),
    ({"name": "shell", "arguments": {"command": ["bash", "-lc", "make test"]}},
     ToolAction("bash", command="make test", shown=("command",))),
    ({"name": "shell", "arguments": {"command": ["ls", "-la", "my dir"]}},
     ToolAction("bash", command="ls -la 'my dir'", shown=("command",))),
    ({"name": "exec_command", "arguments": {"cmd": "pytest"}}, ToolAction("bash", command="pytest", shown=("cmd",))),
    ({"name": "apply_patch", "arguments": {"input": "*** Begin Patch\n*** Update File: a.py\n*** Add File: b.py\n"}},
     ToolAction("edit", "a.py", patch="*** Begin Patch\n*** Update File: a.py\n*** Add File: b.py\n",
                paths=("a.py", "b.py"), shown=("input",))),
    ({"name": "grep", "arguments": {"pattern": "x"}}, ToolAction("other")),
    ({"name": "read", "arguments": {"path": 5}}, ToolAction("other")),
    ({"name": ["read"], "arguments": {}}, ToolAction("other")),
    ("not a call", ToolAction("other")),
]


@pytest.mark.parametrize("call, action", CALLS, ids=lambda x: x.get("name") if isinstance(x, dict) else None)
def test_tool_action_reads_every_agents_tool_names(call, action):
    assert tool_action(call) == action


@pytest.mark.parametrize("path", [FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl",
                                  FIXTURES / "codex" / "agent-sessions_codex_small.jsonl"], ids=lambda p: p.name)
def test_another_agents_file_is_never_appended_to(path, tmp_path):
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    s = Session.open(copy)
    with pytest.raises(SessionError):
        s.append({"type": "label", "targetId": s.tree.entries[0].id, "label": "x"})
    assert copy.read_bytes() == path.read_bytes()
