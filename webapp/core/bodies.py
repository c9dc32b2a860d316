"""Entry bodies read again from the file when asked, so a session held open costs less memory
than its file's size.

A pi v3 entry keeps what the tree needs (`Entry` attributes, and its figures in the columns of
its `Bodies`: typed arrays indexed by line, one number per line instead of objects per entry) and
the place of its line; its body is parsed again from those bytes when something reads `entry.raw`. The last bodies read are kept
in a small cache (bounded by count and by bytes), so that a view reading the same entries again
does not read the file again.

A line read again must still be the line that was read: its bytes must end where the line ended
and hold an object with the entry's id. The offsets of lines never change when a file grows; a
file rewritten in place, cut short or replaced makes `Session` read it anew (a new log, new
`Bodies`), and an entry of the old reading that is still asked for gets its old bytes through the
handle opened on the file it was read from, or `BodyChanged` (a clear error, never other bytes).
Each `Bodies` keeps at most one file handle, and only the most recently used ones stay open.
"""

from __future__ import annotations

import mmap
import os
import threading
import weakref
from array import array
from collections import OrderedDict
from contextvars import ContextVar

import orjson

from .entries import NO_INSTANT
from .errors import SessionError

CACHE_ENTRIES = 2048  # bodies kept per session file...
CACHE_BYTES = 16 * 1024 * 1024  # ...and at most this many bytes of their lines (the newest stays)
BIG_BODY = CACHE_BYTES // 4  # a body this big is pushed out of the cache by the next few read

# The big bodies read in one view (one request), kept until it ends: a view reads an entry's
# body several times (panel, raw JSON, figures), and a line of 50 MB parsed again for each took
# seconds. None outside a view.
_view_bodies: ContextVar[dict | None] = ContextVar("view_bodies", default=None)


def start_view() -> None:
    """Keep the big bodies read from now until `end_view` (a request's start)."""
    _view_bodies.set({})


def end_view(*_args) -> None:
    """Let go of the big bodies the view read."""
    _view_bodies.set(None)


# The last big body read, kept across views (one, whatever its file): several people viewing
# one entry of 50 MB parsed it once each time, 0.1-0.3 s each holding every thread of the
# server; kept, the next views of it cost nothing, and the memory kept is one body's at most.
_last_big: list = [None, None, None]  # [the Bodies (a weak reference), its line, the body]
_last_big_lock = threading.Lock()


def _kept_big(bodies, line: int) -> dict | None:
    with _last_big_lock:
        ref, kept_line, raw = _last_big
        return raw if ref is not None and ref() is bodies and kept_line == line else None


def _keep_big(bodies, line: int, raw: dict) -> None:
    with _last_big_lock:
        _last_big[:] = [weakref.ref(bodies), line, raw]


OPEN_HANDLES = 32  # file handles kept open across all session files


_NO_INSTANTS, _NO_ESTIMATES = array("d", [NO_INSTANT]), array("q", [-1])  # one line's defaults
_NO_USAGES, _NO_COSTS = array("i", [-1]), array("d", [0.0])


class BodyChanged(SessionError):
    """An entry's line is no longer in the file as it was read."""


class Bodies:
    """Reads the bodies of one reading of a session's storage (one `SessionLog`)."""

    def __init__(self, storage) -> None:
        self.storage = storage
        self.path = getattr(storage, "path", None)  # a file: read through a handle of its own
        self.inode: int | None = None  # the file the log was read from (set by `Session`)
        self.cache_entries, self.cache_bytes = CACHE_ENTRIES, CACHE_BYTES
        self.starts = array("q", [0])  # where each line starts: line n is starts[n-1]:starts[n]
        # The figures of the lazy entry read from line n, at index n (see `entries.Entry`):
        # one number each in a typed array rather than an object per entry. A line without a
        # lazy entry has the defaults (no instant, no estimate, no usage, no cost).
        self.instants = array("d", [NO_INSTANT])
        self.estimates = array("q", [-1])  # -1: estimated from the body when first asked
        self.usages = array("i", [-1])  # -1: none reported
        self.costs = array("d", [0.0])
        self._cache: OrderedDict[int, tuple[dict, int]] = OrderedDict()  # line -> (body, size)
        self._bytes = 0
        self._lock = threading.Lock()
        self._fd: int | None = None
        self.reads = 0  # lines parsed again (what the cache did not hold)

    def add_lines(self, count: int) -> None:
        """Give the next `count` lines the defaults of every column (a lazy entry made from one
        of them sets its own)."""
        self.instants.extend(_NO_INSTANTS * count)  # (a repeated array: made in C, not item by item)
        self.estimates.extend(_NO_ESTIMATES * count)
        self.usages.extend(_NO_USAGES * count)
        self.costs.extend(_NO_COSTS * count)

    def __len__(self) -> int:
        """How many bodies the cache holds."""
        return len(self._cache)

    def body(self, entry) -> dict:
        key = entry.line
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit[0]
            view = _view_bodies.get()
            if view is not None and (self, key) in view:
                return view[self, key]
            raw = _kept_big(self, key)
            if raw is not None:
                return raw
            raw, size = self._read(entry)
            if size >= BIG_BODY:
                _keep_big(self, key, raw)
                if view is not None:
                    view[self, key] = raw
            self._cache[key] = (raw, size)
            self._bytes += size
            while len(self._cache) > 1 and (len(self._cache) > self.cache_entries or self._bytes > self.cache_bytes):
                _, (_, size) = self._cache.popitem(last=False)
                self._bytes -= size
        return raw

    def json_lines(self, entries: list) -> list[bytes]:
        """The bytes of each entry's line without its newline (entries of this reading), for a
        caller that passes the JSON on whole: no parse, no dump. Each is checked to end where
        its line ended and to name its entry's id (cheaper than `_read`'s parse); one that fails
        is read by `body`, which says why. A file is mapped once rather than read line by line."""
        spans = [(self.starts[e.line - 1], self.starts[e.line]) for e in entries]
        with self._lock:
            if self.path is None:
                chunks = [d[:-1] if d.endswith(b"\n") else b"" for d in (self.storage.read_at(a, b - a) for a, b in spans)]
            else:
                if self._fd is None:
                    self._open()
                _touch(self)
                if os.fstat(self._fd).st_size == 0:  # (cut to nothing: every check below fails)
                    chunks = [b""] * len(spans)
                else:
                    with mmap.mmap(self._fd, 0, access=mmap.ACCESS_READ) as view:
                        size = len(view)
                        chunks = [view[a:b - 1] if b <= size and view[b - 1] == 10 else b"" for a, b in spans]  # (10: the newline)
        out = []
        for e, (a, b), data in zip(entries, spans, chunks):
            if len(data) == b - a - 1 and orjson.dumps(e.id) in data:
                out.append(data[:-1] if data.endswith(b"\r") else data)
            else:
                out.append(orjson.dumps(self.body(e)))
        return out

    def _read(self, entry) -> tuple[dict, int]:
        """The body on `entry`'s line and its size, checked to be that line (called with the lock held)."""
        self.reads += 1
        offset = self.starts[entry.line - 1]
        size = self.starts[entry.line] - offset  # with the newline, which shows the line still ends there
        data = self._bytes_at(offset, size)
        obj = None
        if len(data) == size and data.endswith(b"\n"):
            try:
                obj = orjson.loads(data)
            except orjson.JSONDecodeError:
                pass
        if type(obj) is not dict or obj.get("id") != entry.id:
            raise BodyChanged(f"{self._name()} changed on disk since it was read (line {entry.line} is not "
                              "what it was); reload to read it again")
        return obj, size

    def _bytes_at(self, offset: int, size: int) -> bytes:
        if self.path is None:
            return self.storage.read_at(offset, size)
        if self._fd is None:
            self._open()
        _touch(self)
        return os.pread(self._fd, size, offset)

    def _open(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            raise BodyChanged(f"{self._name()} can no longer be read ({exc.strerror or exc}); "
                              "reload to read it again") from None
        if self.inode is not None and os.fstat(fd).st_ino != self.inode:
            os.close(fd)
            raise BodyChanged(f"{self._name()} was replaced since it was read; reload to read it again")
        self._fd = fd

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __del__(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            _open.pop(id(self), None)

    def _name(self) -> str:
        return self.storage.name


_open: OrderedDict[int, weakref.ref] = OrderedDict()  # id -> Bodies with an open handle, oldest first
_open_lock = threading.Lock()


def _touch(bodies: Bodies) -> None:
    """Mark `bodies`' handle as just used; close the least recently used ones past OPEN_HANDLES
    (called with `bodies`' lock held; another's is taken only when it is free, never waited for)."""
    key = id(bodies)
    with _open_lock:
        ref = _open.get(key)
        if ref is None or ref() is not bodies:
            _open[key] = weakref.ref(bodies)
        _open.move_to_end(key)
        for old in list(_open)[: max(len(_open) - OPEN_HANDLES, 0)]:
            ref = _open.get(old)  # (a Bodies that died took itself out meanwhile)
            other = ref() if ref is not None else None
            if other is None:
                _open.pop(old, None)
                continue
            if other is bodies or not other._lock.acquire(blocking=False):
                continue
            try:
                if other._fd is not None:
                    os.close(other._fd)
                    other._fd = None
            finally:
                other._lock.release()
            _open.pop(old, None)
