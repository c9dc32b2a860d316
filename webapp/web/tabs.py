"""The side panel's tabs, in one table: each tab's name, its title on the tab bar, the function
that builds what its template shows, its template, and the views it keeps between requests with
what their keys depend on, by name. The session page, the panel fragment and the tab bar all read
the table: a new tab is one row and one partial."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flask import abort, current_app, request

from ..core.branch_names import branch_names
from ..core.metadata import metadata_rows
from ..core.session import Session
from ..core.verdicts import persons, verdicts
from . import budget, search, transcript
from .audit import audit_tab, cached_audit, is_summary
from .current import store
from .leaves import cached_leaf_figures
from .views import awaits_reply, compaction_overlay, compaction_plan, context_view, summary_rows, tool_call_for


@dataclass(frozen=True)
class Shown:
    """What a tab is built from: the session, the selected node, and the graph's layout (the
    drawn nodes a tab's overlay marks)."""

    rel: str
    session: Session
    node: str | None
    layout: object

    @property
    def tree(self):
        return self.session.tree


@dataclass(frozen=True)
class Tab:
    name: str
    title: str  # on the tab bar
    partial: str  # the template of its body
    build: Callable[[Shown], dict]  # what that template reads
    # The views it keeps (`SessionStore.cached`) and what each one's key holds besides the
    # session and its file's version, by name.
    keeps: tuple[tuple[str, tuple[str, ...]], ...] = ()
    on_bar: bool = True  # (compact opens from the node panel's button, not from the bar)
    empty: str = ""  # said instead of the partial when no node is selected (an empty conversation)


def _node(s: Shown) -> dict:
    if not s.node:
        return {}
    entry = s.tree.by_id[s.node]
    return {"entry": entry, "tool_call": tool_call_for(s.tree, entry),
            "unanswered": awaits_reply(s.tree, s.node) and current_app.config["MODEL_CONFIG"].configured,
            "audit": cached_audit(s.rel, s.session, s.node) if is_summary(entry) else None}


def _context(s: Shown) -> dict:
    return {"entry": s.tree.by_id[s.node], "cv": context_view(s.tree, s.node, s.layout)} if s.node else {}


def _compact(s: Shown) -> dict:
    try:
        plan = compaction_plan(s.tree, s.node, request.args.get("keep_recent_tokens", ""))
    except ValueError as exc:
        abort(400, description=str(exc))
    return {"plan": plan, "compact_overlay": compaction_overlay(plan, s.layout)}


def _problems(s: Shown) -> dict:
    tree = s.tree
    problems = tree.all_problems()
    shown = problems[: budget.PROBLEMS_PAGE]
    rest = len(problems) - len(shown)
    problem_count, warning_count = tree.problem_counts()
    bad_lines = tree.bad_lines[: budget.BAD_LINES_SHOWN]
    return {"problem_count": problem_count, "warning_count": warning_count, "problems": shown, "rest": rest,
            "next_url": budget.more_url(s.rel, "problems", budget.PROBLEMS_PAGE) if rest else None,
            "bad_lines": bad_lines, "more_bad_lines": len(tree.bad_lines) - len(bad_lines),
            "metadata": metadata_rows(tree.metadata, budget.METADATA_SHOWN)}


def _branches(s: Shown) -> dict:
    """Every branch with its figures, each named by what tells it apart (core/branch_names.py)."""
    rows = cached_leaf_figures(s.rel, s.session)
    words = {t: v.verdict for t, v in persons(verdicts(s.session)).items()}
    return {"branches": rows, "branch_names": branch_names(s.tree, [b.leaf.id for b in rows], words, 80)}


_AUDIT = ("audit", ("entry",))  # a summary's audit: of one entry

TABS: dict[str, Tab] = {t.name: t for t in (
    Tab("node", "Node", "partials/_node.html", _node, keeps=(_AUDIT,)),
    Tab("transcript", "Transcript", "partials/_transcript.html",
        lambda s: transcript.transcript_context(s.tree, s.node, request.args)),
    Tab("search", "Search", "partials/_search.html",
        lambda s: search.search_context(store().resolve(s.rel), s.tree, request.args.get("q", ""))),
    Tab("context", "Context", "partials/_context.html", _context,
        empty="The conversation is empty here: the model would see nothing."),
    Tab("branches", "Branches", "partials/_branches.html", _branches, keeps=(("leaf-figures", ()),)),
    Tab("summaries", "Summaries", "partials/_summaries.html", lambda s: {"summaries": summary_rows(s.tree)}),
    Tab("problems", "Problems", "partials/_problems.html", _problems),
    Tab("audit", "Lost", "partials/_audit.html",
        lambda s: audit_tab(s.rel, s.session, s.node, s.layout), keeps=(_AUDIT,)),
    Tab("compact", "Compact", "partials/_compact.html", _compact, on_bar=False),
)}
BAR = [t for t in TABS.values() if t.on_bar]


def tab_context(shown: Shown, name: str) -> dict:
    """What the panel shows for tab `name` (none for a name that is no tab: the graph alone)."""
    tab = TABS.get(name)
    return {"tab": name, "tab_def": tab, "tab_bar": BAR, **(tab.build(shown) if tab else {})}
