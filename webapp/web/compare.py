"""Routes of the branch comparison: the page, every leaf at once, one turn in full, a branch
summary, the export.

The comparison is computed in `webapp.core.compare` and the per-leaf figures in
`webapp.core.leaf_figures`; this module reads the picks from the URL (the branches, their order,
the baseline, the alignment, the folded columns: a reload keeps them all), renders, and guards
the one POST. Nothing here writes to a session file.
"""

from __future__ import annotations

import re
from pathlib import Path

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for
from markupsafe import Markup

from ..core.branch_names import branch_names
from ..core.compaction import plan_branch_summary
from ..core.compare import ALIGNMENTS, FIGURE_ROWS, LEADING_TYPES, compare, is_user
from ..core.errors import InvalidWrite, SessionError, UnknownEntry
from ..core.leaf_figures import SORT_KEYS, sort_leaves
from ..core.tokens import format_tokens, sent_text
from ..core.verdicts import file_verdicts, persons, sort_by_verdict, verdicts
from ..core.tree import SessionTree
from ..model.errors import ModelError
from ..model.judge import judge
from ..model.summarize import summarize_branch
from . import render, share
from .filters import cost
from .guard import computes_only, keeps_app_data
from .leaves import cached_leaf_figures
from .current import is_fragment, store
from .owner import chosen_config
from .views import tool_call_for

bp = Blueprint("compare", __name__)

_DIFF_TAGS = {"insert": "ins", "delete": "del"}
ALL_LEAVES_SHOWN = 500  # rows of "compare every leaf" before a "show all" link
TOO_FEW = "too-few"
# Branches one comparison shows: a column each, every turn aligned across them (2,000 leaves
# asked for made a page of 152 MB); more than this is not read side by side anyway.
MAX_COMPARED = 12
VERDICT_SORT = "verdict"  # "compare every leaf" sorts by a person's verdict too


def _split(values: list[str]) -> list[str]:
    return list(dict.fromkeys(i.strip() for v in values for i in v.split(",") if i.strip()))


def requested_ids() -> list[str]:
    """The branch tips asked for, in column order: `ids=A,B,C` (the deep link) and/or repeated
    `id=` (the branch form)."""
    raw = _split(request.values.getlist("ids")) + [i.strip() for i in request.values.getlist("id")]
    return list(dict.fromkeys(i for i in raw if i))


class Picks:
    """What the URL says about a comparison: branches in column order, the baseline, the
    alignment and the folded columns. `url(**changes)` is the same comparison with some changed."""

    def __init__(self, rel: str, ids: list[str]):
        self.rel = rel
        self.ids = ids
        base = request.args.get("base", "")
        self.base = base if base in ids else ids[0] if ids else ""
        align = request.args.get("align", "content")
        self.align = align if align in ALIGNMENTS else "content"
        self.folded = [i for i in _split(request.args.getlist("fold")) if i in ids]

    @property
    def baseline(self) -> int:
        return self.ids.index(self.base) if self.base in self.ids else 0

    def params(self, ids=None, base=None, align=None, folded=None) -> dict:
        ids = self.ids if ids is None else ids
        base = self.base if base is None else base
        folded = self.folded if folded is None else folded
        align = align or self.align
        out = {"ids": ",".join(ids)} if not any("," in i for i in ids) else {"id": ids}
        if base and base != ids[0]:
            out["base"] = base
        if align != "content":
            out["align"] = align
        if folded:
            out["fold"] = ",".join(folded)
        return out

    def url(self, endpoint: str = "compare.compare_page", **changes) -> str:
        return url_for(endpoint, rel=self.rel, **self.params(**changes))

    def moved(self, tip: str, step: int) -> str:
        ids = list(self.ids)
        i = ids.index(tip)
        j = max(0, min(len(ids) - 1, i + step))
        ids[i], ids[j] = ids[j], ids[i]
        return self.url(ids=ids)

    def fold(self, tip: str) -> str:
        return self.url(folded=[*self.folded, tip])

    def unfold(self, tip: str) -> str:
        return self.url(folded=[i for i in self.folded if i != tip])


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


def figure_text(kind: str, value) -> str:
    """One figure of FIGURE_ROWS as short text (lists give their length; the page lists them)."""
    if kind == "count":
        return str(value)
    if kind == "cost":
        return cost(value)
    if kind == "tokens":
        return format_tokens(value)
    if kind == "delta":
        return ("+" if value >= 0 else "−") + format_tokens(abs(value))
    if kind == "sent":  # as the Ask page says it
        return sent_text(value) if value else "–"
    if kind == "seconds":
        return duration(value)
    if kind == "calls":
        return str(sum(value.values()))
    if kind == "names":
        return ", ".join(value) or "–"
    return str(len(value)) if value else "–"


def person_words(rel: str) -> dict[str, str]:
    """Leaf id -> a person's verdict word on it: what tells apart branches alike in all else."""
    return {t: v.verdict for t, v in persons(verdicts(store().session(rel))).items()}


def _too_few(rel: str, ids: list[str]):
    """Fewer than two branches: back to the session page, which says so where the picks are."""
    return redirect(url_for("sessions.session_page", rel=rel, tab="branches", pick=",".join(ids), compare=TOO_FEW))


def _context(rel: str, ids: list[str], export: bool = False, tree: SessionTree | None = None) -> dict:
    # (a shared copy's tree, given, holds its verdicts among its entries: `rel` names no stored session then)
    words = person_words(rel) if tree is None else {t: v.verdict for t, v in persons(file_verdicts(tree)).items()}
    tree = tree or store().session(rel).tree
    left_out = max(0, len(ids) - MAX_COMPARED)
    ids = ids[:MAX_COMPARED]
    picks = Picks(rel, ids)
    if export:
        picks.folded = []  # a file has no way to unfold a column: it shows them all
    try:
        cmp = compare(tree, ids, baseline=picks.baseline, alignment=picks.align)
    except UnknownEntry as exc:
        abort(404, description=str(exc))
    return {
        "rel": rel,
        "tree": tree,
        "ids": ids,
        "picks": picks,
        "id_params": picks.params(),
        "cmp": cmp,
        "titles": list(branch_names(tree, [b.tip for b in cmp.branches], words).values()),
        "figure_rows": FIGURE_ROWS,
        "figure_text": figure_text,
        "export": export,
        "left_out": left_out,
        "max_compared": MAX_COMPARED,
        "summaries": {},  # tip -> a summary made on request (see branch_summary)
        "diff_html": diff_html,
        "tool_call": lambda e: tool_call_for(tree, e),
    }


@bp.get("/s/<path:rel>/compare")
def compare_page(rel: str):
    ids = requested_ids()
    store().session(rel)  # 404 for a session that is not there, before anything else
    if len(ids) < 2:
        return _too_few(rel, ids)
    if request.args.getlist("id"):  # the branch form: the canonical link
        return redirect(Picks(rel, ids).url())
    return render_template("compare.html", **_context(rel, ids))


@bp.post("/s/<path:rel>/-/judge")
@keeps_app_data
def judge_branches(rel: str):
    """A model judges the compared branches (pairwise, blind, both orders); its verdicts are
    recorded beside a person's, and the comparison shows them. A judge that fails (an answer
    not in the format, twice; a server error) writes nothing, and the comparison says why, with
    the model's own words, where the form was."""
    session = store().session(rel)
    tips = [t for t in request.form.get("ids", "").split(",") if t]
    config = chosen_config(request.form.get("model"))  # (403 for a model the server does not offer)
    model = config.model or ""
    try:
        judge(session, config, tips, request.form.get("rubric", ""))
    except UnknownEntry as exc:
        abort(404, description=str(exc))
    except (ModelError, SessionError) as exc:
        if len(tips) < 2:
            abort(400, description=str(exc))
        failure = {"message": str(exc) if "no verdict was written" in str(exc) else f"{exc} No verdict was written.",
                   "model": model, "rubric": request.form.get("rubric", "")}
        return render_template("compare.html", **_context(rel, tips), judge_failure=failure)
    return redirect(_back(tips[0] if tips else ""), code=303)


def _back(target: str) -> str:
    """Where the form came from (a path of this app), else the comparison of the judged branches."""
    back = request.form.get("next", "")
    if back.startswith("/") and not back.startswith("//") and "\\" not in back:
        return back
    return url_for("sessions.session_page", rel=request.view_args["rel"], node=target)


@bp.get("/s/<path:rel>/compare/all")
def all_leaves(rel: str):
    """Every branch of the session with its figures, sortable: a researcher's starting point."""
    session = store().session(rel)
    key = request.args.get("sort", "cost")
    key = key if key in SORT_KEYS or key == VERDICT_SORT else "cost"
    descending = request.args.get("order", "desc") != "asc"
    rows = cached_leaf_figures(rel, session)
    if key == VERDICT_SORT:
        rows = sort_by_verdict(rows, persons(verdicts(session)), descending)
    else:
        rows = sort_leaves(rows, key, descending)
    shown = len(rows) if request.args.get("all") else min(len(rows), ALL_LEAVES_SHOWN)
    names = branch_names(session.tree, [r.leaf.id for r in rows], person_words(rel), 90)
    return render_template(
        "compare_all.html", rel=rel, tree=session.tree, rows=rows[:shown], total=len(rows),
        sort=key, descending=descending, duration=duration, names=names,
    )


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
    opening = next((i for i in range(at, len(path)) if path[i].type not in LEADING_TYPES), at)  # after a model change
    end = next((i for i in range(opening + 1, len(path)) if is_user(path[i])), len(path))
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
    ids = requested_ids()
    if len(ids) < 2:
        return _too_few(rel, ids)
    ctx = _context(rel, ids)
    cmp, tip = ctx["cmp"], request.form.get("tip", "")
    if tip not in ids:
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


def export_html(rel: str, ids: list[str], redaction: str | None = None, tree: SessionTree | None = None) -> tuple[str, str]:
    """The comparison as one HTML file that opens anywhere (styles inline, no script, nothing to
    fetch, every turn in full, a summary for every branch) and its file name; `redaction` says
    at its top what was redacted (the session read is the redacted copy then: `tree`, or the
    session at `rel`)."""
    ctx = _context(rel, ids, export=True, tree=tree)
    tree, cmp = ctx["tree"], ctx["cmp"]
    ctx["summaries"] = {
        b.tip: branch_summary(tree, cmp.ancestor, b.tip) for b in cmp.branches if b.summary is None
    }
    html = render_template("compare_export.html", css=_inline_css(), redaction=redaction, **ctx)
    session_id = re.sub(r"[^A-Za-z0-9-]", "", str((tree.header or {}).get("id") or ""))[:13] or "session"
    return html, f"comparison-{session_id}-{len(cmp.branches)}-branches.html"


@bp.get("/s/<path:rel>/compare/export")
def export(rel: str):
    """The comparison as one HTML file, downloaded after the review (asked without it, the
    review comes first); with `redact=1`, from the session's redacted copy."""
    ids = requested_ids()
    tree = store().session(rel).tree
    if len(ids) < 2:
        return _too_few(rel, ids)
    for i in ids[:MAX_COMPARED]:
        tree.entry(i)  # (an unknown branch is a 404 here, not after the review)
    first = share.unreviewed("share.compare_review", rel)
    if first is not None:
        return first
    choice = share.choice_from_args()
    if choice is None:
        html, name = export_html(rel, ids)
    else:
        with share.shared_view(rel, choice) as shared:
            html, name = export_html(shared.rel, [shared.replace.text(i) for i in ids], shared.note, shared.tree)
    response = current_app.response_class(html, mimetype="text/html")
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@bp.app_template_global()
def compare_picks() -> dict:
    """The picks a session page was sent back with (fewer than two branches to compare): they
    stay ticked, in the tray too, and a message says why nothing was compared."""
    picks = _split(request.args.getlist("pick"))
    return {"ids": picks, "too_few": request.args.get("compare") == TOO_FEW}
