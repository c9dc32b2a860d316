"""Damaged files (SPEC §7): every good line loads, every bad one is reported with its line number,
reason and raw text, and nothing raises, whatever the damage. Runs over both storages."""

import random

import orjson
import pytest

from tests.conftest import storage_bytes, Builder, header
from webapp.core.catalog import summarize_session
from webapp.core.compaction import plan_branch_summary, plan_compaction
from webapp.core.context import build_context
from webapp.core.reader import BOM
from webapp.core.session import Session
from webapp.core.texttree import render_text_tree
from webapp.core.tokens import context_tokens

MB20 = 20 * 1024 * 1024


def everything(s: Session):
    """Every read-only view of a session: none of them may raise on a damaged file."""
    tree = s.tree
    tree.all_problems()
    tree.leaves()
    render_text_tree(tree)
    for leaf in {tree.active_leaf, *tree.leaves()}:
        ctx = build_context(tree, leaf)
        context_tokens(ctx)
        plan_compaction(tree, leaf, keep_recent_tokens=10)
        plan_branch_summary(tree, leaf, None).messages()
    return tree


def test_torn_last_line(make_session):
    b = Builder()
    b.user("a")
    b.user("b")
    s = make_session(b.data() + b'{"type":"message","id":"e3","parentId":"e2","mess')
    tree = everything(s)
    assert [e.id for e in tree.entries] == ["e1", "e2"]
    (bad,) = tree.bad_lines
    assert bad.line == 4 and bad.torn and bad.raw.startswith('{"type":"message","id":"e3"')
    assert tree.active_leaf == "e2"


def test_crlf_line_endings(make_session):
    b = Builder()
    b.user("a")
    b.assistant("b")
    s = make_session(b.data().replace(b"\n", b"\r\n"))
    tree = everything(s)
    assert s.log.header is not None
    assert [e.id for e in tree.entries] == ["e1", "e2"]
    assert tree.bad_lines == [] and tree.problems == []
    assert build_context(tree, "e2").messages[1]["content"] == "b"


def test_utf8_bom(make_session):
    b = Builder()
    b.user("a")
    s = make_session(BOM + b.data())
    tree = everything(s)
    assert s.log.header == header()
    assert [e.id for e in tree.entries] == ["e1"] and tree.problems == []


def test_invalid_utf8_in_a_line(make_session):
    b = Builder()
    b.user("a")
    b.raw(b'{"type":"message","id":"x","parentId":"e1","message":{"role":"user","content":"caf\xe9"}}')
    b.user("c", parent="e1")
    s = make_session(b.data())
    tree = everything(s)
    assert [e.id for e in tree.entries] == ["e1", "e2"]
    (bad,) = tree.bad_lines
    assert bad.line == 3 and bad.reason.startswith("invalid UTF-8")
    assert "caf\ufffd" in bad.raw


def test_empty_file(make_session):
    s = make_session(b"")
    tree = everything(s)
    assert s.log.header is None and tree.entries == [] and tree.bad_lines == []
    assert tree.active_leaf is None
    assert build_context(tree, None).messages == []


def test_header_only_file(make_session):
    s = make_session(orjson.dumps(header()) + b"\n")
    tree = everything(s)
    assert s.log.header == header() and tree.entries == [] and tree.problems == []
    assert tree.active_leaf is None and tree.leaves() == []


def test_header_without_its_newline(make_session):
    """A whole header that only lacks its newline is a header; the next append adds the newline."""
    s = make_session(orjson.dumps(header()))
    tree = everything(s)
    assert tree.entries == [] and tree.bad_lines == []
    assert s.log.header == header()
    entry = s.append({"type": "message", "message": {"role": "user", "content": "first"}})
    lines = storage_bytes(s).split(b"\n")
    assert orjson.loads(lines[0]) == header() and orjson.loads(lines[1])["id"] == entry["id"]
    assert s.tree.header == header() and [e.id for e in s.tree.entries] == [entry["id"]]


def test_file_without_a_header(make_session):
    b = Builder(with_header=False)
    b.user("a")
    b.assistant("b")
    s = make_session(b.data())
    tree = everything(s)
    assert s.log.header is None
    assert [e.id for e in tree.entries] == ["e1", "e2"]
    assert [p.kind for p in tree.problems] == ["no-header"]
    assert [m["entryId"] for m in build_context(tree, tree.active_leaf).messages] == ["e1", "e2"]


def test_a_20_mb_entry_loads(make_session):
    b = Builder()
    b.user("a")
    b.user("y" * MB20)
    b.assistant("z")
    s = make_session(b.data())
    tree = s.tree
    assert [e.id for e in tree.entries] == ["e1", "e2", "e3"] and tree.bad_lines == []
    ctx = build_context(tree, "e3")
    assert len(ctx.messages[1]["content"]) == MB20
    assert context_tokens(ctx).context >= MB20 // 4


def test_a_20_mb_garbage_line_is_one_bad_line_with_its_raw_text(make_session):
    b = Builder()
    b.user("a")
    b.raw(b'{"type":"message","text":"' + b"q" * MB20)
    b.user("c", parent="e1")
    s = make_session(b.data())
    tree = s.tree
    assert [e.id for e in tree.entries] == ["e1", "e2"]
    (bad,) = tree.bad_lines
    assert bad.line == 3 and bad.reason.startswith("invalid JSON")
    assert len(bad.raw) == MB20 + 26


GARBAGE = [
    b"{not json",
    b"[1, 2, 3]",
    b"null",
    b"42",
    b'"a string"',
    b'{"type":"message","id":"t","parentId":',
    b"\xff\xfe\x00garbage",
    b"}{",
]


def test_ten_percent_garbage_lines(make_session):
    rng = random.Random(7)
    b = Builder()
    expected_bad: dict[int, bytes] = {}
    good = []
    for i in range(1000):
        if rng.random() < 0.1:
            raw = rng.choice(GARBAGE)
            b.raw(raw)
            expected_bad[len(b.lines)] = raw
        else:
            good.append(b.user(f"m{i}", parent=good[-1] if good and rng.random() < 0.9 else None))
    s = make_session(b.data())
    tree = everything(s)
    assert len(expected_bad) > 50
    assert [e.id for e in tree.entries] == good
    assert {x.line: x.raw for x in tree.bad_lines} == {
        n: raw.decode("utf-8", errors="replace") for n, raw in expected_bad.items()
    }
    assert all(x.reason for x in tree.bad_lines)
    reported = {p.line for p in tree.all_problems() if p.kind == "bad-line"}
    assert reported == set(expected_bad)
    assert tree.orphans == []


@pytest.mark.parametrize("fields", [
    {"type": "message", "id": 5, "parentId": None, "message": "not a dict"},
    {"type": "message", "id": "", "parentId": 7, "message": {"role": "assistant", "content": 3, "usage": "x"}},
    {"id": "notype", "parentId": None},
    {"type": "label", "id": "l", "parentId": None, "targetId": ["x"], "label": 5},
    {"type": "leaf", "id": "f", "parentId": None, "targetId": 9},
    {"type": "compaction", "id": "c", "parentId": None, "summary": None, "firstKeptEntryIndex": "3"},
    {"type": "message", "id": "m", "parentId": None, "timestamp": 17,
     "message": {"role": "assistant", "content": [{"type": "toolCall", "arguments": "not a dict"}, "str", 3]}},
    {"type": "session_info", "id": "s", "parentId": None, "name": {"x": 1}},
    {"type": "active_tools_change", "id": "a", "parentId": None, "tools": "read"},
    {"type": "branch_summary", "id": "b", "parentId": None, "fromId": None, "summary": ["x"]},
    {"type": ["message"], "id": "t", "parentId": "e1", "message": {"role": "user", "content": "x"}},
    {"type": "message", "id": "r", "parentId": "e1", "message": {"role": {"a": 1}, "content": "x"}},
    {"type": "leaf", "id": "f", "parentId": None, "targetId": {"x": 1}},
    {"type": "compaction", "id": "c", "parentId": "e1", "summary": "s", "firstKeptEntryId": ["e1"]},
    {"type": "message", "id": "m", "parentId": "e1", "message": {"role": "assistant", "content": [
        {"type": "toolCall", "id": [1], "name": ["read"], "arguments": {"path": ["a"]}},
        {"type": "text", "text": 5}, {"type": ["text"]}]}},
    {"type": "message", "id": "m", "parentId": "e1", "message": {"role": "assistant", "content": [
        {"type": "toolCall", "id": "c", "name": ["read"], "arguments": {"path": "a"}},
        {"type": "toolCall", "id": "d", "name": 7, "arguments": []}]}},
    {"type": "message", "id": "u", "parentId": "e1", "message": {"role": "user", "content": [
        {"type": "text", "text": None}, {"type": "image", "data": 5, "mimeType": None}]}},
    {"type": "message", "id": "x", "parentId": "e1", "message": {"role": "toolResult", "toolCallId": 3,
     "content": [{"type": "text", "text": 5}]}},
    {"type": "message", "id": "y", "parentId": "e1", "message": {"role": "bashExecution", "command": 1,
     "output": None, "exitCode": "x"}},
    {"type": "custom_message", "id": "cm", "parentId": "e1", "customType": 1, "content": {"a": 1}},
    {"type": "model_change", "id": "mc", "parentId": "e1", "provider": 1, "modelId": ["m"]},
    {"type": "thinking_level_change", "id": "tl", "parentId": "e1", "thinkingLevel": None},
    {"type": "compaction", "id": "c2", "parentId": "e1", "summary": "s", "firstKeptEntryId": "e1",
     "details": {"readFiles": "a", "modifiedFiles": [1, None]}},
])
def test_strange_but_valid_json_entries_never_raise(make_session, fields, tmp_path):
    b = Builder()
    b.user("a")
    b.raw(fields)
    b.user("z", parent="e1")
    s = make_session(b.data())
    tree = everything(s)
    assert len(tree.entries) == 3 and tree.bad_lines == []
    path = tmp_path / "strange.jsonl"
    path.write_bytes(b.data())
    summarize_session(path)
