"""Routes that write: fork, send a message and stream the reply, settings, labels, compaction.

Every write is a POST (CSRF-checked in csrf.py) that goes through the core's locked append; a
refused write says why and writes nothing. The forms are plain HTML that work without
JavaScript (the server answers with a redirect to the result); app.js submits them with fetch
instead, reads the reply as server-sent events and shows it as it streams.
"""

from __future__ import annotations

import json

from flask import Blueprint, abort, redirect, render_template, request, url_for

from ..core.compaction import plan_branch_summary
from ..core.context import build_context
from ..core.continuation import continue_in_new_session
from ..core.entries import content_text
from ..core.errors import InvalidWrite, ReadOnlySession, SessionError
from ..core.session import THINKING_LEVELS, Session, user_message
from ..core.summary_writes import shrink_refusal, write_branch_summary, write_compaction
from ..model.cancel import Cancel
from ..model.llm import ModelConfig, ModelError, check_fits, reply_to
from ..model.summarize import (
    DRAFT_LABEL,
    draft_digest,
    regenerate_summary,
    regeneration_plan,
    summarize_branch,
    summarize_compaction,
    summarizer_for,
    written_details,
)
from .guard import computes_only, creates_file, write_refusal
from .current import store, wants_stream
from .owner import chosen_config, model_config
from .streaming import event_response, event_stream, sse
from .views import compaction_plan

bp = Blueprint("actions", __name__)

def _form_node(session: Session, field: str = "node", required: bool = True) -> str | None:
    value = request.form.get(field, "")
    if not value:
        if required:
            abort(400, description=f"missing {field}")
        return None
    try:
        session.entry(value)
    except SessionError as exc:
        abort(404, description=str(exc))
    return value


def _form_text(field: str) -> str:
    """A textarea's text with the line endings a session keeps (browsers send CRLF)."""
    return request.form.get(field, "").replace("\r\n", "\n")


def _branch_summary_plan(session: Session, new_leaf: str | None):
    """The branch a fork leaves (SPEC §4), or None when there is nothing to leave behind."""
    tree = session.tree
    old = tree.conversation_leaf(tree.active_leaf)  # a label that moved the leaf is not a branch
    if old is None or (new_leaf is not None and tree.is_ancestor(old, new_leaf)):
        return None  # moving forward along the same branch leaves nothing
    plan = plan_branch_summary(tree, old, new_leaf)
    return plan if plan.has_content else None  # right after a compaction: its summary is carried


def _done(rel: str, node: str | None, message: str):
    """The end of a write: an event for fetch, a redirect for a plain form."""
    if wants_stream():
        return event_response([sse("done", {"node": node, "message": message})])
    return redirect(url_for("sessions.session_page", rel=rel, node=node), code=303)


def _failure(exc: Exception, status: int):
    status = 403 if isinstance(exc, ReadOnlySession) else status
    if wants_stream():
        return event_response([sse("error", {"message": str(exc), "kind": getattr(exc, "kind", "write")})])
    abort(status, description=str(exc))


def _error_data(exc: Exception, **more) -> dict:
    """An `error` event's data: the message, its kind, and a model call's request and raw answer."""
    debug = exc.debug_text() if isinstance(exc, ModelError) else None
    return {"message": str(exc), "kind": getattr(exc, "kind", "write"), **more, "details": debug}


def _model_failure(exc: ModelError, then: str):
    """A failed model call on a plain form: the error page, with the request and raw response in
    a "details" fold (what model.js shows beside the form when JavaScript runs)."""
    message = f"{exc} {then}"
    if request.headers.get("HX-Request"):
        abort(502, description=message)
    return render_template("error.html", code=502, message=message, details=exc.debug_text()), 502


# -- forms (GET: they only show what a write would do) -----------------------------------------------


@bp.get("/s/<path:rel>/-/fork-form")
def fork_form(rel: str):
    """The composer for a fork (`at`), an edit-and-resend (`before`) or continuing a branch."""
    refusal = write_refusal(rel)
    if refusal:
        abort(403, description=refusal)
    session = store().session(rel)
    tree = session.tree
    node = request.args.get("node", "")
    if not node:
        abort(400, description="which entry to fork at: the node parameter is missing")
    position = request.args.get("position", "at")
    if position not in ("at", "before"):
        abort(400, description="position must be 'at' or 'before'")
    target = tree.entry(node)
    new_leaf = node if position == "at" else tree.parent.get(node)
    text = ""
    if position == "before" and target is not None and target.role == "user":
        text = content_text(target.message.get("content"))
    leaving = _branch_summary_plan(session, new_leaf)
    return render_template(
        "partials/_fork_form.html",
        rel=rel, tree=tree, target=target, position=position, new_leaf=new_leaf, text=text,
        leaving=leaving, config=model_config(), thinking_levels=THINKING_LEVELS,
        settings=build_context(tree, new_leaf).settings,
    )


@bp.post("/s/<path:rel>/-/branch-summary")
@computes_only
def branch_summary_preview(rel: str):
    """Generate the summary of the branch a fork would leave, to edit before anything is written."""
    session = store().session(rel)
    new_leaf = _form_node(session, "new_leaf", required=False)
    plan = _branch_summary_plan(session, new_leaf)
    if plan is None:
        abort(409, description="there is no branch to summarize: the fork does not leave one")
    return _summary_editor(summarize_branch, plan)


def _summary_details() -> dict:
    """What made a summary that comes back from the editor (see _summary_editor.html): as
    drafted, or `edited` when a person changed the draft."""
    form = request.form
    try:
        usage = json.loads(form.get("summary_usage") or "null")
    except ValueError:
        usage = None
    drafted = {"summarizer": form.get("summarizer") or None, "model": form.get("summary_model") or None}
    if drafted["summarizer"] == "extractive":
        drafted["label"] = DRAFT_LABEL
    if isinstance(usage, dict):
        drafted["usage"] = usage
    return written_details(form.get("summary", ""), drafted, form.get("draft_digest"))


def _summary_editor(summarize, plan, refusal=None):
    """A summary to edit before it is written; a failed model call says why (502). Asked for as
    server-sent events, the model's text streams as it comes (see _summary_stream). `refusal`
    (summary -> reason or None) is what the write would refuse the drafted text for: said under
    it, and Commit stays off until the text is changed."""
    instructions = request.form.get("instructions") or None
    if wants_stream():
        return _summary_stream(summarize, plan, instructions, refusal)
    try:
        text, details = summarize(model_config(), plan, instructions)
    except ModelError as exc:
        abort(502, description=str(exc))
    return _editor_html(text, details, refusal)


def _editor_html(text: str, details: dict, refusal=None) -> str:
    return render_template("partials/_summary_editor.html", text=text, details=details, digest=draft_digest(text),
                           refusal=refusal(text) if refusal else None)


def _summary_stream(summarize, plan, instructions: str | None, refusal=None):
    """Server-sent events: the model's text deltas, then `done` with the editor (the summary with
    its file lists, as the plain route answers) or `error`. An extractive summary, made without
    a model, comes whole in `done`. Nothing is written, so a browser that gives up loses nothing
    (and the model server is told to stop)."""
    config = model_config()
    cancel = Cancel()

    def work(send) -> None:
        def delta(kind: str, text: str) -> None:
            if kind == "text":
                send("delta", {"text": text})
        try:
            send("summary", summarize(config, plan, instructions, on_delta=delta, cancel=cancel))
        except (ModelError, SessionError) as exc:
            send("error", _error_data(exc))

    def shape(event: str, data):
        return ("done", {"html": _editor_html(*data, refusal)}) if event == "summary" else (event, data)

    return event_stream(work, cancel, shape=shape)


# -- writes ---------------------------------------------------------------------------------------------


@bp.post("/s/<path:rel>/-/fork")
def fork(rel: str):
    """Fork at a node, optionally with a branch summary of what is left and a first message."""
    session = store().session(rel)
    tree = session.tree
    node = _form_node(session, required=False)
    position = request.form.get("position", "at")
    if position not in ("at", "before"):
        abort(400, description="position must be 'at' or 'before'")
    new_leaf = node if position == "at" or node is None else tree.parent[node]
    summary = _form_text("summary").strip()
    message = _form_text("message").strip()
    if node is None and not (summary or message):
        abort(400, description="nothing to do: give a node to fork at, or a message")
    config = _model_for_request() if message else None  # (a model the server does not offer: nothing written)
    try:
        if config is not None and config.configured:  # refused before anything is written when it cannot fit
            check_fits(session, config, new_leaf, message)
        parent = new_leaf
        if summary:
            plan = _branch_summary_plan(session, new_leaf)
            if plan is None:
                raise InvalidWrite("there is no branch to summarize: the fork does not leave one")
            if request.form.get("old_leaf", plan.old_leaf) != plan.old_leaf:
                raise InvalidWrite("the session moved on since the summary was made: open the fork again")
            details = _summary_details()
            parent = write_branch_summary(session, plan, summary, details)["id"]
        elif not message and node is not None:
            session.fork(node, position)
        if not message:
            return _done(rel, parent, "forked")
        user = session.append_message(user_message(message), parent=parent)
    except (SessionError, ModelError) as exc:
        return _failure(exc, 409)
    return _reply_or_done(rel, session, user["id"], config)


@bp.post("/s/<path:rel>/-/continue-new")
@creates_file
def continue_new(rel: str):
    """SPEC §5c: continue a session we may not write to in a new v3 file, opened at its leaf."""
    session = store().session(rel)
    node = _form_node(session, required=False)
    joined = session.tree.joined
    elsewhere = joined.elsewhere(node) if joined is not None and node is not None else None
    source = store().resolve(elsewhere.name) if elsewhere is not None else None  # (the file the path leaves)
    path = continue_in_new_session(session, node, source=source)
    return redirect(url_for("sessions.session_page", rel=store().rel(path)), code=303)


@bp.post("/s/<path:rel>/-/reply")
def reply(rel: str):
    """Ask the model to answer a user message that has no answer yet (a retry after a failure)."""
    session = store().session(rel)
    node = _form_node(session)
    if session.entry(node).role != "user":
        return _failure(InvalidWrite("a reply is asked for a user message"), 409)
    return _reply_or_done(rel, session, node)


def _model_for_request() -> ModelConfig:
    """The configured model, or the one picked in the composer among those the server offers
    (same server and key); 403 for another."""
    return chosen_config(request.form.get("model"))


def _reply_or_done(rel: str, session: Session, user_id: str, config: ModelConfig | None = None):
    config = config or _model_for_request()
    if not config.configured:
        return _done(rel, user_id, "message added; no model is configured, so no reply was asked for")
    if not wants_stream():
        try:
            reply_to(session, config, user_id)
        except SessionError as exc:
            return _failure(exc, 409)
        except ModelError as exc:
            return _model_failure(exc, "The message was kept: retry from its panel.")
        return _done(rel, user_id, "replied")
    return _stream(session, config, user_id)


def _stream(session: Session, config: ModelConfig, user_id: str):
    """Server-sent events: the user entry, text deltas as they arrive, then done or error.
    A browser that gives up (Cancel, or leaving the page) cancels the call: no reply is written,
    the user message stays, as after a failure."""
    cancel = Cancel()

    def work(send) -> None:
        try:
            entry = reply_to(session, config, user_id, lambda kind, text: send("delta", {"kind": kind, "text": text}),
                             cancel=cancel)
            cut = entry["message"].get("stopReason") == "length"
            send("done", {"node": entry["id"], "user": user_id, "cut": cut,
                          "message": "replied, but cut at the length limit: the model did not finish" if cut
                          else "replied"})
        except (ModelError, SessionError) as exc:
            send("error", _error_data(exc, user=user_id))

    return event_stream(work, cancel, first=[("user", {"node": user_id})])


@bp.post("/s/<path:rel>/-/settings")
def settings(rel: str):
    """Record a model or thinking-level choice on the branch at `node` (SPEC §2 meta entries)."""
    session = store().session(rel)
    node = _form_node(session, required=False)
    current = build_context(session.tree, node).settings
    model = request.form.get("model", "").strip()
    level = request.form.get("thinking", "").strip()
    written = None
    try:
        if model and model != current.model_name:
            provider, _, model_id = model.rpartition("/")
            written = session.append_model_change(provider or None, model_id, parent=node)
            node = written["id"]
        if level and level != current.thinking_level:
            written = session.append_thinking_level_change(level, parent=node)
            node = written["id"]
    except SessionError as exc:
        return _failure(exc, 409)
    return _done(rel, node, "settings recorded" if written else "nothing changed")


@bp.post("/s/<path:rel>/-/label")
def label(rel: str):
    session = store().session(rel)
    node = _form_node(session)
    try:
        session.set_label(node, request.form.get("label", ""))
    except SessionError as exc:
        return _failure(exc, 409)
    return _done(rel, node, "label saved")


# -- compaction -----------------------------------------------------------------------------------------


def _compaction_plan(session: Session, leaf: str | None):
    """The plan at `leaf`, by default at the active leaf, as the preview showed it."""
    tree = session.tree
    leaf = leaf or tree.conversation_leaf(tree.active_leaf)
    try:
        return compaction_plan(tree, leaf, request.form.get("keep_recent_tokens", ""))
    except ValueError as exc:
        abort(400, description=str(exc))


@bp.post("/s/<path:rel>/-/compact/summary")
@computes_only
def compact_summary(rel: str):
    session = store().session(rel)
    leaf = _form_node(session, "leaf", required=False)
    plan = _compaction_plan(session, leaf)
    if not plan.can_compact:
        abort(409, description=plan.reason)
    return _summary_editor(summarize_compaction, plan, lambda summary: shrink_refusal(plan, summary))


@bp.post("/s/<path:rel>/-/compact")
def compact(rel: str):
    """Write the compaction with the (edited) summary; refused if the plan no longer holds."""
    session = store().session(rel)
    leaf = _form_node(session, "leaf", required=False)
    plan = _compaction_plan(session, leaf)
    expected = request.form.get("first_kept", "")
    try:
        moved = request.form.get("active_leaf") not in (None, session.tree.active_leaf)
        if moved or (expected and expected != plan.first_kept_entry_id):
            raise InvalidWrite("the session changed since the preview: open the compaction preview again")
        details = _summary_details()
        entry = write_compaction(session, plan, _form_text("summary"), details, must_shrink=True)
    except SessionError as exc:
        return _failure(exc, 409)
    return _done(rel, entry["id"], "compacted")


@bp.post("/s/<path:rel>/-/regenerate/summary")
@computes_only
def regenerate_preview(rel: str):
    """Generate a new summary for a compaction or branch summary, to read and edit before it is
    written (streamed like the compaction preview's)."""
    session = store().session(rel)
    node = _form_node(session)
    try:
        plan = regeneration_plan(session.tree, node)
    except SessionError as exc:
        abort(409, description=str(exc))
    return _summary_editor(summarizer_for(plan), plan)


@bp.post("/s/<path:rel>/-/regenerate")
def regenerate(rel: str):
    """A new summary beside an old one (same parent, same cut, or the same branch left): a new
    entry, which becomes the active leaf; the old line stays as it is. The summary is the one
    sent (drafted by regenerate_preview and read), else the summarizer makes it now."""
    session = store().session(rel)
    node = _form_node(session)
    sent = "summary" in request.form
    try:
        entry = regenerate_summary(session, model_config(), node, _form_text("summary") if sent else None,
                                   _summary_details() if sent else None)
    except SessionError as exc:
        return _failure(exc, 409)
    except ModelError as exc:
        return _failure(exc, 502)
    return _done(rel, entry["id"], "regenerated")
