"""Every branch's figures for a session, computed once per file version (the Branches tab and
"compare every leaf" both read them)."""

from __future__ import annotations

from ..core.leaf_figures import LeafFigures, leaf_figures
from ..core.session import Session
from .current import store


def cached_leaf_figures(rel: str, session: Session) -> list[LeafFigures]:
    views = store().views
    key = ("leaf-figures", rel, session.storage.version_key())
    rows = views.get(key)
    if rows is None:
        rows = leaf_figures(session.tree)
        views.put(key, rows)
    return rows
