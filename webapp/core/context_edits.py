"""pi 1.6's context edits as pi writes them (`SessionManager.appendContextEdit`): the checks, the
refusals in pi's words, and the normalisation, for every writer of one (`Session`'s typed
`append_context_edit`, the generic `append`) and for `validate`, which reports a file that holds an
edit pi would have refused (pi would build messages of `undefined` or `42` from it).

An edit takes an earlier entry of the same branch out of what the model is sent (`replacement:
null`) or replaces its content (`{content}`); what the context makes of it is `messages.
edited_messages`'. Undoing one is another edit (the latest per target wins): its `replacement`
is the target's own content again.
"""

from __future__ import annotations

from .entries import CONTEXT_EDIT, CUSTOM_MESSAGE, MESSAGE, Entry
from .errors import InvalidWrite

REPLACEMENT_REFUSED = "Context edit replacement must be null or contain string/array content"
EDITABLE_MESSAGE_ROLES = frozenset({"user", "assistant", "toolResult"})


def replacement_problem(replacement) -> str | None:
    """pi's refusal of a `replacement` (anything but null or an object whose `content` is a
    string or a list), or None."""
    if replacement is None:
        return None
    if not isinstance(replacement, dict) or not isinstance(replacement.get("content"), (str, list)):
        return REPLACEMENT_REFUSED
    return None


def is_editable(entry: Entry) -> bool:
    """Whether an entry contributes model content an edit may replace: a custom message, or a
    user, assistant or tool result message (not a system message, a summary, a bash execution)."""
    return entry.type == CUSTOM_MESSAGE or (entry.type == MESSAGE and entry.role in EDITABLE_MESSAGE_ROLES)


def target_problem(target_id, known: bool, on_branch: bool, editable: bool) -> str | None:
    """pi's refusal of an edit's target, or None: it must exist, be on the branch the edit is
    written on, and contribute editable content (`is_editable`)."""
    if not known:
        return f"Entry {target_id} not found"
    if not on_branch:
        return f"Entry {target_id} is not on the active branch"
    if not editable:
        return f"Entry {target_id} does not contribute editable model content"
    return None


def normalized(target: Entry, replacement):
    """The replacement as pi writes it: a string for an assistant message or a tool result
    becomes one text block (a user or custom message keeps its string)."""
    if isinstance(replacement, dict) and isinstance(replacement.get("content"), str) and \
            target.type == MESSAGE and target.role in ("assistant", "toolResult"):
        return {**replacement, "content": [{"type": "text", "text": replacement["content"]}]}
    return replacement


def check_edit(tree, parent_id: str | None, fields: dict) -> dict:
    """The context edit `fields` as pi would write it at `parent_id` (normalised), or
    InvalidWrite with pi's refusal."""
    replacement = fields.get("replacement")
    problem = replacement_problem(replacement)
    target_id = fields.get("targetId")
    if problem is None:
        target = tree.by_id.get(target_id) if isinstance(target_id, str) else None
        on_branch = target is not None and parent_id is not None and tree.is_ancestor(target_id, parent_id)
        problem = target_problem(target_id, target is not None, on_branch, target is not None and is_editable(target))
    if problem is not None:
        raise InvalidWrite(problem)
    return {**fields, "type": CONTEXT_EDIT, "replacement": normalized(target, replacement)}


def omit(target_id: str) -> dict:
    """The fields of an edit that takes `target_id` out of the context."""
    return {"type": CONTEXT_EDIT, "targetId": target_id, "replacement": None}


def replace(target_id: str, content) -> dict:
    """The fields of an edit that replaces `target_id`'s content with `content`."""
    return {"type": CONTEXT_EDIT, "targetId": target_id, "replacement": {"content": content}}
