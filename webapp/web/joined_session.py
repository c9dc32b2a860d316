"""A session page's file with the files of its conversation (SPEC §5e): what `SessionStore.session`
gives when the file continues another or is continued, so that every view (the drawing, the
context, compare, audit, export) reads one tree of them (`core.joined`).

Which files: those the index says are of the file's conversation (`SessionStore.related`, set
when the server has an index), with the files of its own folder and the one its link names,
joined by what their first lines say (`conversations.head_facts`, kept per file version): a
fork made a moment ago is found before the index has read it, and without an index a
conversation whose files share a folder (pi's forks, Claude Code's branches and copies) is still
one. The files are read whole only once they are known to be of the conversation.

Writes go to the file itself, as before (`__getattr__`): its own entries are its own tree's, so
a write that names another file's entry is refused by the file's session, and continuing from
there makes a new file (SPEC §5c).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.conversations import Facts, group, session_of_name, tree_facts
from ..core.joined import join
from ..core.errors import InvalidWrite
from ..core.session import ACTIVE, Session


class JoinedStorage:
    """The file's storage, whose version is that of every file of the conversation: the views
    cached on it are made again when any of them changes."""

    def __init__(self, storage, versions) -> None:
        self._storage, self._versions = storage, versions

    def __getattr__(self, name):
        return getattr(self._storage, name)

    def version_key(self) -> tuple:
        own = self._storage.version_key()
        return (*own, self._versions())


class JoinedSession:
    """A session file (`file_session`) read as part of its conversation (`members`: the files, as
    the store names them, the file itself among them)."""

    def __init__(self, store, rel: str, file_session: Session, members: list[str]) -> None:
        self._store, self.rel, self.file_session, self.members = store, rel, file_session, members

    def __getattr__(self, name):
        attr = getattr(self.file_session, name)
        if name.startswith("append") and callable(attr):  # (every append names where it goes on, or the active leaf)
            def append(*args, **kwargs):
                parent = kwargs.get("parent", ACTIVE)
                if parent is not ACTIVE:
                    self._own(parent)
                return attr(*args, **kwargs)
            return append
        return attr

    def _own(self, entry_id: str | None) -> None:
        """Refuse, saying why, a write after an entry this file does not hold: it is another
        file's, and the file shown is the one written (SPEC §5c: continue in a new file)."""
        joined = self.tree.joined
        part = joined.elsewhere(entry_id) if joined is not None and entry_id is not None else None
        if part is not None:
            raise InvalidWrite(f"{entry_id} is an entry of {part.label}, not of this file; "
                               "continue from it in a new file")

    def fork(self, target_id: str, position: str = "at"):
        self._own(target_id)
        return self.file_session.fork(target_id, position)

    def fork_with_summary(self, target_id, *args, **kwargs):
        self._own(target_id)
        return self.file_session.fork_with_summary(target_id, *args, **kwargs)

    def set_label(self, target_id: str, text):
        self._own(target_id)
        return self.file_session.set_label(target_id, text)

    @property
    def tree(self):
        return self._store.joined_tree(self.rel, self.members)

    @property
    def storage(self) -> JoinedStorage:
        return JoinedStorage(self.file_session.storage, lambda: self._store.versions(self.members, self.rel))

    @property
    def own_tree(self):
        """The file's own tree (what a write to it is checked against)."""
        return self.file_session.tree

    def entry(self, entry_id: str):
        return self.tree.entry(entry_id)


def neighbours(path: Path) -> list[Path]:
    """The session files in the folder of `path`, the file itself left out."""
    out = []
    try:
        with os.scandir(path.parent) as it:
            out = [Path(e.path) for e in it if e.name.endswith(".jsonl") and e.name != path.name and e.is_file()]
    except OSError:
        pass
    return out


def members_of(rel: str, tree, candidates: list[tuple[str, Facts]]) -> tuple[list[str], bool]:
    """The files of the conversation of `rel` among `candidates` ((name, facts) of each), and
    whether `rel` names a source that is not among them."""
    grouping = group([tree_facts(rel, tree), *(f for name, f in candidates if name != rel)])
    return grouping.members(rel), rel in grouping.missing


def name_holds(name: str, wanted: str) -> bool:
    """Whether a file's name names the session `wanted` (the id a link names, or the file name
    a path ends with)."""
    return session_of_name(name) == session_of_name(wanted) or Path(name).name == Path(wanted).name


__all__ = ["JoinedSession", "JoinedStorage", "join", "members_of", "name_holds", "neighbours"]
