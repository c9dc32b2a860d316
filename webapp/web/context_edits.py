"""Editing what the model sees from the context tab: omit an entry, replace its content, undo.

Each is pi 1.6's context edit (`core.context_edits`), previewed first (the token figures before
and after, both texts; `computes_only`) and written on a second POST at the node whose context
was shown. A session that may not be written (SPEC §5c: a pi v1/v2 file, another agent's, one
without write permission) is continued in a new file first, and the edit is written there.
"""

from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, request, url_for

from ..core.context import build_context
from ..core.edit_preview import held_text, original_content, preview_edit
from ..core.entries import content_text
from ..core.edit_writes import write_context_edit
from ..core.errors import InvalidWrite, SessionError
from ..core.session import Session
from .current import is_fragment, store
from .guard import computes_only, writes_or_continues, write_refusal

bp = Blueprint("context_edits", __name__)

ACTIONS = ("omit", "replace", "undo")


def _form(session: Session) -> tuple[str | None, str, str]:
    """(node, target, action) of the form, each checked."""
    node = request.form.get("node") or None
    target = request.form.get("target", "")
    action = request.form.get("action", "")
    if action not in ACTIONS:
        abort(400, description=f"action must be one of {', '.join(ACTIONS)}, not {action[:40]!r}")
    try:
        for entry_id in filter(None, (node, target)):
            session.entry(entry_id)
    except SessionError as exc:
        abort(404, description=str(exc))
    if not target:
        abort(400, description="which entry to edit: the target is missing")
    return node, target, action


def _replacement(session: Session, target: str, action: str):
    if action == "omit":
        return None
    if action == "undo":
        return {"content": original_content(session.entry(target))}
    return {"content": request.form.get("text", "").replace("\r\n", "\n")}


@bp.get("/s/<path:rel>/-/context-edit/form")
def form(rel: str):
    """The replacement form for an entry, its text the model is sent now to start from."""
    session = store().session(rel)
    node, target = request.args.get("node") or None, request.args.get("target", "")
    try:
        entry = session.entry(target)
        ctx = build_context(session.tree, node)
    except SessionError as exc:
        abort(404, description=str(exc))
    sent = [m.get("content") for m, s in zip(ctx.messages, ctx.sources) if s.id == entry.id]
    now = "\n".join(c if isinstance(c, str) else content_text(c) for c in sent if c) if sent else held_text(entry)
    slot = request.args.get("slot", "")
    template = "partials/_context_edit_form.html" if is_fragment() else "context_edit.html"
    return render_template(template, rel=rel, node=node, target=entry, now=now, p=None,
                           slot=slot if slot.replace("-", "").isalnum() else "edit-form")


@bp.post("/s/<path:rel>/-/context-edit/preview")
@computes_only
def preview(rel: str):
    """What the edit would do at the node, before anything is written."""
    session = store().session(rel)
    node, target, action = _form(session)
    try:
        p = preview_edit(session.tree, node, target, _replacement(session, target, action))
    except InvalidWrite as exc:
        abort(409, description=str(exc))
    refusal = write_refusal(rel)
    continues = f"This file is not written to ({refusal}): the edit is written in a new file that continues it." \
        if refusal else None
    template = "partials/_context_edit_preview.html" if is_fragment() else "context_edit.html"
    return render_template(template, rel=rel, p=p, action=action, text=request.form.get("text", ""), continues=continues)


@bp.post("/s/<path:rel>/-/context-edit")
@writes_or_continues
def write(rel: str):
    """Write the edit at the node (in a continuation file when this one may not be written) and
    show the context there."""
    session = store().session(rel)
    node, target, action = _form(session)
    try:
        written, continued = write_context_edit(session, node, target, _replacement(session, target, action))
    except InvalidWrite as exc:
        abort(409, description=str(exc))
    rel = store().rel(continued) if continued is not None else rel
    return redirect(url_for("sessions.session_page", rel=rel, node=written["id"], tab="context"), code=303)
