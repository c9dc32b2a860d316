"""The compaction lab over the corpus, from the corpus page: the compactions a query of the index
selects (the 20 lowest audit scores, say), each worked on as the lab works on one, within one
budget and a limit of calls at once, in the server's background (a corpus run outlives the page
that started it); its page follows it and shows each target's table, and its results are the
corpus tables `lab_candidates` and `lab_tests` once it ends.

A query names the sessions by their files: only files of the sessions this server serves are
opened (a query could name any path on the machine).
"""

from __future__ import annotations

import threading
from pathlib import Path

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for

from ..core.errors import InvalidWrite, SessionError
from ..core.lab import AUDITED
from ..core.lab_keep import report
from ..core.lab_store import RunFile, new_run_name
from ..core.session import Session
from ..core.storage import fs_name
from ..model.cancel import Cancel
from ..model.errors import ModelError
from ..model.lab import Lab
from ..model.lab_prompts import prompt_names
from .guard import keeps_app_data
from .lab import settings_of_form
from .owner import model_config

bp = Blueprint("lab_corpus", __name__)

MAX_TARGETS = 200


def _runs() -> dict[str, tuple[threading.Thread, Cancel]]:
    return current_app.extensions.setdefault("corpus_lab_runs", {})


def _targets(service, query: str) -> list[tuple[str, str]]:
    """(file, entry id) of the rows `query` gives, of the sessions this server serves."""
    from ..corpus import sql

    store = current_app.extensions["session_store"]
    try:
        result = sql.run_query(service.index.cursor(), query, MAX_TARGETS, sql.SECONDS)
    except sql.QueryError as exc:
        raise InvalidWrite(str(exc)) from None
    columns = [c.lower() for c in result.columns]
    if "file" not in columns or "entry_id" not in columns:
        raise InvalidWrite("the query's rows must have `file` and `entry_id` columns (the compaction's file and id)")
    f, e = columns.index("file"), columns.index("entry_id")
    out = []
    for row in result.rows:
        file, at = row[f], row[e]
        if not isinstance(file, str) or not isinstance(at, str):
            continue
        if not Path(fs_name(file)).resolve().is_relative_to(Path(store.root).resolve()):
            raise InvalidWrite(f"{file} is not a session this server serves")
        out.append((file, at))
    if not out:
        raise InvalidWrite("the query selected no compaction: nothing to run")
    return list(dict.fromkeys(out))


def _opened(targets: list[tuple[str, str]], failed: list[str]):
    held: dict[str, Session] = {}
    for file, at in targets:
        if file not in held:
            held.clear()
            try:
                held[file] = Session.open(Path(fs_name(file)))
            except (SessionError, OSError) as exc:
                failed.append(f"{file}: {exc}")
                continue
        yield held[file], file, at


@bp.post("/corpus/lab")
@keeps_app_data
def start():
    """Start a lab over the compactions the query selects; its page follows it."""
    from ..corpus.lab_tables import DEFAULT_QUERY
    from .corpus import corpus

    service = corpus()
    if service is None:
        abort(409, description=f"No corpus index: {current_app.extensions.get('corpus_error')}")
    settings = settings_of_form()
    query = (request.form.get("query") or DEFAULT_QUERY).strip()
    try:
        unknown = [p for p in settings.prompts if p not in prompt_names()]
        if unknown:
            raise InvalidWrite(f"no summary prompt named {unknown[0]!r}")
        if not settings.models or not settings.prompts:
            raise InvalidWrite("choose at least one model and one summary prompt")
        service.fresh()
        targets = _targets(service, query)
        name = new_run_name()
        run = RunFile.create(name, {"settings": settings.as_dict(), "targets": [list(t) for t in targets],
                                    "query": query, "by": "corpus page"})
        cancel = Cancel()
        lab = Lab(run, settings, model_config(), cancel=cancel)
    except (InvalidWrite, ModelError) as exc:
        abort(400, description=str(exc))
    failed: list[str] = []
    index = service.index

    def work() -> None:
        try:
            lab.run(_opened(targets, failed))
        finally:
            index.refresh_lab()  # (its rows in the tables at once, not at the next build)

    thread = threading.Thread(target=work, name=f"lab-{name}", daemon=True)
    _runs()[name] = (thread, cancel)
    thread.start()
    return redirect(url_for("lab_corpus.page", run=name), code=303)


@bp.get("/corpus/lab/<run>")
def page(run: str):
    try:
        state = RunFile.open(run).state()
    except InvalidWrite as exc:
        abort(404, description=str(exc))
    thread = _runs().get(run, (None, None))[0]
    running = thread is not None and thread.is_alive()
    store = current_app.extensions["session_store"]
    root = Path(store.root).resolve()

    def link(file: str, at: str) -> str | None:
        path = Path(fs_name(file)).resolve()
        if not path.is_relative_to(root):
            return None
        return url_for("lab.lab_page", rel=store.rel(path), at=at, run=run)

    return render_template("corpus_lab.html", report=report(state), running=running, run=run, audited=AUDITED,
                           total=len(state.head.get("targets") or []), link=link)


@bp.post("/corpus/lab/<run>/cancel")
@keeps_app_data
def cancel(run: str):
    """Stop a corpus run: what it found is kept; `session-tree lab --run NAME --resume` goes on."""
    _, stop = _runs().get(run, (None, None))
    if stop is None:
        abort(404, description="no such lab running in this server")
    stop.set()
    return redirect(url_for("lab_corpus.page", run=run), code=303)
