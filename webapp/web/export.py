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
from ..core.branch_names import branch_name
from ..core.catalog import first_user_message
from ..core.entries import COMPACTION, MODEL_CHANGE
from ..core.subagents import runs_on
from ..core.tokens import entry_cost
from ..core.transcript import (
    FILTER_NAMES,
    FILTERS,
    Options,
    branch_sections,
)
from ..core.tree import WARNING_KINDS, SessionTree
from ..core.verdicts import PERSON, Verdict, chosen_leaves, file_verdicts, for_a_redacted_copy, verdicts, winners
from . import current, lexers, outline, render, share
from .context_pages import path_timeline
from .export_data import Part, cut, export_data, landing_spots
from .graph import (
    DotTimeout,
    GraphLayout,
    build_layout,
    dom_id,
    render_svg,
)
from .graph.one_branch import only_the_branch, side_branches
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
                site: SiteLinks | None = None, dot_timeout: float | None = None,
                given: dict[str, dict[str, Verdict]] | None = None) -> str:
    """The session (or only the branch to `leaf`) as a self-contained HTML page; `redaction`
    says on its first screen what was redacted (the tree given is the redacted copy then). With
    `site`, a page of a project export: styles and script linked from its static folder rather
    than held, and a link back to its index. `dot_timeout`: how long the drawing may take (a
    command, which nobody waits on page by page, allows more than a web request). `given`: the
    verdicts on its branches (those among its entries when None): the page opens on the branch a
    person marked winner, then on the active one, and says every verdict beside its branch."""
    given = file_verdicts(tree) if given is None else given
    chosen = chosen_leaves(tree, given)
    leaves = [leaf] if leaf else list(dict.fromkeys(chosen + tree.leaves()))
    sections = branch_sections(tree, leaves)
    options = Options(filter="all")  # everything is rendered; the filters only hide (CSS)
    shown = {e.id for s in sections for e in s.entries}
    pinned = frozenset(winners(tree, given))  # (the chosen branch is never left out of the drawing)
    layout = branch_layout(tree, leaf) if leaf else build_layout(tree, "auto", frozenset(), pinned)
    try:
        svg = render_svg(tree, layout, lambda entry_id: f"#t-{dom_id(entry_id)}", dot_timeout)
    except DotTimeout as exc:  # the page without its drawing rather than no page
        svg = f'<p class="muted">The tree drawing took too long ({html.escape(str(exc))}) and is left out.</p>'
    if leaf:
        svg = _MORE_TITLE.sub(lambda m: m.group(1) + html.escape(_fork_note(m.group(2))), svg)
    # The sidebar's map: the skeleton as text (one branch's path in a one-branch file), each line
    # a link to its entry in the transcript below, readable with scripts off.
    text_lines = outline.text_tree(tree, layout if leaf else build_layout(tree, "skeleton", frozenset(), pinned),
                                   lambda entry_id: f"#t-{dom_id(entry_id)}", lambda anchors: f"#t-{dom_id(anchors[0])}",
                                   first=leaves[0] if leaves else None)
    parts: list[Part] = []

    def part(key: str, entries: list, branch: bool) -> Part:
        parts.append(cut(tree, key, entries, SERVER_ITEMS - sum(p.shown for p in parts), shown, branch))
        return parts[-1]

    blocks = [{
        "index": i, "section": s, "title": branch_name(tree, s.leaf, 80), "part": part(f"b-{i}", s.entries, True),
        "verdicts": sorted((given.get(s.leaf) or {}).values(), key=lambda v: v.by != PERSON),
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
            block=title_block(tree, tree.path(sections[0].leaf) if sections else [], title, given), cost=sum(entry_cost(e) for e in tree.entries),
            models=sorted({f"{e.get('provider')}/{e.get('modelId')}" for e in tree.entries if e.type == MODEL_CHANGE}),
        )
    # The data goes in last, past the template: a hundred megabytes copied once, not escaped or joined again.
    head, _, tail = page.rpartition(_DATA_SLOT)  # (the last: only the page's own script comes after it)
    return "".join((head, data, tail))


_DATA_SLOT = "\x00export-data\x00"


def branch_layout(tree: SessionTree, leaf: str) -> GraphLayout:
    """Only the path to `leaf`, folded as the app folds it, with a "more branches" node at each
    fork point on it saying how many branches leave there (they are not in the file)."""
    forks = side_branches(tree, leaf)
    layout = build_layout(tree, "auto", frozenset(), frozenset([leaf, *forks]))  # fork points stay drawn
    return only_the_branch(tree, layout, leaf)


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
    patterns and kept tags chosen on the review page). It opens on the branch marked winner."""
    session = current.store().session(rel)
    tree = session.tree
    leaf = request.args.get("leaf") or None
    if leaf:
        leaf = tree.entry(leaf).id
    first = share.unreviewed("share.review", rel)
    if first is not None:
        return first
    given = verdicts(session)
    choice = share.choice_from_args()
    if choice is None:
        html = export_html(current_app._get_current_object(), tree, session_title(tree, rel), leaf, given=given)
        name = export_name(tree, leaf)
    else:
        with share.shared_view(rel, choice) as shared:
            plain = shared.tree
            leaf = shared.replace.text(leaf) if leaf else None
            # (a redacted copy's own entries hold its verdicts redacted; the data folder's notes are left out)
            html = export_html(current_app._get_current_object(), plain, session_title(plain, shared.rel), leaf, shared.note,
                               given={**for_a_redacted_copy(given), **file_verdicts(plain)})
            name = export_name(plain, leaf)
    response = current_app.response_class(html, mimetype="text/html")
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
