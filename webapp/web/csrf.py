"""Cross-site request protection for every write.

Each server process has a random token, printed into its pages (a hidden form field and an
`X-CSRF-Token` header that htmx sends). Another site cannot read our pages, so it cannot know
the token; on top of that a POST whose Origin, Referer or Sec-Fetch-Site says it came from
another site is refused. GET requests never write, so they need neither.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import urlsplit

from flask import Flask, abort, current_app, request

HEADER = "X-CSRF-Token"
FIELD = "csrf_token"


def token() -> str:
    return current_app.config["CSRF_TOKEN"]


def _same_origin() -> bool:
    if request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
        return False
    source = request.headers.get("Origin") or request.headers.get("Referer")
    if not source or source == "null":
        return source is None
    return urlsplit(source).netloc == request.host


def protect(app: Flask) -> None:
    app.config.setdefault("CSRF_TOKEN", secrets.token_urlsafe(32))
    app.add_template_global(token, "csrf_token")

    @app.before_request
    def check_csrf():
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return None
        if getattr(app.view_functions.get(request.endpoint), "token_only", False):
            return None  # its token came in a header (auth.py checked it), which no other site's page can send
        sent = request.headers.get(HEADER) or request.form.get(FIELD, "")
        if not _same_origin():
            abort(403, description="Cross-site request refused: writes are accepted from this app's own pages only")
        if getattr(app.view_functions.get(request.endpoint), "public", False):
            return None  # the login form: served to anyone, it has no token to send back (auth.py)
        if not hmac.compare_digest(sent.encode(), token().encode()):
            abort(403, description="Missing or stale form token: reload the page and try again")
        return None
