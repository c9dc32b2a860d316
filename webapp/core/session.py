"""A session: its storage, what has been read of it, and every write (append, fork, label).

Reads are incremental: only the bytes added since the last read are parsed, so a file that
another process appends to is followed cheaply; a file rewritten in place (pi does so when it
migrates one) is noticed by a fingerprint of what was read, and read again from the start. Every
write happens under the storage lock after catching up with the file, so the active leaf it
continues from is the current one. Reads never wait for that lock: the session's own lock only
covers the in-memory update, and a writer takes it after the file lock, not while waiting for it.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import orjson

from .agents import why_read_only
from .bodies import Bodies
from .compaction import check_first_kept
from .context_edits import check_edit, replacement_problem
from .system_prompt import system_checkpoint
from .entries import (
    BRANCH_SUMMARY, COMPACTION, CONTEXT_EDIT, CUSTOM, CUSTOM_MESSAGE, LABEL, LEAF, MESSAGE, MODEL_CHANGE, REQUIRED_FIELDS,
    SESSION_INFO, SESSION_VERSION, THINKING_LEVEL_CHANGE, Entry, content_text, new_id, now_iso,
)
from .errors import InvalidWrite, ReadOnlySession, SessionError
from .reader import SessionLog
from .storage import JsonlStorage, MemoryStorage, Storage, cwd_folder_name, session_file_name, write_new_file
from .tree import SessionTree

FINGERPRINT_BYTES = 4096  # of the start and of the end of what was read, checked on every change
ACTIVE = object()  # "append at the active leaf", as opposed to an explicit parent id or None

# Keys a caller may not set on an entry it appends: the session fills them in.
FILLED_KEYS = ("id", "parentId", "timestamp")

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")  # pi's levels

NEW_FILE_HINT = "continue in a new file with `session-tree fork FILE --from ID --new-file`"


@dataclass(frozen=True)
class ForkResult:
    leaf_id: str | None  # the new active leaf
    entry: dict  # the line written
    edit_text: str | None  # a user message's text, offered for editing (position "before")


class Session:
    def __init__(self, storage: Storage):
        self.storage = storage
        self._log = self._new_log()
        self._key: tuple | None = None
        self._tree: SessionTree | None = None
        self._stale = True  # the log read more than the tree holds
        self._fingerprint: tuple[bytes, bytes] | None = None  # hashes of the first and last bytes read
        self._tail_first = False  # see open_for_append
        self.rewrites = 0  # how many times the file was found rewritten in place and read again
        # One session serves many request threads: reading and building happen one at a time.
        self._lock = threading.RLock()

    @classmethod
    def open(cls, path: str | os.PathLike) -> "Session":
        return cls(JsonlStorage(path))

    @classmethod
    def in_memory(cls, data: bytes = b"") -> "Session":
        return cls(MemoryStorage(data))

    @classmethod
    def open_for_append(cls, path: str | os.PathLike) -> "Session":
        """A session that only appends (`session-tree append`): its first read takes the header
        line and the last line, which name the active leaf whenever the last entry is not a
        `leaf` entry and the file ends whole; it reads everything only otherwise (so an
        append costs the same on any size). What it reads after that is read as usual."""
        session = cls(JsonlStorage(path))
        session._tail_first = True
        return session

    # -- reading -------------------------------------------------------------------------------

    def refresh(self, force: bool = False) -> SessionLog:
        """Catch up with the storage; start over if it shrank, was replaced or was rewritten.

        `force` reads even when the version key is unchanged (a write within the same mtime tick
        can leave it so); a shrunk, replaced or rewritten storage is still detected then.
        """
        with self._lock:
            key = self.storage.version_key()
            if key == self._key and not force:
                return self._log
            if self._key is not None and (
                key[0] < self._log.offset or key[2:] != self._key[2:] or self._rewritten()
            ):
                self.rewrites += 1  # rewritten in place, cut short, or replaced: read again
                self._log = self._new_log()
                self._fingerprint = None
            if self._tail_first and self._key is None:
                self._tail_first = False
                log = _tail_log(self.storage, key[0])
                if log is not None:
                    self._log, self._key, self._stale = log, key, True
                    return log
            start = self._log.offset
            if not start and len(key) > 2:
                self._log.bodies.inode = key[2]  # bodies are read again from this file, not another
            recent = _Recent(start, self._fingerprint)
            self._log.feed_chunks(recent.watch(self.storage.read_chunks(start)))
            self._fingerprint = recent.fingerprint(self._log.offset, self.storage)
            self._key = key
            self._stale = True
            return self._log

    def _new_log(self) -> SessionLog:
        """An empty log of this storage, whose entries may read their bodies again from it."""
        return SessionLog(getattr(self.storage, "path", None), Bodies(self.storage))

    def _rewritten(self) -> bool:
        """True when the bytes read so far are no longer those in the storage (their first and
        last 4 KiB are compared by hash: an append never changes them, a rewrite almost surely does)."""
        if self._fingerprint is None or not self._log.offset:
            return False
        head, tail = _spans(self._log.offset)
        return self._fingerprint != (
            _digest(self.storage.read_at(*head)),
            _digest(self.storage.read_at(*tail)),
        )

    @property
    def log(self) -> SessionLog:
        return self.refresh()

    @property
    def tree(self) -> SessionTree:
        with self._lock:
            self.refresh()
            if self._stale:  # after an append, the tree grows; otherwise it is built anew
                grown = self._tree.extended(self._log) if self._tree is not None else None
                self._tree = grown or SessionTree(self._log)
                self._stale = False
            return self._tree

    @property
    def read_only_reason(self) -> str | None:
        """Why nothing may be written to this session, in one line; None when it is writable. Only
        pi's v3 files (and new ones) are written (SPEC §5c): each agent's room says why its other
        files are not."""
        what = why_read_only(self.log.format)
        if what:
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
        return self.append_entries([fields], parent, check)[0]

    def append_entries(
        self,
        batch: list[dict],
        parent=ACTIVE,
        check: Callable[[SessionTree, str | None], None] | None = None,
        stamps: list[str | None] | None = None,
    ) -> list[dict]:
        """Append entries all or nothing: every one is validated first, then all are written in
        one append under one lock, each continuing from the one before it (the first from
        `parent`, by default the active leaf). `stamps` gives an entry the time it happened
        (ISO-8601, as `now_iso` writes it) where that was before the write: a model's turn is
        written whole once its reply is, but its model change and user message were earlier."""
        if not batch:
            raise InvalidWrite("nothing to append")
        for i, fields in enumerate(batch):
            try:
                validate_fields(fields)
            except InvalidWrite as exc:
                raise InvalidWrite(f"entry {i + 1}: {exc}" if len(batch) > 1 else str(exc)) from None
            if fields["type"] == LEAF and i < len(batch) - 1:
                raise InvalidWrite(f"entry {i + 1}: a leaf entry moves the active leaf, so it must come last")
        self.check_writable()  # before the lock, which opens the file for writing
        refs = [r for r in (fields.get("targetId") for fields in batch) if isinstance(r, str)]
        with self.storage.locked(), self._lock:  # (in this order: reads never wait for the file lock)
            log = self.refresh(force=True)  # read again under the lock
            parent_id = log.active_leaf if parent is ACTIVE else parent
            gone = self._gone_from_disk(log, [parent_id, *refs])
            if gone:
                self._log, self._fingerprint = self._new_log(), None  # rewritten: read it all again
                self.rewrites += 1
                log = self.refresh(force=True)
                parent_id = log.active_leaf if parent is ACTIVE else parent
            self.check_writable()
            if log.header is None and not log.has_entries and not log.all_bad_lines():
                raise SessionError("the session has no header line; create it with `session-tree new`")
            if parent_id is not None and parent_id not in log.ids and not (
                log.tail_entry and log.tail_entry.id == parent_id
            ):
                raise InvalidWrite(f"no entry with id {parent_id!r} to append after")
            for ref in gone:
                if ref in refs and ref not in log.ids and not (log.tail_entry and log.tail_entry.id == ref):
                    raise InvalidWrite(f"no entry with id {ref!r} in {self.storage.name} any more (it was rewritten)")
            if check is not None:
                check(self.tree, parent_id)
            entries, lines = [], []
            branch_end = parent_id  # (the entries of the batch before an edit are no targets of it)
            for i, fields in enumerate(batch):
                if fields["type"] == CONTEXT_EDIT:  # checked and written as pi's appendContextEdit does
                    try:
                        fields = check_edit(self.tree, branch_end, fields)
                    except InvalidWrite as exc:
                        raise InvalidWrite(f"entry {len(entries) + 1}: {exc}" if len(batch) > 1 else str(exc)) from None
                stamp = stamps[i] if stamps and i < len(stamps) and stamps[i] else now_iso()
                entry = {"type": fields["type"], "id": new_id(), "parentId": parent_id, "timestamp": stamp}
                entry.update((k, v) for k, v in fields.items() if k != "type")
                try:
                    lines.append(orjson.dumps(entry))
                except TypeError as exc:  # a str that is not UTF-8, a value JSON cannot hold
                    raise InvalidWrite(f"entry {len(entries) + 1} cannot be written as JSON: {exc}") from None
                entries.append(entry)
                parent_id = entry["id"]
            self.storage.append_lines(lines)
        return entries

    def _gone_from_disk(self, log: SessionLog, ids: list) -> list[str]:
        """Those of the entries `ids` whose lines no longer hold them. What was read is checked
        only by its first and last 4 KiB (a fingerprint): a rewrite of the same size in between
        would let a write refer to an entry that is gone. Checked under the lock, on the few
        entries a write names, each by reading its own line again."""
        bodies, gone = log.bodies, []
        if bodies is None:
            return gone
        for entry_id in ids:
            entry = log.ids.get(entry_id) if isinstance(entry_id, str) else None
            if entry is None or entry.file is not None or entry.line >= len(bodies.starts):
                continue  # not read from a whole line of this file: the checks below refuse or allow it
            offset = bodies.starts[entry.line - 1]
            size = bodies.starts[entry.line] - offset
            data = self.storage.read_at(offset, size)
            try:
                obj = orjson.loads(data) if data.endswith(b"\n") else None
            except orjson.JSONDecodeError:
                obj = None
            if type(obj) is not dict or obj.get("id") != entry.line_id:
                gone.append(entry_id)
        return gone

    append = append_entry  # the short name the tests build their sessions with; the app calls the typed methods

    def append_message(self, message: dict, parent=ACTIVE, details: dict | None = None) -> dict:
        """A conversation message (user, assistant, toolResult, bashExecution, custom); `details`
        is this app's record beside it (a replay's first reply says what it replays, SPEC §5d)."""
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise InvalidWrite("a message must be a JSON object with a string `role`")
        fields = {"type": MESSAGE, "message": message}
        if details is not None:
            fields["details"] = details
        return self.append_entry(fields, parent)

    def append_custom_message(
        self, custom_type: str, content, display: bool = True, details: dict | None = None, parent=ACTIVE
    ) -> dict:
        """A message an extension injects into the context (SPEC §2 `custom_message`)."""
        fields = {"type": CUSTOM_MESSAGE, "customType": custom_type, "content": content, "display": display}
        if details is not None:
            fields["details"] = details
        return self.append_entry(fields, parent)

    def append_custom(self, custom_type: str, data, parent=ACTIVE) -> dict:
        """An extension's own state (SPEC §2 `custom`): kept in the tree, never in the context."""
        if not isinstance(custom_type, str) or not custom_type:
            raise InvalidWrite("a custom entry needs a customType")
        return self.append_entry({"type": CUSTOM, "customType": custom_type, "data": data}, parent)

    def append_context_edit(self, target_id: str, replacement, parent=ACTIVE) -> dict:
        """An edit of what an earlier entry of the branch says to the model (pi 1.6): `None` takes
        it out of the context, `{"content": ...}` replaces its content. Refused, in pi's words,
        where pi's `appendContextEdit` refuses it; written as pi writes it."""
        return self.append_entry({"type": CONTEXT_EDIT, "targetId": target_id, "replacement": replacement}, parent)

    def check_edit(self, leaf_id: str | None, target_id: str, replacement) -> dict:
        """The context edit as it would be written at `leaf_id`, or InvalidWrite (pi's words)."""
        fields = {"type": CONTEXT_EDIT, "targetId": target_id, "replacement": replacement}
        validate_fields(fields)
        return check_edit(self.tree, leaf_id, fields)

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
        usage: dict | None = None,
    ) -> dict:
        """A compaction at `parent`; refused unless `first_kept_entry_id` is a cut point on the path
        it is written on (SPEC §6), checked under the lock after `check`. `usage` is the summarizer
        call's. Where the path holds system messages, the compaction carries the prompt and tools
        in force there (`systemMessage`, as pi 1.6 writes it), which the compacted part held."""
        if not isinstance(summary, str) or not summary.strip():
            raise InvalidWrite("the summary is empty")
        fields = {"type": COMPACTION, "summary": summary, "firstKeptEntryId": first_kept_entry_id,
                  "tokensBefore": tokens_before}

        def check_all(tree: SessionTree, parent_id: str | None) -> None:
            if check is not None:
                check(tree, parent_id)
            check_first_kept(tree, parent_id, first_kept_entry_id)
            checkpoint = system_checkpoint(tree, parent_id)
            if checkpoint is not None:  # (on the file as it is under the lock)
                fields["systemMessage"] = {**checkpoint, "timestamp": int(time.time() * 1000)}

        if tokens_after is not None:
            fields["tokensAfter"] = tokens_after
        if details is not None:
            fields["details"] = details
        if usage is not None:
            fields["usage"] = usage
        return self.append_entry(fields, parent, check_all)

    def fork(self, target_id: str, position: str = "at") -> ForkResult:
        """SPEC §4: move the active leaf to `target_id` (`at`) or to its parent (`before`)."""
        leaf_id, edit = self._fork_point(target_id, position)
        written = self.append_entry({"type": LEAF, "targetId": leaf_id}, parent=leaf_id)
        return ForkResult(leaf_id, written, edit)

    def fork_with_summary(
        self, target_id: str | None, position: str, summary: str, details: dict | None = None,
        from_id: str | None = None, usage: dict | None = None,
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
        if usage is not None:
            fields["usage"] = usage  # (the summarizer call's, as pi writes it)
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
    if fields["type"] == CONTEXT_EDIT and replacement_problem(fields["replacement"]):
        raise InvalidWrite(replacement_problem(fields["replacement"]))


def user_message(text: str) -> dict:
    """A user message as pi writes one (its timestamp in milliseconds)."""
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": int(time.time() * 1000)}


TAIL_STEP = 64 * 1024


def _tail_log(storage: Storage, size: int) -> SessionLog | None:
    """A log of the header line and the last line only, enough to append after the active leaf;
    None when the end of the file cannot tell it (a torn or bad last line, a `leaf` entry, an
    entry without an id or parent id as pi v1 writes them, no session header)."""
    if not size or storage.read_at(size - 1, 1) != b"\n":
        return None
    first = _line_at(storage, 0, size)
    start = size - 1  # the newline that ends the last line: find the one before it
    while True:
        step = min(TAIL_STEP, start)
        chunk = storage.read_at(start - step, step)
        cut = chunk.rfind(b"\n")
        if cut >= 0 or step == start:
            last_start = start - step + cut + 1
            break
        start -= step
    last = storage.read_at(last_start, size - 1 - last_start)
    log = SessionLog()
    log._read_line(first, 1)
    if log.header is None or log.bad_lines:
        return None
    if last_start:
        try:
            obj = orjson.loads(last)
        except orjson.JSONDecodeError:
            return None
        if not (isinstance(obj, dict) and isinstance(obj.get("id"), str) and obj["id"]
                and "parentId" in obj and obj.get("type") != LEAF):
            return None
        log._read_line(last, 2)  # (its line number is not known: not needed to append after it)
    log.offset, log.lines = size, 2 if last_start else 1
    return log


def _line_at(storage: Storage, offset: int, size: int) -> bytes:
    """The line that starts at `offset` (without its newline)."""
    data = b""
    while offset + len(data) < size:
        data += storage.read_at(offset + len(data), TAIL_STEP)
        end = data.find(b"\n")
        if end >= 0:
            return data[:end]
    return data


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _spans(offset: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(start, length) of the first and of the last FINGERPRINT_BYTES before `offset`."""
    head = min(FINGERPRINT_BYTES, offset)
    return (0, head), (offset - min(FINGERPRINT_BYTES, offset), min(FINGERPRINT_BYTES, offset))


class _Recent:
    """Keeps, while a read goes by, the bytes a fingerprint needs: the file's first bytes and the
    last ones before the end of the last complete line. Taken from the bytes that were parsed
    where it can (a rewrite during the read then cannot slip into the fingerprint); what an
    earlier read covered is read again."""

    def __init__(self, start: int, previous: tuple[bytes, bytes] | None):
        self.start = start
        self.pos = start
        self.head = bytearray()
        self.previous = previous
        self.chunks: list[tuple[int, bytes]] = []  # (position, bytes) from before the last newline

    def watch(self, chunks):
        for chunk in chunks:
            if self.pos < FINGERPRINT_BYTES:
                self.head += chunk[: FINGERPRINT_BYTES - self.pos]
            self.chunks.append((self.pos, chunk))
            self.pos += len(chunk)
            nl = chunk.rfind(b"\n")
            if nl >= 0:  # only bytes from 4 KiB before the last newline on can be needed
                keep_from = self.pos - len(chunk) + nl + 1 - FINGERPRINT_BYTES
                while len(self.chunks) > 1 and self.chunks[1][0] <= keep_from:
                    self.chunks.pop(0)
            yield chunk

    def fingerprint(self, offset: int, storage: Storage) -> tuple[bytes, bytes] | None:
        """Hashes of the first and last bytes before `offset` (the end of the complete lines)."""
        if not offset:
            return None
        head_span, (tail_start, tail_len) = _spans(offset)
        if self.start == 0:
            head = _digest(bytes(self.head[: head_span[1]]))
        elif self.previous is not None and self.start >= FINGERPRINT_BYTES:
            head = self.previous[0]  # a whole 4 KiB was read before and checked since
        else:
            head = _digest(storage.read_at(*head_span))
        first = self.chunks[0][0] if self.chunks else offset
        if tail_start >= first:
            data = b"".join(c for _, c in self.chunks)
            tail = _digest(data[tail_start - first: tail_start - first + tail_len])
        else:  # the last 4 KiB began in an earlier read
            tail = _digest(storage.read_at(tail_start, tail_len))
        return head, tail


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
    try:  # before anything is made on disk: a refused header leaves no folder and no empty file
        data = b"".join(orjson.dumps(line) + b"\n" for line in (header, *entries))
    except TypeError:  # a str that is not UTF-8 (a non-UTF-8 argument keeps its bytes as surrogates)
        raise InvalidWrite("the working directory and parent session must be UTF-8 text") from None
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SessionError(f"cannot create the folder {folder}: {exc.strerror or exc}") from None
    path = folder / session_file_name(timestamp, session_id)
    try:
        write_new_file(path, data)
    except SessionError:
        if made:  # leave nothing behind: an empty per-cwd folder would stay from a failed `new`
            try:
                folder.rmdir()
            except OSError:
                pass
        raise
    return path
