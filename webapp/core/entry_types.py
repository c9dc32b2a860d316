"""The vocabulary of a session file (SPEC §2): the header's version, the thirteen entry type names,
the fields each type needs, and message content read as blocks.

The lowest layer of the core: it imports nothing of the project, so every other module (the
entries, the LLM messages made of them, the format readers) can build on it.
"""

from __future__ import annotations

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
