"""Sharing a session safely: the review page the export buttons lead to, which lists every value
redaction would replace (where, which rule, the first characters) so a person keeps or drops
each before downloading, and the reading of those choices from a request.

Redaction is on by default here: the file goes to other people.
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request

from ..core.redact import OPTIONAL_RULES, Choice, Scanner, scan_session, summary
from . import current

bp = Blueprint("share", __name__)


def _asked() -> Choice:
    """The rules, patterns and kept tags a request names; a pattern that is not a regular
    expression or an unknown rule is a 400 that says which."""
    patterns = tuple(p.strip() for p in request.args.get("patterns", "").splitlines() if p.strip())
    choice = Choice(frozenset(request.args.getlist("rule")), patterns, frozenset(request.args.getlist("keep")))
    try:
        Scanner(choice.rules, choice.patterns)
    except ValueError as exc:
        abort(400, description=str(exc))
    return choice


def choice_from_args() -> Choice | None:
    """The redaction a download asks for (`redact=1` with its choices), or None for none."""
    return _asked() if request.args.get("redact") == "1" else None


@bp.get("/s/<path:rel>/export/review")
def review(rel: str):
    """What the export would redact, with a choice for each, before anything is written. The
    first visit redacts with detect-secrets alone; the form sends `reviewed=1` with its choices."""
    tree = current.store().session(rel).tree
    leaf = request.args.get("leaf") or None
    if leaf:
        leaf = tree.entry(leaf).id
    first = request.args.get("reviewed") != "1"
    choice = Choice() if first else _asked()
    scanned = scan_session(current.store().resolve(rel), choice.rules, choice.patterns)
    return render_template(
        "export_review.html", rel=rel, leaf=leaf, review=scanned, choice=choice,
        redact=first or request.args.get("redact") == "1", optional=OPTIONAL_RULES,
        summary=summary(scanned, choice.keep),
    )
