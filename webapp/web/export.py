"""A whole session as one HTML file that reads anywhere: the tree drawing, every branch's
transcript, filters, search. Styles are inline and nothing is fetched.

The server renders the header, the figures, the text tree, the drawing and the first screens
(`SERVER_ITEMS` entries) by the same partials as the app (`_transcript_item.html` with `export`
set), so their content is escaped and sanitized exactly as there; every entry is also held once
as data (`export_data`), from which the page's script renders the rest as the reader scrolls.
Rendering every entry on the server cost several times pi's own `--export`. With scripts off the
page still reads its first screens and the text tree, and says how many entries need scripts.
"""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path

from flask import Blueprint, Flask, current_app, request

from ..bundled import STATIC as STATIC_FOLDER
from ..bundled import bundled_folder
from ..core.catalog import first_user_message
from ..core.entries import COMPACTION, MODEL_CHANGE
from ..core.subagents import runs_on
from ..core.tokens import entry_cost
from ..core.transcript import (
    FILTER_NAMES,
    FILTERS,
    Options,
    branch_name,
    branch_sections,
)
from ..core.tree import WARNING_KINDS, SessionTree
from . import current, lexers, outline, render, share
from .context_pages import path_timeline
from .export_data import Part, cut, export_data, landing_spots
from .graph import (
    DotTimeout,
    GraphLayout,
    MoreBranches,
    build_layout,
    dom_id,
    render_svg,
)
from .printing import title_block
from .transcript import plain_item_body
from .views import entry_summary, short

bp = Blueprint("export", __name__)

STATIC = bundled_folder(STATIC_FOLDER)
_STYLES = ("app.css", "transcript.css", "export.css", "context.css", "print.css", "text-tree.css")
PYGMENTS_CSS = "pygments.css"  # (made by `render.pygments_css`, written beside the others by a project export)
SITE_STYLES = (*_STYLES, PYGMENTS_CSS)
SERVER_ITEMS = 60  # the first screens, rendered on the server: the rest by the script, from the data
PROBLEMS_SHOWN = 200  # a damaged file's problems listed on its page; the rest are counted


def site_assets() -> dict[str, bytes]:
    """The files a project export's pages link to, by name: the styles and the script."""
    out = {name: (STATIC / name).read_bytes() for name in (*_STYLES, "export.js", "project-export.js", "project-export.css", "favicon.svg")}
    out[PYGMENTS_CSS] = render.pygments_css().encode()
    return out


@dataclasses.dataclass(frozen=True)
class SiteLinks:
    """Where a page of a project export finds what it shares with the others: the folder of the
    styles and scripts (relative, ending in '/') and the index page."""

    static: str
    index: str


def export_html(app: Flask, tree: SessionTree, title: str, leaf: str | None = None, redaction: str | None = None,
                site: SiteLinks | None = None, dot_timeout: float | None = None) -> str:
    """The session (or only the branch to `leaf`) as a self-contained HTML page; `redaction`
    says on its first screen what was redacted (the tree given is the redacted copy then). With
    `site`, a page of a project export: styles and script linked from its static folder rather
    than held, and a link back to its index. `dot_timeout`: how long the drawing may take (a
    command, which nobody waits on page by page, allows more than a web request)."""
    active = tree.conversation_leaf(tree.active_leaf)
    leaves = [leaf] if leaf else list(dict.fromkeys([x for x in [active] if x] + tree.leaves()))
    sections = branch_sections(tree, leaves)
    options = Options(filter="all")  # everything is rendered; the filters only hide (CSS)
    shown = {e.id for s in sections for e in s.entries}
    layout = branch_layout(tree, leaf) if leaf else build_layout(tree)
    try:
        svg = render_svg(tree, layout, lambda entry_id: f"#t-{dom_id(entry_id)}", dot_timeout)
    except DotTimeout as exc:  # the page without its drawing rather than no page
        svg = f'<p class="muted">The tree drawing took too long ({html.escape(str(exc))}) and is left out.</p>'
    if leaf:
        svg = _MORE_TITLE.sub(lambda m: m.group(1) + html.escape(_fork_note(m.group(2))), svg)
    # The sidebar's map: the skeleton as text (one branch's path in a one-branch file), each line
    # a link to its entry in the transcript below, readable with scripts off.
    text_lines = outline.text_tree(tree, layout if leaf else build_layout(tree, "skeleton"),
                                   lambda entry_id: f"#t-{dom_id(entry_id)}", lambda anchors: f"#t-{dom_id(anchors[0])}")
    parts: list[Part] = []

    def part(key: str, entries: list, branch: bool) -> Part:
        parts.append(cut(tree, key, entries, SERVER_ITEMS - sum(p.shown for p in parts), shown, branch))
        return parts[-1]

    blocks = [{
        "index": i, "section": s, "title": branch_name(tree, s.leaf, 80), "part": part(f"b-{i}", s.entries, True),
        # (a branch's context over its turns walks its whole path: drawn for the branch the page opens with)
        "timeline": path_timeline(tree, "", s.leaf, link=lambda entry_id: f"#t-{dom_id(entry_id)}") if i == 0 else None,
    } for i, s in enumerate(sections)]
    main_entries = [e for s in sections for e in s.entries]
    runs = [] if leaf else runs_on(tree, main_entries)  # (a one-branch file leaves sub-agents out, and says so)
    shown |= {e.id for r in runs for e in r.entries}
    subagents = [{
        "index": i, "run": r, "title": short(entry_summary(r.entries[0]), 80) or f"sub-agent {i + 1}",
        "part": part(f"sub-{i}", r.entries, False),
    } for i, r in enumerate(runs)]
    data = export_data(tree, parts)
    landings = landing_spots(parts, {line.href[3:] for line in text_lines if line.href.startswith("#t-")})
    css = script = ""
    if site is None:
        css = "\n".join([(STATIC / name).read_text() for name in _STYLES] + [render.pygments_css()])
        script = (STATIC / "export.js").read_text()
    problems = [p for p in tree.all_problems() if p.kind not in WARNING_KINDS]  # (warnings are ordinary in sound files)
    with app.app_context(), lexers.plain_code():
        template = app.jinja_env.get_template("session_export.html")
        page = template.render(
            tree=tree, title=title, sections=blocks, svg=svg, text_lines=text_lines, css=css, script=script, site=site,
            styles=SITE_STYLES, problems=problems[:PROBLEMS_SHOWN], more_problems=max(0, len(problems) - PROBLEMS_SHOWN),
            options=options, labels=tree.labels, item_body=plain_item_body, export=True, filters=FILTERS,
            filter_names=FILTER_NAMES, focus_id=None, compactions=sum(1 for e in tree.entries if e.type == COMPACTION),
            leaf=leaf, dom=dom_id, redaction=redaction, subagents=subagents, data=_DATA_SLOT, landings=landings,
            total=sum(len(p.entries) for p in parts), rendered=sum(p.shown for p in parts),
            block=title_block(tree, tree.path(sections[0].leaf) if sections else [], title), cost=sum(entry_cost(e) for e in tree.entries),
            models=sorted({f"{e.get('provider')}/{e.get('modelId')}" for e in tree.entries if e.type == MODEL_CHANGE}),
        )
    # The data goes in last, past the template: a hundred megabytes copied once, not escaped or joined again.
    head, _, tail = page.rpartition(_DATA_SLOT)  # (the last: only the page's own script comes after it)
    return "".join((head, data, tail))


_DATA_SLOT = "\x00export-data\x00"


def branch_layout(tree: SessionTree, leaf: str) -> GraphLayout:
    """Only the path to `leaf`, folded as the app folds it, with a "more branches" node at each
    fork point on it saying how many branches leave there (they are not in the file)."""
    path = tree.path(leaf)
    on_path = {e.id for e in path}
    forks = {e.id: [c for c in tree.conversation_children(e.id) if c not in on_path] for e in path}
    forks = {f: side for f, side in forks.items() if side}
    layout = build_layout(tree, "auto", frozenset(), frozenset([leaf, *forks]))  # fork points stay drawn
    nodes = [e for e in layout.nodes if e.id in on_path]
    segments = [s for s in layout.segments if s.first_id in on_path]  # a fold never crosses a fork point
    drawn = {dom_id(e.id) for e in nodes} | {s.id for s in segments}
    out = dataclasses.replace(
        layout, nodes=nodes, segments=segments, more=[], capped=False,
        edges=[(a, b) for a, b in layout.edges if a in drawn and b in drawn],
    )
    leaves = set(tree.leaves())
    for fork, side in forks.items():
        below = _subtree(tree, side)
        more = MoreBranches(out.dom_for(fork), [fork], sum(x in leaves for x in below), len(below))
        out.more.append(more)
        out.edges.append((more.attach, more.id))
    return out


def _subtree(tree: SessionTree, tops: list[str]) -> list[str]:
    out, stack = [], list(tops)
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(tree.conversation_children(x))
    return out


# The tooltip of a "more branches" node says it opens them; in a one-branch file it cannot.
_MORE_TITLE = re.compile(r'(<g id="more-[^"]*"[^>]*>(?:(?!</g>).)*?xlink:title=")([^"]*)', re.S)


def _fork_note(title: str) -> str:
    n = re.match(r"\d+", title)
    if n is None:  # (a sub-agent's work, no branch)
        return "sub-agent work is left out here: this file holds one branch"
    n = int(n.group())
    return f"{n} other branch{'' if n == 1 else 'es'} fork{'s' if n == 1 else ''} here: this file holds one branch"


def export_name(tree: SessionTree, leaf: str | None) -> str:
    session_id = re.sub(r"[^A-Za-z0-9-]", "", str((tree.header or {}).get("id") or ""))[:13] or "session"
    return f"session-{session_id}{'-' + re.sub(r'[^A-Za-z0-9-]', '', leaf)[-8:] if leaf else ''}.html"


def session_title(tree: SessionTree, fallback: str) -> str:
    return tree.name or short(first_user_message(tree) or "", 80) or fallback


@bp.get("/s/<path:rel>/export")
def export(rel: str):
    """The session (or `?leaf=`'s branch) as one HTML file, downloaded, after the review (asked
    without it, the review comes first); with `redact=1`, from a redacted copy (the rules,
    patterns and kept tags chosen on the review page)."""
    tree = current.store().session(rel).tree
    leaf = request.args.get("leaf") or None
    if leaf:
        leaf = tree.entry(leaf).id
    first = share.unreviewed("share.review", rel)
    if first is not None:
        return first
    choice = share.choice_from_args()
    if choice is None:
        html, name = export_html(current_app._get_current_object(), tree, session_title(tree, rel), leaf), export_name(tree, leaf)
    else:
        with share.shared_view(rel, choice) as shared:
            plain = shared.tree
            leaf = shared.replace.text(leaf) if leaf else None
            html = export_html(current_app._get_current_object(), plain, session_title(plain, shared.rel), leaf, shared.note)
            name = export_name(plain, leaf)
    response = current_app.response_class(html, mimetype="text/html")
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
