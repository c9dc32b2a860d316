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
import time
from collections import OrderedDict
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from werkzeug.exceptions import Forbidden

from ..core.agents.places import discover, discover_names, max_parts
from ..core.catalog import SessionSummary, summarize_session
from ..core.conversations import Facts, head_facts, link_of
from ..core.errors import SessionError, SessionNotFound
from ..core.session import Session
from ..core.storage import fs_name, orphan_depth, url_name
from .joined_session import JoinedSession, join, members_of, name_holds, neighbours


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
WALK_SECONDS = 10.0  # a walk of the root, for a link to a file in another folder, is made again after this
# Without an index, the files beside a page's file are read (their first lines, once per version)
# to find its conversation, in a folder of at most this many.
FOLDER_FILES = 2000
# A file's conversation, once found, is looked for again after this, or at once when the file or
# its folder changes (a fork written beside it changes the folder); the other files of it are
# looked at again (each a stat) after this too, or at once when the file itself changes: a page
# asks for its tree and version many times, and a conversation may hold hundreds of files.
MEMBERS_SECONDS = 2.0


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
        # Conversations across files: what the index says of a file's conversation (set by the
        # corpus routes when the server has an index: (rel, path) -> the rels of its files, or
        # None when the index does not hold it), the first-lines facts of the files looked at,
        # the joined trees, and the last walk of the root (for a link to another folder).
        self.related = None
        self._head_facts = LRU(4096)
        self._joined = LRU(8)
        self._members = LRU(256)  # rel -> (its version, when, the files of its conversation)
        self._recent = LRU(256)  # (what, rel, members) -> (its version, when, the joined tree or versions)
        self._walked: tuple[float, list[Path]] | None = None

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
            or len(parts) > self.max_parts + orphan_depth(self.root / rel)
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

    def session(self, name: str) -> Session | JoinedSession:
        """The open session a URL names, caught up with its file; an unreadable file is a 403.
        A file of a conversation across files comes with the others (`JoinedSession`: its tree
        is theirs together, its writes are its own file's)."""
        session = self.file_session(name)
        version, now = (session.storage.version_key(), self._folder_stamp(name)), time.monotonic()
        known = self._members.get(name)
        if known is not None and known[0] == version and now - known[1] < MEMBERS_SECONDS:
            members = known[2]  # (one request asks several times: the conversation does not change between)
        else:
            members = self.members(name, session)
            self._members.put(name, (version, now, members))
        return JoinedSession(self, name, session, members) if members else session

    def _folder_stamp(self, name: str) -> int | None:
        """The mtime of the folder of `name`'s file: it changes when a file is added beside it."""
        try:
            return self.resolve(name).parent.stat().st_mtime_ns
        except (OSError, SessionNotFound):
            return None

    def file_session(self, name: str) -> Session:
        """The open session of the file a URL names, alone."""
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

    # -- conversations across files --------------------------------------------------------------

    def members(self, name: str, session: Session) -> list[str] | None:
        """The files of the conversation of `name` (it among them), or None when it joins no
        other file and names none (see joined_session's docstring for where they are looked for).
        With an index that holds the file, its files are the index's (and the file its link names,
        made since); else the files beside it (at most FOLDER_FILES) and the one its link names."""
        path = self.resolve(name)
        tree = session.tree
        link = link_of(tree)
        indexed = self._indexed(name, path)
        if indexed is not None:
            candidates = [p for p in map(self._path_or_none, indexed) if p is not None and p != path]
            if link is not None and link.names and not any(name_holds(p.name, link.names) for p in candidates):
                candidates += self._named(path, link.names)
            if not candidates and link is None:
                return None  # alone, as the index says
        else:
            beside = neighbours(path)
            candidates = beside if len(beside) <= FOLDER_FILES else []
            if link is not None and link.names:
                candidates += [p for p in self._named(path, link.names) if p not in candidates]
        facts = []
        for p in candidates:
            rel = self._rel_or_none(p)
            got = self._facts(p, rel) if rel is not None else None
            if got is not None:
                facts.append((rel, got))
        members, missing = members_of(name, tree, facts)
        return members if len(members) > 1 or missing else None

    def _path_or_none(self, rel: str) -> Path | None:
        try:
            return self.resolve(rel)
        except SessionNotFound:
            return None

    def _indexed(self, name: str, path: Path) -> list[str] | None:
        try:
            return self.related(name, path) if self.related is not None else None
        except Exception:  # the index is a help: a page never fails for it
            return None

    def _named(self, path: Path, names: str) -> list[Path]:
        """Files a link names that are not beside the file: by its path under the root, else by the
        session id its name holds (a Codex fork's parent lies in another day's folder)."""
        direct = Path(names)
        try:
            if direct.is_absolute() and direct.resolve().is_relative_to(self.root) and direct.is_file():
                return [direct]
        except (OSError, RuntimeError):
            pass
        beside = [p for p in neighbours(path) if name_holds(p.name, names)]
        return beside or [p for p in self._all_files() if name_holds(p.name, names)]

    def _all_files(self) -> list[Path]:
        """Every session file served, found again at most every few seconds (a walk of the root)."""
        now = time.monotonic()
        if self._walked is None or now - self._walked[0] > WALK_SECONDS:
            self._walked = (now, self.files())
        return self._walked[1]

    def _rel_or_none(self, path: Path) -> str | None:
        try:
            return self.rel(path)
        except (ValueError, OSError, RuntimeError):
            return None

    def _facts(self, path: Path, rel: str) -> Facts | None:
        """What the first lines of a file say of its links, kept per file version."""
        try:
            st = path.stat()
        except OSError:
            return None
        key = (rel, st.st_size, st.st_mtime_ns, st.st_ino)
        got = self._head_facts.get(key)
        if got is None:
            try:
                got = head_facts(path, rel)
            except (OSError, SessionError):
                return None
            self._head_facts.put(key, got)
        return got

    def _recently(self, what: str, rel: str, members: list[str], make):
        """What `make()` gave for the conversation of `rel` less than MEMBERS_SECONDS ago, while
        `rel`'s own file is unchanged (a write to it is seen at once); else made now."""
        key, now = (what, rel, tuple(members)), time.monotonic()
        own = self.file_session(rel).storage.version_key()
        known = self._recent.get(key)
        if known is not None and known[0] == own and now - known[1] < MEMBERS_SECONDS:
            return known[2]
        got = make()
        self._recent.put(key, (own, now, got))
        return got

    def versions(self, members: list[str], rel: str) -> tuple:
        """The versions of the conversation's other files (the file's own is the key's start)."""
        return self._recently("versions", rel, members, lambda: self._versions_now(members, rel))

    def _versions_now(self, members: list[str], rel: str) -> tuple:
        out = []
        for name in members:
            if name != rel:
                try:
                    out.append((name, *self.file_session(name).storage.version_key()))
                except (SessionNotFound, OSError, Forbidden):
                    out.append((name, None))
        return tuple(out)

    def joined_tree(self, rel: str, members: list[str]):
        """The tree of the conversation of `rel` (`core.joined.join`), made again when any of its
        files changed."""
        return self._recently("tree", rel, members, lambda: self._joined_tree_now(rel, members))

    def _joined_tree_now(self, rel: str, members: list[str]):
        sessions = {}
        for name in members:
            try:
                sessions[name] = self.file_session(name)
            except (SessionNotFound, Forbidden):
                continue  # gone since: the others are still joined
        key = (rel, tuple((n, s.storage.version_key()) for n, s in sessions.items()))
        tree = self._joined.get(key)
        if tree is None:
            tree = join(rel, {n: s.tree for n, s in sessions.items()})
            self._joined.put(key, tree)
        return tree

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
        # Each folder resolved once, a file itself only when it is a link: resolving every one of
        # 10,000 files took a second of the index page's first answer while an index was built.
        folders: dict[Path, Path] = {}
        for path in found:
            try:
                folder = folders.get(path.parent)
                if folder is None:
                    folder = folders[path.parent] = path.parent.resolve()
                real = path.resolve() if path.is_symlink() else folder / path.name
                if not real.is_relative_to(self.root):
                    continue  # a symlink that leads out of the root
            except (OSError, RuntimeError):
                continue  # a loop: not a session file (discover leaves them out already)
            out.append(path)
        return out

    def skipped_folders(self) -> list[str]:
        """The folders a listing does not search, relative to the root, as `files` finds them, from
        the walk alone: the index page's first answer while an index of 10,000 files was built
        spent 0.77 s in `files`, two thirds of it on each file's Path and symlink check."""
        skipped: list[str] = []
        discover_names(self.root, [str(w) for w in self.within], skipped)
        self.skipped = [Path(p).relative_to(self.root).as_posix() for p in skipped]
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
