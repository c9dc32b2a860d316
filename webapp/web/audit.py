""""Lost in compaction": the audit of a summary in the side panel, and live in the compaction preview.

The audit itself is webapp.core.audit; this module caches it per file version, says which drawn
nodes hold missing facts (the graph overlay), and answers the preview's compute-only POST.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for

from ..core.audit import CATEGORIES, CATEGORY_TITLES, Audit, Fact, audit_entry, audit_plan, summaries_on_path
from ..core.command_weight import KIND_TITLES, KINDS, WEIGHTS, command_kind
from ..core.entries import BRANCH_SUMMARY, COMPACTION, Entry
from ..core.session import Session
from ..core.tree import SessionTree
from .graph import GraphLayout
from .current import store
from .guard import computes_only
from .views import compaction_plan, tool_call_for

bp = Blueprint("audit", __name__)

SUMMARY_TYPES = (COMPACTION, BRANCH_SUMMARY)


@dataclass
class CommandGroup:
    kind: str
    title: str
    weight: float
    facts: list[Fact]


@dataclass
class CategoryRow:
    name: str
    title: str
    score: int | None
    covered: list[Fact]
    missing: list[Fact]
    groups: list[CommandGroup] = field(default_factory=list)  # lost commands by kind, key ones first


def command_groups(missing: list[Fact]) -> list[CommandGroup]:
    """Lost commands apart by kind: those the work depended on, others, routine ones."""
    kinds = {id(f): command_kind(f.text, f.details) for f in missing}
    return [CommandGroup(k, KIND_TITLES[k], WEIGHTS[k], [f for f in missing if kinds[id(f)] == k])
            for k in KINDS if any(kinds[id(f)] == k for f in missing)]


@dataclass
class AuditView:
    audit: Audit
    rows: list[CategoryRow]  # the categories that hold facts, in CATEGORIES order
    overlay: dict | None  # drawn node dom ids: the summary, its span, those holding missing facts


def audit_rows(audit: Audit) -> list[CategoryRow]:
    return [
        CategoryRow(c, CATEGORY_TITLES[c], audit.score(c), audit.covered(c), audit.missing(c),
                    command_groups(audit.missing(c)) if c == "commands" else [])
        for c in CATEGORIES
        if audit.of(c)
    ]


def cached_audit(rel: str, session: Session, entry_id: str) -> Audit:
    """The audit of a summary entry, computed once per version of the file."""
    return store().cached("audit", rel, session, lambda: audit_entry(session.tree, entry_id), entry=entry_id)


def audit_view(audit: Audit, layout: GraphLayout | None) -> AuditView:
    overlay = None
    if layout is not None:
        overlay = {
            "summary": layout.dom_for(audit.summary_id) if audit.summary_id else None,
            "span": sorted({layout.dom_for(i) for i in audit.span}),
            "missing": sorted({layout.dom_for(i) for i in audit.missing_entry_ids()}),
            # where the graph goes when the tab opens: the start of what was summarized
            "focus": layout.dom_for(audit.span[0]) if audit.span else None,
        }
    return AuditView(audit, audit_rows(audit), overlay)


def audit_tab(rel: str, session: Session, node: str | None, layout: GraphLayout) -> dict:
    """What the "Lost" tab shows: the audit of the selected summary, and every summary of the
    active path with its score to pick from."""
    tree: SessionTree = session.tree
    entry = tree.by_id[node] if node else None
    on_path: list[tuple[Entry, int | None]] = [
        (e, cached_audit(rel, session, e.id).score()) for e in summaries_on_path(tree, tree.active_leaf)
    ]
    ctx: dict = {"entry": entry, "path_summaries": on_path}
    if entry is not None and is_summary(entry):
        ctx["av"] = audit_view(cached_audit(rel, session, entry.id), layout)
    return ctx


def is_summary(entry: Entry) -> bool:
    return entry.type in SUMMARY_TYPES


@bp.post("/s/<path:rel>/-/audit/preview")
@computes_only
def preview(rel: str):
    """The audit of the summary being edited in the compaction preview. Computes, writes nothing."""
    session = store().session(rel)
    tree = session.tree
    leaf = request.form.get("leaf") or tree.conversation_leaf(tree.active_leaf)
    if leaf is not None and leaf not in tree.by_id:
        abort(404, description=f"no entry {leaf!r} in this session")
    first_kept = request.form.get("first_kept") or None
    try:
        plan = compaction_plan(tree, leaf, request.form.get("keep_recent_tokens", ""), first_kept=first_kept)
    except ValueError as exc:
        abort(400, description=str(exc))
    if not plan.can_compact:
        abort(409, description=plan.reason)
    av = audit_view(audit_plan(plan, request.form.get("summary", "")), None)
    return render_template("partials/_audit_facts.html", rel=rel, av=av, live=True)


@bp.get("/s/<path:rel>/-/audit/entry")
def entry(rel: str):
    """An entry opened from a lost fact, shown in the Lost tab beside the fact (the audit stays)."""
    session = current_app.extensions["session_store"].session(rel)
    found = session.entry(request.args.get("id", ""))
    if request.headers.get("HX-Request") != "true":
        return redirect(url_for("sessions.session_page", rel=rel, node=found.id))
    return render_template("partials/_audit_entry.html", rel=rel, entry=found,
                           tool_call=tool_call_for(session.tree, found))


@bp.app_template_global()
def audit_band(score: int | None) -> str:
    """The colour class of a score: most facts carried, some, or few."""
    if score is None:
        return "band-none"
    return "band-good" if score >= 80 else "band-fair" if score >= 50 else "band-poor"
