"""Where a session's lines live (SPEC §1, §7): a JSONL file or memory, with the same behaviour.

Both give the same four primitives to `Session`: an exclusive lock, the size, the bytes from an
offset, and one append. An append is a single write of complete lines (preceded by `\\n` when
the last line was torn), made under the lock and then flushed to disk; a write that fails part
way is cut back off, so the file never keeps half a line of ours.
"""

from __future__ import annotations

import fcntl
import os
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import ReadOnlySession, SessionError, SessionNotFound

READ_CHUNK = 64 * 1024  # a big file is read and parsed a piece at a time, never held whole


class Storage(ABC):
    """The bytes of one session; `Session` does all the reading and writing logic on top."""

    @abstractmethod
    def locked(self):
        """Context manager: hold the exclusive writer lock."""

    @abstractmethod
    def read_from(self, offset: int) -> bytes:
        """The bytes from `offset` to the current end."""

    def read_chunks(self, offset: int) -> Iterator[bytes]:
        """The bytes from `offset` to the current end, in consecutive pieces."""
        yield self.read_from(offset)

    def read_at(self, offset: int, size: int) -> bytes:
        """At most `size` bytes from `offset`."""
        return self.read_from(offset)[:size]

    @abstractmethod
    def append_bytes(self, data: bytes) -> None:
        """Write `data` at the end in one call, durably; only called while `locked()`."""

    @abstractmethod
    def version_key(self) -> tuple:
        """Changes whenever the content may have changed (size, mtime, inode for a file)."""

    @abstractmethod
    def size(self) -> int:
        """The current size in bytes."""

    @property
    def name(self) -> str:
        """How a message names this session."""
        return "this session"

    def write_problem(self) -> str | None:
        """Why this storage cannot be written to (permissions), or None."""
        return None

    def ends_torn(self) -> bool:
        """True when the content does not end in `\\n` (a crash cut the last line short)."""
        size = self.size()
        return size > 0 and self.read_from(size - 1) != b"\n"

    def append_lines(self, lines: list[bytes]) -> None:
        """Append lines (without their `\\n`) in one write, so that they stand alone; only called
        while locked."""
        prefix = b"\n" if self.ends_torn() else b""
        self.append_bytes(prefix + b"".join(line + b"\n" for line in lines))


class MemoryStorage(Storage):
    """A session held in memory: for tests and short-lived sessions."""

    def __init__(self, data: bytes = b""):
        self.data = bytearray(data)
        self._lock = threading.RLock()
        self._writes = 0

    @contextmanager
    def locked(self) -> Iterator[None]:
        with self._lock:
            yield

    def read_from(self, offset: int) -> bytes:
        return bytes(self.data[offset:])

    def read_at(self, offset: int, size: int) -> bytes:
        return bytes(self.data[offset:offset + size])

    def append_bytes(self, data: bytes) -> None:
        self.data += data
        self._writes += 1

    def version_key(self) -> tuple:
        return (len(self.data), self._writes)

    def size(self) -> int:
        return len(self.data)


class JsonlStorage(Storage):
    """A session file on disk, locked with `flock` so that every writer of ours takes turns."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.exists():
            raise SessionNotFound(f"{self.path}: no such session file")
        if not self.path.is_file():
            raise SessionError(f"{self.path}: not a file (a session is one .jsonl file)")
        self._fd: int | None = None

    @property
    def name(self) -> str:
        return self.path.name

    def write_problem(self) -> str | None:
        if not os.access(self.path, os.W_OK):
            return "cannot be written by this user (permission denied)"
        return None

    @contextmanager
    def locked(self) -> Iterator[None]:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        except PermissionError:
            raise ReadOnlySession(f"{self.path.name} cannot be written by this user (permission denied)") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._fd = fd
            yield
        finally:
            self._fd = None
            os.close(fd)  # closing releases the lock

    def read_from(self, offset: int) -> bytes:
        with open(self.path, "rb") as f:
            f.seek(offset)
            return f.read()

    def read_at(self, offset: int, size: int) -> bytes:
        with open(self.path, "rb") as f:
            return os.pread(f.fileno(), size, offset)

    def read_chunks(self, offset: int) -> Iterator[bytes]:
        with open(self.path, "rb") as f:
            f.seek(offset)
            while chunk := f.read(READ_CHUNK):
                yield chunk

    def append_bytes(self, data: bytes) -> None:
        """Write `data` at the end; if the write fails part way (a full disk), cut the file back to
        its size before, so that no partial line stays, and say so in one line."""
        if self._fd is None:
            raise RuntimeError("append outside the lock")
        size = os.fstat(self._fd).st_size
        view = memoryview(data)
        try:
            while view:  # one write for a regular file; the loop only guards a short write
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
        except OSError as exc:
            os.ftruncate(self._fd, size)
            os.fsync(self._fd)
            raise SessionError(f"{self.path.name}: the write failed ({exc.strerror or exc}); "
                               "nothing was written, the file is as it was") from None

    def version_key(self) -> tuple:
        """Its mtime is the newest of the file's and of the files read with it (Claude Code's
        sub-agent transcripts), so that one of those growing is noticed too."""
        st = self.path.stat()
        mtime = max([st.st_mtime_ns, *(m for _, _, m in sidecar_stamp(self.path))])
        return (st.st_size, mtime, st.st_ino)

    def size(self) -> int:
        return self.path.stat().st_size


# -- file names and folders (SPEC §1) ------------------------------------------------------------


def cwd_folder_name(cwd: str) -> str:
    """`/home/ana/proj` → `--home-ana-proj--`: one folder per working directory."""
    return "--" + re.sub(r"[/\\:]", "-", cwd.lstrip("/\\")) + "--"


def session_file_name(timestamp: str, session_id: str) -> str:
    """`{timestamp}_{sessionId}.jsonl`, with `:` and `.` of the timestamp replaced by `-`."""
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def sidecar_files(path: Path) -> list[Path]:
    """The files read with a session file: Claude Code's sub-agent transcripts,
    `<sessionId>/subagents/agent-<id>.jsonl` beside `<sessionId>.jsonl`."""
    folder = path.with_suffix("") / "subagents"
    try:
        return sorted(p for p in folder.glob("agent-*.jsonl") if p.is_file())
    except OSError:
        return []


def sidecar_stamp(path: Path) -> tuple:
    """(name, size, mtime) of each file read with a session: changes when one of them does."""
    out = []
    for p in sidecar_files(path):
        try:
            st = p.stat()
        except OSError:
            continue
        out.append((p.name, st.st_size, st.st_mtime_ns))
    return tuple(out)


# How far below a sessions folder session files are looked for: pi's per-cwd folders are one
# level down, Claude Code's per-project folders one, Codex's YYYY/MM/DD folders three.
DISCOVER_DEPTH = 3


def discover(root: str | os.PathLike, within: Iterable[str] = ()) -> list[Path]:
    """Every session file under a sessions root: right in it or in its folders, down to pi's
    per-cwd folders, Claude Code's per-project folders and Codex's YYYY/MM/DD folders; only
    under the folders `within` (relative to the root) when given. Hidden folders and Claude
    Code's `subagents/` folders (transcripts read with their session) are not entered."""
    root = Path(root)
    if not root.is_dir():
        raise SessionNotFound(f"{root}: not a folder")
    found: list[Path] = []
    for top in [root / w for w in within] or [root]:
        level = [top]
        for depth in range(DISCOVER_DEPTH + 1):
            below = []
            for folder in level:
                try:
                    children = sorted(folder.iterdir())
                except OSError:
                    continue
                for p in children:
                    if p.name.endswith(".jsonl") and p.is_file():
                        found.append(p)
                    elif depth < DISCOVER_DEPTH and not p.name.startswith(".") and p.name != "subagents" \
                            and p.is_dir() and not p.is_symlink():
                        below.append(p)
            level = below
    return sorted(found)
