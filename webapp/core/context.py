"""What the model sees at a leaf (SPEC §5): the settings on the path and its chat messages, in
order, from the latest compaction on (what each entry contributes is `messages`').

Every message carries the `entryId` it came from, so a viewer can map it back to its node;
`Context.llm_messages()` drops that key for the model call itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .entries import ACTIVE_TOOLS_CHANGE, COMPACTION, MODEL_CHANGE, THINKING_LEVEL_CHANGE, Entry, as_key
from .messages import compaction_messages, entry_messages
from .reader import first_kept_id
from .tree import SessionTree



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


def model_on(tree: SessionTree, path: list[Entry]) -> tuple[str | None, str | None]:
    """The provider and model of `settings_on(tree, path)`, found from the path's end (the latest
    model change or assistant message names them): a few entries read, not every body of a long path."""
    for e in reversed(path):
        if e.type == MODEL_CHANGE:
            return as_key(e.get("provider")), as_key(e.get("modelId"))
        if e.role == "assistant" and e.message.get("model"):
            return as_key(e.message.get("provider")), as_key(e.message.get("model"))
    h = tree.header or {}
    return as_key(h.get("provider")), as_key(h.get("modelId"))


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
