"""Lines crafted where a compiled decoder and orjson can disagree (`show`'s columns read the usual
pi line with msgspec, every view with orjson): text that is not UTF-8, numbers beyond a double or
a 64-bit integer, nesting, duplicate and escaped keys, and fields of other types."""

from __future__ import annotations

import orjson

from tests.test_hostile_files import msg, nested


def _line(message: dict | bytes, **extra) -> bytes:
    return message if isinstance(message, bytes) else orjson.dumps(msg("r1", message, **extra))


def tool_call_line(arguments: bytes) -> bytes:
    """An assistant line calling a tool with `arguments` (JSON as it is written)."""
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


CRAFTED = {
    "not-utf8-text": _with(b"text", b'"a\xffb"', "block"),
    "not-utf8-unknown-field": _with(b"note", b'"\xed\xa0\x80"'),
    "not-utf8-argument": tool_call_line(b'{"command":"\xc0\xaf"}'),
    "lone-surrogate": _with(b"text", b'"\\ud800"', "block"),
    "control-character": _with(b"text", b'"a\x01b"', "block"),
    "infinity-in-arguments": tool_call_line(b'{"n":1e400}'),
    "infinity-in-nested-arguments": tool_call_line(b'{"n":[{"m":1e400}]}'),
    "long-integer-in-arguments": tool_call_line(b'{"n":' + b"9" * 400 + b"}"),
    "integer-beyond-64-bits": tool_call_line(b'{"n":18446744073709551616}'),
    "integer-at-64-bits": tool_call_line(b'{"n":18446744073709551615}'),
    "infinity-unknown-field": _with(b"n", b"1e999"),
    "infinity-in-message": _with(b"n", b"-1e999", "message"),
    "exponent-in-block": _with(b"n", b"99e307", "block"),
    "deep-arguments-101": tool_call_line(b'{"a":' + b"[" * 101 + b"]" * 101 + b"}"),
    "deep-arguments-1000": tool_call_line(b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}"),
    "deep-arguments-1100": tool_call_line(nested(1100)),
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
