"""Who may use this server, decided in one place for every route (Jupyter Server's answer to
the same threat, its IdentityProvider: a secret token per server, given to the person who
started it in the URL it prints, kept in a cookie after the first visit).

Binding to 127.0.0.1 keeps other machines out, not the other accounts of this one: any of them
can reach the port. So every request but the static assets must show the server's token (in the
`Authorization: token ...` header the CLI sends, or once in `?token=...`, which sets the cookie
and is dropped from the address at once), the cookie that token or the password set, or the
password on the login page. One `before_request` decides it, so a new route cannot forget to.
A request that shows none is sent to the login page (a page) or gets a bare 401 (a fragment, an
event stream, a command's JSON). The CSRF check still applies to writes, after this one.

`serve --no-auth` turns this off for a person who knows why (every page then says the server
is open to every account on the machine), except on the routes the CLI asks (`token_only`):
they answer only to the token, which `serve` writes in its 0600 file beside the index."""

from __future__ import annotations

import hmac
import os
import secrets
import threading
from dataclasses import dataclass, field
from urllib.parse import urlencode

from flask import Blueprint, Flask, current_app, redirect, render_template, request, send_from_directory
from flask.testing import FlaskClient

from ..core.password import check_password
from .guard import computes_only

TOKEN_ENV = "SESSION_TREE_TOKEN"  # (read by `serve`: a token of the user's choosing)
MIN_TOKEN = 16
OPEN_WARNING = ("this server asks nobody who they are (serve --no-auth): every account on this machine can read "
                "and change what it serves")

bp = Blueprint("auth", __name__)
_one_check_at_a_time = threading.Lock()
ASSETS = ("static", "auth.favicon")  # what anyone may load: the app's own files, no session's


def given_token() -> str | None:
    """The token the user chose ($SESSION_TREE_TOKEN), if any; ValueError if it is too weak or
    could not travel in a header."""
    token = os.environ.get(TOKEN_ENV, "")
    if token and (len(token) < MIN_TOKEN or not token.isascii() or not token.isprintable() or " " in token):
        raise ValueError(f"${TOKEN_ENV} must be at least {MIN_TOKEN} printable ASCII characters without spaces")
    return token or None


@dataclass(frozen=True)
class Owner:
    """What proves a request comes from the person who started this server."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    # What the browser's cookie holds: a secret of this process, never the token itself, so a
    # cookie read off one server's requests is worth nothing once it stops.
    cookie_secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    open: bool = False  # serve --no-auth

    def is_token(self, sent: str | None) -> bool:
        return bool(sent) and hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), self.token.encode())

    def is_cookie(self, sent: str | None) -> bool:
        return bool(sent) and hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), self.cookie_secret.encode())


def owner(app: Flask | None = None) -> Owner:
    return (app or current_app).extensions["owner"]


# What a token_only route refused without its token says, unless the route says otherwise.
COMMANDS_REFUSAL = "this server answers `session-tree` commands only with the token it wrote beside its index"


def token_only(view=None, *, refusal: str = COMMANDS_REFUSAL):
    """Mark a route that answers only to a request carrying the token in its header (the CLI's,
    an MCP client's), not to a cookie, and not without it even on an open server. `refusal` is
    what it answers without the token, said to whoever calls that route (`@token_only(refusal=...)`)."""
    def mark(view):
        view.token_only = refusal
        return view

    return mark if view is None else mark(view)


def _public(view):
    """Mark the login route: answered to anyone (and, csrf.py, without a form token: a page
    anyone may load can carry no secret to send back)."""
    view.public = True
    return view


def serving_open() -> bool:
    return owner().open


def cookie_name() -> str:
    """One cookie per port: a browser keeps one set of cookies for a host, whatever the port, and
    two servers on this machine have two secrets."""
    port = request.host.rpartition(":")[2] if request.host.rpartition(":")[2].isdigit() else "80"
    return f"session-tree-{port}"


def header_token() -> str | None:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    return value.strip() if scheme.lower() in ("token", "bearer") else None


def is_owner() -> bool:
    """Whether the request shows the token (header) or the cookie a login set."""
    me = owner()
    return me.is_token(header_token()) or me.is_cookie(request.cookies.get(cookie_name()))


def _local(path: str) -> str:
    """A path on this server (never `//host/...`, which a browser reads as another site)."""
    path = "/" + path.lstrip("/\\")
    return path if not path.startswith("/-/login") else "/"


def _without_token() -> str:
    rest = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]
    return _local(request.path) + ("?" + urlencode(rest) if rest else "")


def _logged_in(target: str):
    """A redirect to `target` that sets the cookie (HttpOnly: no script reads it; Strict: no
    other site's page sends it)."""
    response = redirect(target, 303)
    response.set_cookie(cookie_name(), owner().cookie_secret, httponly=True, samesite="Strict", path="/")
    response.headers["Cache-Control"] = "no-store"
    return response


def _wants_page() -> bool:
    return (request.method in ("GET", "HEAD") and not request.headers.get("HX-Request")
            and "text/event-stream" not in request.headers.get("Accept", "")
            and (not request.accept_mimetypes or request.accept_mimetypes.accept_html))


# Why the login page was shown again, by a code in its address (never a text from the address).
LOGIN_MESSAGES = {
    "wrong": "That is neither this server's token nor its password.",
    "stale": "That link's token is not this server's (a server has a new one each time it starts).",
}


def _to_login(target: str, why: str = ""):
    """The way to the login page, which brings the person back to `target` (Jupyter's way: a
    redirect, then the page answered 200, so that a browser's console logs no failed load)."""
    response = redirect("/-/login?" + urlencode({"next": target, **({"why": why} if why else {})}), 303)
    response.headers["Cache-Control"] = "no-store"
    return response


def _refused(why: str = ""):
    """The way to the login page, or a bare 401 where no page would be shown (a fragment, an
    event stream, a command's JSON)."""
    refusal = getattr(current_app.view_functions.get(request.endpoint), "token_only", None)
    if refusal:
        return {"error": refusal}, 401
    if _wants_page():
        return _to_login(_without_token(), why)
    return "Not logged in: open the address `session-tree serve` printed", 401, {"Content-Type": "text/plain; charset=utf-8"}


def protect(app: Flask) -> None:
    app.extensions["owner"] = Owner(open=bool(app.config.get("NO_AUTH")), **(
        {"token": app.config["AUTH_TOKEN"]} if app.config.get("AUTH_TOKEN") else {}))
    app.add_template_global(serving_open)
    app.register_blueprint(bp)

    @app.before_request
    def who_are_you():
        view = app.view_functions.get(request.endpoint)  # None for a URL no route has: refused alike
        if "token" in request.args and request.method in ("GET", "HEAD"):
            if owner().is_token(request.args["token"]):
                return _logged_in(_without_token())
            if not owner().open:
                return _refused("stale")
        if getattr(view, "token_only", False):
            return None if owner().is_token(header_token()) else _refused()
        if request.endpoint in ASSETS or getattr(view, "public", False) or owner().open or is_owner():
            return None
        return _refused()


@bp.route("/-/login", methods=["GET", "POST"])
@computes_only
@_public
def login():
    """The login page; its form, sent with the token or the password, sets the cookie. A wrong
    secret brings the page back with the reason (post, redirect, get: nothing is sent twice)."""
    target = _local(request.values.get("next", "/"))
    if request.method == "GET":
        if is_owner() or owner().open:
            return redirect(target, 303)
        message = LOGIN_MESSAGES.get(request.args.get("why", ""), "")
        return render_template("login.html", next=target, message=message), {"Cache-Control": "no-store"}
    secret = request.form.get("secret", "")
    if owner().is_token(secret):
        return _logged_in(target)
    with _one_check_at_a_time:  # (each costs 16 MB and 50 ms: a flood of guesses holds one core, not all)
        if check_password(secret):
            return _logged_in(target)
    return _to_login(target, "wrong")


@bp.get("/favicon.ico")
def favicon():
    """The icon a browser asks for by itself where a page names none (a raw text, an image)."""
    return send_from_directory(current_app.static_folder, "favicon.svg", mimetype="image/svg+xml")


class OwnerClient(FlaskClient):
    """A test client that is the app's owner (sends its token): the test suite installs it for
    every app it builds, bench/ uses it to time pages as the owner sees them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.environ_base["HTTP_AUTHORIZATION"] = f"token {owner(self.application).token}"


def owner_client(app: Flask) -> FlaskClient:
    return OwnerClient(app, app.response_class)
