"""Short ids in URLs: every query parameter that names an entry accepts what the CLI accepts, any
unique start or end of the id (the eight characters the graph and `tree` show), and answers with
a redirect to the same URL with the full ids, so that each route only ever sees whole ids."""

from __future__ import annotations

from urllib.parse import urlencode

from flask import Flask, redirect, request, url_for
from werkzeug.datastructures import MultiDict

from ..core.errors import AmbiguousEntry, SessionError, UnknownEntry
from .current import store

# Parameters whose values are entry ids (comma lists for some), and those that are ids only on
# one view (`start` is an entry on the comparison's turn view, a position elsewhere); path
# arguments that are ids.
ID_PARAMS = frozenset({"node", "leaf", "id", "ids", "tip", "base", "fold", "pick", "expand", "open"})
_ON_VIEW = {"compare.turn": frozenset({"start"}), "context_pages.diff_page": frozenset({"a", "b"})}
PATH_IDS = frozenset({"cid"})

# Parameters that list entries to unfold or leave out: a short id there that could be several
# entries is left as it is (it unfolds nothing) rather than failing the page.
_LENIENT = frozenset({"expand", "open", "fold", "pick"})


def _full(tree, value: str, lenient: bool) -> str:
    """`value` (one id, or ids separated by commas) with every short id made whole."""
    parts = value.split(",")
    out = []
    for part in parts:
        ref = part.strip()
        if not ref or ref in tree.by_id:
            out.append(part)
            continue
        try:
            out.append(tree.find(ref).id)
        except AmbiguousEntry:
            if not lenient:
                raise  # a 404 naming the entries it could be
            out.append(part)
        except UnknownEntry:
            out.append(part)  # no such entry: the route answers as it does for any unknown id
    return ",".join(out)


def _resolved(tree, args: MultiDict) -> MultiDict | None:
    """The query with full ids, or None when it names every entry in full already. An id
    that matches no entry is left as it is, for the route to answer; one that matches several
    raises `AmbiguousEntry` (a 404 saying which)."""
    changed = False
    out: MultiDict = MultiDict()
    also = _ON_VIEW.get(request.endpoint or "", frozenset())
    for key, value in args.items(multi=True):
        if key in ID_PARAMS or key in also:
            full = _full(tree, value, key in _LENIENT)
            changed = changed or full != value
            value = full
        out.add(key, value)
    return out if changed else None


def register(app: Flask) -> None:
    @app.before_request
    def whole_ids():
        view_args = request.view_args or {}
        rel = view_args.get("rel")
        if request.method != "GET" or not rel:
            return None
        also = _ON_VIEW.get(request.endpoint or "", frozenset())
        in_path = [k for k in view_args if k in PATH_IDS]
        if not in_path and not any(k in ID_PARAMS or k in also for k in request.args):
            return None
        try:
            tree = store().session(rel).tree
        except SessionError:
            return None  # the route says what is wrong with the session
        args = _resolved(tree, request.args)
        path_args = {k: _full(tree, view_args[k], False) for k in in_path}
        if args is None and all(path_args[k] == view_args[k] for k in in_path):
            return None
        path = url_for(request.endpoint, **{**view_args, **path_args}) if in_path else request.path
        query = urlencode(list((args if args is not None else request.args).items(multi=True)))
        return redirect(f"{path}?{query}" if query else path, code=302)
