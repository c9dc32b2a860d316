"""The corpus routes: the index build's progress, and what the index page reads from the index.
The work is in `webapp.corpus`; these stay thin.

Every module of `webapp.corpus` that reads the index imports DuckDB (and the Parquet tables
pyarrow and numpy): 60 MB and half a second a server would pay at start, before any page asks
for them. So they are imported where a route first needs them, not here."""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from flask import Blueprint, abort, current_app, render_template, request, url_for

from .. import bundled
from ..core.agents import places
from ..core.outcome import STATUSES
from ..core.storage import fs_name, url_name
from .filters import CELL_CHARS
from .guard import computes_only
from ..corpus.text import text_path
from .auth import token_only

if TYPE_CHECKING:
    from ..corpus.listing import Listing
    from ..corpus.search import Filters
    from ..corpus.service import CorpusService

bp = Blueprint("corpus", __name__)


_opening = threading.Lock()


def open_corpus(app) -> CorpusService | None:
    """The server's index, opened on first use (`serve` opens it at start) with its first build
    started; None without one (the database is held by another process, the cache folder cannot
    be written): the index page then reads the files, and says why."""
    from ..corpus.db import Index, IndexUnavailable
    from ..corpus.service import CorpusService
    from ..corpus.sql import default_db_path

    with _opening:
        if "corpus" in app.extensions:
            return app.extensions["corpus"]
        path = app.config.get("CORPUS_DB") or default_db_path()
        try:
            index = Index(Path(path))
        except IndexUnavailable as exc:  # another server holds it: that server's answers, else the files
            from ..corpus.holder import UntrustedHolder, holder_of
            from ..corpus.remote import RemoteService

            said = str(exc).splitlines()[0]
            try:
                holder = holder_of(exc.path, exc.pid) if exc.pid is not None else None
            except UntrustedHolder as untrusted:
                holder, said = None, str(untrusted)
            if holder is not None:
                service = app.extensions["corpus"] = RemoteService(holder, exc.path)
                return service
            app.extensions["corpus"] = None
            app.extensions["corpus_error"] = said
            return None
        except Exception as exc:  # a PermissionError, ...: the app works without it
            app.extensions["corpus"] = None
            said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            app.extensions["corpus_error"] = said if isinstance(exc, IndexUnavailable) else f"{path}: {said}"
            return None
        store = app.extensions["session_store"]
        service = app.extensions["corpus"] = CorpusService(index, store.root, store.files)
        store.related = lambda rel, path: conversation_files(service, store, path)
        service.start()
        return service


def conversation_files(service, store, path: Path) -> list[str] | None:
    """The files of the conversation of the file at `path` as the index holds them (store names),
    or None when the index has not read it yet (a session page then looks beside it)."""
    cur = service.index.cursor()
    found = cur.execute("SELECT coalesce(conversation, file) FROM sessions WHERE file = ?",
                        [url_name(str(path))]).fetchone()
    if found is None:
        return None
    files = cur.execute("SELECT file FROM sessions WHERE coalesce(conversation, file) = ? ORDER BY file",
                        [found[0]]).fetchall()
    return [_rel(store, f) for f, in files]


def parquet_tables(app):
    """The Parquet tables `serve --corpus DIR` names (read once, into memory), else None."""
    folder = app.config.get("CORPUS_PARQUET") or os.environ.get("SESSION_TREE_CORPUS")
    if not folder:
        return None
    from ..corpus.parquet import parquet_connection

    with _opening:
        if "corpus_parquet" not in app.extensions:
            app.extensions["corpus_parquet"] = parquet_connection(Path(folder))
        return app.extensions["corpus_parquet"]


def corpus() -> CorpusService | None:
    return open_corpus(current_app._get_current_object())


def listing(store, query: str, page: int) -> tuple[Listing, object] | None:
    """The index page's rows from the index (rel paths), and the build's progress; None without an index."""
    from ..corpus.listing import list_sessions

    service = corpus()
    if service is None:
        return None
    progress = service.fresh()
    got = list_sessions(service.index.cursor(), text_path(service.index.path), store.root, query, page)
    got.rows = [(_rel(store, f), s, e, [replace(m, rel=_rel(store, m.rel), parent=m.parent and _rel(store, m.parent))
                                        for m in members], missing) for f, s, e, members, missing in got.rows]
    return got, progress


def skipped_note(store) -> str | None:
    """What the index page says of the folders under the root that the listing did not search
    (deeper than their agents keep sessions), if any: those of the walk `store.list` just made,
    or, with an index, of a walk made again only after each build (the index's own walk finds the
    files)."""
    service = corpus()
    skipped = store.skipped if service is None else service.memo("skipped", store.skipped_folders)
    return places.skipped_note(skipped) if skipped else None


def _rel(store, file: str) -> str:
    """A row's file as `store.rel` names it: the index holds the file found under the (resolved)
    root, so its name is the part after the root's (no resolve of each file per page)."""
    prefix = url_name(str(store.root)).rstrip("/") + "/"
    return file[len(prefix):] if file.startswith(prefix) else store.rel(Path(fs_name(file)))


def _date(name: str) -> date | None:
    text = request.args.get(name, "").strip()
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        abort(400, description=f"{name} must be a date (YYYY-MM-DD), not {text[:40]!r}")


def filters() -> Filters:
    """The search filters a request names."""
    from ..corpus.search import Filters

    a = request.args
    output = a.get("output", "")
    return Filters(agent=a.get("agent", ""), project=a.get("project", "").strip(), model=a.get("model", ""),
                   role=a.get("role", ""), since=_date("since"), until=_date("until"),
                   tool_output=output if output in ("only", "none") else "")


def hits(store, query: str, offset: int) -> dict | None:
    """The index page's search: ranked hits across every session (rel paths), and what the
    filters offer; None without an index."""
    from ..corpus.figures import texts_to_come
    from ..corpus.search import HITS, choices, search

    service = corpus()
    if service is None:
        return None
    cur = service.index.cursor()
    wanted = filters()
    found = search(text_path(service.index.path), cur, query, wanted, offset=offset,
                   prefix=str(store.root).rstrip("/") + "/") if query else None
    if found:
        for h in found.hits:
            h.file = _rel(store, h.file)
            h.also_in = [_rel(store, f) for f in h.also_in]
    more_args = {**request.args.to_dict(), "offset": offset + HITS}
    return {"results": found, "filters": wanted, "choices": service.memo("choices", lambda: choices(cur)), "offset": offset,
            "more_args": more_args, "texts_to_come": texts_to_come(cur, str(store.root).rstrip("/") + "/")}


@bp.route("/corpus", methods=["GET", "POST"])
@computes_only
def corpus_page():
    """Figures across every session, with charts; the sessions behind a bar (`by`, `value`);
    the SQL box (`sql`), run only when the form is posted: a GET from another site's page
    (`<img src=/corpus?sql=...>`) must not make the server run a query. A GET's `sql` is only
    put in the box, to run with a click."""
    from ..corpus import sql
    from ..corpus.figures import corpus_figures, sessions_behind
    from ..corpus.page import charts

    store = current_app.extensions["session_store"]
    tables = parquet_tables(current_app._get_current_object())
    if tables is not None:  # `serve --corpus DIR`: the Parquet dataset as it is
        cur, progress, prefix = tables.cursor(), None, ""
    else:
        service = corpus()
        if service is None:
            abort(409, description=f"No corpus index: {current_app.extensions.get('corpus_error')}")
        progress = service.fresh()
        prefix = str(store.root).rstrip("/") + "/"
        cur = service.index.cursor()
    prices = current_app.config.get("PRICE_TABLE")  # (a test's fixed table; else litellm's)
    fig = corpus_figures(cur, prefix, prices)

    def link(by: str, value: str) -> str:
        return url_for("corpus.corpus_page", by=by, value=value) + "#behind"

    def session_link(file: str, **args) -> str | None:
        path = Path(fs_name(file))
        if not path.is_relative_to(store.root):
            return None  # a session of the dataset this server does not serve
        return url_for("sessions.session_page", rel=store.rel(path), **args)

    by, value = request.args.get("by", ""), request.args.get("value", "")
    behind = None
    if by:
        try:
            behind = [(session_link(f), title, cost, n)
                      for f, title, cost, n in sessions_behind(cur, by, value, prefix, prices=prices)]
        except ValueError as exc:
            abort(400, description=str(exc))
    posted = request.method == "POST"
    query = (request.form if posted else request.args).get("sql", "").strip()
    result = error = None
    if query and posted:
        try:
            result = (sql.run_query(cur, query, sql.ROW_CAP, sql.SECONDS, sql.PAGE_BYTE_CAP, CELL_CHARS)
                      if tables is not None else service.query(query, sql.ROW_CAP, sql.SECONDS, sql.PAGE_BYTE_CAP, CELL_CHARS))
        except sql.QueryError as exc:
            error = str(exc)
    return render_template("corpus.html", fig=fig, charts=charts(fig, link, session_link), progress=progress,
                           lab=lab_box(cur),
                           by=by, value=value, behind=behind, sql=query, result=result, sql_error=error,
                           root=store.root, row_cap=sql.ROW_CAP, seconds=sql.SECONDS, statuses=STATUSES,
                           page_mb=sql.PAGE_BYTE_CAP // 1024 // 1024, unrun=bool(query) and not posted)


def lab_box(cur) -> dict:
    """What the corpus page's lab section shows: its chart, the latest runs, the form's choices."""
    from ..corpus.lab_tables import DEFAULT_QUERY, lab_figures, recent_runs
    from ..corpus.page import lab_chart
    from ..model.lab_prompts import BUILT_IN, prompt_names
    from .owner import model_config, offered_models

    rows = lab_figures(cur)
    chart = lab_chart(rows, lambda query: url_for("corpus.corpus_page", sql=query) + "#sql-result") if rows else None
    return {"chart": chart, "runs": recent_runs(cur), "query": DEFAULT_QUERY, "offered": offered_models(),
            "configured": model_config().model, "prompts": prompt_names(), "built_in": BUILT_IN}


def _refused_cli():
    """(the server's index, None) for a command (which showed the token `serve` wrote beside the
    index: `auth.token_only`); else (None, the answer that refuses it)."""
    service = corpus()
    if service is None:
        return None, ({"error": f"No corpus index: {current_app.extensions.get('corpus_error')}"}, 409)
    return service, None


@bp.get("/-/corpus/sql")
@token_only
def sql_for_cli():
    """`session-tree sql` asking the server that holds the index: its output as the command
    prints it, with the command's row cap and time limit."""
    from ..corpus.sql import QueryError, format_result, run_query

    service, refused = _refused_cli()
    if refused:
        return refused
    a = request.args
    how = a.get("how", "text")
    try:
        limit, seconds = int(a.get("limit", "")), float(a.get("seconds", ""))
        if how not in ("json", "csv", "text") or limit < 1:
            raise ValueError
    except ValueError:
        return {"error": "how (json, csv or text), limit (a whole number) and seconds are asked for"}, 400
    try:
        result = run_query(service.index.cursor(), a.get("sql", ""), limit, seconds)
    except QueryError as exc:
        return {"error": str(exc)}, 400
    return {"output": format_result(result, how), "truncated": result.truncated, "over_bytes": result.over_bytes}


def _outside(roots: list[Path]):
    """The answer to a command about folders that are not all under this server's root, else None."""
    served = current_app.extensions["session_store"].root
    for root in roots:
        if not root.is_absolute() or not root.is_relative_to(served):
            return {"error": f"the server that holds the index (PID {os.getpid()}) indexes {served}, and {root} is "
                             f"not in it: give this command an index of its own with --db PATH"}, 409
    return None


def _refreshed(service):
    """Wait for a refresh that starts now; the answer to a command when it failed, else None."""
    service.refreshed()
    if service.error:
        return {"error": f"the server's index could not be brought up to date ({service.error})"}, 500
    return None


@bp.get("/-/corpus/ls")
@token_only
def ls_for_cli():
    """`session-tree ls --index` asking the server that holds the index: the rows of every
    session under `root` (a folder under this server's), read once a refresh that started
    after the question has ended."""
    from ..corpus.listing import list_sessions

    service, refused = _refused_cli()
    root = Path(request.args.get("root", ""))
    refused = refused or _outside([root]) or _refreshed(service)
    if refused:
        return refused
    got = list_sessions(service.index.cursor(), text_path(service.index.path), root, per_page=10**9)
    # (orjson: the keys in the order `ls` prints them, which Flask's JSON would sort)
    return current_app.response_class(orjson.dumps({"rows": got.dicts()}), mimetype="application/json")


@bp.get("/-/corpus/search")
@token_only
def search_for_cli():
    """`session-tree search` asking the server that holds the index: the best hits for `q` under
    `root` (a folder under this server's), once a refresh that started after the question ended."""
    from ..corpus.search import search

    service, refused = _refused_cli()
    root = Path(request.args.get("root", ""))
    refused = refused or _outside([root]) or _refreshed(service)
    if refused:
        return refused
    try:
        limit = int(request.args.get("limit", ""))
    except ValueError:
        return {"error": "limit (a whole number) is asked for"}, 400
    got = search(text_path(service.index.path), service.index.cursor(), request.args.get("q", ""), limit=limit,
                 prefix=str(root).rstrip("/") + "/")
    return {"hits": [h.as_dict() for h in got.hits], "matches": got.matches, "more": got.more,
            "problem": got.problem}


@bp.get("/-/corpus/index")
@token_only
def index_for_cli():
    """`session-tree index` asking the server that holds the index: the figures of a refresh
    that started after the question, which covers every `root` (folders under this server's)."""
    from ..corpus.db import built

    service, refused = _refused_cli()
    refused = refused or _outside([Path(r) for r in request.args.getlist("root")]) or _refreshed(service)
    if refused:
        return refused
    return built(service.index, service.progress)


# The docs a page links to, by the name in their URL: only these files are ever read, from the
# docs folder that travels with the code.
DOCS = {"corpus-tables": "corpus-tables.md"}


@bp.get("/docs/<name>")
def doc_page(name: str):
    """A doc of the project (the corpus tables the SQL box queries) as a page of this app: it is
    read from the docs the package carries, rendered as any Markdown the app shows."""
    from .render import render_markdown

    if name not in DOCS:
        abort(404, description=f"no doc {name!r}: there are {', '.join(DOCS)}")
    try:
        text = (bundled.bundled_folder(bundled.DOCS) / DOCS[name]).read_text(encoding="utf-8")
    except OSError as exc:
        abort(404, description=f"{DOCS[name]} is not with this installation ({exc.strerror or exc})")
    title = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("# ")), name)
    return render_template("doc.html", title=title, body=render_markdown(text))


@bp.get("/-/corpus/rows")
@token_only
def rows_for_server():
    """A server reading this server's index (`corpus.remote`) asking for one query's rows: run
    as the SQL box runs one (one SELECT, read only, no table function that reads a file), with
    its parameters (JSON) and a time limit; every row, or the first `limit`, within a byte cap
    (`bytes`), each long value cut to `cell_chars` when asked."""
    from ..corpus.remote import decoded, encoded
    from ..corpus.sql import BYTE_CAP, MAX_SECONDS, QueryError, run_query

    service, refused = _refused_cli()
    if refused:
        return refused
    a = request.args
    try:
        params = [decoded(p) for p in orjson.loads(a.get("params", "[]"))]
        seconds = float(a.get("seconds", ""))
        limit = int(a["limit"]) if "limit" in a else None
        max_bytes = min(int(a.get("bytes", BYTE_CAP)), BYTE_CAP)
        cell_chars = int(a["cell_chars"]) if "cell_chars" in a else None
        if (not 0 < seconds <= MAX_SECONDS or limit is not None and limit < 1 or max_bytes < 1
                or cell_chars is not None and cell_chars < 1):
            raise ValueError
    except (ValueError, TypeError, orjson.JSONDecodeError):
        return {"error": "params (a JSON list), seconds, and limit, bytes and cell_chars (whole numbers) are asked for"}, 400
    try:
        result = run_query(service.index.cursor(), a.get("sql", ""), limit, seconds, max_bytes, cell_chars, params)
    except QueryError as exc:
        return {"error": str(exc)}, 400
    body = {"columns": result.columns, "rows": [encoded(list(r)) for r in result.rows], "truncated": result.truncated,
            "over_bytes": result.over_bytes}
    return current_app.response_class(orjson.dumps(body), mimetype="application/json")


@bp.get("/-/corpus/progress")
def progress():
    service = corpus()
    return render_template("partials/_corpus_progress.html", progress=service.progress if service else None,
                           query=request.args.get("q", ""), then=request.args.get("then", ""))
