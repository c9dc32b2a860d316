"""The Flask application factory, the `serve` entry point, and `export_session` (the app built
to render one session as a file, without serving).

Safety is decided here, once for every route: the app answers only to the host it serves (a
DNS-rebinding page on another name gets 400), only to the person who started it (auth.py: the
token it prints, or the password set), and a Content-Security-Policy forbids inline scripts, so
even content that slipped through escaping could not run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import webbrowser
from pathlib import Path

from flask import Flask, abort, render_template, request
from jinja2 import BytecodeCache

from ..bundled import SAMPLES, STATIC, TEMPLATES, bundled_folder
from ..core.agents.places import agent_places
from ..core.errors import ReadOnlySession, SessionError, SessionNotFound, UnknownEntry
from ..core.session import Session
from ..model.llm import ModelConfig, warm_up, warmed_up
from .client import ClientGone
from .store import SessionStore

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


class CompiledTemplates(BytecodeCache):
    """Templates compiled once per process, kept in memory for every app built in it (`export`,
    `compare` and the tests build apps of their own; compiling the templates again for each took
    longer than most pages do). Jinja drops a compiled template whose source changed."""

    def __init__(self):
        self.codes: dict[str, tuple[str, object]] = {}

    def load_bytecode(self, bucket) -> None:
        checksum, code = self.codes.get(bucket.key, (None, None))
        if checksum == bucket.checksum:
            bucket.code = code

    def dump_bytecode(self, bucket) -> None:
        self.codes[bucket.key] = (bucket.checksum, bucket.code)


COMPILED_TEMPLATES = CompiledTemplates()


def allowed_hosts(host: str, extra: tuple[str, ...] = ()) -> set[str]:
    """The host names the server answers to, on any port: the one it binds to, the loopback
    names, and those given with --allow-host (needed to reach it from elsewhere when it binds to
    all interfaces). A DNS-rebinding page reaches us under its own name, which is none of these."""
    names = set(LOOPBACK_NAMES) | {n.strip().lower() for n in extra if n.strip()}
    if host not in ("0.0.0.0", "::", ""):
        names.add(host.lower())
    return names


def host_name(host_header: str) -> str:
    """`127.0.0.1:8000` → `127.0.0.1`; `[::1]:8000` → `[::1]`."""
    name, sep, port = host_header.rpartition(":")
    return name if sep and port.isdigit() and not host_header.endswith("]") else host_header


def create_app(
    root: str | os.PathLike | None = None,
    *,
    host: str = "127.0.0.1",
    allow_hosts: tuple[str, ...] = (),
    model: str | None = None,
    api_base: str | None = None,
    within: tuple[str, ...] = (),
    models: tuple[str, ...] = (),
    **config,
) -> Flask:
    """Build the app for a sessions root (default: $SESSION_TREE_ROOT, else the bundled samples,
    read-only: `session-tree demo` serves a copy that may be written), serving only its folders
    `within` when given (the agents' folders under a home folder); `model` / `api_base` (else
    $SESSION_TREE_MODEL / _API_BASE) choose the model for replies, `models` the others a form may
    pick (owner.py: a form names no model the server was not started with). `ALLOW_SANDBOX=True` /
    `ALLOW_BASH=True` let a replay run sandbox tools / bash.

    Settings (`config`): `READ_ONLY=True` serves without writing anything (no write control is
    shown, every write route answers 403; see guard.py); `NO_AUTH=True` asks nobody who they are,
    `AUTH_TOKEN` is the token to ask for (else a random one; see auth.py)."""
    app = Flask(
        __name__,
        template_folder=str(bundled_folder(TEMPLATES)),
        static_folder=str(bundled_folder(STATIC)),
    )
    app.jinja_options = {**Flask.jinja_options, "bytecode_cache": COMPILED_TEMPLATES}
    root = root or os.environ.get("SESSION_TREE_ROOT")
    if not root:
        root = bundled_folder(SAMPLES)
        config.setdefault("READ_ONLY", True)
    app.config.update(
        SESSION_TREE_ROOT=str(root),
        ALLOWED_HOSTS=allowed_hosts(host, allow_hosts or tuple(os.environ.get("SESSION_TREE_ALLOWED_HOSTS", "").split(","))),
        SEND_FILE_MAX_AGE_DEFAULT=3600,
        MODEL_CONFIG=ModelConfig.from_env(model, api_base),
        MODELS=tuple(models),
        ALLOW_SANDBOX=False,
        ALLOW_BASH=False,
    )
    app.config.update(config)
    warm_up(app.config["MODEL_CONFIG"])
    # A root that holds the agents' own folders (a home folder, a copy of one) is served as the home is.
    within = within or tuple(agent_places(Path(root)))
    app.extensions["session_store"] = SessionStore(root, within)

    @app.before_request
    def check_host():
        if host_name(request.host).lower() not in app.config["ALLOWED_HOSTS"]:
            abort(400, description=f"Host {request.host!r} is not served here")

    @app.after_request
    def security_headers(response):
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response

    def error_page(code: int, message: str):
        if request.headers.get("HX-Request") or "text/event-stream" in request.headers.get("Accept", ""):
            return message, code, {"Content-Type": "text/plain; charset=utf-8"}  # shown in a toast or the form
        return render_template("error.html", code=code, message=message), code

    @app.errorhandler(SessionNotFound)
    @app.errorhandler(UnknownEntry)
    def session_not_found(exc):
        return error_page(404, str(exc))

    @app.errorhandler(SessionError)
    def session_error(exc):
        return error_page(409, str(exc))

    @app.errorhandler(ReadOnlySession)
    def read_only(exc):
        return error_page(403, str(exc))

    @app.errorhandler(ClientGone)
    def client_gone(exc):
        return "", 499  # the client closed the request: nobody reads this answer

    @app.errorhandler(400)
    @app.errorhandler(403)
    @app.errorhandler(404)
    @app.errorhandler(409)
    @app.errorhandler(502)
    def http_error(exc):
        return error_page(exc.code, exc.description)

    from . import (actions, ask, audit, auth, compare, context_edits, context_pages, corpus, csrf, export, filters,
                   follow, guard, lab, lab_corpus, lab_report, mcp_http, present, printing, replay, sessions, share, short_ids,
                   transcript, verdicts)

    auth.protect(app)  # (before the CSRF check: a stranger learns nothing, not even that a token is stale)
    csrf.protect(app)
    guard.protect(app)
    filters.register(app)
    short_ids.register(app)
    app.register_blueprint(sessions.bp)
    app.register_blueprint(compare.bp)
    app.register_blueprint(context_pages.bp)
    app.register_blueprint(context_edits.bp)
    app.register_blueprint(actions.bp)
    app.register_blueprint(audit.bp)
    app.register_blueprint(transcript.bp)
    app.register_blueprint(export.bp)
    app.register_blueprint(share.bp)
    app.register_blueprint(follow.bp)
    app.register_blueprint(printing.bp)
    app.register_blueprint(present.bp)
    app.register_blueprint(verdicts.bp)
    app.register_blueprint(ask.bp)
    app.register_blueprint(replay.bp)
    app.register_blueprint(lab.bp)
    app.register_blueprint(lab_report.bp)
    app.register_blueprint(lab_corpus.bp)
    app.register_blueprint(corpus.bp)
    app.register_blueprint(mcp_http.bp)
    return app


def serve(root=None, host: str = "127.0.0.1", port: int = 8000, open_browser: bool = False,
          models: tuple[str, ...] = (), api_base: str | None = None, allow_hosts: tuple[str, ...] = (),
          within: tuple[str, ...] = (), read_only: bool = False, corpus_db=None, no_auth: bool = False,
          allow_sandbox: bool = False, allow_bash: bool = False) -> int:
    """Serve until stopped. Everything the server creates (its index, a new session, a verdict
    kept aside) is its user's alone: the agents' own sessions are 0600 too."""
    from ..core.private import private_umask
    from .auth import OPEN_WARNING, given_token, owner

    app = create_app(root, host=host, allow_hosts=allow_hosts, model=models[0] if models else None,
                     models=tuple(models[1:]), api_base=api_base, within=within, READ_ONLY=read_only,
                     CORPUS_DB=corpus_db, NO_AUTH=no_auth, AUTH_TOKEN=given_token(),
                     ALLOW_SANDBOX=allow_sandbox or allow_bash, ALLOW_BASH=allow_bash)
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/"
    from .corpus import open_corpus

    with private_umask():
        service = open_corpus(app)  # the index is built in the background from the start
        mode = " read-only" if read_only else ""
        token = owner(app).token
        visit = url if no_auth else f"{url}?token={token}"
        print(f"session-tree: serving {app.config['SESSION_TREE_ROOT']}{mode} on {visit}", flush=True)
        if no_auth:
            print(f"session-tree: warning: {OPEN_WARNING}", file=sys.stderr, flush=True)
        _say_password()
        _say_what_runs(app)
        if open_browser:
            webbrowser.open(visit)
        # (a SIGTERM ends the server as Ctrl-C does: what it wrote beside the index goes with it)
        signal.signal(signal.SIGTERM, _stop_serving)
        with _holding(service, url, token):
            try:
                app.run(host=host, port=port, threaded=True, use_reloader=False)
            finally:
                _wind_down(service)
    return 0


def _stop_serving(*_) -> None:
    """SIGTERM: leave the serving loop as Ctrl-C does, once (a second signal while the server
    winds down would break off the wait for its threads)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(0)


def _wind_down(service) -> None:
    """Before the interpreter shuts down: the index build ended between two of its batches, and
    litellm's import ended. The interpreter ends a daemon thread that is still running by exiting
    it where it stands, and one standing in DuckDB's C++ code aborted the whole process (SIGABRT,
    "FATAL: exception not rethrown", about one stop in four)."""
    if service is not None:
        service.stop()
    warmed_up()


def _say_password() -> None:
    """A password file that is there and will not be used, said at start (its login would fail)."""
    from ..core.password import password_problem

    problem = password_problem()
    if problem:
        print(f"session-tree: warning: {problem}", file=sys.stderr, flush=True)


def _say_what_runs(app) -> None:
    """The owner's decisions at start, said once: sandbox tools and bash on or off, and how a
    sandbox is isolated on this machine."""
    if not app.config["ALLOW_SANDBOX"]:
        return
    from ..model.isolation import isolation

    said = "sandbox tools and bash allowed" if app.config["ALLOW_BASH"] else "sandbox tools allowed (no bash)"
    print(f"session-tree: {said} in replays; {isolation().describe()}", flush=True)


def _holding(service, url: str, token: str):
    """While serving: say beside the index that this server holds it, with its token (`session-tree
    sql` then asks it); nothing without an index, or when another server holds it (this one asks
    that one)."""
    from ..corpus.remote import RemoteService

    if service is None or isinstance(service, RemoteService):
        return contextlib.nullcontext()
    from ..corpus.holder import announced

    return announced(service.index.path, url, token)


def export_session(path: Path, leaf: str | None = None, redaction: str | None = None) -> str:
    """What `session-tree export` writes: the file's session as HTML, without serving anything;
    `redaction` is the line a redacted copy's file shows first."""
    from .export import export_html, session_title

    from ..core.verdicts import verdicts

    session = Session.open(path)
    tree = session.tree
    leaf = tree.find(leaf).id if leaf else None
    return export_html(create_app(path.parent), tree, session_title(tree, path.name), leaf, redaction,
                       given=verdicts(session))
