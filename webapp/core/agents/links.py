"""How an agent's files name the files they continue (SPEC §5e): the `Link` a file makes, and the
three questions each agent's room answers about its own files (its `links` module). The joining
itself knows no agent: `core/conversations.py` groups files for a listing, `core/joined.py`
draws one tree of them.

A room's `links` module holds:
- `link_of(tree) -> Link | None`: what the file says it continues (None: nothing);
- `copies(child, parent, link) -> {child entry id: parent entry id or None}`: the child's entries
  that are the parent's again under another id (a copy with a new uuid, a copied line without an
  id of its own); None for an entry that is no node of the conversation (a copy of the parent's
  header). Entries that keep their ids need no word: the same id is the same node;
- `attach_point(parent, child, link) -> entry id | None`: where in the parent the child's own
  first entries hang when the child holds no copy of what it inherits (a paginated fork, a
  sub-agent spawned by a call).
This module gives the answers for an agent that says nothing (a room without a `links` module).
"""

from __future__ import annotations

# What a link is: the file goes on from another (a fork, a branch), is a copy that goes on (a
# resumed copy, found by the ids it shares), or is a sub-agent's that another started.
FORK, RESUME, SUBAGENT = "fork", "resume", "subagent"


class Link:
    """What one file says of the file it continues.

    - `kind`: FORK, RESUME or SUBAGENT;
    - `field`: the reference as the file writes it (`parentSession`, `forkedFrom`, `forked_from_id`,
      `parent_thread_id`), "" when only shared ids tell (a resumed copy);
    - `names`: what it names, a file's path or a session's id (None: only shared ids);
    - `position`: where in the named session the file's own part starts, when the file says so
      in a number (a paginated Codex fork's `history_base.end_ordinal_exclusive`);
    - `at`: that place in people's words ("before ordinal 10", "after entry a4"), or None.
    """

    __slots__ = ("kind", "field", "names", "position", "at")

    def __init__(self, kind: str, field: str, names: str | None, position: int | None = None,
                 at: str | None = None) -> None:
        self.kind, self.field, self.names, self.position, self.at = kind, field, names, position, at

    def __repr__(self) -> str:
        return f"Link({self.kind!r}, {self.field!r}, {self.names!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Link) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    @property
    def said(self) -> str:
        """The reference in the file's words, as a listing names what it refers to."""
        if not self.field:
            return "shared entry ids"
        return f"{self.field} {self.names}" if self.names else self.field


def link_of(tree) -> Link | None:
    return None


def copies(child, parent, link: Link) -> dict[str, str | None]:
    return {}


def attach_point(parent, child, link: Link) -> str | None:
    return None
