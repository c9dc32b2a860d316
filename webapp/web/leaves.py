"""Every branch's figures for a session, computed once per file version (the Branches tab and
"compare every leaf" both read them)."""

from __future__ import annotations

from flask import current_app

from ..core.leaf_figures import LeafFigures, leaf_figures
from ..core.session import Session


def cached_leaf_figures(rel: str, session: Session) -> list[LeafFigures]:
    views = current_app.extensions["session_store"].views
    key = ("leaf-figures", rel, session.storage.version_key())
    rows = views.get(key)
    if rows is None:
        rows = leaf_figures(session.tree)
        views.put(key, rows)
    return rows
