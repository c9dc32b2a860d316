"""Field types checked once, at the edge, so that no view has to check them again: a role, a
tool call id, a block type or a tool call's arguments of the wrong type or shape would break a
view, the context or an export downstream. Here such a field becomes `INVALID` (or is cut) in a
copy of the message, and the line is reported; the line as written stays the entry's `source`
for the raw view.

The checks are written for speed: a well-formed message (nearly all of them) costs a few type
tests and one pass over its blocks, and is returned as it is, not copied.
"""

from __future__ import annotations

from typing import Any

from ..entries import MAX_DEPTH, too_deep
from .base import INVALID

TOO_DEEP = "(nested too deep)"


def cut_deep(value: Any, depth: int = 1) -> Any:
    """`value` with everything below `MAX_DEPTH` levels replaced by `TOO_DEEP` (iterative, so
    that cutting a 1,000-deep value does not itself recurse 1,000 times)."""
    if type(value) not in (dict, list):
        return value
    root: list = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, depth)]
    while stack:
        src, into, key, level = stack.pop()
        if level > MAX_DEPTH:
            into[key] = TOO_DEEP
            continue
        if type(src) is dict:
            copy: Any = {}
            into[key] = copy
            for k, v in src.items():
                if type(v) in (dict, list):
                    stack.append((v, copy, k, level + 1))
                else:
                    copy[k] = v
        elif type(src) is list:
            copy = [None] * len(src)
            into[key] = copy
            for i, v in enumerate(src):
                if type(v) in (dict, list):
                    stack.append((v, copy, i, level + 1))
                else:
                    copy[i] = v
        else:
            into[key] = src
    return root[0]


def _block_ok(b: Any) -> bool:
    if type(b) is not dict:
        return True  # a bare value reads as text downstream (entries.content_blocks)
    t = b.get("type")
    if type(t) is not str:
        return False
    if t == "toolCall":
        if type(b.get("id", "")) is not str or type(b.get("name", "")) is not str:
            return False
        args = b.get("arguments")
        return type(args) not in (dict, list) or not too_deep(args, 1)
    return True


def content_ok(content: Any) -> bool:
    """True when every block of `content` has the field types downstream code expects."""
    if type(content) is not list:
        return True
    for b in content:
        if not _block_ok(b):
            return False
    return True


def message_ok(msg: dict) -> bool:
    if "role" in msg and type(msg["role"]) is not str:
        return False
    if "toolCallId" in msg and type(msg["toolCallId"]) is not str:
        return False
    content = msg.get("content")
    if type(content) is not list:
        return True
    for b in content:  # (content_ok, without a call per block: this runs for every message read)
        if type(b) is dict:
            t = b.get("type")
            if type(t) is not str or t == "toolCall" and not _block_ok(b):
                return False
    return True


def _fixed_block(b: Any, why: list[str]) -> Any:
    if type(b) is not dict or _block_ok(b):
        return b
    b = dict(b)
    if type(b.get("type")) is not str:
        why.append(f"a content block's type is a {type(b['type']).__name__ if 'type' in b else 'missing'}")
        b["type"] = INVALID
        return b
    for key in ("id", "name"):
        if key in b and type(b[key]) is not str:
            why.append(f"a tool call's {key} is a {type(b[key]).__name__}")
            b[key] = INVALID
    if type(b.get("arguments")) in (dict, list) and too_deep(b["arguments"], 1):
        why.append(f"a tool call's arguments are nested more than {MAX_DEPTH} deep (cut)")
        b["arguments"] = cut_deep(b["arguments"])
    return b


def fixed_content(content: Any, why: list[str]) -> Any:
    if type(content) is not list:
        return content
    return [_fixed_block(b, why) for b in content]


def fixed_message(msg: dict) -> tuple[dict, list[str]]:
    """A copy of `msg` whose wrong-typed fields read `INVALID`, and what was wrong."""
    why: list[str] = []
    msg = dict(msg)
    if "role" in msg and type(msg["role"]) is not str:
        why.append(f"the role is a {type(msg['role']).__name__}")
        msg["role"] = INVALID
    if "toolCallId" in msg and type(msg["toolCallId"]) is not str:
        why.append(f"the toolCallId is a {type(msg['toolCallId']).__name__}")
        msg["toolCallId"] = INVALID
    msg["content"] = fixed_content(msg.get("content"), why)
    return msg, why


def checked_entry(obj: dict) -> tuple[dict, list[str]]:
    """`obj` as it is when its typed fields are sound (the usual case: no copy), else a copy
    with the unsound ones made `INVALID` or cut, and the reasons."""
    t = obj.get("type")
    if t == "message":
        msg = obj.get("message")
        if type(msg) is dict and not message_ok(msg):
            msg, why = fixed_message(msg)
            return {**obj, "message": msg}, why
    elif t == "custom_message":
        if not content_ok(obj.get("content")):
            why: list[str] = []
            return {**obj, "content": fixed_content(obj["content"], why)}, why
    elif t == "compaction" and "replacementHistory" in obj:
        history = obj["replacementHistory"]
        if type(history) is not list or not all(type(m) is dict and message_ok(m) for m in history):
            why = ["its replacementHistory is not a list of messages"] if type(history) is not list else []
            fixed = [fixed_message(m) for m in history if type(m) is dict] if type(history) is list else []
            if type(history) is list and len(fixed) < len(history):
                why.append("some replacementHistory items are not messages")
            for _, w in fixed:
                why.extend(w)
            return {**obj, "replacementHistory": [m for m, _ in fixed]}, why
    return obj, []
