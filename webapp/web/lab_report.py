"""A lab run's report: its results as JSON, or as one self-contained HTML page (its styles held,
no script), redacted on request as `export --redact` redacts a session (the values the scan finds
replaced by tags, the first screen saying how many and of which kinds).

The route serves a run of the data folder to the server's owner (auth.py, as every route); the
CLI writes the same page with `session-tree lab --report FILE.html`.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from flask import Blueprint, Flask, Response, abort, render_template, request

from ..core.errors import InvalidWrite
from ..core.lab import AUDITED
from ..core.lab_keep import report
from ..core.lab_store import RunFile
from ..core.redact import redact_object, summary
from ..core.storage import write_new_file
from ..bundled import STATIC as STATIC_FOLDER
from ..bundled import bundled_folder

bp = Blueprint("lab_report", __name__)


def redacted(got: dict, redact: bool) -> tuple[dict, str | None]:
    if not redact:
        return got, None
    clean, review = redact_object(got)
    return clean, summary(review)


def report_page(got: dict, redaction: str | None) -> str:
    """The report drawn as HTML (inside an app context)."""
    css = (bundled_folder(STATIC_FOLDER) / "lab.css").read_text()
    return render_template("lab_report.html", report=got, css=css, redaction=redaction, audited=AUDITED)


def _state(run: str):
    try:
        return RunFile.open(run).state()
    except InvalidWrite as exc:
        abort(404, description=str(exc))


@bp.get("/lab/<run>/report.json")
def report_json(run: str):
    got, redaction = redacted(report(_state(run)), bool(request.args.get("redact")))
    if redaction:
        got = {**got, "redaction": redaction}
    return Response(orjson.dumps(got, option=orjson.OPT_INDENT_2), mimetype="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{run}.json"'})


@bp.get("/lab/<run>/report.html")
def report_html(run: str):
    got, redaction = redacted(report(_state(run)), bool(request.args.get("redact")))
    name = f"{run}{'-redacted' if redaction else ''}.html"
    return Response(report_page(got, redaction), mimetype="text/html",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


def write_report(got: dict, path: Path, app: Flask, redact: bool = False) -> Path:
    """What `session-tree lab --report` writes: the HTML report, redacted on request (`app`
    holds the templates)."""
    clean, redaction = redacted(got, redact)
    with app.test_request_context():
        page = report_page(clean, redaction)
    write_new_file(path, page.encode(), replace=True)
    return path
