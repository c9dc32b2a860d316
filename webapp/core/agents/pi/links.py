"""How pi's files name the files they continue: a fork (`/fork`, `createBranchedSession`) is a new
file whose header's `parentSession` (pi v1: `branchedFrom`) is the source file's path, holding
copies of the path's entries with their ids: the same id is the same node, so nothing more is said."""

from __future__ import annotations

from ..links import FORK, Link, attach_point, copies  # noqa: F401 (pi's answers are the plain ones)


def link_of(tree) -> Link | None:
    header = tree.header or {}
    for field in ("parentSession", "branchedFrom"):
        value = header.get(field)
        if isinstance(value, str) and value.strip():
            return Link(FORK, field, value.strip())
    return None
