"""Editing what the model sees, before it is written: the token figures of the context with and
without a context edit, and, in a context, which entries edits changed (with both texts).

The figures are the ones the context shows after the edit is written: a usage reported before an
edit measured the unedited context, so after one the whole context is estimated (as pi does,
`tokens.context_tokens`); the preview builds that context without writing anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from .context import Context, build_context
from .context_edits import check_edit
from .entries import CONTEXT_EDIT, CUSTOM_MESSAGE, Entry, content_text
from .messages import edited_messages, estimate_message_tokens
from .tokens import TokenCount, context_tokens
from .tree import SessionTree


@dataclass
class EditPreview:
    leaf_id: str | None  # where the edit is written (the context it changes)
    target: Entry
    replacement: dict | None  # as pi writes it (normalised)
    before: TokenCount
    after: TokenCount
    holds: str  # the target's text as the file holds it
    sent_before: str | None  # what the model was sent for it before (None: nothing)
    sent_after: str | None  # and after the edit


def original_content(target: Entry):
    """The target's content as the file holds it (what an undo puts back)."""
    return target.get("content") if target.type == CUSTOM_MESSAGE else target.message.get("content")


def held_text(target: Entry) -> str:
    """The text of the target's content as the file holds it."""
    return content_text(original_content(target))


def sent_text(messages: list[dict]) -> str | None:
    """The text of an entry's messages as a person reads it; None when it sends none."""
    if not messages:
        return None
    parts = []
    for m in messages:
        content = m.get("content")
        parts.append(content if isinstance(content, str) else content_text(content) if content else "")
        parts += [f"→ {c['function']['name']}({c['function']['arguments']})" for c in m.get("tool_calls") or ()]
    return "\n".join(p for p in parts if p)


def preview_edit(tree: SessionTree, leaf_id: str | None, target_id: str, replacement) -> EditPreview:
    """The context at `leaf_id` before and after an edit of `target_id` written there; refused
    (InvalidWrite, pi's words) where pi would refuse the edit."""
    fields = check_edit(tree, leaf_id, {"type": CONTEXT_EDIT, "targetId": target_id, "replacement": replacement})
    target = tree.by_id[target_id]
    ctx = build_context(tree, leaf_id)
    new = edited_messages(target, fields["replacement"])
    messages, seen = [], False
    for m, s in zip(ctx.messages, ctx.sources):
        if s.id != target_id:
            messages.append(m)
        elif not seen:
            seen = True
            messages += new
    estimate = sum(estimate_message_tokens(m) for m in messages)
    before = context_tokens(ctx)
    after = TokenCount(estimate + before.overhead, estimate + before.overhead, None, before.overhead)
    old = [m for m, s in zip(ctx.messages, ctx.sources) if s.id == target_id]
    return EditPreview(leaf_id, target, fields["replacement"], before, after,
                       held_text(target), sent_text(old), sent_text(new))


@dataclass
class EditedEntry:
    target: Entry
    edit: Entry  # the edit in force
    holds: str  # the text the file holds
    sent: str | None  # what the model is sent (None: taken out)


def edited_entries(ctx: Context) -> list[EditedEntry]:
    """The entries of the context's path that an edit in force changed, in path order."""
    if not ctx.edits:
        return []
    sent: dict[str, list[dict]] = {}
    for m, s in zip(ctx.messages, ctx.sources):
        sent.setdefault(s.id, []).append(m)
    out = []
    for e in ctx.path:
        edit = ctx.edits.get(e.id)
        if edit is not None and e.type != CONTEXT_EDIT and e.id not in ctx.replaced_by:  # (summarized: no effect)
            holds = held_text(e) if e.type == CUSTOM_MESSAGE or e.message else ""
            out.append(EditedEntry(e, edit, holds, sent_text(sent.get(e.id, []))))
    return out
