"""Printing a branch: a page with the whole branch (the Transcript tab loads a window of it at a
time) under a title block, and the same title block at the top of a printed export.

The title block says what a reader of paper has no sidebar for: the session's name, the branch,
the models, the dates, the figures.
"""

from __future__ import annotations

from datetime import datetime, timezone

from flask import Blueprint, abort, render_template, request

from ..core.entries import COMPACTION, MESSAGE, MODEL_CHANGE, Entry
from ..core.subagents import starts_under
from ..core.tokens import entry_cost
from ..core.branch_names import branch_name
from ..core.transcript import Options, items_of, path_to_leaf
from ..core.tree import SessionTree
from ..core.verdicts import PERSON, Verdict, chosen_leaf, file_verdicts, for_a_redacted_copy, verdicts
from . import current, share
from .graph import dom_id
from .transcript import item_body
from .views import short

bp = Blueprint("printing", __name__)


def title_block(tree: SessionTree, path: list[Entry], title: str,
                given: dict[str, dict[str, Verdict]] | None = None) -> dict:
    """What the first page says about the branch `path`, with the verdicts `given` on it (a
    person's first, then a judge's)."""
    models: dict[str, None] = {}
    for e in path:
        if e.type == MODEL_CHANGE:
            models[f"{e.get('provider')}/{e.get('modelId')}"] = None
        elif e.type == MESSAGE and e.role == "assistant" and isinstance(e.message.get("model"), str):
            m = e.message
            models[f"{m['provider']}/{m['model']}" if isinstance(m.get("provider"), str) else m["model"]] = None
    times = [e.instant for e in path if e.instant is not None]
    return {
        "title": title,
        "branch": branch_name(tree, path[-1].id, 90) if path else "",
        "tip": path[-1].id if path else "",
        "models": list(models),
        "first": _day(min(times)) if times else "–",
        "last": _day(max(times)) if times else "–",
        "entries": len(path),
        "turns": sum(1 for e in path if e.type == MESSAGE and e.role == "user"),
        "compactions": sum(1 for e in path if e.type == COMPACTION),
        "cost": sum(entry_cost(e) for e in path),
        "verdicts": sorted(((given or {}).get(path[-1].id) or {}).values(), key=lambda v: v.by != PERSON) if path else [],
    }


def _day(instant: float) -> str:
    return datetime.fromtimestamp(instant, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


@bp.get("/s/<path:rel>/print")
def print_branch(rel: str):
    """The whole branch through `node` (or to `leaf`) to print, under its title block, after
    the review (printed paper is shared too); with `redact=1`, from the redacted copy. With no
    branch named, the one a person marked winner, else the active one."""
    session = current.store().session(rel)
    tree = session.tree
    node, leaf = request.args.get("node"), request.args.get("leaf")
    for ref in (node, leaf):
        if ref and ref not in tree.by_id:
            abort(404, description=f"no entry {ref!r} in this session")
    first = share.unreviewed("share.print_review", rel)
    if first is not None:
        return first
    given = verdicts(session)
    choice = share.choice_from_args()
    if choice is None:
        return _print_page(rel, tree, node, leaf, given)
    with share.shared_view(rel, choice) as shared:  # (its links too name the session as shared: a PDF keeps them)
        # (a verdict's note from the data folder is free text the review never read: left out)
        given = {**for_a_redacted_copy(given), **file_verdicts(shared.tree)}
        return _print_page(shared.rel, shared.tree, node and shared.replace.text(node), leaf and shared.replace.text(leaf),
                           given, shared.note)


def _print_page(rel: str, tree: SessionTree, node: str | None, leaf: str | None,
                given: dict[str, dict[str, Verdict]], redaction: str | None = None) -> str:
    """The page of `tree`: the session's, or its redacted copy's with the `redaction` line;
    `given`: the verdicts its title block says."""
    start = node or leaf or chosen_leaf(tree, given)
    if start is None:
        abort(404, description="this session has no entries to print")
    path = path_to_leaf(tree, start, leaf)
    options = Options(filter="all")
    items = items_of(path, options, tree.labels)
    name = tree.name or short(branch_name(tree, path[-1].id, 80), 80) or rel
    return render_template(
        "transcript_print.html", rel=rel, tree=tree, items=items, options=options, item_body=item_body,
        labels=tree.labels, branches_at={}, focus_id=None, dom=dom_id, block=title_block(tree, path, name, given),
        subagents_at={i.entry.id: starts_under(tree, i.entry.id) for i in items}, redaction=redaction,
    )
