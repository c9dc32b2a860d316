"""The reading view of one entry: its content as safe HTML for the side panel.

Everything here comes from a session file written by someone else, so every value is escaped
(`markupsafe`) or, for markdown, rendered with raw HTML off and then sanitized (`nh3`). HTML is
only ever assembled from `Markup` templates whose holes `Markup.format` escapes.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

import nh3
import orjson
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer
from pygments.token import STANDARD_TYPES

from webapp.core import entries as E
from webapp.core.entries import Entry, content_blocks, content_text
from webapp.core.agents.tools import ToolAction, tool_action
from webapp.core.tokens import compaction_text, usage_text

from . import code_style, lexers
from .held_html import HeldHtml

FOLD_LINES = 20
SHOWN_CHARS = 100_000  # past this a panel shows the start and says what it left out
COUNTED_CHARS = 8_000_000  # of what is left out, counted in lines (past this: its characters only)
CSS_STYLE = code_style.readable_style()  # ("friendly", each colour at AA: code_style.py)
CLASS_PREFIX = "hl-"
CODE_CLASS = "code"

_FORMATTER = HtmlFormatter(nowrap=True, classprefix=CLASS_PREFIX, style=CSS_STYLE)
_IMAGE_MIME = re.compile(r"image/(png|jpeg|gif|webp)")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_LINK_SCHEMES = ("http:", "https:", "mailto:")
_EMPTY = Markup("")

# Fields every entry has; the definition lists of meta entries show only the rest.
_COMMON_FIELDS = ("type", "id", "parentId", "timestamp")


# --- highlighting -------------------------------------------------------------------------------


def highlight_lines(code: str, lexer: Lexer) -> list[Markup]:
    """Highlighted lines; Pygments closes its spans at each line end, so lines split cleanly."""
    html = lexers.highlight_html(code, lexer, _FORMATTER)
    return [Markup(line) for line in html.splitlines(keepends=True)]


def _pre(inner: Markup) -> Markup:
    return Markup('<pre class="code"><code>{}</code></pre>').format(inner)


# What is left to show of the entry being rendered, and of the whole response: each text an entry
# shows spends from both, so an entry of many long blocks, or a page of many entries (compare,
# export), stays bounded too. Unset outside `render_entry_body` and before `start_response`.
_entry_left: ContextVar[list[int] | None] = ContextVar("entry_left", default=None)
_response_left: ContextVar[list[int] | None] = ContextVar("response_left", default=None)
RESPONSE_CHARS = 2_000_000  # of entry content in one response


def start_response() -> None:
    """A new response starts with its whole budget (called before each request)."""
    _response_left.set([RESPONSE_CHARS])
    lexers.start_response()


def _allowance() -> int:
    return min([SHOWN_CHARS] + [b[0] for b in (_entry_left.get(), _response_left.get()) if b is not None])


def _spend(n: int) -> None:
    for budget in (_entry_left.get(), _response_left.get()):
        if budget is not None:
            budget[0] = max(0, budget[0] - n)


def _capped(text: str) -> tuple[str, Markup]:
    """The start of a very long text, cut at a line end, and a note on what was left out:
    a multi-megabyte tool output would otherwise make a page of tens of megabytes."""
    allowed = _allowance()
    if len(text) <= allowed:
        _spend(len(text))
        return text, _EMPTY
    cut = (text.rfind("\n", 0, allowed) + 1 or allowed) if allowed else 0
    _spend(cut)
    left = lines_from(text, cut)
    lines = f" ({left:,} lines)" if left is not None else ""
    note = f"{len(text) - cut:,} more characters{lines} are not shown here; the raw JSON has all {len(text):,}."
    return text[:cut], note_html(note)


def lines_from(text: str, start: int) -> int | None:
    """The lines of `text` from `start` on, counted when they are at most COUNTED_CHARS long (a
    200 MB tool output took a tenth of a second per view to count, holding the server); None
    past that."""
    return text.count("\n", start) + 1 if len(text) - start <= COUNTED_CHARS else None


def highlight(code: str, language: str | None) -> Markup:
    """A highlighted `<pre class="code">` block; Pygments escapes every character of `code`."""
    shown, note = _capped(str(code))
    return _pre(_EMPTY.join(highlight_lines(shown, lexers.by_name(language)))) + note


def _folded(code: str, lexer: Lexer) -> Markup:
    """Long output shows its first lines; the rest sits in a `<details>`, which needs no JS."""
    shown, note = _capped(code)
    lines = highlight_lines(shown, lexer)
    if len(lines) <= FOLD_LINES:
        return _pre(_EMPTY.join(lines)) + note
    head, rest = _EMPTY.join(lines[:FOLD_LINES]), _EMPTY.join(lines[FOLD_LINES:])
    left = lines_from(code, len(shown)) if note else 0
    said = f"show all {len(lines) + left} lines" if left is not None else f"show the first {len(lines)} lines"
    return Markup(
        '{}<details class="more"><summary>{}</summary>{}{}</details>'
    ).format(_pre(head), said, _pre(rest), note)


def pygments_css() -> str:
    """The token colours for `.code` blocks, without Pygments' global `pre`/line-number rules."""
    selector = "." + CODE_CLASS
    return "\n".join(
        _FORMATTER.get_background_style_defs(selector) + _FORMATTER.get_token_style_defs(selector)
    )


def json_text(value: Any) -> str:
    """Pretty JSON; Python's encoder covers what orjson refuses (integers beyond 64 bits)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def raw_json(entry_raw: dict, more: Callable[[str], Markup] | None = None) -> Markup:
    """An entry exactly as read, pretty-printed: the fallback view that never loses a field.
    A very long one shows its first page, not highlighted (which would cost seconds), followed
    by `more(text)` (the link to the next pages, for the raw view) or a note."""
    text = json_text(entry_raw)
    if more is not None and len(text) > SHOWN_CHARS:
        return _pre(more(text))
    if len(text) <= _allowance():
        return highlight(text, "json")
    shown, note = _capped(text)
    return _pre(Markup.escape(shown)) + note


# --- markdown -----------------------------------------------------------------------------------


def _fence(code: str, lang: str, _attrs: Any) -> str:
    """markdown-it keeps output that starts with `<pre` as is: fences look like all other code."""
    return str(highlight(code, lang or None))


def _keep_link(tag: str, attr: str, value: str) -> str | None:
    """Only web and mail links survive; relative ones would point into this app."""
    if tag == "a" and attr == "href" and not value.lower().startswith(_LINK_SCHEMES):
        return None
    return value


_MD = (
    MarkdownIt("commonmark", {"html": False, "highlight": _fence})
    .enable(["table", "strikethrough"])
    .disable("image")  # `![alt](url)` reads as "!" plus a link: nothing is fetched
)

_CLEANER = nh3.Cleaner(
    tags={
        "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "span",
        "table", "thead", "tbody", "tr", "th", "td", "blockquote", "em", "strong", "del", "s",
        "a", "br", "hr",
    },
    clean_content_tags={"script", "style"},
    attributes={"a": {"href", "title"}, "ol": {"start"}, "th": {"style"}, "td": {"style"}},
    attribute_filter=_keep_link,
    allowed_classes={
        "pre": {CODE_CLASS},
        "span": {CLASS_PREFIX + c for c in STANDARD_TYPES.values() if c},
    },
    filter_style_properties={"text-align"},
    url_schemes={"http", "https", "mailto"},
    url_relative="deny",
    link_rel="noopener noreferrer",
)


# Long markdown texts' HTML, held by the text (`held_html`): 8 million characters at most.
_markdown_html = HeldHtml(chars=8_000_000, shortest=2_000)


def render_markdown(text: str) -> Markup:
    """Markdown with raw HTML shown as text, fences highlighted, and the result sanitized."""
    shown, note = _capped(str(text))
    # (its fences are highlighted code: held only when every one was highlighted, which the time
    # still left after them tells; an export's first screens show them plain, held or not)
    html = _markdown_html.get("markdown", shown) if lexers.time_left() else None
    if html is None:
        html = _CLEANER.clean(_MD.render(shown))
        if lexers.time_left():
            _markdown_html.keep("markdown", shown, html)
    return Markup('<div class="markdown">{}</div>').format(Markup(html)) + note


# --- small pieces -------------------------------------------------------------------------------


def note_html(text: str, cls: str = "note") -> Markup:
    """A short line about the content (a cut, a stop reason, an error) in its own style."""
    return Markup('<div class="{}">{}</div>').format(cls, text)


def _path(path: Any) -> Markup:
    return Markup('<div class="path"><code>{}</code></div>').format(path)


def _file_list(title: str, files: Any) -> Markup:
    if not isinstance(files, list) or not files:
        return _EMPTY
    items = _EMPTY.join(Markup("<li><code>{}</code></li>").format(f) for f in files)
    return Markup('<div class="files"><h4>{}</h4><ul>{}</ul></div>').format(title, items)


def _field_value(value: Any) -> Markup:
    """Scalars as text, anything structured as highlighted JSON."""
    if isinstance(value, (dict, list)):
        return highlight(json_text(value), "json")
    shown, note = _capped("" if value is None else str(value))
    return escape(shown) + note


def _fields(pairs: Iterable[tuple[str, Any]], internal: bool = False) -> Markup:
    """A definition list: the compact form for entries that only carry a few settings.
    `internal`: fields of the file's machinery (ids, flags) that paper leaves out (print.css)."""
    rows = _EMPTY.join(
        Markup("<dt>{}</dt><dd>{}</dd>").format(k, v if isinstance(v, Markup) else _field_value(v))
        for k, v in pairs
    )
    kind = "fields internal" if internal else "fields"
    return Markup('<dl class="{}">{}</dl>').format(kind, rows) if rows else _EMPTY


def image_html(block: dict) -> Markup:
    """An inline thumbnail, but only for raster types and clean base64 (no `data:` tricks)."""
    mime, data = block.get("mimeType"), block.get("data")
    if (
        isinstance(mime, str)
        and isinstance(data, str)
        and _IMAGE_MIME.fullmatch(mime)
        and len(data) <= _allowance()
        and _BASE64.fullmatch(data)
    ):
        _spend(len(data))
        return Markup('<img class="thumb" alt="image" src="data:{};base64,{}">').format(mime, data)
    if isinstance(data, str) and len(data) > _allowance():
        return note_html(f"[image: {len(data):,} characters of data, too large to show here]")
    return note_html("[image: unsupported]")


def _raw_fallback(what: str, raw: dict) -> Markup:
    """What this view cannot read is said so and shown whole, never dropped."""
    return note_html(f"unknown {what}, shown raw") + raw_json(raw)


def _unknown_block(block: dict) -> Markup:
    return _raw_fallback(f"block type {block.get('type')}", block)


# --- tool calls ---------------------------------------------------------------------------------


def _extra_args(args: dict, shown: tuple[str, ...]) -> Markup:
    """Arguments a tool card does not lay out itself (read's offset/limit, bash's timeout...),
    so none of them goes unseen."""
    return _fields((k, v) for k, v in args.items() if k not in shown)


def _bash_call(action: ToolAction) -> Markup:
    return highlight(action.command or "", "bash")


def _edit_call(action: ToolAction) -> Markup:
    """The edit as a unified diff, the way a reviewer reads a change."""
    path, old, new = action.path or "", action.old or "", action.new or ""
    if len(old) + len(new) > SHOWN_CHARS:  # diffing megabytes takes seconds: show both sides
        lexer = lexers.for_path(path)
        parts = [_path(path), note_html("Too long to diff here. Old text:"), _folded(old, lexer),
                 note_html("New text:"), _folded(new, lexer)]
        return _EMPTY.join(parts)
    diff = difflib.unified_diff(
        old.splitlines(), new.splitlines(), fromfile=path, tofile=path, lineterm=""
    )
    return _path(path) + highlight("\n".join(diff), "diff")


def _patch_call(action: ToolAction) -> Markup:
    return _EMPTY.join(_path(p) for p in action.paths) + highlight(action.patch or "", "diff")


def _write_call(action: ToolAction) -> Markup:
    return _path(action.path) + _folded(action.content or "", lexers.for_path(action.path))


def _read_call(action: ToolAction) -> Markup:
    return _path(action.path)


def _tool_layout(action: ToolAction) -> Callable[[ToolAction], Markup] | None:
    """The card for what the call does, when its arguments hold all the card shows."""
    if action.kind == "bash":
        return _bash_call
    if action.kind == "edit" and action.patch is not None:
        return _patch_call
    if action.kind == "edit" and action.old is not None:
        return _edit_call
    if action.kind == "write" and action.content is not None:
        return _write_call
    if action.kind == "read":
        return _read_call
    return None


def _tool_args(block: dict) -> Markup:
    """The arguments laid out for the tool, or as JSON when the tool or their shape is unknown."""
    action = tool_action(block)
    layout = _tool_layout(action)
    args = block.get("arguments")
    if layout is not None and isinstance(args, dict):
        return layout(action) + _extra_args(args, action.shown)
    return highlight(json_text(args), "json")


def tool_call_html(block: dict) -> Markup:
    name = block.get("name")
    return Markup(
        '<div class="tool-call"><div class="tool-name">{}</div>{}</div>'
    ).format(name if name is not None else "?", _tool_args(block))


# --- message content ----------------------------------------------------------------------------


def _thinking(block: dict) -> Markup:
    text = str(block.get("thinking") or "")
    return Markup(
        '<details class="thinking"><summary>Thinking ({} words)</summary>{}</details>'
    ).format(len(text.split()), render_markdown(text))


_BLOCK_VIEWS: dict[str, Callable[[dict], Markup]] = {
    "text": lambda b: render_markdown(str(b.get("text", ""))),
    "thinking": _thinking,
    "toolCall": tool_call_html,
    "image": image_html,
}


def content_html(content: Any) -> Markup:
    """Message content block by block, in order; a string is one text block."""
    return _EMPTY.join(
        _BLOCK_VIEWS.get(b.get("type"), _unknown_block)(b) for b in content_blocks(content)
    )


def _assistant(msg: dict) -> Markup:
    """The blocks, then why the turn ended badly when it did."""
    body = content_html(msg.get("content"))
    stop = msg.get("stopReason")
    if stop in ("aborted", "error"):
        body += note_html(f"stopped: {stop}", f"flag stop-{stop}")
    if msg.get("errorMessage"):
        body += note_html(str(msg["errorMessage"]), "error")
    return body


def _tool_result(msg: dict, tool_call: dict | None) -> Markup:
    """Text output highlighted and folded; images as thumbnails."""
    blocks = content_blocks(msg.get("content"))
    text = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    action = tool_action(tool_call)
    path = action.path if action.kind == "read" else None
    images = _EMPTY.join(image_html(b) for b in blocks if b.get("type") == "image")
    others = _EMPTY.join(
        _unknown_block(b) for b in blocks if b.get("type") not in ("text", "image")
    )
    return Markup('<div class="tool-result{}"><div class="tool-name">{}</div>{}{}{}</div>').format(
        " is-error" if msg.get("isError") else "",
        msg.get("toolName") or "?",
        _folded(text, lexers.for_path(path)),
        images,
        others,
    )


def _bash_execution(msg: dict) -> Markup:
    """A command the user ran: prompt, folded output, exit code and what was special about it."""
    command = _pre(
        Markup('<span class="{}gp">$ </span>').format(CLASS_PREFIX)
        + _EMPTY.join(highlight_lines(str(msg.get("command", "")), lexers.by_name("bash")))
    )
    exit_code = msg.get("exitCode")
    flags = [Markup('<span class="exit-code{}">exit {}</span>').format(
        "" if exit_code == 0 else " nonzero", "?" if exit_code is None else exit_code
    )]
    flags += [
        Markup('<span class="flag">{}</span>').format(label)
        for key, label in (
            ("cancelled", "cancelled"),
            ("truncated", "truncated"),
            ("excludeFromContext", "excluded from context"),
        )
        if msg.get(key)
    ]
    full = msg.get("fullOutputPath")
    return (
        command
        + _folded(str(msg.get("output") or ""), TextLexer(stripnl=False))
        + Markup('<div class="flags">{}</div>').format(Markup(" ").join(flags))
        + (_fields([("full output", full)]) if full else _EMPTY)
    )


def _message(entry: Entry, tool_call: dict | None) -> Markup:
    msg, role = entry.message, entry.role
    if role in ("user", "custom"):
        return content_html(msg.get("content"))
    if role == "assistant":
        return _assistant(msg)
    if role == "toolResult":
        return _tool_result(msg, tool_call)
    if role == "bashExecution":
        return _bash_execution(msg)
    if role == "system":
        return system_message_html(msg)
    return _raw_fallback(f"message role {role}", entry.raw)


def _tool_names(tools: Any) -> Markup:
    names = [str(t.get("name")) for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    return Markup(", ").join(Markup("<code>{}</code>").format(n) for n in names) if names else _EMPTY


def system_message_html(msg: dict) -> Markup:
    """A pi 1.6 system message: its prompt text, each section by name (a removed one said so),
    and the tools it adds and removes (each added one's description in a fold)."""
    out = content_html(msg.get("content")) if content_text(msg.get("content")).strip() else _EMPTY
    sections = msg.get("sections")
    for name, text in (sections.items() if isinstance(sections, dict) else ()):
        if isinstance(text, str):
            out += Markup('<div class="sys-section"><h4>section {}</h4>{}</div>').format(name, render_markdown(text))
        else:
            out += note_html(f"section {name} removed")
    added = [t for t in msg.get("toolsAdded") or () if isinstance(t, dict)] if isinstance(msg.get("toolsAdded"), list) else []
    rows = []
    if added:
        rows.append(("tools added", _tool_names(added)))
    if msg.get("toolsRemoved"):
        rows.append(("tools removed", _tool_names(msg.get("toolsRemoved"))))
    out += _fields(rows)
    for tool in added:
        out += Markup('<details class="sys-tool"><summary><code>{}</code> {}</summary>{}</details>').format(
            tool.get("name"), str(tool.get("description") or "")[:200], highlight(json_text(tool.get("parameters")), "json"))
    return out or note_html("(an empty system message)")


# --- the other entry types ----------------------------------------------------------------------


def render_files(details: Any) -> Markup:
    """The files a summary covers (`details.readFiles` / `modifiedFiles`), as two lists."""
    details = details if isinstance(details, dict) else {}
    return _file_list("Files read", details.get("readFiles")) + _file_list(
        "Files modified", details.get("modifiedFiles")
    )


def _compaction(entry: Entry) -> Markup:
    after = entry.get("tokensAfter")
    tokens = compaction_text(entry.get("tokensBefore"), after)
    first = ("first kept entry", entry.get("firstKeptEntryId"))
    return (
        render_markdown(str(entry.get("summary") or ""))
        + _fields([("tokens", tokens)])
        + _fields([first], internal=True)
        + render_files(entry.get("details"))
    )


def _branch_summary(entry: Entry) -> Markup:
    return (
        render_markdown(str(entry.get("summary") or ""))
        + _fields([("from", entry.get("fromId"))], internal=True)
        + render_files(entry.get("details"))
    )


def _custom_message(entry: Entry) -> Markup:
    """What an extension said, then the fields it was written with (its type as written, whether
    pi displays it, its details): for an engineer on screen, left out of print (`internal`)."""
    details = entry.get("details")
    extra = [("details", details)] if details is not None else []
    return content_html(entry.get("content")) + _fields(
        [("custom type", entry.get("customType")), ("display", entry.get("display")), *extra], internal=True
    )


def _context_edit(entry: Entry) -> Markup:
    """What a context edit does to its target: takes it out, or what the model is sent instead."""
    replacement = entry.get("replacement")
    target = Markup("<code>{}</code>").format(entry.target_id)
    if replacement is None:
        return Markup('<p>Takes {} out of what the model is sent (the file keeps it).</p>').format(target)
    content = replacement.get("content") if isinstance(replacement, dict) else None
    return Markup("<p>The model is sent this instead of the content of {}:</p>").format(target) + content_html(content)


def _usage(entry: Entry) -> Markup:
    return _fields([("kind", entry.get("kind")), ("model", f"{entry.get('provider')}/{entry.get('model')}"),
                    ("spent", usage_text(entry.get("usage"))), *([("note", entry.get("note"))] if entry.get("note") else [])])


def _meta(entry: Entry) -> Markup:
    """The entry's own fields; a cleared label or an empty leaf is said, not left blank."""
    fields = {k: v for k, v in entry.raw.items() if k not in _COMMON_FIELDS}
    if entry.type == E.LABEL and not entry.get("label"):
        fields["label"] = "(cleared)"
    if entry.type == E.LEAF and entry.target_id is None:
        fields["targetId"] = "(none: empty conversation)"
    if entry.type == E.CUSTOM and "data" in fields:
        fields["data"] = highlight(json_text(fields["data"]), "json")
    return _fields(fields.items())


_ENTRY_VIEWS: dict[str, Callable[[Entry], Markup]] = {
    E.CUSTOM_MESSAGE: _custom_message,
    E.COMPACTION: _compaction,
    E.BRANCH_SUMMARY: _branch_summary,
    **{t: _meta for t in E.META_TYPES},
    E.CONTEXT_EDIT: _context_edit,
    E.USAGE: _usage,
}


def render_entry_body(entry: Entry, tool_call: dict | None = None) -> Markup:
    """The reading view of an entry's content, for every type; unknown ones are shown raw.

    `tool_call` is the toolCall block a toolResult answers, when the caller knows it: a `read`
    result is then highlighted in the language of the file it read.
    """
    token = _entry_left.set([SHOWN_CHARS])
    try:
        if entry.type == E.MESSAGE:
            if not entry.message:
                return _raw_fallback("message shape", entry.raw)
            return _message(entry, tool_call)
        view = _ENTRY_VIEWS.get(entry.type)
        return view(entry) if view else _raw_fallback(f"entry type {entry.type}", entry.raw)
    finally:
        _entry_left.reset(token)
