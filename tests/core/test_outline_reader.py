"""The outline read (`Session.open_outline`, what `show` reads with: a compiled decoder for pi's
usual line) gives every line the verdict the pi reader gives it: the same entries with the same
facts, the same bad lines with the same reasons, the same problems and the same tree. Checked on
every fixture, every hostile file, lines crafted where the two parsers differ, and fuzzed lines."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.conftest import Builder
from tests.test_cli import run
from tests.test_hostile_files import ENTRY, FILES, FIXTURE_FILES, any_json, hostile, msg, nested
from webapp.core.session import Session


def _dumped(value) -> bytes:
    """A body as JSON (compared without recursing: a crafted one nests 1,000 deep)."""
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError) as exc:
        return str(exc).encode()


def verdicts(session: Session) -> dict:
    """Everything a reading says of each line, and the tree built from it."""
    tree = session.tree
    return {
        "entries": [(e.line, e.id, e.type, e.parent_id, e.role, e.facts, e.tool_call_ids, e.tool_call_id,
                     e.is_error, e.usage_tokens, e.cost, e.missing_fields, e.generated_id, e.sidechain, e.file,
                     _dumped(e.source), e.instant, _dumped(e.raw)) for e in tree.entries],
        "bad": [(b.line, b.reason, b.raw, b.torn) for b in tree.bad_lines],
        "problems": [p.as_dict() for p in tree.all_problems()],
        "tree": (tree.header, tree.format, tree.name, tree.roots, tree.orphans, tree.cycle_cuts, tree.leaves(),
                 tree.active_leaf, tree.labels, {k: tree.children[k] for k in tree.children}),
    }


def check_same(path: Path) -> None:
    outline = Session.open_outline(path)
    assert verdicts(outline) == verdicts(Session.open(path))


def test_the_outline_reads_pi_messages_by_its_decoder(tmp_path, monkeypatch):
    """(Else every test below would compare the pi reader with itself.)"""
    from webapp.core.formats import pi, pi_outline

    read_as_pi = []
    real = pi.PiReader.read_lines
    monkeypatch.setattr(pi.PiReader, "read_lines", lambda self, lines, line: (read_as_pi.extend(lines),
                                                                              real(self, lines, line)))
    b = Builder()
    b.user("hello", id="u0")
    b.assistant("hi", id="a1")
    session = Session.open_outline(b.write(tmp_path / "s.jsonl"))
    assert type(session.log._reader) is pi_outline.OutlineReader
    assert [e.id for e in session.tree.entries] == ["u0", "a1"] and read_as_pi == []


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.name)
def test_every_fixture_reads_the_same(fixture):
    check_same(fixture)


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_hostile_file_reads_the_same(tmp_path, name):
    path = tmp_path / "h.jsonl"
    path.write_bytes(FILES[name])
    check_same(path)


def _line(message: dict | bytes, **extra) -> bytes:
    return message if isinstance(message, bytes) else orjson.dumps(msg("r1", message, **extra))


def _call(arguments: bytes) -> bytes:
    return (b'{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-02T03:04:09.000Z","message":'
            b'{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":'
            + arguments + b"}]}}")


def _with(field: bytes, value: bytes, where: str = "top") -> bytes:
    """A user message line with `field: value` added at the top, in the message or in a block."""
    head = b'{"type":"message","id":"r1","parentId":"a1",'
    if where == "top":
        return head + b'"' + field + b'":' + value + b',"message":{"role":"user","content":"x"}}'
    if where == "message":
        return head + b'"message":{"role":"user","' + field + b'":' + value + b',"content":"x"}}'
    return head + b'"message":{"role":"user","content":[{"type":"text","' + field + b'":' + value + b"}]}}"


# Where a compiled decoder and orjson can disagree: text that is not UTF-8, numbers beyond a
# double or a 64-bit integer, nesting, duplicate and escaped keys, and fields of other types.
CRAFTED = {
    "not-utf8-text": _with(b"text", b'"a\xffb"', "block"),
    "not-utf8-unknown-field": _with(b"note", b'"\xed\xa0\x80"'),
    "not-utf8-argument": _call(b'{"command":"\xc0\xaf"}'),
    "lone-surrogate": _with(b"text", b'"\\ud800"', "block"),
    "control-character": _with(b"text", b'"a\x01b"', "block"),
    "infinity-in-arguments": _call(b'{"n":1e400}'),
    "infinity-in-nested-arguments": _call(b'{"n":[{"m":1e400}]}'),
    "long-integer-in-arguments": _call(b'{"n":' + b"9" * 400 + b"}"),
    "integer-beyond-64-bits": _call(b'{"n":18446744073709551616}'),
    "integer-at-64-bits": _call(b'{"n":18446744073709551615}'),
    "infinity-unknown-field": _with(b"n", b"1e999"),
    "infinity-in-message": _with(b"n", b"-1e999", "message"),
    "exponent-in-block": _with(b"n", b"99e307", "block"),
    "deep-arguments-101": _call(b'{"a":' + b"[" * 101 + b"]" * 101 + b"}"),
    "deep-arguments-1000": _call(b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}"),
    "deep-arguments-1100": _call(nested(1100)),
    "deep-unknown-field-1022": _with(b"n", b"[" * 1022 + b"]" * 1022),
    "duplicate-id": b'{"type":"message","id":"r1","id":"r2","parentId":"a1","message":{"role":"user","content":"x"}}',
    "duplicate-role": b'{"type":"message","id":"r1","parentId":"a1","message":{"role":"user","role":"hookMessage","content":"x"}}',
    "duplicate-role-last-valid": b'{"type":"message","id":"r1","parentId":"a1","message":{"role":5,"role":"user","content":"x"}}',
    "duplicate-block-type": _with(b"type", b'"toolCall"', "block"),
    "escaped-key": b'{"type":"message","\\u0069d":"r1","parentId":"a1","message":{"role":"user","content":"x"}}',
    "escaped-toolcallid-key": b'{"type":"message","id":"r1","parentId":"a1","message":{"role":"user","toolCallI\\u0064":5}}',
    "nan": _with(b"n", b"NaN"),
    "bom-in-line": b"\xef\xbb\xbf" + _with(b"n", b"1"),
    "trailing-garbage": _with(b"n", b"1") + b" x",
    "trailing-carriage-return": _with(b"n", b"1") + b"\r",
    "usage-total-zero": _line({"role": "assistant", "content": "a", "usage": {"totalTokens": 0, "input": 3, "output": 4}}),
    "usage-total-zero-estimated": _line({"role": "assistant", "content": "a", "usage": {"totalTokens": 0,
                                                                                       "estimated": True}}),
    "usage-total-zero-aborted": _line({"role": "assistant", "content": "a", "stopReason": "aborted",
                                       "usage": {"totalTokens": 0, "input": 3}}),
    "usage-total-negative": _line({"role": "assistant", "content": "a", "usage": {"totalTokens": -5, "input": 3}}),
    "usage-total-float": _line({"role": "assistant", "content": "a", "usage": {"totalTokens": 7.5}}),
    "usage-beyond-a-column": _line({"role": "assistant", "content": "a", "usage": {"totalTokens": 2**40}}),
    "usage-estimated": _line({"role": "assistant", "content": "a", "usage": {"totalTokens": 9, "estimated": True,
                                                                            "cost": {"total": 2}}}),
    "usage-aborted": _line({"role": "assistant", "content": "a", "stopReason": "aborted",
                            "usage": {"totalTokens": 9, "cost": {"total": 0.5}}}),
    "usage-estimated-string": _line({"role": "assistant", "content": "a", "usage": {"totalTokens": 9, "estimated": "no"}}),
    "cost-integer": _line({"role": "assistant", "content": "a", "usage": {"totalTokens": 9, "cost": {"total": 3}}}),
    "cost-string": _line({"role": "assistant", "content": "a", "usage": {"totalTokens": 9, "cost": {"total": "3"}}}),
    "tool-result-error": _line({"role": "toolResult", "toolCallId": "c1", "isError": True, "content": "no"}),
    "tool-result-error-number": _line({"role": "toolResult", "toolCallId": "c1", "isError": 1, "content": "no"}),
    "tool-result-no-call-id": _line({"role": "toolResult", "content": [{"type": "image", "data": "x"}]}),
    "tool-result-details-infinity": _line(b'{"type":"message","id":"r1","parentId":"a1","message":{"role":"toolResult",'
                                          b'"toolCallId":"c1","content":"x","details":{"n":1e400}}}'),
    "tool-result-details": _line({"role": "toolResult", "toolCallId": "c1", "content": "x", "details": {"diff": [1, {"a": None}]}}),
    "tool-result-tool-call-block": _line({"role": "toolResult", "toolCallId": "c1", "content": [{"type": "toolCall"}]}),
    "hook-message": _line({"role": "hookMessage", "content": "x"}),
    "bash-execution": _line({"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0}),
    "custom-role": _line({"role": "custom", "customType": "x", "content": [{"type": "text", "text": "t"}], "display": True}),
    "user-image": _line({"role": "user", "content": [{"type": "image", "data": "x"}]}),
    "user-content-number": _line({"role": "user", "content": 5}),
    "assistant-bare-block": _line({"role": "assistant", "content": ["text", {"type": "text", "text": 1}]}),
    "assistant-unknown-block": _line({"role": "assistant", "content": [{"type": "redacted", "data": "x"}]}),
    "tool-call-id-number": _line({"role": "assistant", "content": [{"type": "toolCall", "id": 5, "name": "x"}]}),
    "tool-call-arguments-list": _line({"role": "assistant", "content": [{"type": "toolCall", "id": "c", "arguments": [1, [2]]}]}),
    "parent-number": _line(b'{"type":"message","id":"r1","parentId":5,"message":{"role":"user","content":"x"}}'),
    "parent-empty": _line(b'{"type":"message","id":"r1","parentId":"","message":{"role":"user","content":"x"}}'),
    "no-parent-key": _line(b'{"type":"message","id":"r1","message":{"role":"user","content":"x"}}'),
    "empty-id": _line(b'{"type":"message","id":"","parentId":"a1","message":{"role":"user","content":"x"}}'),
    "known-id": _line(b'{"type":"message","id":"a1","parentId":"a1","message":{"role":"user","content":"x"}}'),
    "timestamp-naive": _line({"role": "user", "content": "x"}, timestamp="2026-01-02T03:04:09"),
    "timestamp-offset": _line({"role": "user", "content": "x"}, timestamp="2026-01-02T03:04:09+02:00"),
    "timestamp-not-iso": _line({"role": "user", "content": "x"}, timestamp="yesterday"),
    "timestamp-number": _line({"role": "user", "content": "x"}, timestamp=5),
    "timestamp-year-overflow": _line({"role": "user", "content": "x"}, timestamp="9999-12-31T23:59:59-23:59"),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a_crafted_line_reads_the_same(tmp_path, name):
    path = tmp_path / "c.jsonl"
    # The line, then a tool result and a reply after it (which the line's facts decide about).
    after = msg("r9", {"role": "toolResult", "toolCallId": "c1", "content": "ok"}, parent="r1")
    path.write_bytes(hostile(CRAFTED[name], after, msg("r10", {"role": "assistant", "content": "x"}, parent="r9")))
    check_same(path)


@settings(max_examples=100, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(entries=st.lists(ENTRY, min_size=1, max_size=4), cut=st.integers(0, 400), junk=st.binary(max_size=3))
def test_fuzzed_lines_read_the_same(tmp_path_factory, entries, cut, junk):
    """The hostile-file fuzzer's entries (any JSON in any field), with the bytes of one of them
    damaged: the two readings agree on every line."""
    lines = [any_json(e) for e in entries]
    if "message" in entries[0] and isinstance(entries[0]["message"], dict):
        lines[0] = any_json({**entries[0], "type": "message", "parentId": "a1"})  # (the usual line, nearly)
    damaged = lines[-1]
    lines[-1] = damaged[:cut] + junk + damaged[cut + len(junk):]
    path = tmp_path_factory.mktemp("lines") / "f.jsonl"
    path.write_bytes(hostile(*lines))
    check_same(path)


def test_show_json_is_what_the_full_read_gives(tmp_path, capsys, monkeypatch):
    """`show --json` reads the file its own way (tests/core/test_show_outline.py); its output is
    the document of the tree of a full read."""
    from webapp.core.outline import tree_outline

    path = tmp_path / "s.jsonl"
    path.write_bytes(FILES["control-characters"] + b'{"type":"message","id":"b\xff"}\n' + _call(b'{"n":1e400}') + b"\n")
    code, out, _ = run(capsys, "show", path, "--json", monkeypatch=monkeypatch)
    assert code == 0
    assert json.loads(out) == {"path": str(path), **json.loads(orjson.dumps(tree_outline(Session.open(path))))}
    assert [b["line"] for b in json.loads(out)["badLines"]] == [6, 7]
