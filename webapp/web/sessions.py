"""Routes for browsing: the index, the session page and its fragments (htmx partials).

Every fragment URL also works as a plain link: without htmx it answers with the whole session
page showing the same thing, so deep links and no-JavaScript browsing keep working.
"""

from __future__ import annotations

import threading
from urllib.parse import quote, urlencode

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for

from ..core.catalog import fold_listing, group_sessions
from ..core.context import build_context
from ..core.request import build_request
from ..core.session import Session
from ..core.verdicts import chosen_leaf, verdicts, winners
from . import budget, client, corpus, outline, render, search, tabs, transcript
from .graph import (
    LEVELS,
    MAX_EXPAND,
    RANKDIRS,
    DotTimeout,
    build_layout,
    choose_rankdir,
    default_level,
    dom_id,
    drawing_specs,
    patch_drawing,
    render_drawing,
)
from .current import is_fragment, store
from .store import view_key
from .tabs import Shown, tab_context
from .views import context_notes, node_nav

bp = Blueprint("sessions", __name__)

MORE_KINDS = ("problems", "messages", "raw", "line", "context")  # what /-/more/<kind> pages through
TABS = tuple(tabs.TABS)  # (the table of tabs: tabs.py)


# -- index -----------------------------------------------------------------------------------------


@bp.get("/")
def index():
    query = request.args.get("q", "").strip()
    page = _int_arg("page", 1) or 1
    indexed = corpus.listing(store(), query, page)
    if indexed is not None:
        found, progress = indexed
        rows, total, pages = found.rows, found.total, found.pages
        page, conversations = found.page, found.conversations
    else:
        rows, progress, pages, page = store().list(), None, 1, 1
        if query:
            needle = query.lower()
            matched = {r[0] for r in rows if needle in _haystack(r) or search.file_matches(store().resolve(r[0]), query)}
        total = len(rows)
        rows = fold_listing(rows)  # one row per conversation: shown when one of its files matches
        if query:
            rows = [r for r in rows if r[0] in matched or any(m.rel in matched for m in r[3])]
            total = sum(1 + len(r[3]) for r in rows)
        conversations = len(rows)
    template = "partials/_session_list.html" if is_fragment() else "index.html"
    return render_template(template, groups=group_sessions(rows), query=query, total=total, root=store().root,
                           conversations=conversations,
                           progress=progress, page=page, pages=pages, skipped=corpus.skipped_note(store()),
                           search=corpus.hits(store(), query, _int_arg("offset", 0) or 0),
                           corpus_error=current_app.extensions.get("corpus_error"))


def _haystack(row) -> str:
    rel, summary, error = row[:3]
    parts = [rel, error or ""]
    if summary:
        parts += [summary.name or "", summary.first_message or "", summary.cwd or "", summary.id or ""]
    return " ".join(parts).lower()


# -- session page ----------------------------------------------------------------------------------


class GraphOptions:
    """How the graph is folded and laid out: from the query string, carried along by every graph
    request. `collapse` unset (`asked` empty) is the session's default level, which `known` finds
    (the skeleton for a session with branches); `open` (a "more branches" node's or a skeleton
    run's link) adds to `expand`; `known` keeps only entry ids; `dir` is TB or LR, or unset:
    chosen from the drawing's shape (`rankdir`)."""

    def __init__(self, args):
        asked = args.get("collapse", "")
        self.asked = asked if asked in LEVELS else ""
        self.collapse = self.asked or "auto"
        self.direction = args.get("dir", "")
        if self.direction not in RANKDIRS:
            self.direction = ""
        wanted = ",".join((args.get("expand", ""), args.get("open", ""))).split(",")
        self.expand = frozenset(x for x in wanted if x)
        self.default = "auto"  # the session's own level, once `known`

    def known(self, tree) -> None:
        """Only entry ids of this session reach the layout's cache key, and a bounded number."""
        self.expand = frozenset(sorted(x for x in self.expand if x in tree.by_id)[:MAX_EXPAND])
        self.default = default_level(tree)  # (the toolbar offers the way back to it)
        if not self.asked:
            self.collapse = self.default

    def rankdir(self, layout) -> str:
        """The direction the drawing is laid out in: the one asked for, or the one that shows
        the most of this layout at "Fit"."""
        return self.direction or choose_rankdir(layout)

    def params(self) -> dict[str, str]:
        """The folding and the direction as URL parameters: what a link to another view of the
        page carries, so that the drawing stays as it is."""
        params = {"collapse": self.asked} if self.asked else {}
        if self.direction:
            params["dir"] = self.direction
        if self.expand:
            params["expand"] = ",".join(sorted(self.expand))
        return params

    def query(self) -> str:
        return urlencode(self.params())


def _layout(rel: str, session: Session, options: GraphOptions, pinned: frozenset[str] = frozenset()):
    """What the graph draws, cached on the file version and the folding options (never on the
    selected node: selecting a drawn node costs no layout and no `dot`); `pinned` entries (the
    presenter's) are never folded, nor is a branch a person marked "winner": the chosen branch is
    what every overview shows, at any level."""
    pinned = pinned | frozenset(winners(session.tree, verdicts(session)))
    return store().cached("layout", rel, session,
                          lambda: build_layout(session.tree, options.collapse, options.expand, pinned),
                          collapse=options.collapse, expand=options.expand, pinned=pinned)


def layout_showing(rel: str, session: Session, options: GraphOptions, node: str | None,
                   pinned: frozenset[str] = frozenset()):
    """The layout, with the segment or left-out branch that holds `node` opened (and `options`
    updated to say so): only that neighbourhood changes, the rest of the drawing stays.
    `pinned` entries (the presented branch's tip) stay drawn, with the path to them."""
    layout = _layout(rel, session, options, pinned)
    for _ in range(3):  # a branch brought in may still fold the node into one of its segments
        opening = layout.opening_for(node) if node else set()
        if not opening or opening <= options.expand:
            break
        options.expand = options.expand | opening
        layout = _layout(rel, session, options, pinned)
    return layout


class _OneRun:
    """One `dot` run per drawing at a time: a request that finds the drawing being made waits
    for it instead of starting another (six cold requests, one `dot`). The run goes on while
    any of the requests waiting for it still has its client (see client.py)."""

    def __init__(self):
        self._guard = threading.Lock()
        self._locks: dict = {}

    def __call__(self, key, make):
        connected = client.request_check()
        with self._guard:
            lock, waiting = self._locks.setdefault(key, (threading.Lock(), []))
            waiting.append(connected)
        try:
            with lock, client.wanted_while(lambda: any(check() for check in list(waiting))):
                return make()
        finally:
            with self._guard:
                waiting.remove(connected)
                if not waiting:
                    del self._locks[key]


_one_run = _OneRun()


def drawing_svg(rel: str, session: Session, options: GraphOptions, layout) -> tuple[str | None, str | None]:
    """The drawing and a note (why it is not the one asked for), cached on the file version, the
    folded segments and the options its links carry. When `dot` runs out of time the fully
    folded drawing is shown instead, and when that fails too, only the note."""
    extra = options.query()
    rankdir = options.rankdir(layout)
    key = view_key("svg", rel, session.storage.version_key(), layout=layout.signature(), links=extra, rankdir=rankdir)

    def make():
        svg = store().views.get(key)
        if svg is not None:
            return svg
        suffix = "&" + extra if extra else ""

        def node_url(entry_id: str) -> str:
            # Relative links (`?node=...`): the drawing is only ever shown on this session's page.
            return f"?node={quote(entry_id, safe='')}{suffix}"

        # The drawing of the file's previous version, with the same options: an append that
        # keeps its shape changes a few nodes in it instead of running `dot` (patch_drawing).
        last_key = view_key("drawing", rel, None, collapsed=layout.collapsed, links=extra, rankdir=rankdir)
        before = store().views.get(last_key)
        prepared = drawing_specs(session.tree, layout, node_url)
        drawing = patch_drawing(session.tree, layout, before, prepared) if before is not None else None
        try:
            drawing = drawing or render_drawing(session.tree, layout, node_url, rankdir=rankdir, prepared=prepared)
        except DotTimeout as exc:  # remembered, so that requests waiting for it do not run it again
            svg = (None, f"This drawing took too long ({exc}). ")
        else:
            store().views.put(last_key, drawing)
            svg = drawing.svg
        store().views.put(key, svg)
        return svg

    svg = _one_run(key, make)
    if isinstance(svg, str):
        return svg, None
    note = svg[1]
    if options.collapse == "on" and not options.expand:
        return None, note + "Use the Branches tab to move through the session."
    folded = GraphOptions({"collapse": "on", "dir": options.direction})
    svg, _ = drawing_svg(rel, session, folded, _layout(rel, session, folded))
    return svg, note + ("The folded drawing is shown instead." if svg else "Use the Branches tab to move through the session.")


def _view_params() -> dict:
    """The query parameters a session view carries from one URL to the next."""
    keys = ("node", "collapse", "expand", "dir", "view", "q", *transcript.TRANSCRIPT_PARAMS)
    return {k: v for k, v in request.args.items() if k in keys and v}


def _selected(session: Session, node: str | None) -> str | None:
    tree = session.tree
    if node:
        if node not in tree.by_id:
            abort(404, description=f"no entry {node!r} in this session")
        return node
    return tree.conversation_leaf(tree.active_leaf)


def _text_tree_lines(session: Session, options: GraphOptions, layout, view: str, node: str | None) -> list:
    """The text tree beside or instead of the drawing: the drawing's nodes (`layout`, at the
    level the toolbar shows: the skeleton, or turns), so a line and a node are the same thing
    and selecting either marks both; its links keep the page's view."""
    extra = "&".join(x for x in (options.query(), urlencode({"view": view})) if x)

    def link(entry_id: str) -> str:
        return f"?node={quote(entry_id, safe='')}&{extra}"

    def open_link(anchors: list[str]) -> str:
        return f"?node={quote(anchors[0], safe='')}&{urlencode({'open': ','.join(anchors)})}&{extra}"

    lines = outline.text_tree(session.tree, layout, link, open_link, chosen_leaf(session.tree, verdicts(session)))
    here = layout.dom_for(node) if node else None
    for line in lines:
        line.selected = line.dom == here
    return lines


def _page_context(rel: str, tab: str, drawing: bool = True, text: bool = True):
    """What the page or a fragment shows; `drawing=False` for a panel, which needs the layout
    (to mark drawn nodes) but not the SVG, so a click never waits for `dot`, and `text=False`
    without the text tree (a panel leaves it as it is). The text view (`view=text`) draws
    nothing: its text tree is read from the layout, at the level the drawing would have."""
    session = store().session(rel)
    tree = session.tree
    node = _selected(session, request.args.get("node"))
    options = GraphOptions(request.args)
    options.known(tree)
    view = outline.view_of(request.args)
    layout = layout_showing(rel, session, options, node)
    drawing = drawing and view != "text"
    svg, note = drawing_svg(rel, session, options, layout) if drawing else (None, None)
    lines = _text_tree_lines(session, options, layout, view, node) if view != "graph" and text else None
    return {
        "rel": rel,
        "session": session,
        "tree": tree,
        "options": options,
        "layout": layout,
        "svg": svg,
        "graph_note": note,
        "view": view,
        "text_lines": lines,
        "rankdir": options.rankdir(layout),
        "selected_dom": layout.dom_for(node) if node else None,
        "path_dom": layout.path_doms(node) if node else [],
        "node": node,
        "nav": node_nav(tree, node) if node else None,
        **tab_context(Shown(rel, session, node, layout), tab),
    }


@bp.get("/s/<path:rel>")
def session_page(rel: str):
    tab = request.args.get("tab", "node")
    if tab not in TABS:
        tab = "node"
    return render_template("session.html", **_page_context(rel, tab))


@bp.get("/s/<path:rel>/-/graph")
def graph_fragment(rel: str):
    if not is_fragment():
        return redirect(url_for("sessions.session_page", rel=rel, **_view_params()))
    return render_template("partials/_graph.html", oob=True, **_page_context(rel, "none"))


@bp.get("/s/<path:rel>/-/panel/<tab>")
def panel_fragment(rel: str, tab: str):
    """One tab of the side panel; the URL bar follows along (HX-Push-Url) as a deep link."""
    if tab not in TABS:
        abort(404, description=f"no panel {tab!r}")
    if not is_fragment():
        return redirect(url_for("sessions.session_page", rel=rel, tab=tab, **_view_params()))
    ctx = _page_context(rel, tab, drawing=False, text=False)
    response = current_app.make_response(render_template("partials/_panel.html", **ctx))
    params = _view_params()
    if tab != "node":
        params["tab"] = tab
    response.headers["HX-Push-Url"] = url_for("sessions.session_page", rel=rel, **params)
    return response


@bp.get("/s/<path:rel>/-/raw")
def raw_entry(rel: str):
    """An entry's JSON as read: a fragment for the node panel, a page of its own otherwise."""
    entry = store().session(rel).entry(request.args.get("id", ""))
    template = "partials/_raw.html" if is_fragment() else "raw.html"
    return render_template(template, rel=rel, entry=entry)


def _context_messages(tree, node: str, view: str | None) -> tuple[list[dict], list | None]:
    """The messages of the context at `node`, or with view `request` those of the request as
    sent (SPEC §5b) with its rows (status and reason of each)."""
    ctx = build_context(tree, node)
    if view != "request":
        return ctx.messages, None
    rows = build_request(ctx).rows
    return [row.message for row in rows], rows


def _context_text(tree, node: str, i: int, j: int | None, view: str | None) -> str:
    """The text of message `i` (part `j` when its content is in parts) of the context at `node`."""
    messages, _ = _context_messages(tree, node, view)
    if not 0 <= i < len(messages):
        abort(404, description=f"no message {i} in the context at {node!r}")
    content = messages[i].get("content")
    if j is None:
        return content if isinstance(content, str) else ""
    parts = content if isinstance(content, list) else []
    if not 0 <= j < len(parts):
        abort(404, description=f"no part {j} in message {i}")
    return str(parts[j].get("text", ""))


def _int_arg(name: str, default: int | None = None) -> int | None:
    text = request.args.get(name, "")
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        abort(400, description=f"{name} must be a whole number, not {text[:40]!r}")
    return int(text)


@bp.get("/s/<path:rel>/-/more/<kind>")
def more(rel: str, kind: str):
    """The next page of a text or list a panel cut at its budget (see budget.py)."""
    if kind not in MORE_KINDS:
        abort(404, description=f"nothing to page through called {kind!r}")
    session = store().session(rel)
    tree = session.tree
    offset = _int_arg("offset", 0)
    if kind == "problems":
        problems = tree.all_problems()
        shown = problems[offset:offset + budget.PROBLEMS_PAGE]
        rest = len(problems) - offset - len(shown)
        next_url = budget.more_url(rel, "problems", offset + len(shown)) if rest > 0 else None
        template = "partials/_problem_items.html" if is_fragment() else "more.html"
        return render_template(template, rel=rel, tree=tree, problems=shown, rest=rest, next_url=next_url,
                               kind=kind, offset=offset)
    if kind == "messages":
        node = _selected(session, request.args.get("node") or None)
        view = request.args.get("view") or None
        messages, rows = _context_messages(tree, node, view)
        notes = None if view == "request" else context_notes(build_context(tree, node))
        template = "partials/_context_messages.html" if is_fragment() else "more.html"  # without JS: a page of them
        return render_template(template, rel=rel, tree=tree, messages=messages, rows=rows, kind=kind, title="messages",
                               notes=notes,
                               view=view, node=node, start=offset, stop=budget.context_messages_shown(messages, offset),
                               offset=offset)
    args: dict = {}
    if kind == "raw":
        entry = session.entry(request.args.get("id", ""))
        args["id"] = entry.id
        text = render.json_text(entry.original)
        title = f"raw JSON of {entry.id}"
    elif kind == "line":
        line = _int_arg("line")
        found = [b for b in tree.bad_lines if b.line == line]
        if not found:
            abort(404, description=f"no bad line {line}")
        args["line"] = line
        text, title = found[0].raw, f"line {line}"
    else:  # "context"
        node = _selected(session, request.args.get("node") or None)
        i, j = _int_arg("i", 0), _int_arg("j")
        view = request.args.get("view") or None
        args.update(node=node, i=i, j=j, view=view)
        text = _context_text(tree, node, i, j, view)
        title = f"message {i} of the context at {node}"
    page = budget.page_of(text, offset)
    next_url = budget.more_url(rel, kind, page.next_offset, **args) if page.next_offset is not None else None
    template = "partials/_more_text.html" if is_fragment() else "more.html"
    return render_template(template, rel=rel, page=page, next_url=next_url, title=title, kind=kind, offset=offset)


@bp.app_template_global()
def chosen_winners(session: Session) -> list[str]:
    """The branches a person marked winner (the latest first): "Fit" frames them with the
    selected node where both fit at a legible size."""
    return winners(session.tree, verdicts(session))


@bp.app_template_global()
def node_link(rel: str, entry_id: str, **params) -> str:
    return url_for("sessions.session_page", rel=rel, node=entry_id, **params)


@bp.app_template_global()
def dom(entry_id: str) -> str:
    return dom_id(entry_id)
