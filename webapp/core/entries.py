"""Entries of a session file: the header, the eleven entry types of SPEC §2, ids and timestamps.

An entry's `raw` is the SPEC §2 dict the format seam (`formats/`) made of its line: for a pi v3
line the dict as read, untouched, so unknown types and fields survive as they are. The line as
written, where it differs (another format, a pi migration, a field of the wrong type), is kept
as `source` for the raw view. The typed accessors below read from `raw`, except the few facts
every entry keeps without it (`Entry.facts`: what the tree and the overview read of every entry).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import orjson

SESSION_VERSION = 3

MESSAGE = "message"
CUSTOM_MESSAGE = "custom_message"
MODEL_CHANGE = "model_change"
THINKING_LEVEL_CHANGE = "thinking_level_change"
ACTIVE_TOOLS_CHANGE = "active_tools_change"
SESSION_INFO = "session_info"
LABEL = "label"
COMPACTION = "compaction"
BRANCH_SUMMARY = "branch_summary"
CUSTOM = "custom"
LEAF = "leaf"

# Fields each known type needs to mean anything; a missing one is reported, never fixed.
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    MESSAGE: ("message",),
    CUSTOM_MESSAGE: ("customType", "content"),
    MODEL_CHANGE: ("provider", "modelId"),
    THINKING_LEVEL_CHANGE: ("thinkingLevel",),
    ACTIVE_TOOLS_CHANGE: ("tools",),
    SESSION_INFO: (),
    LABEL: ("targetId",),
    COMPACTION: ("summary",),  # firstKeptEntryId (or v1's index) is checked by the tree
    BRANCH_SUMMARY: ("fromId", "summary"),
    CUSTOM: ("customType",),
    LEAF: ("targetId",),
}
_REQUIRED_KEYS = {t: frozenset(fields) for t, fields in REQUIRED_FIELDS.items()}

# Entries that mark state rather than continue a conversation: a `leaf` moves the active leaf,
# a `label` tags another entry. A node whose only children are these is still a branch tip.
MARKER_TYPES = frozenset({LEAF, LABEL})

# Types that only steer the session and never reach the model themselves.
META_TYPES = frozenset(
    {MODEL_CHANGE, THINKING_LEVEL_CHANGE, ACTIVE_TOOLS_CHANGE, SESSION_INFO, LABEL, CUSTOM, LEAF}
)


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


class Entry:
    """One tree node read from (or about to be written to) a session file.

    `id` is the node's key in the tree. It equals the id on the line, except for lines without
    one (pi v1, Codex: derived from the line number) and for duplicates (suffixed, so both stay
    visible). `line` is the (first) line it was read from; `source` the line's own dict (a list
    of them for an entry merged from several lines), or None where it is `raw` itself;
    `sidechain` marks a sub-agent's entry (Claude Code), drawn off the main path; `file` names the
    file `line` counts in when it is not the session's own (a sub-agent's `agent-<id>.jsonl`).

    What the tree, the overview and the branch figures read of every entry is kept in plain
    attributes, taken from the body when the entry is made (`role`, and the facts below). The
    body itself (`raw`) may be dropped (`make_lazy`, issue #13.5): it is then parsed again from
    its line in the file when something reads it (`bodies.Bodies`), so that a big file costs
    memory for its tree, not for its text.
    """

    __slots__ = ("_raw", "line", "id", "parent_id", "type", "instant", "role", "facts", "_tokens", "_more")

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
        # (generated_id, source, sidechain, file), set on few entries: one attribute for the four
        self._more = (generated_id, source, sidechain, file) if generated_id or source is not None or \
            sidechain or file is not None else None
        self.raw = raw

    @property
    def generated_id(self) -> bool:
        """True when the id was made from the line number (the line has none)."""
        return self._more is not None and self._more[0]

    @property
    def source(self) -> dict | list | None:
        return self._more[1] if self._more is not None else None

    @source.setter
    def source(self, source: dict | list | None) -> None:
        generated_id, _, sidechain, file = self._more or _NO_MORE
        self._more = (generated_id, source, sidechain, file)

    @property
    def sidechain(self) -> bool:
        return self._more is not None and self._more[2]

    @property
    def file(self) -> str | None:
        return self._more[3] if self._more is not None else None

    @property
    def where(self) -> str:
        """Where the entry was read, as people are told: "line 12", or "agent-ab.jsonl line 12"."""
        return f"{self.file} line {self.line}" if self.file else f"line {self.line}"

    def __repr__(self) -> str:
        return f"Entry({self.type!r}, id={self.id!r}, parent={self.parent_id!r}, line={self.line})"

    @property
    def raw(self) -> dict:
        """The entry's dict: kept, or parsed again from its line (see `make_lazy`)."""
        raw = self._raw
        return raw if type(raw) is dict else raw.body(self)

    @raw.setter
    def raw(self, raw: dict) -> None:
        """Set the body, and the facts taken from it (a reader that builds an entry from several
        lines sets it again once it is whole)."""
        self._raw = raw
        t = raw.get("type")
        self.type = _NAMES.get(t, t) if type(t) is str else as_key(t)
        ts = raw.get("timestamp")
        if type(ts) is str:
            try:
                t = datetime.fromisoformat(ts)
                self.instant = (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()
            except (ValueError, OverflowError):
                self.instant = None
        else:
            self.instant = None
        self.role, self.facts, self._tokens = entry_facts(self.type, raw)

    @property
    def timestamp(self) -> str:
        """The entry's `timestamp` as written ("" when it is not a string). What is kept of every
        entry is `instant`, the POSIX time it names (None when it is not ISO-8601): a float
        instead of a string (#13.5), and what sorting and durations need."""
        ts = self.raw.get("timestamp")
        return ts if type(ts) is str else ""

    def make_lazy(self, bodies) -> None:
        """Drop the body: `bodies` reads it again from the entry's line when asked (it takes the
        body's place: one attribute less on every entry)."""
        self._raw = bodies

    @property
    def is_lazy(self) -> bool:
        """True when the body is not held (it is read again from the file when asked)."""
        return type(self._raw) is not dict

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
    def tool_call_ids(self) -> tuple[str, ...]:
        """The ids of an assistant message's tool calls (as `str`, as the tool-result check reads them)."""
        return self.facts[0]

    @property
    def tool_call_id(self):
        """A tool result's `toolCallId` (None elsewhere)."""
        return self.facts[1]

    @property
    def is_error(self) -> bool:
        """A tool result that reports an error."""
        return self.facts[2]

    @property
    def usage_tokens(self) -> int | None:
        """The context size an assistant message reports (see `tokens.usage_tokens`)."""
        return self.facts[3]

    @property
    def cost(self) -> float:
        """What the entry cost (see `tokens.entry_cost`)."""
        return self.facts[4]

    @property
    def tokens(self) -> int:
        """The estimated tokens of what the entry says to a model (`tokens.estimate_entry_tokens`),
        taken when it was read where that is quick, else once from its body."""
        n = self._tokens
        if n is None:
            from .tokens import estimate_entry_tokens  # (tokens needs the context module, built on this one)
            n = self._tokens = estimate_entry_tokens(self)
        return n


_NO_MORE = (False, None, False, None)  # Entry._more of an entry read from its own line with its own id
# `Entry.facts`: (tool call ids, a tool result's toolCallId, its error flag, reported usage, cost,
# the required fields of its type it lacks). Those of an entry that reports nothing:
_NO_FACTS: tuple = ((), None, False, None, 0.0, ())
# One string object per usual type and role name, not one per entry.
_NAMES = {n: n for n in (*REQUIRED_FIELDS, "user", "assistant", "toolResult", "bashExecution", "custom")}


def entry_facts(t: str | None, raw: dict) -> tuple[str | None, tuple, int | None]:
    """(role, facts, token estimate or None) of an entry's dict; see the properties of Entry.

    Written for speed: it runs once for every line of a file. The token estimate is made here
    for the usual shapes of a message (text, tool calls, text results) and left for later
    (None) for anything else."""
    if t != MESSAGE:
        missing = () if raw.keys() >= _REQUIRED_KEYS.get(t, _NOTHING) else \
            tuple(f for f in REQUIRED_FIELDS[t] if f not in raw)
        if t in _COSTED:
            details = raw.get("details")
            cost = _cost_of(details.get("usage") if type(details) is dict else None)
            if cost or missing:
                return None, (_NO_FACTS[0], None, False, None, cost, missing), None
        elif missing:
            return None, (*_NO_FACTS[:5], missing), None
        return None, _NO_FACTS, (None if t in _TOKENS_LATER else 0)
    msg = raw.get("message")
    if type(msg) is not dict:
        return None, (*_NO_FACTS[:5], () if "message" in raw else ("message",)), 0
    role = msg.get("role")
    if type(role) is str:
        role = _NAMES.get(role, role)
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
                    calls += (str(b.get("id", "")),)
                    args = b.get("arguments", {})
                    name = b.get("name", "")
                    try:
                        dumped = orjson.dumps(args)
                    except orjson.JSONEncodeError:  # (nested too deep: left for the body's estimate)
                        tokens = None
                    else:  # its length in characters (what the estimate counts), not in bytes
                        chars += len(name if type(name) is str else str(name)) + (
                            len(dumped) if dumped.isascii() else len(dumped.decode()))
                elif bt == "text":
                    text = b.get("text", "")
                    if type(text) is not str:
                        tokens = None
                    else:
                        chars += len(text)
                        texts += 1
            if tokens is not None:
                tokens = -(-(chars + max(texts - 1, 0)) // 4)
        elif type(content) is str:
            tokens = -(-len(content) // 4)
        else:
            tokens = 0
        usage = msg.get("usage")
        used, cost = None, 0.0
        if type(usage) is dict:
            if not usage.get("estimated") and msg.get("stopReason") not in ("aborted", "error"):
                used = usage.get("totalTokens")
                if not (isinstance(used, (int, float)) and used > 0):
                    used = _usage_total(usage)
                elif type(used) is not int:
                    used = int(used)
            costs = usage.get("cost")
            if type(costs) is dict:
                total = costs.get("total")
                cost = float(total) if isinstance(total, (int, float)) else 0.0
        if not calls and used is None and not cost:
            return role, _NO_FACTS, tokens
        return role, (calls, None, False, used, cost, ()), tokens
    if role == "toolResult":
        tokens = None
        if type(content) is list:
            chars = max(len(content) - 1, 0)
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
            if chars >= 0:
                tokens = -(-chars // 4)
        elif type(content) is str:
            tokens = -(-len(content) // 4)
        else:
            tokens = 0
        return role, ((), msg.get("toolCallId"), True if msg.get("isError") else False, None, 0.0, ()), tokens
    if role == "user" or role == "custom":
        tokens = None
        if type(content) is str:
            tokens = -(-len(content) // 4)
        elif type(content) is list:
            chars = max(len(content) - 1, 0)
            for b in content:
                if type(b) is not dict or b.get("type") != "text" or type(b.get("text", "")) is not str:
                    chars = -1
                    break
                chars += len(b.get("text", ""))
            if chars >= 0:
                tokens = -(-chars // 4)
        else:
            tokens = 0
        return role, _NO_FACTS, tokens
    return role, _NO_FACTS, None if role == "bashExecution" else 0


_NOTHING: frozenset = frozenset()
_COSTED = frozenset({"compaction", "branch_summary"})
_TOKENS_LATER = frozenset({"custom_message", "branch_summary"})  # estimated from the body when asked


def _usage_total(usage: dict) -> int | None:
    """The sum of a usage's parts, when it gives no `totalTokens`."""
    parts = [usage.get(k) for k in ("input", "output", "cacheRead", "cacheWrite")]
    total = sum(p for p in parts if isinstance(p, (int, float)))
    return int(total) or None


def _cost_of(usage) -> float:
    cost = usage.get("cost") if type(usage) is dict else None
    total = cost.get("total") if type(cost) is dict else None
    return float(total) if isinstance(total, (int, float)) else 0.0


def content_blocks(content: Any) -> list[dict]:
    """Message content as a list of blocks, whether it was stored as a string or as blocks.

    A text block's `text` is always a string here, so callers can join texts without checking.
    """
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [_block(b) for b in content]
    return []


def _block(b: Any) -> dict:
    if not isinstance(b, dict):
        return {"type": "text", "text": str(b)}
    if b.get("type") == "text" and not isinstance(b.get("text", ""), str):
        return {**b, "text": "" if b["text"] is None else str(b["text"])}
    return b


def content_text(content: Any, sep: str = "\n") -> str:
    """The plain text of message content (text blocks only)."""
    return sep.join(
        b.get("text", "") for b in content_blocks(content) if b.get("type") == "text"
    )


def tool_calls(entry: Entry) -> list[dict]:
    """The toolCall blocks of an assistant message entry."""
    if entry.role != "assistant":
        return []
    return [b for b in content_blocks(entry.message.get("content")) if b.get("type") == "toolCall"]


def entry_text(entry: Entry) -> str:
    """A short human reading of an entry: what a list or a graph label shows for it."""
    t = entry.type
    if t == MESSAGE:
        msg = entry.message
        if entry.role == "bashExecution":
            return f"$ {msg.get('command', '')}"
        text = content_text(msg.get("content"), " ")
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
    if t == CUSTOM:
        return f"custom: {entry.get('customType')}"
    return str(t)
