"""Routes and HTML pieces of the transcript: a window of a path read as a conversation, loaded a
page at a time into the side panel's Transcript tab.

Entries are rendered by `render` (the same escaping and sanitizing as the Node tab); this module
only adds what a conversation needs on top: a tool result folded under the call it answers.
"""

from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, request, url_for
from markupsafe import Markup

from ..core.branch_names import branch_names
from ..core.context import build_context
from ..core.edit_preview import edited_entries
from ..core.entries import CONTEXT_EDIT, Entry, content_blocks
from ..core.subagents import starts_under
from ..core.transcript import (
    FILTER_NAMES,
    FILTERS,
    WINDOW,
    Item,
    Options,
    Transcript,
    build_transcript,
    other_branches,
)
from ..core.subagents import TASK_TOOLS, SubAgentRun, task_prompt
from ..core.tree import SessionTree
from . import current, render
from .graph import dom_id

bp = Blueprint("transcript", __name__)

# Query parameters that say which transcript is shown; the panel's deep link carries them.
TRANSCRIPT_PARAMS = ("leaf", "filter", "thinking", "output")


def _result_text(result: Entry) -> str:
    return "\n".join(str(b.get("text", "")) for b in content_blocks(result.message.get("content")) if b.get("type") == "text")


def _plain_output(result: Entry) -> Markup:
    """A result's text escaped but not highlighted, folded after `render.FOLD_LINES` lines: what an
    export holds for each of its thousands of results (highlighting them all costs seconds)."""
    lines = Markup.escape(_result_text(result)).split("\n")
    pre = lambda part: Markup('<pre class="code"><code>{}</code></pre>').format(Markup("\n").join(part))  # noqa: E731
    body = pre(lines[: render.FOLD_LINES])
    if len(lines) > render.FOLD_LINES:
        body += Markup('<details class="more"><summary>show all {} lines</summary>{}</details>').format(
            len(lines), pre(lines[render.FOLD_LINES:]))
    images = [render.image_html(b) for b in content_blocks(result.message.get("content")) if b.get("type") == "image"]
    return body + Markup("").join(images)


def _result(result: Entry, call: dict, plain: bool) -> Markup:
    """A tool result folded under its call: the summary says its size and whether it failed."""
    text = _result_text(result)
    lines = render.lines_from(text, 0) if text else 0
    size = f"{len(text):,} characters" if lines is None else f"{lines} line{'' if lines == 1 else 's'}"
    error = bool(result.message.get("isError"))
    body = _plain_output(result) if plain else render.render_entry_body(result, call)
    return Markup('<details class="t-result{}" id="t-{}" data-entry="{}"><summary>{} · {}</summary>{}</details>').format(
        " is-error" if error else "", dom_id(result.id), result.id, "error" if error else "result", size, body,
    )


def assistant_body(item: Item, options: Options, plain: bool = False) -> Markup:
    """An assistant message block by block, each tool call followed by its folded result
    (`plain`: results not highlighted, see `_plain_output`)."""
    msg = item.entry.message
    out = []
    run: list[dict] = []  # consecutive blocks that are not tool calls, rendered together
    for block in content_blocks(msg.get("content")):
        if block.get("type") == "thinking" and not options.thinking:
            continue
        if block.get("type") != "toolCall":
            run.append(block)
            continue
        out.append(render.content_html(run))
        run = []
        if options.filter == "no-tools":
            continue
        if block.get("name") in TASK_TOOLS:
            out.append(_task_call(block, item.subagents.get(block.get("id"))))
        else:
            out.append(render.tool_call_html(block))
        result = item.results.get(block.get("id"))
        if result is not None and options.output:
            out.append(_result(result, block, plain))
    out.append(render.content_html(run))
    stop = msg.get("stopReason")
    if stop in ("aborted", "error"):
        out.append(render.note_html(f"stopped: {stop}", f"flag stop-{stop}"))
    if msg.get("errorMessage"):
        out.append(render.note_html(str(msg["errorMessage"]), "error"))
    return Markup("").join(out)


def _task_call(block: dict, run: SubAgentRun | None) -> Markup:
    """A sub-agent call as what it asks (its prompt, wrapped as text, not raw JSON) and a way
    into the sub-agent's own conversation: the transcript of the path to the run's last entry."""
    description, kind, prompt = task_prompt(block)
    head = " · ".join(x for x in (str(block.get("name")), kind, description) if x)
    if run is not None:
        link = Markup('<p class="subagent-open"><a class="subagent-link" href="?tab=transcript&amp;node={}" '
                      'data-select="{}" data-dom="{}" data-tab="transcript">Open the sub-agent\'s conversation '
                      '({:,} entries)</a></p>').format(run.tip, run.tip, dom_id(run.tip), run.entries)
    else:
        link = Markup('<p class="muted">The sub-agent\'s conversation is not in this file.</p>')
    return Markup('<div class="tool-call task-call"><div class="tool-name">{}</div>{}{}</div>').format(
        head, render.render_markdown(prompt) if prompt else render.tool_call_html(block), link)


def item_body(item: Item, options: Options, plain: bool = False) -> Markup:
    if item.kind == "assistant":
        return assistant_body(item, options, plain)
    return render.render_entry_body(item.entry)


def plain_item_body(item: Item, options: Options) -> Markup:
    return item_body(item, options, plain=True)


def transcript_context(tree: SessionTree, node: str | None, args) -> dict:
    """What the Transcript tab shows for the selected node: the window around it."""
    options = Options.from_args(args)
    if node is None:
        return {"transcript": None, "options": options}
    t = build_transcript(tree, node, args.get("leaf"), options)
    focus = t.index_of(node)
    start = max(0, focus - 10) if focus >= WINDOW - 10 else 0
    # The item that shows the node (a tool result is shown by its call's item).
    return window_context(tree, t, start) | {"focus_id": t.items[focus].entry.id if t.items else None}


def window_context(tree: SessionTree, t: Transcript, start: int, size: int = WINDOW) -> dict:
    items = t.window(start, size)
    return {
        "transcript": t,
        "options": t.options,
        "items": items,
        "start": start,
        "end": start + len(items),
        "branches_at": {i.entry.id: other_branches(tree, t.path, i.at) for i in items},
        "subagents_at": {i.entry.id: starts_under(tree, i.entry.id) for i in items},
        "item_body": item_body,
        "labels": tree.labels,
        "edit_marks": edit_marks(tree, t),
        "window": WINDOW,
        "filters": FILTERS,
        "filter_names": FILTER_NAMES,
        "transcript_params": transcript_params,
    }


def edit_marks(tree: SessionTree, t: Transcript) -> dict[str, tuple[str, str]]:
    """Entries of the transcript's path that a context edit in force at its leaf changed: entry id
    -> ("omitted" | "edited", the edit's id). The context is built only where the path holds one."""
    if not any(e.type == CONTEXT_EDIT for e in t.path):
        return {}
    ctx = build_context(tree, t.leaf)
    return {x.target.id: ("omitted" if x.sent is None else "edited", x.edit.id) for x in edited_entries(ctx)}


def transcript_params(t: Transcript, **extra) -> dict:
    """The URL parameters naming this transcript (its path and its reading options)."""
    return {"node": t.node, "leaf": t.leaf, **t.options.params(), **extra}


@bp.get("/s/<path:rel>/-/transcript")
def window(rel: str):
    """More of a transcript: the window starting at `start`, appended when scrolled to."""
    tree = current.store().session(rel).tree
    node = request.args.get("node", "")
    if not current.is_fragment():
        kept = {k: v for k, v in request.args.items() if k not in ("rel", "tab") and not k.startswith("_")}
        return redirect(url_for("sessions.session_page", rel=rel, tab="transcript", **kept))
    if node not in tree.by_id:
        abort(404, description=f"no entry {node!r} in this session")
    t = build_transcript(tree, node, request.args.get("leaf"), Options.from_args(request.args))
    start, size = request.args.get("start", "0"), request.args.get("size", str(WINDOW))
    if not all(n.isascii() and n.isdigit() and len(n) <= 18 for n in (start, size)):
        abort(400, description="start and size must be whole numbers")
    ctx = window_context(tree, t, int(start), min(int(size), WINDOW))
    return render_template("partials/_transcript_window.html", rel=rel, tree=tree, focus_id=None, **ctx)


@bp.get("/s/<path:rel>/-/transcript/branches")
def branch_list(rel: str):
    """The tips of the session, each a link that opens its branch in the transcript."""
    if not current.is_fragment():
        return redirect(url_for("sessions.session_page", rel=rel, tab="branches"))
    tree = current.store().session(rel).tree
    options = Options.from_args(request.args)
    active = tree.conversation_leaf(tree.active_leaf)
    names = branch_names(tree, tree.leaves())
    rows = [(leaf, names[leaf], leaf == active) for leaf in tree.leaves()]
    return render_template("partials/_transcript_branches.html", rel=rel, rows=rows,
                           current=request.args.get("leaf"), params=options.params())
