"""Entries of a session file: the header, the thirteen entry types of SPEC §2, ids and timestamps.

An entry's `raw` is the SPEC §2 dict the format seam (`formats/`) made of its line: for a pi v3
line the dict as read, untouched, so unknown types and fields survive as they are. The line as
written, where it differs (another format, a pi migration, a field of the wrong type), is kept
as `source` for the raw view. The typed accessors below read from `raw`, except the few facts
every entry keeps without it (`Entry.facts`: what the tree and the overview read of every entry).

The type names and content blocks are `entry_types`' (imported here, so `from .entries import
MESSAGE` names them too); what an entry says to a model, and its token estimate, `messages`'.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import orjson

from .entry_types import (  # noqa: F401 (the vocabulary is part of this module's interface too)
    ACTIVE_TOOLS_CHANGE,
    BRANCH_SUMMARY,
    COMPACTION,
    CONTEXT_EDIT,
    CUSTOM,
    CUSTOM_MESSAGE,
    LABEL,
    LEAF,
    MARKER_TYPES,
    MESSAGE,
    META_TYPES,
    MODEL_CHANGE,
    REQUIRED_FIELDS,
    SESSION_INFO,
    SESSION_VERSION,
    THINKING_LEVEL_CHANGE,
    USAGE,
    content_blocks,
    content_text,
    readable_type,
)
from .messages import estimate_entry_tokens

_REQUIRED_KEYS = {t: frozenset(fields) for t, fields in REQUIRED_FIELDS.items()}

# `custom` entries this app appends that mark state like a label does (a verdict on a branch):
# looked through like markers, so appending one keeps the branch it is appended to a branch.
MARKER_CUSTOM_TYPES = frozenset({"session-tree.verdict"})


def is_marker(entry: "Entry") -> bool:
    """A `leaf` or `label` entry, or a custom entry of MARKER_CUSTOM_TYPES (its body is read:
    custom entries are few, and callers ask only about those whose type is `custom`)."""
    t = entry.type
    if t in MARKER_TYPES:
        return True
    kind = entry.get("customType") if t == CUSTOM else None
    return isinstance(kind, str) and kind in MARKER_CUSTOM_TYPES  # (a hostile file's may be a list or an object)


def new_id() -> str:
    """A new UUID v7: time-ordered, so ids sort like the entries were written."""
    import uuid6  # (here: it takes 20 ms to import, which a command that only reads should not pay)

    return str(uuid6.uuid7())


def as_key(value: Any) -> str | None:
    """A field used as a type or an id, as a string: another JSON value is read as its JSON text,
    so a malformed line names nothing instead of breaking a dict or set lookup."""
    return value if value is None or isinstance(value, str) else orjson.dumps(value).decode()


def short_id(entry_id: str) -> str:
    """Eight characters that tell entries apart: a UUID's first ones are its timestamp and repeat
    across a session, so its last (random) ones are used."""
    if len(entry_id) == 36 and entry_id[8] == "-":
        return entry_id[-8:]
    return entry_id[:8]


def parse_time(timestamp: str) -> datetime | None:
    """An ISO-8601 timestamp as an aware datetime (UTC when it names no offset), or None."""
    try:
        t = datetime.fromisoformat(timestamp)
    except (TypeError, ValueError):
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def now_iso() -> str:
    """The current time as pi writes it: ISO-8601 UTC with milliseconds and a `Z`."""
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class _Held:
    """What an entry whose body is held keeps beside it: the body, the facts that lazy entries
    keep in their `Bodies`' columns, and (rarely) `_more`: (generated_id, source, sidechain, file)."""

    __slots__ = ("raw", "instant", "tokens", "more")

    def __init__(self, raw: dict, instant: float | None, tokens: int | None, more: tuple | None) -> None:
        self.raw, self.instant, self.tokens, self.more = raw, instant, tokens, more


class Entry:
    """One tree node read from (or about to be written to) a session file.

    `id` is the node's key in the tree. It equals the id on the line, except for lines without
    one (pi v1, Codex: derived from the line number) and for duplicates (suffixed, so both stay
    visible). `line` is the (first) line it was read from; `source` the line's own dict (a list
    of them for an entry merged from several lines), or None where it is `raw` itself;
    `sidechain` marks a sub-agent's entry (Claude Code), drawn off the main path; `file` names the
    file `line` counts in when it is not the session's own (a sub-agent's `agent-<id>.jsonl`).

    What the tree, the overview and the branch figures read of every entry is taken from the
    body when the entry is made (`role`, `instant`, `tokens`, `facts`). The body itself may be
    dropped (a big file must not cost memory for its text): it is then parsed again from its line in the file when something
    reads it (`bodies.Bodies`), so that a big file costs memory for its tree, not for its text.

    How it is stored is made for memory (a big file has hundreds of thousands of entries):
    `_raw` is the `Bodies` of a lazy entry, whose typed columns (indexed by `line`) hold its
    instant, token estimate, usage and cost, and whose `_facts` holds the rest compactly (see
    `facts`); or a `_Held` with the body and those figures, whose `_facts` is the whole tuple.
    """

    __slots__ = ("_raw", "line", "id", "parent_id", "type", "role", "_facts")

    def __init__(
        self,
        raw: dict,
        line: int,
        id: str,
        parent_id: str | None,
        generated_id=False,
        source: dict | list | None = None,
        sidechain: bool = False,
        file: str | None = None,
    ):
        self.line = line
        self.id = id
        self.parent_id = parent_id
        self._raw = _Held(raw, None, None, (generated_id, source, sidechain, file)
                          if generated_id or source is not None or sidechain or file is not None else None)
        self._take(raw)

    @property
    def _more(self) -> tuple:
        held = self._raw
        return (held.more or _NO_MORE) if type(held) is _Held else _NO_MORE

    @property
    def generated_id(self) -> bool:
        """True when the id was made from the line number (the line has none)."""
        return self._more[0]

    @property
    def source(self) -> dict | list | None:
        return self._more[1]

    @source.setter
    def source(self, source: dict | list | None) -> None:
        generated_id, _, sidechain, file = self._more
        self._hold().more = (generated_id, source, sidechain, file)

    @property
    def sidechain(self) -> bool:
        return self._more[2]

    @property
    def file(self) -> str | None:
        return self._more[3]

    @property
    def where(self) -> str:
        """Where the entry was read, as people are told: "line 12", or "agent-ab.jsonl line 12"."""
        return f"{self.file} line {self.line}" if self.file else f"line {self.line}"

    def __repr__(self) -> str:
        return f"Entry({self.type!r}, id={self.id!r}, parent={self.parent_id!r}, line={self.line})"

    @property
    def line_id(self):
        """The id written on the entry's line (a lazy entry's is its own: `Bodies` checks so)."""
        held = self._raw
        return held.raw.get("id") if type(held) is _Held else self.id

    @property
    def raw(self) -> dict:
        """The entry's dict: held, or parsed again from its line (see `make_lazy`)."""
        held = self._raw
        return held.raw if type(held) is _Held else held.body(self)

    @raw.setter
    def raw(self, raw: dict) -> None:
        """Set the body, and the facts taken from it (a reader that builds an entry from several
        lines sets it again once it is whole)."""
        self._hold()
        self._take(raw)

    def _take(self, raw: dict) -> None:
        """Hold `raw` as the body, and the facts taken from it."""
        held = self._raw
        t = raw.get("type")
        self.type = t = _NAMES.get(t, t) if type(t) is str else as_key(t)
        self.role, self._facts, held.tokens = entry_facts(t, raw)
        held.raw, held.instant = raw, instant_of(raw.get("timestamp"))

    @property
    def instant(self) -> float | None:
        """The POSIX time the entry's `timestamp` names (None when it is not ISO-8601): a number
        instead of a string (a float costs less memory per entry than its text), and what sorting
        and durations need."""
        held = self._raw
        if type(held) is _Held:
            return held.instant
        t = held.instants[self.line]
        return None if t != t else t  # (NaN: none)

    @property
    def timestamp(self) -> str:
        """The entry's `timestamp` as written ("" when it is not a string)."""
        ts = self.raw.get("timestamp")
        return ts if type(ts) is str else ""

    def make_lazy(self, bodies) -> None:
        """Drop the body: `bodies` reads it again from the entry's line when asked, and keeps the
        figures taken from it in its columns (the entry must not have a `_more`)."""
        held, line = self._raw, self.line
        bodies.instants[line] = NO_INSTANT if held.instant is None else held.instant
        bodies.estimates[line] = -1 if held.tokens is None else held.tokens
        self._facts = compact_facts(self._facts, bodies, line, self.role)
        self._raw = bodies

    def _hold(self) -> _Held:
        """The entry made to hold its body again (a lazy one is given back its body)."""
        held = self._raw
        if type(held) is not _Held:
            facts, tokens = self.facts, held.estimates[self.line]
            held = self._raw = _Held(held.body(self), self.instant, None if tokens < 0 else tokens, None)
            self._facts = facts
        return held

    @property
    def is_lazy(self) -> bool:
        """True when the body is not held (it is read again from the file when asked)."""
        return type(self._raw) is not _Held

    @property
    def original(self) -> dict | list:
        """What the file holds for this entry, for the raw view: its line's dict (or lines')."""
        return self.raw if self.source is None else self.source

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    @property
    def message(self) -> dict:
        if self.type != MESSAGE:
            return {}
        msg = self.raw.get("message")
        return msg if isinstance(msg, dict) else {}

    @property
    def first_kept_id(self) -> str | None:
        """A compaction's `firstKeptEntryId` (None: nothing before it is kept)."""
        kept = self.raw.get("firstKeptEntryId")
        return kept if isinstance(kept, str) else None

    @property
    def target_id(self) -> str | None:
        return as_key(self.raw.get("targetId"))

    # -- facts kept without the body ------------------------------------------------------------

    @property
    def facts(self) -> tuple:
        """(tool call ids, a tool result's toolCallId, its error flag, reported usage, cost, the
        required fields of its type it lacks). A held entry keeps the tuple. A lazy one keeps,
        with its usage and cost in the columns: an assistant message its tool call ids (a tuple,
        or the one id as a str), a tool result that is no error its toolCallId (a str), an entry
        that reports nothing an empty tuple; anything else keeps the tuple in a list."""
        f = self._facts
        if type(f) is str and self.role != "assistant":
            return ((), f, False, None, self._raw.costs[self.line], ())  # (a lazy tool result: no usage)
        held = self._raw
        if type(held) is _Held:
            return f
        if type(f) is list:
            return tuple(f)
        line = self.line
        used, cost = held.usages[line], held.costs[line]
        if used < 0:
            if not f and not cost:
                return _NO_FACTS  # (the usual message: no tuple made)
            used = None
        return ((f,) if type(f) is str else f, None, False, used, cost, ())

    @facts.setter
    def facts(self, facts: tuple) -> None:
        held = self._raw
        self._facts = facts if type(held) is _Held else compact_facts(facts, held, self.line, self.role)

    @property
    def tool_call_ids(self) -> tuple[str, ...]:
        """The ids of an assistant message's tool calls (as `str`, as the tool-result check reads them)."""
        f = self._facts
        if type(f) is str:  # (lazy)
            return (f,) if self.role == "assistant" else ()
        return f if type(f) is tuple and type(self._raw) is not _Held else f[0]

    @property
    def tool_call_id(self):
        """A tool result's `toolCallId` (None elsewhere)."""
        f = self._facts
        if type(f) is str:  # (lazy)
            return f if self.role != "assistant" else None
        return None if type(f) is tuple and type(self._raw) is not _Held else f[1]

    @property
    def missing_fields(self) -> tuple[str, ...]:
        """The fields its type requires that the entry lacks (`facts[5]`, without making the tuple:
        a loop over every entry reads this, `tool_call_ids` and `tool_call_id` rather than `facts`)."""
        f = self._facts
        return f[5] if type(f) is list or type(f) is tuple and type(self._raw) is _Held else ()

    @property
    def is_error(self) -> bool:
        """A tool result that reports an error."""
        f = self._facts
        return f[2] if type(f) is list or type(self._raw) is _Held else False

    @property
    def usage_tokens(self) -> int | None:
        """The context size an assistant message reports (see `tokens.usage_tokens`)."""
        f, held = self._facts, self._raw
        if type(f) is list or type(held) is _Held:
            return f[3]
        used = held.usages[self.line]
        return None if used < 0 else used

    @property
    def cost(self) -> float:
        """What the entry cost (see `tokens.entry_cost`)."""
        f, held = self._facts, self._raw
        if type(f) is list or type(held) is _Held:
            return f[4]
        return held.costs[self.line]

    @property
    def figures(self) -> tuple[float | None, float, int, int | None, bool]:
        """(`instant`, `cost`, how many tool calls it makes, `usage_tokens`, `is_error`) in one
        call instead of five: what a walk over every entry of a session adds up (`leaf_figures`)."""
        f, held = self._facts, self._raw
        if type(held) is _Held:
            return held.instant, f[4], len(f[0]), f[3], f[2]
        line = self.line
        t = held.instants[line]
        if t != t:  # (NaN: none)
            t = None
        if type(f) is list:
            return t, f[4], len(f[0]), f[3], f[2]
        used = held.usages[line]
        calls = (1 if self.role == "assistant" else 0) if type(f) is str else len(f)
        return t, held.costs[line], calls, None if used < 0 else used, False

    @property
    def tokens(self) -> int:
        """The estimated tokens of what the entry says to a model (`messages.estimate_entry_tokens`),
        taken when it was read where that is quick, else once from its body."""
        held = self._raw
        n = held.tokens if type(held) is _Held else held.estimates[self.line]
        if n is None or n < 0:
            n = estimate_entry_tokens(self)
            if type(held) is _Held:
                held.tokens = n
            else:
                held.estimates[self.line] = n
        return n


NO_INSTANT = float("nan")  # a column's instant of an entry without one
USAGE_MAX = 2**31 - 1  # the largest usage a column holds (a bigger one keeps the whole facts tuple)


def compact_facts(facts: tuple, bodies, line: int, role):
    """`facts` as a lazy entry of `role` keeps them (see `Entry.facts`), usage and cost put in
    `bodies`' columns at `line`."""
    calls, call_id, is_error, used, cost, missing = facts
    if is_error or missing or used is not None and not 0 <= used <= USAGE_MAX:
        return list(facts)
    if call_id is None:
        compact = calls[0] if len(calls) == 1 and role == "assistant" else calls
    elif type(call_id) is str and not calls and role != "assistant":
        compact = call_id
    else:
        return list(facts)
    bodies.usages[line] = -1 if used is None else used
    bodies.costs[line] = cost
    return compact


def instant_of(ts) -> float | None:
    """The POSIX time of an ISO-8601 timestamp (UTC when it names no offset), or None."""
    if type(ts) is not str:
        return None
    try:
        t = datetime.fromisoformat(ts)
        return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()
    except (ValueError, OverflowError):
        return None


_NO_MORE = (False, None, False, None)  # Entry._more of an entry read from its own line with its own id
# `Entry.facts`: (tool call ids, a tool result's toolCallId, its error flag, reported usage, cost,
# the required fields of its type it lacks). Those of an entry that reports nothing:
_NO_FACTS: tuple = ((), None, False, None, 0.0, ())
# One string object per usual type and role name, not one per entry.
_NAMES = {n: n for n in (*REQUIRED_FIELDS, "user", "assistant", "toolResult", "bashExecution", "custom")}


def entry_facts(t: str | None, raw: dict) -> tuple[str | None, tuple, int | None]:
    """(role, facts, token estimate or None) of an entry's dict; see the properties of Entry.

    The token estimate is made here for the usual shapes of a message (text, tool calls, text
    results) and left for later (None) for anything else."""
    if t != MESSAGE:
        missing = () if raw.keys() >= _REQUIRED_KEYS.get(t, _NOTHING) else \
            tuple(f for f in REQUIRED_FIELDS[t] if f not in raw)
        if t in _COSTED:
            cost = _cost_of(spent_usage(raw))
            if cost or missing:
                return None, (_NO_FACTS[0], None, False, None, cost, missing), None
        elif missing:
            return None, (*_NO_FACTS[:5], missing), None
        return None, _NO_FACTS, (None if t in _TOKENS_LATER else 0)
    msg = raw.get("message")
    if type(msg) is not dict:
        return None, (*_NO_FACTS[:5], () if "message" in raw else ("message",)), 0
    role, calls, call_id, is_error, used, cost, tokens, _ = message_facts(msg)
    if role == "toolResult":
        return role, ((), call_id, is_error, None, cost, ()), tokens
    if not calls and used is None and not cost:
        return role, _NO_FACTS, tokens
    return role, (calls, None, False, used, cost, ()), tokens


def message_facts(msg: dict) -> tuple:
    """(role, tool call ids, toolCallId, is_error, usage, cost, token estimate or None, ok) of a
    message: the facts of `entry_facts`, and whether its fields have the types downstream code
    expects (`ok`: then `formats.fields.message_ok` holds too; False may also mean "not checked
    here": a role or block this walk does not know).

    Written for speed: it runs once for every message of a file, and is the one walk over its
    content that both takes its facts and checks its fields (`agents.pi.reader.PiReader.read_lines`)."""
    role = msg.get("role")
    ok = "toolCallId" not in msg or type(msg["toolCallId"]) is str
    if type(role) is str:
        role = _NAMES.get(role, role)
    elif "role" in msg:
        ok = False
    content = msg.get("content")
    if role == "assistant":
        calls: tuple = ()
        chars, texts, tokens = 0, 0, None
        if type(content) is list:
            tokens = 0
            for b in content:
                if type(b) is not dict:
                    tokens = None  # (read as text downstream: estimated from the body)
                    continue
                bt = b.get("type")
                if bt == "toolCall":
                    call, name, args = b.get("id", ""), b.get("name", ""), b.get("arguments", {})
                    if type(call) is not str or type(name) is not str:
                        ok, call, name = False, str(call), str(name)
                    calls += (call,)
                    if type(args) is dict:  # (too_deep(args, 1) without a call for flat arguments)
                        for v in args.values():
                            if (type(v) is dict or type(v) is list) and too_deep(v, 2):
                                ok = False
                                break
                    elif type(args) is list and too_deep(args, 1):
                        ok = False
                    try:
                        dumped = orjson.dumps(args)
                    except orjson.JSONEncodeError:
                        tokens = None
                    else:  # its length in characters (what the estimate counts), not in bytes
                        chars += len(name) + (len(dumped) if dumped.isascii() else len(dumped.decode()))
                elif bt == "text":
                    text = b.get("text", "")
                    if type(text) is not str:
                        tokens = None
                    else:
                        chars += len(text)
                        texts += 1
                elif type(bt) is not str:
                    ok = False
            if tokens is not None:
                tokens = -(-(chars + (texts - 1 if texts else 0)) // 4)
        elif type(content) is str:
            tokens = -(-len(content) // 4)
        else:
            tokens = 0
        usage = msg.get("usage")
        used, cost = None, 0.0
        if type(usage) is dict:
            if not usage.get("estimated") and msg.get("stopReason") not in ("aborted", "error"):
                used = usage.get("totalTokens")
                if type(used) is not int or used <= 0:  # (the usual case first: one test)
                    used = int(used) if isinstance(used, (int, float)) and used > 0 else _usage_total(usage)
            costs = usage.get("cost")
            if type(costs) is dict:
                total = costs.get("total")
                cost = total if type(total) is float else float(total) if isinstance(total, (int, float)) else 0.0
        return role, calls, None, False, used, cost, tokens, ok
    if role == "toolResult":
        tokens = None
        if type(content) is list:
            chars = len(content) - 1 if content else 0
            for b in content:
                if type(b) is not dict:
                    chars = -1
                    break
                bt = b.get("type")
                if bt == "text":
                    text = b.get("text", "")
                    if type(text) is not str:
                        chars = -1
                        break
                    chars += len(text)
                else:
                    chars += len(f"[{bt}]")
                    ok = ok and type(bt) is str and bt != "toolCall"
            if chars >= 0:
                tokens = -(-chars // 4)
            else:
                ok = False  # (the blocks after it were not checked)
        elif type(content) is str:
            tokens = -(-len(content) // 4)
        else:
            tokens = 0
        usage = msg.get("usage")  # (a tool that called a model itself: a sub-agent, a summary)
        return role, (), msg.get("toolCallId"), True if msg.get("isError") else False, None, \
            _cost_of(usage) if usage is not None else 0.0, tokens, ok
    if role == "user" or role == "custom":
        tokens = None
        if type(content) is str:
            tokens = -(-len(content) // 4)
        elif type(content) is list:
            chars = len(content) - 1 if content else 0
            for b in content:
                if type(b) is not dict or b.get("type") != "text" or type(b.get("text", "")) is not str:
                    chars = -1
                    break
                chars += len(b.get("text", ""))
            if chars >= 0:
                tokens = -(-chars // 4)
            else:
                ok = False  # (not checked)
        else:
            tokens = 0
        return role, (), None, False, None, 0.0, tokens, ok
    return role, (), None, False, None, 0.0, None if role == "bashExecution" or role == "system" else 0, False


# Deeper than this, a tool call's arguments are cut (`formats.fields`): JSON encoders, template
# filters and the highlighter recurse once per level, and some stop at 255 (orjson) or sooner.
MAX_DEPTH = 100


def too_deep(value: dict | list, depth: int) -> bool:
    """True when `value`, itself at `depth`, nests containers deeper than `MAX_DEPTH`."""
    if depth > MAX_DEPTH:
        return True
    for v in value.values() if type(value) is dict else value:
        if (type(v) is dict or type(v) is list) and too_deep(v, depth + 1):
            return True
    return False


_NOTHING: frozenset = frozenset()
_COSTED = frozenset({"compaction", "branch_summary", "usage"})
_TOKENS_LATER = frozenset({"custom_message", "branch_summary"})  # estimated from the body when asked


def _usage_total(usage: dict) -> int | None:
    """The sum of a usage's parts, when it gives no `totalTokens`."""
    parts = [usage.get(k) for k in ("input", "output", "cacheRead", "cacheWrite")]
    total = sum(p for p in parts if isinstance(p, (int, float)))
    return int(total) or None


def spent_usage(raw: dict) -> dict | None:
    """The usage of the model call behind a summary or a `usage` entry: its own `usage` (as pi
    writes it), or, in a summary session-tree wrote before it wrote pi's field, `details.usage`."""
    usage = raw.get("usage")
    if type(usage) is dict:
        return usage
    details = raw.get("details")
    usage = details.get("usage") if type(details) is dict and raw.get("type") != "usage" else None
    return usage if type(usage) is dict else None


def _cost_of(usage) -> float:
    cost = usage.get("cost") if type(usage) is dict else None
    total = cost.get("total") if type(cost) is dict else None
    return float(total) if isinstance(total, (int, float)) else 0.0


def tool_calls(entry: Entry) -> list[dict]:
    """The toolCall blocks of an assistant message entry."""
    if entry.role != "assistant":
        return []
    return [b for b in content_blocks(entry.message.get("content")) if b.get("type") == "toolCall"]


def json_texts(entries: list[Entry]) -> list[bytes]:
    """Each entry's body as JSON: a lazy entry's line copied from its file as it is (neither
    parsed nor dumped: `Bodies.json_lines`), a held body dumped."""
    out: list[bytes | None] = [None] * len(entries)
    lazy: dict[int, tuple[Any, list[int]]] = {}  # id(bodies) -> (bodies, positions of its entries)
    for i, e in enumerate(entries):
        held = e._raw
        if type(held) is _Held:
            out[i] = _dumped(held.raw)
        else:
            lazy.setdefault(id(held), (held, []))[1].append(i)
    for bodies, where in lazy.values():
        for i, text in zip(where, bodies.json_lines([entries[i] for i in where])):
            out[i] = text
    return out  # type: ignore[return-value]


def _dumped(raw: dict) -> bytes:
    try:
        return orjson.dumps(raw)
    except TypeError:  # (orjson.JSONEncodeError: an integer beyond 64 bits, a lone surrogate)
        return json.dumps(raw, default=str).encode()  # (ASCII: a lone surrogate is escaped)


def entry_text(entry: Entry) -> str:
    """A short human reading of an entry: what a list or a graph label shows for it."""
    t = entry.type
    if t == MESSAGE:
        msg = entry.message
        if entry.role == "bashExecution":
            return f"$ {msg.get('command', '')}"
        text = content_text(msg.get("content"), " ")
        if entry.role == "system" and not text.strip():
            changed = [w for k, w in (("sections", "sections"), ("toolsAdded", "tools added"),
                                      ("toolsRemoved", "tools removed")) if msg.get(k)]
            return "changes " + ", ".join(changed) if changed else ""
        if not text.strip():
            calls = [str(c.get("name", "?")) for c in tool_calls(entry)]
            if calls:
                return "→ " + ", ".join(calls)
            if msg.get("errorMessage"):
                return str(msg["errorMessage"])
        return text
    if t == CUSTOM_MESSAGE:
        return content_text(entry.get("content"), " ")
    if t in (COMPACTION, BRANCH_SUMMARY):
        return str(entry.get("summary") or "")
    if t == MODEL_CHANGE:
        return f"{entry.get('provider')}/{entry.get('modelId')}"
    if t == THINKING_LEVEL_CHANGE:
        return f"thinking: {entry.get('thinkingLevel')}"
    if t == ACTIVE_TOOLS_CHANGE:
        tools = entry.get("tools")
        return "tools: " + (", ".join(map(str, tools)) if isinstance(tools, list) else "?")
    if t == SESSION_INFO:
        return f"name: {entry.get('name') or ''}"
    if t == LABEL:
        return f"label {entry.get('label') or '(cleared)'} → {entry.target_id}"
    if t == LEAF:
        return f"leaf → {entry.target_id}"
    if t == CONTEXT_EDIT:
        replacement = entry.get("replacement")
        if replacement is None:
            return f"omit {entry.target_id} from the context"
        content = replacement.get("content") if isinstance(replacement, dict) else None
        return f"edit {entry.target_id}: {content_text(content, ' ')}"
    if t == USAGE:
        return f"usage: {entry.get('kind')} ({entry.get('provider')}/{entry.get('model')})"
    if t == CUSTOM:
        return readable_type(entry.get("customType"))
    return readable_type(t)
