"""What the model sees at a leaf (SPEC §5): the settings on the path and its chat messages, in
order, from the latest compaction on, with pi 1.6's context edits applied (what each entry
contributes is `messages`'). It is pi's `buildSessionProjection`, message for message.

Every message carries the `entryId` it came from, so a viewer can map it back to its node;
`Context.llm_messages()` drops that key for the model call itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .agents.links import FORK
from .conversations import link_of
from .entries import (
    ACTIVE_TOOLS_CHANGE, COMPACTION, CONTEXT_EDIT, MESSAGE, MODEL_CHANGE, THINKING_LEVEL_CHANGE, Entry, as_key,
)
from .messages import compaction_messages, edited_messages, entry_messages
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
    edits: dict[str, Entry] = field(default_factory=dict)  # entry id -> the context edit applied to it
    usable_from: int = 0  # index in `messages` from which a reported usage measured this context
    # (a usage before the latest compaction or context edit measured another one)
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


def is_system_message(e: Entry) -> bool:
    return e.type == MESSAGE and e.role == "system"


def inherited_elsewhere(tree: SessionTree, path: list[Entry]) -> str | None:
    """What the context lacks when the path starts in a file that holds only its own lines and
    inherits the rest from a file not read with it (a paginated Codex fork whose parent is not
    here, or read alone): said, rather than the model's context silently cut short."""
    if not path:
        return None
    joined = getattr(tree, "joined", None)
    if joined is not None:
        part = joined.part_of(path[0].id)
        link, missing = (part.link, part.missing) if part is not None else (None, None)
        if missing is None:
            return None
        where = f"{missing}, which is not here"
    else:
        link = link_of(tree)
        where = f"{link.said}, which is not read with it" if link is not None else ""
    if link is None or link.kind != FORK or link.position is None:
        return None  # (a fork that copies what it inherits holds it)
    return f"this file inherits the lines {link.at} of {where}: the context lacks them"


def own_path(path: list) -> list:
    """The part of `path` the agent at its end sends. A sub-agent (a sidechain: Claude Code's Task,
    a Codex sub-agent's rollout) is sent its own conversation, from the prompt its run starts
    with, not the path of the session that called it (SPEC §5e: what that agent would send,
    never the whole parent); a run starts where the sidechain starts, or where another file's
    run hangs under a sub-agent's call (a sub-agent's own sub-agent)."""
    if not path or not path[-1].sidechain:
        return path
    start = len(path) - 1
    while start > 0 and path[start - 1].sidechain and path[start - 1].file == path[start].file:
        start -= 1
    return path[start:]


def build_context(tree: SessionTree, leaf_id: str | None) -> Context:
    path = own_path(tree.path(leaf_id))
    ctx = Context(leaf_id, path, settings_on(tree, path), tree=tree)
    lacking = inherited_elsewhere(tree, path)
    if lacking:
        ctx.problems.append(lacking)
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
        chosen = path
    else:
        # Only the latest compaction counts: what it keeps is back even if an earlier one dropped
        # it, except the system messages there (the compaction's checkpoint stands for them).
        for e in path[start:last]:
            ctx.replaced_by.pop(e.id, None)
        ctx.compaction = path[last]
        ctx.kept_from = start
        chosen = [path[last], *(e for e in path[start:last] if not is_system_message(e)), *path[last + 1:]]
    # Context edits among the chosen entries: the latest per target applies to it. An edit the
    # compaction summarized away is not chosen, so it no longer applies.
    edits = ctx.edits
    latest_edit = -1
    for i, e in enumerate(chosen):
        if e.type == CONTEXT_EDIT:
            if e.target_id is not None:
                edits[e.target_id] = e
            latest_edit = i
    after = 0 if last is None else 1 + (len(chosen) - len(path) + last)  # chosen[after:] follow the compaction
    for i, e in enumerate(chosen):
        if i == after:
            ctx.after_index = len(ctx.messages)
        edit = edits.get(e.id)
        if i == 0 and last is not None:
            messages = [] if edit is not None and edit.get("replacement", {}) is None else compaction_messages(e)
        elif e.type == COMPACTION:
            messages = []  # an older compaction kept by the latest one says nothing
        elif edit is not None:
            messages = edited_messages(e, edit.get("replacement", {}))
        else:
            messages = entry_messages(e)
        for m in messages:
            m["entryId"] = e.id
            ctx.messages.append(m)
            ctx.sources.append(e)
        if i == latest_edit:
            ctx.usable_from = len(ctx.messages)
    if after >= len(chosen):
        ctx.after_index = len(ctx.messages)
    ctx.usable_from = max(ctx.usable_from, ctx.after_index)
    return ctx
