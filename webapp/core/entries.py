"""Entries of a session file: the header, the eleven entry types of SPEC §2, ids and timestamps.

An entry's `raw` is the SPEC §2 dict the format seam (`formats/`) made of its line: for a pi v3
line the dict as read, untouched, so unknown types and fields survive as they are. The line as
written, where it differs (another format, a pi migration, a field of the wrong type), is kept
as `source` for the raw view. The typed accessors below only read from `raw`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import orjson
import uuid6

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
    """

    __slots__ = ("raw", "line", "id", "parent_id", "type", "timestamp", "generated_id", "source", "sidechain",
                 "file")

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
        self.raw = raw
        self.line = line
        self.id = id
        self.parent_id = parent_id
        t = raw.get("type")
        self.type = t if isinstance(t, str) else as_key(t)  # as_key, without a call for the usual str
        ts = raw.get("timestamp")
        self.timestamp = ts if isinstance(ts, str) else ""
        self.generated_id = generated_id
        self.source = source
        self.sidechain = sidechain
        self.file = file

    @property
    def where(self) -> str:
        """Where the entry was read, as people are told: "line 12", or "agent-ab.jsonl line 12"."""
        return f"{self.file} line {self.line}" if self.file else f"line {self.line}"

    def __repr__(self) -> str:
        return f"Entry({self.type!r}, id={self.id!r}, parent={self.parent_id!r}, line={self.line})"

    @property
    def original(self) -> dict | list:
        """What the file holds for this entry, for the raw view: its line's dict (or lines')."""
        return self.raw if self.source is None else self.source

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    @property
    def message(self) -> dict:
        msg = self.raw.get("message") if self.type == MESSAGE else None
        return msg if isinstance(msg, dict) else {}

    @property
    def role(self) -> str | None:
        return self.message.get("role")

    @property
    def first_kept_id(self) -> str | None:
        """A compaction's `firstKeptEntryId` (None: nothing before it is kept)."""
        kept = self.raw.get("firstKeptEntryId")
        return kept if isinstance(kept, str) else None

    @property
    def target_id(self) -> str | None:
        return as_key(self.raw.get("targetId"))

    def missing_fields(self) -> list[str]:
        if self.raw.keys() >= _REQUIRED_KEYS.get(self.type, frozenset()):
            return []  # the usual case, told by one set comparison (this runs for every entry)
        return [f for f in REQUIRED_FIELDS[self.type] if f not in self.raw]


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
