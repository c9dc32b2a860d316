"""What a route reads of the request it serves: the running app's session store, whether htmx
asked for a part of the page, and whether fetch asked for a stream.

Below every blueprint, so a route module asks these without importing another route module.
"""

from __future__ import annotations

from flask import current_app, request

from .store import SessionStore


def store() -> SessionStore:
    return current_app.extensions["session_store"]


def wants_stream() -> bool:
    """fetch asked for server-sent events (a plain form, without JavaScript, did not)."""
    return "text/event-stream" in request.headers.get("Accept", "")


def is_fragment() -> bool:
    """An htmx request for a part of the page (a history restore wants the whole page)."""
    return request.headers.get("HX-Request") == "true" and not request.headers.get("HX-History-Restore-Request")
