"""A session: its storage, what has been read of it, and every write (append, fork, label).

Reads are incremental: only the bytes added since the last read are parsed, so a file that
another process appends to is followed cheaply. Every write happens under the storage lock after
catching up with the file, so the active leaf it continues from is the current one.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import orjson

from .entries import LABEL, LEAF, SESSION_VERSION, Entry, content_text, new_id, now_iso
from .errors import InvalidWrite, SessionError
from .reader import SessionLog
from .storage import JsonlStorage, MemoryStorage, Storage, cwd_folder_name, session_file_name
from .tree import SessionTree

ACTIVE = object()  # "append at the active leaf", as opposed to an explicit parent id or None

# Keys a caller may not set on an entry it appends: the session fills them in.
FILLED_KEYS = ("id", "parentId", "timestamp")


@dataclass(frozen=True)
class ForkResult:
    leaf_id: str | None  # the new active leaf
    entry: dict  # the line written
    edit_text: str | None  # a user message's text, offered for editing (position "before")


class Session:
    def __init__(self, storage: Storage):
        self.storage = storage
        self._log = SessionLog()
        self._key: tuple | None = None
        self._tree: SessionTree | None = None
        # One session serves many request threads: reading and building happen one at a time.
        self._lock = threading.RLock()

    @classmethod
    def open(cls, path: str | os.PathLike) -> "Session":
        return cls(JsonlStorage(path))

    @classmethod
    def in_memory(cls, data: bytes = b"") -> "Session":
        return cls(MemoryStorage(data))

    # -- reading -------------------------------------------------------------------------------

    def refresh(self, force: bool = False) -> SessionLog:
        """Catch up with the storage; start over if it shrank or was replaced.

        `force` reads even when the version key is unchanged (a write within the same mtime tick
        can leave it so); a shrunk or replaced storage is still detected then.
        """
        with self._lock:
            key = self.storage.version_key()
            if key == self._key and not force:
                return self._log
            if self._key is not None and (key[0] < self._log.offset or key[2:] != self._key[2:]):
                self._log = SessionLog()
            self._log.feed_chunks(self.storage.read_chunks(self._log.offset))
            self._key = key
            self._tree = None
            return self._log

    @property
    def log(self) -> SessionLog:
        return self.refresh()

    @property
    def tree(self) -> SessionTree:
        with self._lock:
            self.refresh()
            if self._tree is None:
                self._tree = SessionTree(self._log)
            return self._tree

    # -- writing -------------------------------------------------------------------------------

    def append(
        self,
        fields: dict,
        parent=ACTIVE,
        check: Callable[[SessionTree, str | None], None] | None = None,
    ) -> dict:
        """Append one entry and return it as written.

        `fields` holds `type` and the type's own fields; `id`, `parentId` and `timestamp` are
        filled in, the parent being the active leaf unless given. `check(tree, parent_id)` runs
        under the lock, on the file as it is now, and may raise to refuse the write.
        """
        if not isinstance(fields, dict) or not isinstance(fields.get("type"), str):
            raise InvalidWrite("an entry must be a JSON object with a string `type`")
        clash = [k for k in FILLED_KEYS if k in fields]
        if clash:
            raise InvalidWrite(f"do not set {', '.join(clash)}: the session fills them in")
        with self._lock, self.storage.locked():
            log = self.refresh(force=True)  # read again under the lock
            if log.header is None and not log.has_entries and not log.all_bad_lines():
                raise SessionError("the session has no header line; create it with `session-tree new`")
            parent_id = log.active_leaf if parent is ACTIVE else parent
            if parent_id is not None and parent_id not in log.ids and not (
                log.tail_entry and log.tail_entry.id == parent_id
            ):
                raise InvalidWrite(f"no entry with id {parent_id!r} to append after")
            if check is not None:
                check(self.tree, parent_id)
            entry = {"type": fields["type"], "id": new_id(), "parentId": parent_id, "timestamp": now_iso()}
            entry.update((k, v) for k, v in fields.items() if k != "type")
            self.storage.append_line(orjson.dumps(entry))
        return entry

    def fork(self, target_id: str, position: str = "at") -> ForkResult:
        """SPEC §4: move the active leaf to `target_id` (`at`) or to its parent (`before`)."""
        if position not in ("at", "before"):
            raise InvalidWrite(f"position must be 'at' or 'before', not {position!r}")
        target = self.tree.entry(target_id)
        leaf_id = target_id if position == "at" else self.tree.parent[target_id]
        written = self.append({"type": LEAF, "targetId": leaf_id}, parent=leaf_id)
        edit = None
        if position == "before" and target.role == "user":
            edit = content_text(target.message.get("content"))
        return ForkResult(leaf_id, written, edit)

    def set_label(self, target_id: str, text: str | None) -> dict:
        """Label an entry, or clear its label with None/empty text; the label line is appended."""
        self.tree.entry(target_id)
        fields: dict = {"type": LABEL, "targetId": target_id}
        if text and text.strip():
            fields["label"] = text.strip()
        return self.append(fields)

    def entry(self, entry_id: str) -> Entry:
        return self.tree.entry(entry_id)


def create_session(root: str | os.PathLike, cwd: str, parent_session: str | None = None) -> Path:
    """Create an empty session (header only) in the per-cwd folder of `root`; return its path."""
    session_id = new_id()
    timestamp = now_iso()
    header = {"type": "session", "version": SESSION_VERSION, "id": session_id, "timestamp": timestamp, "cwd": cwd}
    if parent_session:
        header["parentSession"] = parent_session
    folder = Path(root) / cwd_folder_name(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / session_file_name(timestamp, session_id)
    with open(path, "xb") as f:
        f.write(orjson.dumps(header) + b"\n")
        f.flush()
        os.fsync(f.fileno())
    return path
