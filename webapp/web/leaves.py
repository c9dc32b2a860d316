"""Every branch's figures for a session, computed once per file version (the Branches tab and
"compare every leaf" both read them)."""

from __future__ import annotations

from ..core.leaf_figures import LeafFigures, leaf_figures
from ..core.session import Session
from .current import store


def cached_leaf_figures(rel: str, session: Session) -> list[LeafFigures]:
    return store().cached("leaf-figures", rel, session, lambda: leaf_figures(session.tree))
