"""The sessions the app serves: safe lookup under the root, and caches keyed on file changes.

A URL names a session by its path relative to the root. Nothing outside the root can be named:
`..`, absolute paths and symlinks that lead out are refused. Sessions are kept open and follow
their file (a new append is read on the next request); derived views are cached on the file's
size + mtime + inode, so a change on disk invalidates them without a restart.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path, PurePosixPath

from ..core.catalog import SessionSummary, summarize_session
from ..core.errors import SessionError, SessionNotFound
from ..core.session import Session
from ..core.storage import discover


class LRU:
    """A small thread-safe least-recently-used cache."""

    def __init__(self, size: int):
        self.size = size
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        return None

    def put(self, key, value) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)


class SessionStore:
    def __init__(self, root: str | Path):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise SessionNotFound(f"{root}: not a folder")
        self._sessions = LRU(32)  # open sessions hold their parsed file: keep the recent ones
        self._lock = threading.Lock()
        self.summaries = LRU(512)
        self.views = LRU(64)  # rendered graphs and other costly views

    def resolve(self, rel: str) -> Path:
        """The file a URL path names, or SessionNotFound when it is not a session under the root."""
        parts = PurePosixPath(rel).parts
        if (
            not rel
            or rel.startswith(("/", "\\"))
            or "\\" in rel
            or any(p in ("..", ".") or ":" in p or "\x00" in p for p in parts)
            or len(parts) > 2
            or not rel.endswith(".jsonl")
        ):
            raise SessionNotFound(f"no session {rel!r}")
        path = (self.root / rel).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            raise SessionNotFound(f"no session {rel!r}")
        return path

    def rel(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    def session(self, rel: str) -> Session:
        path = self.resolve(rel)
        with self._lock:
            session = self._sessions.get(path)
            if session is None:
                session = Session.open(path)
                self._sessions.put(path, session)
        return session

    def list(self) -> list[tuple[str, SessionSummary | None, str | None]]:
        """(rel path, summary, error) for every session under the root, summaries cached."""
        out = []
        for path in discover(self.root):
            if not path.resolve().is_relative_to(self.root):
                continue  # a symlink that leads out of the root
            rel = self.rel(path)
            try:
                st = path.stat()
                key = (rel, st.st_size, st.st_mtime_ns, st.st_ino)
                summary = self.summaries.get(key)
                if summary is None:  # a listing reads files without keeping them open
                    summary = summarize_session(path)
                    self.summaries.put(key, summary)
                out.append((rel, summary, None))
            except (OSError, SessionError) as exc:
                out.append((rel, None, str(exc)))
        return out
