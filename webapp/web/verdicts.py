"""Verdicts on branches in the web app: the form that gives one, and what every view listing
branches reads to show them (`webapp.core.verdicts` does the work).

A verdict on a session this app may write is appended to it; on one it never writes (SPEC §5c)
it is kept in the app's data folder, so the route is refused only when the app serves read-only.
"""

from __future__ import annotations

from flask import Blueprint, abort, current_app, g, redirect, request, url_for

from ..core.errors import SessionError, UnknownEntry
from ..core.verdicts import PERSON, PERSON_VERDICTS, VERDICT_MEANINGS, VERDICT_WORDS, Verdict, give_verdict, verdicts
from .current import store
from .guard import keeps_app_data
from .owner import offered_models

bp = Blueprint("verdicts", __name__)


def _back(rel: str, target: str) -> str:
    """Where the form came from (a path of this app), else the branch on the session page."""
    back = request.form.get("next", "")
    if back.startswith("/") and not back.startswith("//") and "\\" not in back:
        return back
    return url_for("sessions.session_page", rel=rel, node=target)


@bp.post("/s/<path:rel>/-/verdict")
@keeps_app_data
def give(rel: str):
    session = store().session(rel)
    target = request.form.get("target", "")
    if not target:
        abort(400, description="missing target: the leaf of the branch the verdict is on")
    try:
        give_verdict(session, target, request.form.get("verdict", ""), request.form.get("note", "").replace("\r\n", "\n"))
    except UnknownEntry as exc:
        abort(404, description=str(exc))
    except SessionError as exc:
        abort(400, description=str(exc))
    return redirect(_back(rel, target), code=303)


@bp.app_template_global()
def judge_model() -> str:
    return current_app.config["MODEL_CONFIG"].model or ""


@bp.app_template_global()
def judge_models() -> list[str]:
    """The models the judge form offers: those the server was started with."""
    return offered_models()


@bp.app_template_global()
def branch_verdicts(rel: str) -> dict[str, dict[str, Verdict]]:
    """Target id -> by -> the verdict that stands, read once per request."""
    cache = g.setdefault("branch_verdicts", {})
    if rel not in cache:
        cache[rel] = verdicts(store().session(rel))
    return cache[rel]


@bp.app_template_global()
def verdict_choices() -> tuple[str, ...]:
    return PERSON_VERDICTS


@bp.app_template_global()
def verdict_words(verdict: str) -> tuple[str, str]:
    """(what a verdict says in words, what it means): the form's labels and their titles."""
    return VERDICT_WORDS.get(verdict, verdict), VERDICT_MEANINGS.get(verdict, verdict)


@bp.app_template_global()
def person_verdict(rel: str, target: str) -> Verdict | None:
    return branch_verdicts(rel).get(target, {}).get(PERSON)
