"""How the redactor reads and rewrites a session's lines without recursion, and how it sees
text the way a reader will.

A line may nest as deep as the JSON parser allows (1,024 levels): every walk here keeps its own
stack, so no document can overflow Python's. A string's escapes (`\\u0067`, `\\x41`, `\\n`) and
invisible characters (a BOM, a zero-width space) hide a secret from a pattern while a reader
(or a JSON parser, one level down) sees it whole: `decoded_view` gives the text as read, with a
way back to the characters that stand for each part of it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

import orjson

BOM = b"\xef\xbb\xbf"
TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})  # content blocks whose "text" a reader reads as one message

Path_ = tuple  # a place in a parsed line: the keys and indices from its top


def strings(obj) -> tuple[list[tuple[str | None, str, bool]], list[list[tuple[Path_, str]]]]:
    """Every string of a parsed line, dict keys included, in document order, each as (the key
    it is under, the string, whether it is itself a key); and the runs of text blocks in its
    content lists (consecutive `{"type": "text", "text": …}` blocks, which a reader reads as one
    text), each a list of (path of the block's text, text)."""
    found: list[tuple[str | None, str, bool]] = []
    runs: list[list[tuple[Path_, str]]] = []
    stack: list[tuple[object, Path_, str | None]] = [(obj, (), None)]
    while stack:
        node, path, key = stack.pop()
        if isinstance(node, str):
            found.append((key, node, False))
        elif isinstance(node, dict):
            children = []
            for k, v in node.items():
                found.append((k, k, True))
                if isinstance(v, str):
                    children.append((v, path, k))
                elif isinstance(v, (dict, list)):
                    children.append((v, path + (k,), k))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            run: list[tuple[Path_, str]] = []
            children = []
            for i, v in enumerate(node):
                if isinstance(v, dict) and isinstance(v.get("type"), str) and v["type"] in TEXT_BLOCKS and isinstance(v.get("text"), str):
                    run.append((path + (i, "text"), v["text"]))
                elif run:
                    runs.append(run)
                    run = []
                if isinstance(v, (str, dict, list)):
                    children.append((v, path + (i,), key))
            if run:
                runs.append(run)
            stack.extend(reversed(children))
    return found, runs


def replace_in_place(obj, text):
    """`obj` with `text` applied to every string of it, keys included (in place; a bare string
    comes back new)."""
    if isinstance(obj, str):
        return text(obj)
    stack = [obj]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            items = list(node.items())
            node.clear()
            for k, v in items:
                if isinstance(v, str):
                    v = text(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
                node[text(k)] = v
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, str):
                    node[i] = text(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
    return obj


def cut_in_place(obj, path: Path_, start: int, end: int, replacement: str) -> None:
    """Replace text[start:end] of the string at `path` (a part of a secret split across blocks)."""
    node = obj
    for step in path[:-1]:
        node = node[step]
    s = node[path[-1]]
    node[path[-1]] = s[:start] + replacement + s[end:]


def dumps(obj) -> bytes:
    """The object as JSON: orjson's, or for a document deeper than orjson writes (it stops at
    255 levels, which it reads up to 1,024), the same written from a stack of our own."""
    try:
        return orjson.dumps(obj)
    except orjson.JSONEncodeError:
        pass
    out: list[bytes] = []
    stack: list = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, bytes):  # (punctuation: a parsed document holds no bytes)
            out.append(x)
        elif isinstance(x, dict):
            out.append(b"{")
            stack.append(b"}")
            items = list(x.items())
            for i in range(len(items) - 1, -1, -1):
                k, v = items[i]
                stack.append(v)
                stack.append(orjson.dumps(k) + b":")
                if i:
                    stack.append(b",")
        elif isinstance(x, list):
            out.append(b"[")
            stack.append(b"]")
            for i in range(len(x) - 1, -1, -1):
                stack.append(x[i])
                if i:
                    stack.append(b",")
        else:
            out.append(orjson.dumps(x))
    return b"".join(out)


def parse_line(raw: bytes):
    """A line's JSON (a BOM before it set aside, as the reader does), or None if it is none."""
    try:
        return orjson.loads(raw[len(BOM):] if raw.startswith(BOM) else raw)
    except orjson.JSONDecodeError:
        return None


# --- Text as a reader sees it ---------------------------------------------------------------------

_INVISIBLE = "\ufeff\u200b\u200c\u200d\u2060\u00ad"
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|U([0-9a-fA-F]{8})|([nrtbf\"\\/']))|[" + _INVISIBLE + "]")
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/", "'": "'"}
# What can hide a value from a pattern: a character written as an escape, a quote escaped (JSON
# inside a string), an invisible character; and in a JSON document held as text (Codex's tool
# outputs, a printed file), its `\n`, without which no line of it starts a line. (Source code
# whose only escapes are `\n` in its string literals reads the same to every rule: it is not
# read twice.)
_MAY_HIDE = re.compile(r"\\[uxU\"']|[" + _INVISIBLE + "]")
_JSON_TEXT = re.compile(r"\s*[\[{]")


class DecodedView:
    """`text` with its escapes decoded and its invisible characters dropped, and the way back
    from a stretch of the decoded text to the characters of `text` that stand for it."""

    def __init__(self, text: str) -> None:
        self.raw = text
        parts: list[str] = []
        self._dec: list[int] = []  # where each piece starts in the decoded text
        self._raw: list[int] = []  # ... and in the raw text
        self._lit: list[bool] = []  # a piece copied as it is (else one escape)
        self._raw_end: list[int] = []
        dec = raw_at = 0
        for m in _ESCAPE.finditer(text):
            if m.start() > raw_at:
                self._piece(dec, raw_at, m.start(), True)
                parts.append(text[raw_at:m.start()])
                dec += m.start() - raw_at
            hexa = m.group(1) or m.group(2) or m.group(3)
            char = chr(int(hexa, 16)) if hexa and int(hexa, 16) <= 0x10FFFF else _SIMPLE.get(m.group(4) or "", "")
            if char:
                self._piece(dec, m.start(), m.end(), False)
                parts.append(char)
                dec += 1
            raw_at = m.end()
        if raw_at < len(text):
            self._piece(dec, raw_at, len(text), True)
            parts.append(text[raw_at:])
        self.text = "".join(parts)

    def _piece(self, dec: int, raw_start: int, raw_end: int, literal: bool) -> None:
        self._dec.append(dec)
        self._raw.append(raw_start)
        self._raw_end.append(raw_end)
        self._lit.append(literal)

    def raw_span(self, start: int, end: int) -> str:
        """The raw characters that read as self.text[start:end]."""
        i = bisect.bisect_right(self._dec, start) - 1
        j = bisect.bisect_right(self._dec, end - 1) - 1
        a = self._raw[i] + (start - self._dec[i] if self._lit[i] else 0)
        b = self._raw[j] + (end - self._dec[j]) if self._lit[j] else self._raw_end[j]
        return self.raw[a:b]


def decoded_view(text: str) -> DecodedView | None:
    """The view of `text` as read, or None when it reads as it is written."""
    hidden = _MAY_HIDE.search(text) or ("\\n" in text and _JSON_TEXT.match(text))
    return DecodedView(text) if hidden else None


def occurrences(text: str, value: str, limit: int = 50) -> Iterator[int]:
    """Where `value` starts in `text` (the first `limit` places)."""
    at = text.find(value)
    while at >= 0 and limit:
        yield at
        limit -= 1
        at = text.find(value, at + 1)
