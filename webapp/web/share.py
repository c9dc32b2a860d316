"""Sharing a session safely: the review page every share path leads to (the session's and a
branch's export, the comparison's export, the print view), which lists every value redaction
would replace (its rule, where it is, what precedes it, its first characters) so a person keeps
or drops each before anything leaves; the reading of those choices from a request; and the
session as it is shared (`shared_view`: its redacted copy, its name, its verdicts' notes).

Redaction is on by default here: the file goes to other people. A share route asked without the
review's mark (`reviewed=1`) sends the person to the review first, so no link, bookmark or
button reaches a download that skipped it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Blueprint, abort, g, redirect, render_template, request, url_for

from ..core.redact import DEFAULT_RULES, OPTIONAL_RULES, Choice, Replacer, Review, Scanner, redacted, scan_session, summary
from ..core.session import Session
from ..core.tree import SessionTree
from ..core.verdicts import verdicts
from . import current

bp = Blueprint("share", __name__)

# What the review ticks on a first visit: detect-secrets and our rules, and the default optional
# ones (home paths), as the command line's --redact does.
FIRST_VISIT = Choice(rules=DEFAULT_RULES)


@dataclasses.dataclass(frozen=True)
class Target:
    """What a review leads to: its heading, the route that shares, the review's own route, and
    the parameters both carry (the branch, the compared branches)."""

    heading: str
    share_endpoint: str
    review_endpoint: str
    params: dict
    button: str
    crumb: str


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
    """The redaction a share asks for (`redact=1` with its choices), or None for none."""
    return _asked() if request.args.get("redact") == "1" else None


def unreviewed(review_endpoint: str, rel: str):
    """A redirect to the review when a share route is asked without the review's mark, else None."""
    if request.args.get("reviewed") == "1":
        return None
    return redirect(url_for(review_endpoint, rel=rel, **request.args.to_dict(flat=False)))


@dataclasses.dataclass(frozen=True)
class Shared:
    """The session as it is shared: the redacted copy's tree, the name it is shown by, the
    replacer (for ids and any text the page adds), the review, and the line the page says."""

    tree: SessionTree
    rel: str
    replace: Replacer
    review: Review
    note: str


@contextmanager
def shared_view(rel: str, choice: Choice) -> Iterator[Shared]:
    """The session at `rel` redacted as `choice` says, for the length of a render: its copy
    (removed afterwards), its name redacted, and the verdicts the page shows (their notes may
    live in the data folder, outside the file) scanned with it and redacted."""
    given = verdicts(current.store().session(rel))
    with redacted(current.store().resolve(rel), choice, name=rel, extra=verdict_texts(given)) as (copy, review):
        replace = Replacer(review, choice.keep)
        shown = replace.text(rel)
        g.setdefault("branch_verdicts", {})[shown] = redacted_verdicts(given, replace)
        yield Shared(Session.open(copy).tree, shown, replace, review, summary(review, choice.keep))


def verdict_texts(given: dict) -> list[tuple[str, str]]:
    """The notes and a judge's reasons of verdicts (target -> by -> Verdict), to scan with the
    session: a page that shows a verdict shows them."""
    return [(text, "a verdict's note") for by in given.values() for v in by.values() for text in (v.note, *v.reasons) if text]


def redacted_verdicts(given: dict, replace: Replacer) -> dict:
    """Verdicts (target -> by -> Verdict) with their targets, notes and reasons redacted."""
    return {replace.text(target): {by: dataclasses.replace(v, target=replace.text(v.target), note=replace.text(v.note),
                                                           reasons=tuple(replace.text(r) for r in v.reasons))
                                   for by, v in by_whom.items()}
            for target, by_whom in given.items()}


def _review_page(rel: str, target: Target):
    """What the share would redact, with a choice for each, before anything is written. The
    first visit redacts with the detectors and home paths; the form sends `reviewed=1` with
    its choices."""
    first = request.args.get("reviewed") != "1"
    choice = FIRST_VISIT if first else _asked()
    given = verdicts(current.store().session(rel))
    scanned = scan_session(current.store().resolve(rel), choice.rules, choice.patterns, name=rel, extra=verdict_texts(given))
    return render_template(
        "export_review.html", rel=rel, target=target, review=scanned, choice=choice,
        redact=first or request.args.get("redact") == "1", optional=OPTIONAL_RULES,
        summary=summary(scanned, choice.keep),
    )


@bp.get("/s/<path:rel>/export/review")
def review(rel: str):
    """The review before a session's (or `?leaf=`'s branch's) export."""
    tree = current.store().session(rel).tree
    leaf = request.args.get("leaf") or None
    if leaf:
        leaf = tree.entry(leaf).id
    one = bool(leaf)
    return _review_page(rel, Target(
        f"Export {'one branch' if one else 'the session'} as one HTML file", "export.export", "share.review",
        {"leaf": leaf} if leaf else {}, "Download the export", f"export {'this branch' if one else 'every branch'}"))


@bp.get("/s/<path:rel>/compare/export/review")
def compare_review(rel: str):
    """The review before a comparison's export (the branches as the comparison's URL names them)."""
    current.store().session(rel)
    params = {k: v for k, v in request.args.items() if k in ("ids", "base", "align", "fold")}
    ids = request.args.getlist("id")
    if ids:
        params["id"] = ids
    return _review_page(rel, Target(
        "Export the comparison as one HTML file", "compare.export", "share.compare_review", params,
        "Download the comparison", "export the comparison"))


@bp.get("/s/<path:rel>/print/review")
def print_review(rel: str):
    """The review before the print view (what is printed is what is shared)."""
    current.store().session(rel)
    params = {k: v for k, v in request.args.items() if k in ("leaf", "node")}
    return _review_page(rel, Target(
        "Print this branch", "printing.print_branch", "share.print_review", params,
        "Open the print view", "print this branch"))


@bp.app_template_filter("hidden_fields")
def hidden_fields(params: dict) -> list[tuple[str, str]]:
    """A target's parameters as (name, value) pairs for hidden inputs (a list gives one each)."""
    return [(k, x) for k, v in params.items() for x in (v if isinstance(v, list) else [v])]
