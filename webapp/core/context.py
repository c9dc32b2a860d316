"""What the model sees at a leaf (SPEC §5): settings and OpenAI-style chat messages.

Every message carries the `entryId` it came from, so a viewer can map it back to its node;
`Context.llm_messages()` drops that key for the model call itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from .entries import (
    ACTIVE_TOOLS_CHANGE,
    BRANCH_SUMMARY,
    COMPACTION,
    CUSTOM_MESSAGE,
    MESSAGE,
    MODEL_CHANGE,
    THINKING_LEVEL_CHANGE,
    Entry,
    as_key,
    content_blocks,
)
from .reader import first_kept_id
from .tree import SessionTree

COMPACTION_PREFIX = "The conversation history before this point was compacted into the following summary:"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:"


@dataclass
class Settings:
    provider: str | None = None
    model_id: str | None = None
    thinking_level: str | None = None
    active_tools: list[str] | None = None

    @property
    def model_name(self) -> str | None:
        """`provider/model`, or the model alone when the provider is not known."""
        return "/".join(x for x in (self.provider, self.model_id) if x) or None

    @property
    def model(self) -> dict | None:
        if not self.model_id:
            return None
        return {"provider": self.provider, "modelId": self.model_id}


@dataclass
class Context:
    leaf_id: str | None
    path: list[Entry]
    settings: Settings
    messages: list[dict] = field(default_factory=list)
    sources: list[Entry] = field(default_factory=list)  # the entry behind each message
    compaction: Entry | None = None  # the latest compaction on the path, the only one that counts
    kept_from: int = 0  # index in `path` of the first entry kept before the compaction
    after_index: int = 0  # index in `messages` of the first message from after the compaction
    replaced_by: dict[str, str] = field(default_factory=dict)  # entry id -> compaction id
    problems: list[str] = field(default_factory=list)
    tree: SessionTree | None = field(default=None, repr=False)  # what it was built from

    def llm_messages(self) -> list[dict]:
        """The messages as litellm takes them, without the `entryId` tags."""
        return [{k: v for k, v in m.items() if k != "entryId"} for m in self.messages]

    @property
    def entry_ids(self) -> set[str]:
        return {m["entryId"] for m in self.messages}


def _text_or_parts(content) -> str | list[dict]:
    """User content as a plain string, or OpenAI content parts when images are present."""
    blocks = content_blocks(content)
    if all(b.get("type") == "text" for b in blocks):
        return "\n".join(b.get("text", "") for b in blocks)
    parts: list[dict] = []
    for b in blocks:
        if b.get("type") == "text":
            parts.append({"type": "text", "text": b.get("text", "")})
        elif b.get("type") == "image":
            url = f"data:{b.get('mimeType', 'image/png')};base64,{b.get('data', '')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _tool_result_text(content) -> str:
    blocks = content_blocks(content)
    texts = [b.get("text", "") if b.get("type") == "text" else f"[{b.get('type')}]" for b in blocks]
    return "\n".join(texts)


def _assistant(msg: dict) -> dict:
    blocks = content_blocks(msg.get("content"))
    text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    calls = [
        {
            "id": b.get("id", ""),
            "type": "function",
            "function": {
                "name": str(b.get("name", "")),
                "arguments": orjson.dumps(b.get("arguments", {})).decode(),
            },
        }
        for b in blocks
        if b.get("type") == "toolCall"
    ]
    out: dict = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        out["tool_calls"] = calls
    return out


def _bash(msg: dict) -> str:
    text = f"Ran `{msg.get('command', '')}`\n```\n{msg.get('output', '')}\n```"
    if msg.get("cancelled"):
        text += "\n(command cancelled)"
    elif msg.get("exitCode") not in (None, 0):
        text += f"\nCommand exited with code {msg.get('exitCode')}"
    return text


def message_messages(msg: dict) -> list[dict]:
    """The LLM messages one SPEC §2 message contributes (none for a role the model does not take)."""
    role = msg.get("role")
    if role == "user":
        return [{"role": "user", "content": _text_or_parts(msg.get("content"))}]
    if role == "assistant":
        return [_assistant(msg)]
    if role == "toolResult":
        return [
            {
                "role": "tool",
                "tool_call_id": msg.get("toolCallId", ""),
                "content": _tool_result_text(msg.get("content")),
            }
        ]
    if role == "bashExecution":
        return [] if msg.get("excludeFromContext") else [{"role": "user", "content": _bash(msg)}]
    if role == "custom":
        return [{"role": "user", "content": _text_or_parts(msg.get("content"))}]
    return []


def entry_messages(entry: Entry) -> list[dict]:
    """The LLM messages one path entry contributes (none for meta entries)."""
    t = entry.type
    if t == MESSAGE:
        return message_messages(entry.message)
    if t == CUSTOM_MESSAGE:
        return [{"role": "user", "content": _text_or_parts(entry.get("content"))}]
    if t == BRANCH_SUMMARY:
        summary = entry.get("summary")
        if isinstance(summary, str) and summary.strip():
            return [{"role": "user", "content": f"{BRANCH_PREFIX}\n\n<summary>\n{summary}\n</summary>"}]
    return []


def compaction_messages(compaction: Entry) -> list[dict]:
    """What stands for the entries a compaction replaced: its summary, or, when the compaction
    records what the whole context before it became (Codex's replacement history), that."""
    history = compaction.get("replacementHistory")
    if isinstance(history, list):
        return [m for msg in history for m in message_messages(msg)]
    return [summary_message(compaction)]


def summary_message(compaction: Entry) -> dict:
    return summary_message_of(compaction.get("summary") or "")


def summary_message_of(summary: str) -> dict:
    """The system message a compaction's summary becomes (SPEC §5)."""
    return {"role": "system", "content": f"{COMPACTION_PREFIX}\n\n<summary>\n{summary}\n</summary>"}


def settings_on(tree: SessionTree, path: list[Entry]) -> Settings:
    """The latest model, thinking level and tool set on the whole path (a v1 header seeds them)."""
    h = tree.header or {}
    s = Settings(as_key(h.get("provider")), as_key(h.get("modelId")), as_key(h.get("thinkingLevel")))
    for e in path:
        if e.type == MODEL_CHANGE:
            s.provider, s.model_id = as_key(e.get("provider")), as_key(e.get("modelId"))
        elif e.type == THINKING_LEVEL_CHANGE:
            s.thinking_level = as_key(e.get("thinkingLevel"))
        elif e.type == ACTIVE_TOOLS_CHANGE:
            tools = e.get("tools")
            s.active_tools = [str(t) for t in tools] if isinstance(tools, list) else s.active_tools
        elif e.role == "assistant" and e.message.get("model"):
            s.provider, s.model_id = as_key(e.message.get("provider")), as_key(e.message.get("model"))
    return s


def _kept_start(tree: SessionTree, path: list[Entry], at: int) -> int | None:
    """Index in `path` of the compaction at `at`'s firstKeptEntryId, or None if not before it."""
    kept = first_kept_id(path[at])
    for i in range(at):
        if path[i].id == kept:
            return i
    return None


def build_context(tree: SessionTree, leaf_id: str | None) -> Context:
    path = tree.path(leaf_id)
    ctx = Context(leaf_id, path, settings_on(tree, path), tree=tree)
    last = None
    start = 0
    dropped = 0  # path[:dropped] is in `replaced_by` already
    for i, e in enumerate(path):
        if e.type != COMPACTION:
            continue
        kept = _kept_start(tree, path, i)
        if kept is None:
            kept = i + 1
            problem = tree.first_kept_problem(e)
            if problem:
                ctx.problems.append(f"compaction {e.id} (line {e.line}): {problem}")
        for j in range(dropped, kept):
            if path[j].type != COMPACTION:
                ctx.replaced_by[path[j].id] = e.id
        dropped = max(dropped, kept)
        start, last = kept, i
    if last is None:
        _add_messages(ctx, path)
        return ctx
    # Only the latest compaction counts: what it keeps is back even if an earlier one dropped it.
    for e in path[start:last]:
        ctx.replaced_by.pop(e.id, None)
    ctx.compaction = path[last]
    ctx.kept_from = start
    for m in compaction_messages(path[last]):
        ctx.messages.append(dict(m, entryId=path[last].id))
        ctx.sources.append(path[last])
    _add_messages(ctx, path[start:last])
    ctx.after_index = len(ctx.messages)
    _add_messages(ctx, path[last + 1:])
    return ctx


def _add_messages(ctx: Context, entries: list[Entry]) -> None:
    for e in entries:
        for m in entry_messages(e):
            m["entryId"] = e.id
            ctx.messages.append(m)
            ctx.sources.append(e)
