"""Byte budgets: no panel or fragment sends more than a bounded amount, whatever a file holds.

A text longer than its budget shows its first page and a "N more characters" link that loads the
next page in its place (htmx), or opens it as a page of its own (plain link); a list longer than
its budget shows its first items and a "N more" link to the next ones. What a link pages through
is named by a `Pager`: a kind the `/-/more/<kind>` route knows, the arguments that find the text
again, and the offset reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from markupsafe import Markup

from .render import SHOWN_CHARS

PAGE_CHARS = SHOWN_CHARS  # one page of a long text: the node panel's cap, everywhere
PROBLEMS_PAGE = 200  # problems listed per page of the Problems tab
BAD_LINE_CHARS = 4_000  # of a bad line, shown in the Problems tab before its "more" link
BAD_LINES_SHOWN = 20  # bad lines shown whole (well, their first BAD_LINE_CHARS) in the Problems tab
METADATA_SHOWN = 200  # lines that are not nodes listed in the Problems tab (a row is at most ~200 bytes)
PANEL_CHARS = 1_000_000  # what a page of the context panel's messages holds, past the first
CONTEXT_FIRST_CHARS = 16_000  # the first page: a screenful or two, what a selection change swaps in


@dataclass(frozen=True)
class Page:
    """One page of a text: what it shows and where the next page starts (None: it was the last)."""

    text: str
    next_offset: int | None
    total: int

    @property
    def remaining(self) -> int:
        return 0 if self.next_offset is None else self.total - self.next_offset


def page_of(text: str, offset: int = 0, size: int = PAGE_CHARS) -> Page:
    offset = max(0, min(offset, len(text)))
    end = offset + size
    return Page(text[offset:end], end if end < len(text) else None, len(text))


def more_url(rel: str, kind: str, offset: int, **args) -> str:
    """The URL of the next page; built by hand so that budget.py stays free of the request."""
    from flask import url_for  # (imported here: this module is also used outside a request)

    query = urlencode({**{k: v for k, v in args.items() if v is not None}, "offset": offset})
    return url_for("sessions.more", rel=rel, kind=kind) + "?" + query


def more_link(url: str, label: str) -> Markup:
    """A link that htmx swaps for the next page (which carries the link after it, if any)."""
    return Markup(
        '<a class="more-link" href="{0}" hx-get="{0}" hx-target="this" hx-swap="outerHTML">{1}</a>'
    ).format(url, label)


def chars_label(n: int) -> str:
    return f"{n:,} more character{'' if n == 1 else 's'}"


def paged_text(text: str, rel: str, kind: str, size: int = PAGE_CHARS, **args) -> Markup:
    """The first page of `text`, escaped, followed by a link to the next when there is more."""
    page = page_of(text, 0, size)
    out = Markup.escape(page.text)
    if page.next_offset is not None:
        out += more_link(more_url(rel, kind, page.next_offset, **args), chars_label(page.remaining))
    return out


def within(sizes: list[int], budget: int) -> int:
    """How many items of these sizes fit in `budget` (always at least one, so a page is never empty)."""
    total = 0
    for i, n in enumerate(sizes):
        total += n
        if total > budget and i > 0:
            return i
    return len(sizes)


def context_messages_shown(messages: list[dict], start: int = 0) -> int:
    """Where the page of context messages that starts at `start` stops: the first page within
    CONTEXT_FIRST_CHARS (every selection change in the Context tab swaps it in: the rest loads
    when scrolled to), the next ones within PANEL_CHARS, each message counted by its text (cut at
    one page) plus its markup."""
    sizes = [_message_chars(m) + 400 for m in messages[start:]]
    return start + within(sizes, CONTEXT_FIRST_CHARS if start == 0 else PANEL_CHARS)


def _message_chars(m: dict) -> int:
    content = m.get("content")
    if isinstance(content, str):
        return min(len(content), PAGE_CHARS)
    if isinstance(content, list):
        return sum(min(len(str(p.get("text", ""))), PAGE_CHARS) + 100 for p in content if isinstance(p, dict))
    return 0


def raw_pager(rel: str, entry_id: str):
    """What `render.raw_json` puts after the first page of a long entry: a link to the next."""
    return lambda text: paged_text(text, rel, "raw", id=entry_id)
