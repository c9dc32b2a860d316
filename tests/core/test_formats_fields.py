"""Field types normalised at the edge: each hostile line below, after a normal entry `a1`, is
read with its wrong-typed field made "invalid" (or its too-deep arguments cut) and reported with
its line; the tree, the context, compare and the CLI then work on sound types only."""

import subprocess
import sys

import orjson
import pytest

from tests.conftest import Builder
from webapp.cli import main
from webapp.core.compare import compare
from webapp.core.context import build_context
from webapp.core.entries import content_blocks, entry_text
from webapp.core.formats.fields import MAX_DEPTH, TOO_DEEP
from webapp.core.reader import parse_bytes
from webapp.core.tokens import context_tokens
from webapp.core.tree import SessionTree


def nested(depth: int) -> dict:
    value: dict = {"leaf": "x"}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


def deep_call(depth: int, name: str) -> str:
    """A line whose tool call arguments are `depth` objects deep, as JSON text (deeper than an
    encoder would write)."""
    args = '{"k":' * (depth - 1) + '{"leaf":"x"}' + "}" * (depth - 1)
    return ('{"type":"message","id":"r1","parentId":"a1","message":{"role":"assistant","content":'
            f'[{{"type":"toolCall","id":"c","name":"{name}","arguments":{args}}}]}}}}')


def depth_of(value) -> int:
    d = 0
    while isinstance(value, dict) and "k" in value:
        value, d = value["k"], d + 1
    return d + 1


HOSTILE = {
    "role-int": {"type": "message", "id": "r1", "parentId": "a1", "message": {"role": 5, "content": "x"}},
    "role-list": {"type": "message", "id": "r1", "parentId": "a1", "message": {"role": ["user"], "content": "x"}},
    "role-object": {"type": "message", "id": "r1", "parentId": "a1", "message": {"role": {"a": 1}, "content": "x"}},
    "toolcallid-true": {"type": "message", "id": "r1", "parentId": "a1", "message": {
        "role": "toolResult", "toolCallId": True, "toolName": "read", "content": [{"type": "text", "text": "r"}]}},
    "toolcallid-negative": {"type": "message", "id": "r1", "parentId": "a1", "message": {
        "role": "toolResult", "toolCallId": -1, "content": "r"}},
    "toolcallid-object": {"type": "message", "id": "r1", "parentId": "a1", "message": {
        "role": "toolResult", "toolCallId": {}, "content": "r"}},
    "block-type-list": {"type": "message", "id": "r1", "parentId": "a1", "message": {
        "role": "assistant", "content": [{"type": ["text"], "text": "t"}]}},
    "block-type-object": {"type": "message", "id": "r1", "parentId": "a1", "message": {
        "role": "user", "content": [{"type": {"t": 1}, "text": "t"}]}},
    "custom-message-block-type": {"type": "custom_message", "id": "r1", "parentId": "a1", "customType": "x",
                                  "content": [{"type": [1], "text": "t"}], "display": True},
    "args-300-deep": deep_call(300, "bash"),
    "args-1000-deep": deep_call(1000, "x"),
    "toolcall-id-list": {"type": "message", "id": "r1", "parentId": "a1", "message": {
        "role": "assistant", "content": [{"type": "toolCall", "id": [1], "name": {"n": 1}, "arguments": {}}]}},
}


def hostile_file(line: dict | str) -> bytes:
    b = Builder()
    b.user("q", id="a1")
    b.raw(line)
    b.assistant("after", parent="r1", id="z9")
    return b.data()


def sound(value) -> None:
    """Every type the downstream code reads is what it expects."""
    for m in value:
        assert isinstance(m["role"], str)
        assert m.get("tool_call_id") is None or isinstance(m["tool_call_id"], str)
        for c in m.get("tool_calls") or ():
            assert isinstance(c["id"], str) and isinstance(c["function"]["name"], str)


@pytest.mark.parametrize("name", HOSTILE)
def test_each_hostile_line_is_normalised_reported_and_the_rest_works(name):
    line = HOSTILE[name]
    tree = SessionTree(parse_bytes(hostile_file(line)))
    entry = tree.entry("r1")
    assert entry.source is not None  # the line as written stays for the raw view
    if isinstance(line, dict):
        assert entry.source == line
    problems = [p for p in tree.problems if p.kind == "invalid-field"]
    assert [(p.line, p.entry_id) for p in problems] == [(3, "r1")]
    msg = entry.raw.get("message", {})
    assert isinstance(entry.role, (str, type(None)))
    assert msg.get("toolCallId") is None or isinstance(msg["toolCallId"], str)
    for block in content_blocks(msg.get("content", entry.get("content"))):
        assert isinstance(block["type"], str)
    entry_text(entry)
    for leaf in ("r1", "z9"):
        ctx = build_context(tree, leaf)
        sound(ctx.messages)
        orjson.dumps(ctx.messages)  # encodable: nothing deeper than the encoder takes
        context_tokens(ctx)
    compare(tree, ["r1", "z9"])


def test_the_wrong_types_read_as_invalid():
    role = SessionTree(parse_bytes(hostile_file(HOSTILE["role-int"]))).entry("r1")
    assert role.role == "invalid" and "the role is a int" in SessionTree(
        parse_bytes(hostile_file(HOSTILE["role-int"]))).problems[0].message
    result = SessionTree(parse_bytes(hostile_file(HOSTILE["toolcallid-object"]))).entry("r1")
    assert result.message["toolCallId"] == "invalid"
    block = SessionTree(parse_bytes(hostile_file(HOSTILE["block-type-list"]))).entry("r1")
    assert block.message["content"][0]["type"] == "invalid"
    call = SessionTree(parse_bytes(hostile_file(HOSTILE["toolcall-id-list"]))).entry("r1")
    assert call.message["content"][0]["id"] == "invalid" and call.message["content"][0]["name"] == "invalid"


def test_deep_arguments_are_cut_at_the_limit_with_a_marker():
    tree = SessionTree(parse_bytes(hostile_file(HOSTILE["args-1000-deep"])))
    args = tree.entry("r1").message["content"][0]["arguments"]
    assert depth_of(args) == MAX_DEPTH + 1  # MAX_DEPTH objects, then the marker in place of the rest
    cur = args
    while isinstance(cur, dict):
        cur = cur["k"]
    assert cur == TOO_DEEP
    assert "nested more than 100 deep" in tree.problems[0].message


def test_sound_lines_are_not_copied():
    b = Builder()
    b.user("q", id="a1")
    b.assistant("a", calls=[{"id": "c", "name": "bash", "arguments": nested(MAX_DEPTH)}])
    tree = SessionTree(parse_bytes(b.data()))
    assert "invalid-field" not in {p.kind for p in tree.problems}
    assert all(e.source is None for e in tree.entries)


@pytest.mark.parametrize("name", HOSTILE)
def test_the_cli_reads_each_hostile_file(name, tmp_path, capsys):
    path = tmp_path / "h.jsonl"
    path.write_bytes(hostile_file(HOSTILE[name]))
    for argv in (["context", path, "--leaf", "z9"], ["context", path, "--json"], ["show", path, "--json"],
                 ["tree", path]):
        assert main([str(a) for a in argv]) == 0
    capsys.readouterr()
    assert main(["validate", str(path)]) == 1
    assert "invalid" in capsys.readouterr().out


def test_session_tree_context_prints_no_traceback_for_deep_arguments(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_bytes(hostile_file(HOSTILE["args-1000-deep"]))
    done = subprocess.run([sys.executable, "-m", "webapp.cli", "context", str(path), "--leaf", "r1", "--json"],
                          capture_output=True)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    assert TOO_DEEP.encode() in done.stdout
