"""Jinja filters and globals: numbers, times and entry content as people read them."""

from __future__ import annotations

from datetime import timezone

from flask import Flask

from ..core import bodies
from ..core.catalog import first_user_message
from ..core.context_edits import is_editable
from ..core.edit_preview import held_text
from ..core.entries import parse_time, short_id
from ..core.tokens import compaction_text, format_tokens, token_text, usage_text
from ..core.tree import WARNING_KINDS
from . import budget, render
from .owner import offered_models
from .views import context_meter, entry_summary, entry_title, session_counts, short


def tokens(n) -> str:
    return format_tokens(n) if isinstance(n, (int, float)) else "–"


def cost(value) -> str:
    if not isinstance(value, (int, float)) or not value:
        return "–"
    return f"${value:.4f}" if value < 0.01 else f"${value:.2f}"


def filesize(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def when(iso: str | None) -> str:
    """An ISO timestamp as `2026-11-30 14:03` UTC; anything unreadable as it is."""
    if not iso:
        return "–"
    dt = parse_time(iso) if isinstance(iso, str) else None
    return str(iso) if dt is None else dt.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M")


def counted(n: int, one: str, many: str) -> str:
    """`n` things, in the singular for one: "1 branch", "1,204 branches"."""
    return f"{n:,} {one if n == 1 else many}"


CELL_CHARS = 300  # of a value the SQL box shows (`session-tree sql` prints it whole)


def cell(value) -> str:
    """A value of the SQL box's rows: empty for NULL; a long one (an entry's text may hold 100,000
    characters) cut, with its length said."""
    if value is None:
        return ""
    text = str(value)
    full = getattr(value, "full_length", 0)  # (a value the query cut already: corpus.sql.CutText)
    if full:
        return f"{text[:CELL_CHARS]}… ({full:,} characters)"
    return text if len(text) <= CELL_CHARS else f"{text[:CELL_CHARS]}… ({len(text):,} characters)"


def register(app: Flask) -> None:
    app.add_template_filter(cell)
    app.add_template_global(CELL_CHARS, "cell_chars")
    app.add_template_filter(counted)
    app.add_template_filter(tokens)
    app.add_template_filter(cost)
    app.add_template_filter(filesize)
    app.add_template_filter(when)
    app.add_template_filter(short)
    app.add_template_filter(short_id)
    app.add_template_global(context_meter)
    app.add_template_global(WARNING_KINDS, "warning_kinds")  # grey, apart from red damage
    app.add_template_global(session_counts)
    app.add_template_global(token_text)  # the one token format (webapp/core/tokens.py)
    app.add_template_global(compaction_text)
    app.add_template_filter(usage_text)
    app.add_template_global(lambda: app.config["MODEL_CONFIG"].configured, "model_configured")
    app.add_template_global(offered_models)  # (the models a form may pick: owner.py)
    app.add_template_global(first_user_message)
    app.add_template_global(entry_title)
    app.add_template_global(entry_summary)
    app.add_template_global(is_editable)  # what a context edit may change (pi 1.6)
    app.add_template_global(held_text)  # the text of its content the file holds
    app.add_template_global(render.render_entry_body)
    app.add_template_global(render.render_markdown)
    app.add_template_global(render.raw_json)
    app.add_template_global(render.render_files)
    for helper in (budget.paged_text, budget.more_link, budget.more_url, budget.chars_label,
                   budget.context_messages_shown, budget.raw_pager):
        app.add_template_global(helper)
    app.before_request(render.start_response)
    app.before_request(bodies.start_view)
    app.teardown_request(bodies.end_view)

    @app.get("/pygments.css")
    def pygments_css():
        return app.response_class(render.pygments_css(), mimetype="text/css", headers={"Cache-Control": "max-age=3600"})
