"""Ask several models at a node in the web app: the page (models, message, the cost of each call
before anything is sent), the stream of their replies side by side, and a column's cancel.

`webapp.model.ask` does the work; this module reads the form, runs the ask in a thread and turns
its events into server-sent events tagged with their column (static/ask.js draws the columns).
Without JavaScript the form still works: the replies are waited for and the comparison opens.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for

from ..core.entries import content_text
from ..core.errors import InvalidWrite, SessionError, UnknownEntry
from ..core.session import Session
from ..model.ask import NO_MODELS, AskRun, answered_user, estimates, parse_models, run, start
from ..model.cancel import Cancel
from ..model.errors import ModelError
from .current import store, wants_stream
from .guard import computes_only
from .owner import model_config, offered_models, refusal_for_model
from .streaming import event_stream

bp = Blueprint("ask", __name__)

MODES = {"new": "a new message here", "edit": "this message, edited, in its place", "again": "the reply here, again"}
KEPT_RUNS = 32  # asks whose columns a cancel may still reach


def _runs() -> OrderedDict[str, AskRun]:
    return current_app.extensions.setdefault("ask_runs", OrderedDict())


def _modes(session: Session, at: str) -> list[str]:
    """What may be asked at `at`: a new message always; an edit of a user message; the reply
    again where a user message is (or is answered)."""
    modes = ["new"]
    if session.entry(at).role == "user":
        modes.append("edit")
    try:
        answered_user(session, at)
        modes.append("again")
    except SessionError:
        pass
    return modes


class _Form:
    """The ask form as sent: models, mode, message; where the user message goes."""

    def __init__(self, session: Session, at: str):
        self.mode = request.form.get("mode", "new")
        if self.mode not in _modes(session, at):
            raise InvalidWrite(f"cannot ask for {MODES.get(self.mode, self.mode)!r} at {at}")
        picked = request.form.getlist("model") + [request.form.get("more_models", "")]
        self.models = parse_models([m for m in picked if m.strip()] or [""])
        for model in self.models:  # (the server's own key goes with each: only the models it offers)
            refusal = refusal_for_model(model)
            if refusal:
                abort(403, description=refusal)
        text = request.form.get("message", "").replace("\r\n", "\n")
        self.message = None if self.mode == "again" else text
        self.where = session.tree.parent[at] if self.mode == "edit" else at
        if self.mode == "edit" and self.where is None:
            raise InvalidWrite("the first message of a session has no place to be sent again from")


def _node(session: Session, value: str | None) -> str:
    at = value or session.tree.conversation_leaf(session.tree.active_leaf)
    if not at:
        abort(404, description="this session has no entries to ask at")
    try:
        session.entry(at)
    except UnknownEntry as exc:
        abort(404, description=str(exc))
    return at


@bp.get("/s/<path:rel>/ask")
def ask_page(rel: str):
    session = store().session(rel)
    at = _node(session, request.args.get("at"))
    entry = session.entry(at)
    return render_template(
        "ask.html", rel=rel, tree=session.tree, at=at, entry=entry, modes=_modes(session, at), mode_text=MODES,
        configured=model_config().model, offered=offered_models(), no_model=NO_MODELS,
        edit_text=content_text(entry.message.get("content")) if entry.role == "user" else "",
    )


@bp.post("/s/<path:rel>/-/ask/estimate")
@computes_only
def estimate(rel: str):
    """Each call's context and estimated cost, for the form as it is now (nothing is sent). With
    no model picked yet there is nothing to estimate, and nothing is wrong until the form is sent
    (no model configured, the page opened): a hint, not an error."""
    session = store().session(rel)
    at = _node(session, request.form.get("at"))
    if not any(m.strip() for m in request.form.getlist("model") + [request.form.get("more_models", "")]):
        return render_template("partials/_ask_estimates.html", rows=[], problem=None)
    try:
        form = _Form(session, at)
        rows = estimates(session, form.where, form.models, form.message)
    except SessionError as exc:
        return render_template("partials/_ask_estimates.html", rows=[], problem=str(exc))
    return render_template("partials/_ask_estimates.html", rows=rows, problem=None)


@bp.post("/s/<path:rel>/-/ask")
def ask(rel: str):
    session = store().session(rel)
    at = _node(session, request.form.get("at"))
    try:
        form = _Form(session, at)
        where = form.where
        planned = estimates(session, where, form.models, form.message)
        job = start(session, where, form.models, form.message, model_config())
    except UnknownEntry as exc:
        abort(404, description=str(exc))
    except (SessionError, ModelError) as exc:
        abort(400, description=str(exc))
    config = model_config()
    run_id = uuid.uuid4().hex
    runs = _runs()
    runs[run_id] = job
    while len(runs) > KEPT_RUNS:
        runs.popitem(last=False)
    base = url_for("compare.compare_page", rel=rel)  # (the stream runs after the request context)

    def compare_url() -> str | None:
        return f"{base}?ids={','.join(job.answers)}" if len(job.answers) >= 2 else None
    if not wants_stream():
        run(session, config, job)
        target = compare_url() or url_for("sessions.session_page", rel=rel, node=(job.answers or [job.user])[0])
        return redirect(target, code=303)
    head = {"run": run_id, "user": job.user, "columns": [
        {"model": e.model, "tokens": e.tokens, "cost": e.cost} for e in planned]}
    return _stream(session, config, job, head, compare_url)


def _stream(session, config, job: AskRun, head: dict, compare_url):
    """The ask's events as they come from its columns' threads, then "end" with the comparison.
    A browser that leaves cancels every column still working."""
    cancel = Cancel()
    for column in job.columns:
        cancel.on_cancel(column.cancel.set)

    def work(send) -> None:
        try:
            run(session, config, job, lambda i, event, data: send(event, {"col": i, **data}))
        except ModelError as exc:  # (each column catches its own; this is the run itself failing)
            send("failed", {"col": None, "error": str(exc)})
        send("end", {"compare": compare_url(), "answers": job.answers})

    return event_stream(work, cancel, first=[("start", head)])


@bp.post("/s/<path:rel>/-/ask/cancel")
@computes_only
def cancel(rel: str):
    """Stop one column of a running ask: its reply is not written (a cancel writes nothing)."""
    job = _runs().get(request.form.get("run", ""))
    try:
        column = job.columns[int(request.form.get("col", ""))] if job else None
    except (ValueError, IndexError):
        column = None
    if column is None:
        abort(404, description="no such ask running")
    column.cancel.set()
    return ("", 204)
