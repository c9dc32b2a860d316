"""The vocabulary of a session file (SPEC §2): the header's version, the thirteen entry type names,
the fields each type needs, and message content read as blocks.

The lowest layer of the core: it imports nothing of the project, so every other module (the
entries, the LLM messages made of them, the format readers) can build on it.
"""

from __future__ import annotations

import re
from typing import Any

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
CONTEXT_EDIT = "context_edit"  # pi 1.6: an edit of what an earlier entry says to the model
USAGE = "usage"  # pi 1.6: spending that is not a reply (a cache warm-up, a title)

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
    CONTEXT_EDIT: ("targetId", "replacement"),
    USAGE: ("usage",),
}

# Entries that mark state rather than continue a conversation: a `leaf` moves the active leaf,
# a `label` tags another entry, a `usage` records spending beside the conversation (pi writes one
# when it warms a cache, at the leaf). A node whose only children are these is still a branch tip.
MARKER_TYPES = frozenset({LEAF, LABEL, USAGE})

# Types that only steer the session and never reach the model themselves.
META_TYPES = frozenset(
    {MODEL_CHANGE, THINKING_LEVEL_CHANGE, ACTIVE_TOOLS_CHANGE, SESSION_INFO, LABEL, CUSTOM, LEAF, CONTEXT_EDIT, USAGE}
)


# Where a type name was made by a reader of another agent's files (`claude-code/system:...`), or
# by this app (`session-tree.verdict`): the prefix says where, not what, and is left out of names.
_TYPE_PREFIXES = ("claude-code/", "codex/", "session-tree.", "pi/")
_TYPE_SEPARATORS = re.compile(r"[_\-./:]+")


def readable_type(name: Any) -> str:
    """A type name (an entry's type, a custom entry's `customType`) as words a person reads: the
    source's prefix and a Claude Code line's kind left out, separators as spaces
    ("claude-code/system:stop_hook_summary" -> "stop hook summary", "context_edit" -> "context
    edit", "todo-state" -> "todo state"); "?" for a name that is not a string."""
    if not isinstance(name, str) or not name.strip():
        return "?"
    text = name.strip()
    for prefix in _TYPE_PREFIXES:
        if text.startswith(prefix) and len(text) > len(prefix):
            text = text[len(prefix):]
            break
    if ":" in text:  # (a Claude Code line's type and subtype: the subtype says what it is)
        text = text.rsplit(":", 1)[1] or text
    return " ".join(_TYPE_SEPARATORS.sub(" ", text).split()) or name


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
