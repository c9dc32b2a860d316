"""Routes of the branch comparison: the page, one turn in full, a branch summary, the export.

The comparison itself is computed in `webapp.core.compare`; this module picks the branches from
the query string, renders, and guards the one POST. Nothing here writes to a session file.
"""

from __future__ import annotations

import re
from pathlib import Path

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for
from markupsafe import Markup

from ..core.compaction import plan_branch_summary
from ..core.compare import Branch, Comparison, assistant_text, compare, is_user
from ..core.errors import InvalidWrite, UnknownEntry
from ..core.tree import SessionTree
from ..summarize import summarize_branch
from . import render
from .guard import computes_only
from .sessions import is_fragment, store
from .views import last_user_text, short, tool_call_for

bp = Blueprint("compare", __name__)

_DIFF_TAGS = {"insert": "ins", "delete": "del"}


def requested_ids() -> list[str]:
    """The branch tips asked for: `ids=A,B,C` (the deep link) and/or repeated `id=` (the form)."""
    raw = [p for v in request.values.getlist("ids") for p in v.split(",")] + request.values.getlist("id")
    return list(dict.fromkeys(i.strip() for i in raw if i.strip()))


def id_params(ids: list[str]) -> dict:
    """URL parameters naming `ids`: the short comma form unless an id has a comma itself."""
    return {"id": ids} if any("," in i for i in ids) else {"ids": ",".join(ids)}


def diff_html(ops: list[tuple[str, str]]) -> Markup:
    """A word diff as escaped text with `<ins>`/`<del>` around what changed."""
    return Markup("").join(
        Markup("<{0}>{1}</{0}>").format(_DIFF_TAGS[op], text) if op in _DIFF_TAGS else Markup("{}").format(text)
        for op, text in ops
    )


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = int(round(seconds))
    h, m = divmod(s // 60, 60)
    return f"{h}h {m:02d}m" if h else f"{m}m {s % 60:02d}s" if m else f"{s}s"


def branch_title(tree: SessionTree, branch: Branch) -> str:
    """A branch by a label of its own (after the common ancestor), else by its last instruction."""
    labels = [tree.labels[e.id] for e in branch.own if e.id in tree.labels]
    return labels[-1] if labels else short(last_user_text(branch.path), 70) or "(no user message)"


def _load(rel: str) -> tuple[SessionTree, list[str], Comparison]:
    tree = store().session(rel).tree
    ids = requested_ids()
    if len(ids) < 2:
        abort(400, description="pick at least two nodes to compare")
    try:
        return tree, ids, compare(tree, ids)
    except UnknownEntry as exc:
        abort(404, description=str(exc))


def _context(rel: str, export: bool = False) -> dict:
    tree, ids, cmp = _load(rel)
    return {
        "rel": rel,
        "tree": tree,
        "ids": ids,
        "id_params": id_params(ids),
        "cmp": cmp,
        "titles": [branch_title(tree, b) for b in cmp.branches],
        "export": export,
        "summaries": {},  # tip -> a summary made on request (see branch_summary)
        "diff_html": diff_html,
        "duration": duration,
        "text_of": assistant_text,
        "tool_call": lambda e: tool_call_for(tree, e),
    }


@bp.get("/s/<path:rel>/compare")
def compare_page(rel: str):
    if request.args.getlist("id") and not request.args.get("ids"):  # the branch form: canonical link
        return redirect(url_for("compare.compare_page", rel=rel, **id_params(requested_ids())))
    return render_template("compare.html", **_context(rel))


@bp.get("/s/<path:rel>/compare/turn")
def turn(rel: str):
    """One turn of a branch in full, for the cell that was expanded."""
    tip, start = request.args.get("tip", ""), request.args.get("start", "")
    if not is_fragment():
        return redirect(url_for("sessions.session_page", rel=rel, node=start))
    tree = store().session(rel).tree
    try:
        path = tree.path(tip)
    except UnknownEntry as exc:
        abort(404, description=str(exc))
    at = next((i for i, e in enumerate(path) if e.id == start), None)
    if at is None:
        abort(404, description=f"no entry {start!r} on the branch at {tip!r}")
    end = next((i for i in range(at + 1, len(path)) if is_user(path[i])), len(path))
    return render_template(
        "partials/_compare_turn.html",
        rel=rel, entries=path[at:end], export=False, tool_call=lambda e: tool_call_for(tree, e),
    )


def branch_summary(tree: SessionTree, ancestor: str | None, tip: str) -> dict:
    """A summary of the branch from the common ancestor (or a compaction on the way) to `tip`,
    made without a model (extractive) and never written: {"text", "made_by"} or {"note"}."""
    try:
        text, details = summarize_branch(None, plan_branch_summary(tree, tip, ancestor))
    except InvalidWrite as exc:
        return {"note": str(exc)}
    return {"text": text, "made_by": details.get("summarizer")}


@bp.post("/s/<path:rel>/compare/summarize")
@computes_only
def summarize(rel: str):
    """Summarize one branch and show it in place; the session file is left as it is. Like every
    POST it passes `csrf.protect` first: same origin and this server's token, or 403."""
    ctx = _context(rel)
    cmp, tip = ctx["cmp"], request.form.get("tip", "")
    if tip not in ctx["ids"]:
        abort(404, description=f"{tip!r} is not one of the compared branches")
    summary = branch_summary(ctx["tree"], cmp.ancestor, tip)
    if is_fragment():
        return render_template("partials/_compare_summary.html", summary=summary)
    ctx["summaries"] = {tip: summary}
    return render_template("compare.html", **ctx)


def _inline_css() -> str:
    static = Path(current_app.static_folder)
    return "\n".join(
        [(static / "app.css").read_text(), (static / "compare.css").read_text(), render.pygments_css()]
    )


@bp.get("/s/<path:rel>/compare/export")
def export(rel: str):
    """The comparison as one HTML file that opens anywhere: styles inline, no script, nothing to
    fetch, every turn in full, and a summary for every branch."""
    ctx = _context(rel, export=True)
    tree, cmp = ctx["tree"], ctx["cmp"]
    ctx["summaries"] = {
        b.tip: branch_summary(tree, cmp.ancestor, b.tip) for b in cmp.branches if b.summary is None
    }
    html = render_template("compare_export.html", css=_inline_css(), **ctx)
    session_id = re.sub(r"[^A-Za-z0-9-]", "", str((tree.header or {}).get("id") or ""))[:13] or "session"
    name = f"comparison-{session_id}-{len(cmp.branches)}-branches.html"
    response = current_app.response_class(html, mimetype="text/html")
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
