"""Following a file as it is written: the page holds one server-sent-events stream that says when
the file changed (static/follow.js), instead of asking every half second.

The stream costs the server a `stat` of the file now and then: every 0.2 s after a change,
backing off to every 0.5 s while nothing changes (so a change reaches the page within a second,
its redraw included), and a comment line every 15 s, whose failed write ends the stream of a
page that was closed. It is one request, logged once, however long the page stays open; after
ten minutes it ends and the browser opens it again (`retry`).
"""

from __future__ import annotations

import time

import orjson
from flask import Blueprint, current_app

from ..core.session import Session
from . import current

bp = Blueprint("follow", __name__)

FAST, SLOW, BACKOFF = 0.2, 0.5, 1.5  # seconds between stats: after a change, at most; the growth
KEEPALIVE = 15.0
LIFETIME = 600.0


def version_of(session: Session) -> dict:
    """A string that changes whenever the file does, the active leaf and the entry count (the
    tree grows by what was appended: the redraw that follows needs it anyway)."""
    tree = session.tree
    key = "-".join(map(str, (*session.storage.version_key(), session.rewrites)))
    return {"version": key, "activeLeaf": tree.conversation_leaf(tree.active_leaf), "entries": len(tree.entries)}


@bp.get("/s/<path:rel>/-/version")
def version(rel: str):
    """The same as one event of the stream, asked once (for scripts and tools)."""
    body = version_of(current.store().session(rel))
    return current_app.response_class(orjson.dumps(body), mimetype="application/json",
                                      headers={"Cache-Control": "no-store"})


@bp.get("/s/<path:rel>/-/events")
def events(rel: str):
    """`event: version` with `version_of` at once and whenever the file changes."""
    session = current.store().session(rel)
    return current_app.response_class(_stream(session), mimetype="text/event-stream", headers={
        "Cache-Control": "no-store", "X-Accel-Buffering": "no"})


def _stream(session: Session):
    yield "retry: 1000\n\n"
    start = beat = time.monotonic()
    seen, sent, wait = None, None, FAST
    while time.monotonic() - start < LIFETIME:
        key = session.storage.version_key()
        if key != seen:
            seen, wait = key, FAST
            try:
                body = version_of(session)
            except OSError:  # the file went away or cannot be read now: the next look tells
                body = None
            if body is not None and body["version"] != sent:
                sent = body["version"]
                beat = time.monotonic()
                yield f"event: version\ndata: {orjson.dumps(body).decode()}\n\n"
        elif time.monotonic() - beat > KEEPALIVE:
            beat = time.monotonic()
            yield ": still here\n\n"
        time.sleep(wait)
        wait = min(wait * BACKOFF, SLOW)
