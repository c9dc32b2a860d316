"""The sessions the app serves: safe lookup under the root, and caches keyed on file changes.

A URL names a session by its path relative to the root (see `url_name`: a file name of any bytes
can be named). Nothing outside the root can be named: `..`, absolute paths and symlinks that lead
out are refused; a symlink loop, an over-long name or an unreadable file is a clear 404 or 403. Sessions are kept open and follow
their file (a new append is read on the next request); derived views are cached on the file's
size + mtime + inode, so a change on disk invalidates them without a restart.
"""

from __future__ import annotations

import gc
import stat
import threading
from collections import OrderedDict
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from werkzeug.exceptions import Forbidden

from ..core.agents.places import discover, max_parts
from ..core.catalog import SessionSummary, summarize_session
from ..core.errors import SessionError, SessionNotFound
from ..core.session import Session
from ..core.storage import fs_name, url_name


class ViewKey(NamedTuple):
    """What a view kept in `SessionStore.views` was made of, by name: its kind, the session, the
    version of the file (None: a view kept across versions, such as the last drawing an append
    patches), and what else it depends on as (name, value) pairs."""

    kind: str
    rel: str
    version: tuple | None
    depends: tuple = ()


def view_key(kind: str, rel: str, version: tuple | None, **depends) -> ViewKey:
    return ViewKey(kind, rel, version, tuple(sorted(depends.items())))


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

    def drop(self, which) -> None:
        """Forget the entries whose key `which(key)` is true for."""
        with self._lock:
            for key in [k for k in self._data if which(k)]:
                del self._data[key]

    def put(self, key, value) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)


# Past this many bytes read since the last time, what the process holds is moved out of the
# cyclic collector's walks (gc.freeze): a big session is millions of objects with no cycles, and
# every full collection walked them all again (0.3 s each, in the middle of a request).
FREEZE_BYTES = 8 << 20


class SessionStore:
    def __init__(self, root: str | Path, within: tuple[str, ...] = ()):
        """`within`: the only folders under the root that are served (the agents' sessions
        folders when the root is the home folder)."""
        self.root = Path(root).resolve()
        self.within = tuple(PurePosixPath(Path(w).as_posix()) for w in within)
        if not self.root.is_dir():
            raise SessionNotFound(f"{root}: not a folder")
        # (the parts of a session file's path under the root: its folder's, and its agent's depth)
        self.max_parts = max_parts(self.root, [str(w) for w in self.within])
        self.skipped: list[str] = []  # the folders the last listing did not search, under the root
        self._sessions = LRU(32)  # open sessions hold their parsed file: keep the recent ones
        self._lock = threading.Lock()
        self.summaries = LRU(512)
        self.views = LRU(64)  # rendered graphs and other costly views, by ViewKey
        self._versions = LRU(1024)  # rel -> the version its views were last made of
        self._read_since_freeze = 0
        self._sizes: dict[Path, int] = {}

    def resolve(self, name: str) -> Path:
        """The file a URL path names, or SessionNotFound (with the reason) when it is not a
        session under the root."""
        rel = fs_name(name)
        parts = PurePosixPath(rel).parts
        if (
            not rel
            or rel.startswith(("/", "\\"))
            or "\\" in rel
            or any(p in ("..", ".") or ":" in p or "\x00" in p for p in parts)
            or len(parts) > self.max_parts
            or not rel.endswith(".jsonl")
            or (self.within and not any(PurePosixPath(rel).is_relative_to(w) for w in self.within))
        ):
            raise SessionNotFound(f"no session {name!r}")
        try:
            path = (self.root / rel).resolve()
            inside = [(self.root / w).resolve() for w in self.within] or [self.root]
            st = path.stat() if any(path.is_relative_to(folder) for folder in inside) else None
        except RuntimeError:  # Path.resolve's word for a symlink loop
            raise SessionNotFound(f"no session {name!r}: a symbolic link that leads to itself") from None
        except OSError as exc:  # a name too long, a loop found by stat, ...
            raise SessionNotFound(f"no session {name!r}: {exc.strerror or exc}") from None
        if st is None or not stat.S_ISREG(st.st_mode):
            raise SessionNotFound(f"no session {name!r}")
        return path

    def rel(self, path: Path) -> str:
        """The `url_name` of a file under the root."""
        return url_name(path.resolve().relative_to(self.root).as_posix())

    def session(self, name: str) -> Session:
        """The open session a URL names, caught up with its file; an unreadable file is a 403."""
        path = self.resolve(name)
        try:
            with self._lock:
                session = self._sessions.get(path)
                if session is None:
                    session = Session.open(path)
                    self._sessions.put(path, session)
            session.refresh()
            self._forget_older_views(name, session)
            self._freeze_when_grown(path, session)
        except PermissionError as exc:
            raise Forbidden(f"{name}: the file cannot be read ({exc.strerror or 'permission denied'})") from None
        return session

    def _forget_older_views(self, name: str, session: Session) -> None:
        """Drop what was cached for older versions of the file: a file followed while it grows
        would otherwise keep a layout, a drawing and the tree they hold for each of its last
        64 versions (gigabytes for a big one), none of which is asked for again."""
        version = session.storage.version_key()
        old = self._versions.get(name)
        self._versions.put(name, version)
        if old is not None and old != version:
            self.views.drop(lambda key: key.rel == name and key.version == old)

    def cached(self, kind: str, rel: str, session: Session, make, **depends):
        """The view `kind` of the session's current version (and of `depends`), made by `make()`
        once and kept in `views`."""
        key = view_key(kind, rel, session.storage.version_key(), **depends)
        view = self.views.get(key)
        if view is None:
            view = make()
            self.views.put(key, view)
        return view

    def _freeze_when_grown(self, path: Path, session: Session) -> None:
        size = session.storage.version_key()[0]
        with self._lock:
            grown = size - self._sizes.get(path, 0)
            self._sizes[path] = size
            self._read_since_freeze += max(grown, 0)
            if self._read_since_freeze < FREEZE_BYTES:
                return
            self._read_since_freeze = 0
        session.tree  # built now (every route asks for it next), then frozen with the rest
        gc.freeze()

    def files(self) -> list[Path]:
        """Every session file served: under the root (and `within`), no symlink leading out. The
        folders it did not search for their depth are left in `skipped`."""
        out, skipped = [], []
        found = discover(self.root, [str(w) for w in self.within], skipped)
        self.skipped = [Path(p).relative_to(self.root).as_posix() for p in skipped]
        for path in found:
            try:
                if not path.resolve().is_relative_to(self.root):
                    continue  # a symlink that leads out of the root
            except (OSError, RuntimeError):
                continue  # a loop: not a session file (discover leaves them out already)
            out.append(path)
        return out

    def skipped_folders(self) -> list[str]:
        """The folders a listing does not search, relative to the root (`files` leaves them in
        `skipped`)."""
        self.files()
        return self.skipped

    def list(self) -> list[tuple[str, SessionSummary | None, str | None]]:
        """(rel path, summary, error) for every session under the root, summaries cached."""
        out = []
        for path in self.files():
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
