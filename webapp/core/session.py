"""A session: its storage, what has been read of it, and every write (append, fork, label).

Reads are incremental: only the bytes added since the last read are parsed, so a file that
another process appends to is followed cheaply. Every write happens under the storage lock after
catching up with the file, so the active leaf it continues from is the current one.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import orjson

from .compaction import check_first_kept
from .entries import (
    BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, LABEL, LEAF, MESSAGE, MODEL_CHANGE, REQUIRED_FIELDS,
    SESSION_INFO, SESSION_VERSION, THINKING_LEVEL_CHANGE, Entry, content_text, new_id, now_iso,
)
from .errors import InvalidWrite, ReadOnlySession, SessionError
from .reader import SessionLog
from .storage import JsonlStorage, MemoryStorage, Storage, cwd_folder_name, session_file_name
from .tree import SessionTree

ACTIVE = object()  # "append at the active leaf", as opposed to an explicit parent id or None

# Keys a caller may not set on an entry it appends: the session fills them in.
FILLED_KEYS = ("id", "parentId", "timestamp")

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")  # pi's levels

# SPEC §5c: the formats we append to. A pi v1/v2 file is rewritten with new ids by pi when it
# next opens it (our appends would be lost), and another agent's file is not ours to change.
WRITABLE_FORMATS = frozenset({"pi-v3", "empty"})
_PI_REWRITES = "pi rewrites it with new ids when it opens it, which would lose what we append"
READ_ONLY_FORMATS = {
    "pi-v1": "is a pi v1 session: " + _PI_REWRITES,
    "pi-v2": "is a pi v2 session: " + _PI_REWRITES,
    "claude-code": "is a Claude Code session, another agent's file that session-tree only reads",
    "codex": "is a Codex session, another agent's file that session-tree only reads",
    "unknown": "has no pi session header, so session-tree only reads it",
}
NEW_FILE_HINT = "continue in a new file with `session-tree fork FILE --from ID --new-file`"


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

    @property
    def read_only_reason(self) -> str | None:
        """Why nothing may be written to this session, in one line; None when it is writable."""
        fmt = self.log.format
        if fmt not in WRITABLE_FORMATS:
            what = READ_ONLY_FORMATS.get(fmt, f"is a {fmt.replace('-', ' ')} session, newer than the v3 session-tree writes")
            return f"{self.storage.name} {what}; {NEW_FILE_HINT}"
        problem = self.storage.write_problem()
        return f"{self.storage.name} {problem}; {NEW_FILE_HINT}" if problem else None

    def check_writable(self) -> None:
        """Raise ReadOnlySession, saying why, unless this session may be written to."""
        reason = self.read_only_reason
        if reason:
            raise ReadOnlySession(reason)

    # -- writing -------------------------------------------------------------------------------
    # One method per kind of entry; each builds its entry and goes through `append_entry`, which
    # validates it with the reader's REQUIRED_FIELDS and appends it under the lock.

    def append_entry(
        self,
        fields: dict,
        parent=ACTIVE,
        check: Callable[[SessionTree, str | None], None] | None = None,
    ) -> dict:
        """Append one entry and return it as written (the generic write `session-tree append` uses).

        `fields` holds `type` and the type's own fields; `id`, `parentId` and `timestamp` are
        filled in, the parent being the active leaf unless given. `check(tree, parent_id)` runs
        under the lock, on the file as it is now, and may raise to refuse the write.
        """
        validate_fields(fields)
        self.check_writable()  # before the lock, which opens the file for writing
        with self._lock, self.storage.locked():
            log = self.refresh(force=True)  # read again under the lock
            self.check_writable()
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

    append = append_entry  # the name llm.py still calls; it moves to append_message

    def append_message(self, message: dict, parent=ACTIVE) -> dict:
        """A conversation message (user, assistant, toolResult, bashExecution, custom)."""
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise InvalidWrite("a message must be a JSON object with a string `role`")
        return self.append_entry({"type": MESSAGE, "message": message}, parent)

    def append_custom_message(
        self, custom_type: str, content, display: bool = True, details: dict | None = None, parent=ACTIVE
    ) -> dict:
        """A message an extension injects into the context (SPEC §2 `custom_message`)."""
        fields = {"type": CUSTOM_MESSAGE, "customType": custom_type, "content": content, "display": display}
        if details is not None:
            fields["details"] = details
        return self.append_entry(fields, parent)

    def append_model_change(self, provider: str | None, model_id: str, parent=ACTIVE) -> dict:
        if not model_id:
            raise InvalidWrite("a model change needs a model id")
        return self.append_entry({"type": MODEL_CHANGE, "provider": provider, "modelId": model_id}, parent)

    def append_thinking_level_change(self, level: str, parent=ACTIVE) -> dict:
        if level not in THINKING_LEVELS:
            raise InvalidWrite(f"thinking level must be one of {', '.join(THINKING_LEVELS)}, not {level!r}")
        return self.append_entry({"type": THINKING_LEVEL_CHANGE, "thinkingLevel": level}, parent)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        tokens_after: int | None = None,
        details: dict | None = None,
        parent=ACTIVE,
        check: Callable[[SessionTree, str | None], None] | None = None,
    ) -> dict:
        """A compaction at `parent`; refused unless `first_kept_entry_id` is a cut point on the path
        it is written on (SPEC §6), checked under the lock after `check`."""
        if not isinstance(summary, str) or not summary.strip():
            raise InvalidWrite("the summary is empty")

        def check_all(tree: SessionTree, parent_id: str | None) -> None:
            if check is not None:
                check(tree, parent_id)
            check_first_kept(tree, parent_id, first_kept_entry_id)

        fields = {"type": COMPACTION, "summary": summary, "firstKeptEntryId": first_kept_entry_id,
                  "tokensBefore": tokens_before}
        if tokens_after is not None:
            fields["tokensAfter"] = tokens_after
        if details is not None:
            fields["details"] = details
        return self.append_entry(fields, parent, check_all)

    def fork(self, target_id: str, position: str = "at") -> ForkResult:
        """SPEC §4: move the active leaf to `target_id` (`at`) or to its parent (`before`)."""
        leaf_id, edit = self._fork_point(target_id, position)
        written = self.append_entry({"type": LEAF, "targetId": leaf_id}, parent=leaf_id)
        return ForkResult(leaf_id, written, edit)

    def fork_with_summary(
        self, target_id: str | None, position: str, summary: str, details: dict | None = None,
        from_id: str | None = None,
    ) -> ForkResult:
        """SPEC §4 fork that leaves a `branch_summary` of the branch left (`from_id`, by default
        the active conversation leaf) instead of a `leaf` entry; the summary becomes the active
        leaf. `target_id` None forks at the start of the conversation."""
        if not isinstance(summary, str) or not summary.strip():
            raise InvalidWrite("the summary is empty")
        leaf_id, edit = self._fork_point(target_id, position) if target_id is not None else (None, None)
        tree = self.tree
        old = from_id if from_id is not None else tree.conversation_leaf(tree.active_leaf)
        if old is None:
            raise InvalidWrite("there is no branch to summarize: the conversation was empty")
        tree.entry(old)
        fields = {"type": BRANCH_SUMMARY, "fromId": old, "summary": summary}
        if details is not None:
            fields["details"] = details
        written = self.append_entry(fields, parent=leaf_id)
        return ForkResult(written["id"], written, edit)

    def _fork_point(self, target_id: str, position: str) -> tuple[str | None, str | None]:
        """The new active leaf of a fork, and a user message's text to edit (position `before`)."""
        if position not in ("at", "before"):
            raise InvalidWrite(f"position must be 'at' or 'before', not {position!r}")
        tree = self.tree
        target = tree.entry(target_id)
        if position == "at":
            return target_id, None
        edit = content_text(target.message.get("content")) if target.role == "user" else None
        return tree.parent[target_id], edit

    def set_label(self, target_id: str, text: str | None) -> dict:
        """Label an entry, or clear its label with None/empty text; the label line is appended."""
        self.tree.entry(target_id)
        fields: dict = {"type": LABEL, "targetId": target_id}
        if text and text.strip():
            fields["label"] = text.strip()
        return self.append_entry(fields)

    def set_name(self, name: str | None) -> dict:
        """Name the session (a `session_info` entry); None or empty text clears the name."""
        fields: dict = {"type": SESSION_INFO}
        if name and name.strip():
            fields["name"] = name.strip()
        return self.append_entry(fields)

    def entry(self, entry_id: str) -> Entry:
        return self.tree.entry(entry_id)


def validate_fields(fields) -> None:
    """Refuse an entry the reader would report: not an object, no string type, a filled-in key set,
    or a required field of its type missing."""
    if not isinstance(fields, dict) or not isinstance(fields.get("type"), str):
        raise InvalidWrite("an entry must be a JSON object with a string `type`")
    clash = [k for k in FILLED_KEYS if k in fields]
    if clash:
        raise InvalidWrite(f"do not set {', '.join(clash)}: the session fills them in")
    missing = [f for f in REQUIRED_FIELDS.get(fields["type"], ()) if f not in fields]
    if missing:
        raise InvalidWrite(f"a {fields['type']} entry needs {', '.join(missing)}")


def user_message(text: str) -> dict:
    """A user message as pi writes one (its timestamp in milliseconds)."""
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": int(time.time() * 1000)}


def create_session(root: str | os.PathLike, cwd: str, parent_session: str | None = None) -> Path:
    """Create an empty session (header only) in the per-cwd folder of `root`; return its path."""
    return write_new_session(Path(root) / cwd_folder_name(cwd), cwd, parent_session)


def write_new_session(
    folder: Path, cwd: str, parent_session: str | None = None, entries: Iterable[dict] = ()
) -> Path:
    """Create a v3 session file in `folder` holding a header and `entries`, in one durable write."""
    session_id = new_id()
    timestamp = now_iso()
    header = {"type": "session", "version": SESSION_VERSION, "id": session_id, "timestamp": timestamp, "cwd": cwd}
    if parent_session:
        header["parentSession"] = parent_session
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / session_file_name(timestamp, session_id)
    with open(path, "xb") as f:
        f.write(b"".join(orjson.dumps(line) + b"\n" for line in (header, *entries)))
        f.flush()
        os.fsync(f.fileno())
    return path
