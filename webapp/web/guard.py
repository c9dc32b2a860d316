"""Which requests may write, decided once for every route (SPEC §5c and read-only mode).

Every POST route writes unless it is marked `computes_only` (a summary preview, a comparison):
so a new write route is refused where writes are refused without anyone remembering to.
A write is refused (403, with the reason) when the app serves read-only (`READ_ONLY`, set by
`session-tree serve --read-only`), or when the session it names may not be written (a pi v1/v2
file, another agent's, one without write permission) — except by a route marked `creates_file`,
which writes a new session beside it and never the one it names. Templates ask `write_refusal`
the same question to leave out the controls that would be refused.
"""

from __future__ import annotations

from flask import Flask, abort, current_app, request

from .current import store

READ_ONLY_MODE = "Read-only: this app was started with --read-only, so nothing is written"


def computes_only(view):
    """Mark a POST route that writes nothing (POST only because its input is a form)."""
    view.computes_only = True
    return view


def creates_file(view):
    """Mark a write route that creates a new session file and leaves the one it names as it is."""
    view.creates_file = True
    return view


def writes_or_continues(view):
    """Mark a write route that writes the session it names when that may be written, and a new
    file that continues it otherwise (SPEC §5c): only read-only mode refuses it."""
    view.writes_or_continues = True
    return view


def keeps_app_data(view):
    """Mark a write route that writes the session it names when that may be written, and the
    app's own data folder otherwise (a verdict): only read-only mode refuses it."""
    view.keeps_app_data = True
    return view


def own_write_rule(view):
    """Mark a POST route whose requests write only through tools it offers only where writes are
    allowed (the MCP endpoint: no write tool on a read-only server), so reading through it stays
    open in read-only mode."""
    view.own_write_rule = True
    return view


def write_refusal(rel: str | None = None) -> str | None:
    """Why a write (to session `rel`, if given) would be refused, in one line; None if allowed."""
    if serving_read_only():
        return READ_ONLY_MODE
    return store().session(rel).read_only_reason if rel else None


def serving_read_only() -> bool:
    return bool(current_app.config["READ_ONLY"])


def protect(app: Flask) -> None:
    app.config.setdefault("READ_ONLY", False)
    app.add_template_global(write_refusal)
    app.add_template_global(serving_read_only)

    @app.before_request
    def refuse_writes():
        if request.method != "POST":
            return None
        view = app.view_functions.get(request.endpoint)
        if view is None or getattr(view, "computes_only", False) or getattr(view, "own_write_rule", False):
            return None
        own = any(getattr(view, mark, False) for mark in ("creates_file", "keeps_app_data", "writes_or_continues"))
        rel = None if own else (request.view_args or {}).get("rel")
        reason = write_refusal(rel)
        if reason:
            abort(403, description=reason)
        return None
