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
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, unquote_to_bytes

import orjson

from .errors import ReadOnlySession, SessionError, SessionNotFound

READ_CHUNK = 64 * 1024  # a big file is read and parsed a piece at a time, never held whole
LOCK_ATTEMPTS = 5  # times a writer opens the path again when the file was replaced meanwhile


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
        fd = self._lock_the_path()
        try:
            self._fd = fd
            yield
        finally:
            self._fd = None
            os.close(fd)  # closing releases the lock

    def _lock_the_path(self) -> int:
        """A locked handle on the file the path names now. A file replaced by rename while we
        waited for its lock (`cp F F.new; mv F.new F`) is no longer at the path: what we appended
        to it would be in no file, so the new one is opened and locked instead."""
        for _ in range(LOCK_ATTEMPTS):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
            except PermissionError:
                raise ReadOnlySession(f"{self.path.name} cannot be written by this user (permission denied)") from None
            except FileNotFoundError:
                raise SessionNotFound(f"{self.path}: no such session file (it was removed)") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                held = os.fstat(fd)
                try:
                    now = os.stat(self.path)
                except FileNotFoundError:
                    raise SessionNotFound(f"{self.path}: no such session file (it was removed)") from None
            except BaseException:
                os.close(fd)
                raise
            if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                return fd
            os.close(fd)
        raise SessionError(f"{self.path.name} kept being replaced while waiting to write to it; "
                           "nothing was written, try again")

    def ends_torn(self) -> bool:
        """Asked of the locked handle itself, the file our line will be appended to."""
        if self._fd is None:
            return super().ends_torn()
        size = os.fstat(self._fd).st_size
        return size > 0 and os.pread(self._fd, 1, size - 1) != b"\n"

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


# -- new files -----------------------------------------------------------------------------------


def write_new_file(path: Path, data: bytes, replace: bool = False) -> None:
    """Write a whole new file durably: into a temporary name beside it, then renamed into place,
    so that a full disk or a read-only folder leaves no empty or half file behind (one would be
    listed as a session). Unless `replace`, an existing file is refused. Raises SessionError
    saying what failed."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as exc:
        raise SessionError(f"cannot create {path}: {exc.strerror or exc}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        if not replace and os.path.lexists(path):
            raise FileExistsError(path)
        os.replace(tmp, path)
    except OSError as exc:
        why = "it already exists" if isinstance(exc, FileExistsError) else exc.strerror or str(exc)
        raise SessionError(f"cannot write {path}: {why}; nothing was written") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


# -- file names and folders (SPEC §1) ------------------------------------------------------------


def url_name(rel: str) -> str:
    """A path under the root as URLs and pages carry it: as it is when it is UTF-8 text without
    `%`, else its bytes percent-encoded. A file name that is not UTF-8 (held by Python with
    surrogate escapes, which no page or URL can carry) is then listed and opened like any other;
    every encoded name holds a `%` and no name left as it is does, so `fs_name` can tell them apart."""
    try:
        os.fsencode(rel).decode("utf-8")
    except UnicodeDecodeError:
        return quote(os.fsencode(rel), safe="/")
    return quote(rel, safe="/") if "%" in rel else rel


def fs_name(name: str) -> str:
    """The path under the root a `url_name` stands for (as the file system's str)."""
    return os.fsdecode(unquote_to_bytes(name)) if "%" in name else name


def cwd_folder_name(cwd: str) -> str:
    """`/home/ana/proj` → `--home-ana-proj--`: one folder per working directory."""
    return "--" + re.sub(r"[/\\:]", "-", cwd.lstrip("/\\")) + "--"


def session_file_name(timestamp: str, session_id: str) -> str:
    """`{timestamp}_{sessionId}.jsonl`, with `:` and `.` of the timestamp replaced by `-`."""
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def sidecar_files(path: Path) -> list[Path]:
    """The files read with a session file: Claude Code's sub-agent transcripts,
    `<sessionId>/subagents/agent-<id>.jsonl` beside `<sessionId>.jsonl` (2.1.x) and a workflow
    run's, `<sessionId>/subagents/workflows/<run>/agent-<id>.jsonl`, or, as 2.0.x
    writes them, `agent-<id>.jsonl` in the same folder, whose lines name the session's id. A
    symbolic link (of a file, or of the `subagents` folder) that leads out of the session's own
    folder (2.0.x: out of the session's folder) is not read: it would show a file of the user's
    that is no sub-agent's in the page."""
    own = path.with_suffix("")
    try:
        agents, others = _folder_listing(path.parent)
    except OSError:
        agents, others = [], frozenset()
    nested = _sub_agents_in(own) if own.name in others else []
    if path.name.startswith("agent-"):
        return sorted(nested)
    try:
        inside = path.parent.resolve() if agents else path.parent
        siblings = [p for p in agents if p.is_file() and stays_in(p, inside) and _names_session(p, path.stem)]
    except (OSError, RuntimeError):
        siblings = []
    return sorted(nested) + sorted(siblings)


def _sub_agents_in(own: Path) -> list[Path]:
    """The sub-agent transcripts in a session's own folder (`subagents/agent-*.jsonl` and a
    workflow run's), none that a symbolic link leads out of the folder."""
    folder = own / "subagents"
    try:
        if not folder.is_dir():
            return []
        return [p for pattern in ("agent-*.jsonl", "workflows/*/agent-*.jsonl") for p in folder.glob(pattern)
                if p.is_file() and stays_in(p, own.resolve(), True)]
    except (OSError, RuntimeError):  # (RuntimeError: a symlink loop)
        return []


def orphaned_sidecars(own: Path) -> list[Path]:
    """The sub-agent transcripts of a session's own folder `own` whose session file
    (`<own>.jsonl`) is gone: nothing reads them with it, so each is a session of its own, which
    says the session it names (`links`). Claude Code's own context compressions
    (`agent-acompact-*`, no sub-agent's) are left out, as its reader leaves them out."""
    if own.with_name(own.name + ".jsonl").exists():
        return []
    return sorted(p for p in _sub_agents_in(own) if not p.name.startswith("agent-acompact-"))


def orphan_depth(path: Path) -> int:
    """How many folders below its session's a sub-agent transcript listed alone
    (`orphaned_sidecars`) lies: `<sessionId>/subagents/agent-<id>.jsonl` 2,
    `<sessionId>/subagents/workflows/<run>/agent-<id>.jsonl` 4; 0 for any other file, and for
    one whose session is here (read with it, it is no session of its own). A URL naming one is
    that much deeper than a session's."""
    parts = path.parts
    if len(parts) < 3 or not path.name.startswith("agent-") or path.name.startswith("agent-acompact-"):
        return 0
    if parts[-2] == "subagents":
        depth = 2
    elif len(parts) >= 5 and parts[-3] == "workflows" and parts[-4] == "subagents":
        depth = 4
    else:
        return 0
    own = path.parents[depth - 1]
    return 0 if own.with_name(own.name + ".jsonl").exists() else depth


# folder -> (its mtime, its agent-*.jsonl files, the names of everything else in it)
_LISTINGS: dict[str, tuple[int, list[Path], frozenset[str]]] = {}


def _folder_listing(folder: Path) -> tuple[list[Path], frozenset[str]]:
    """The `agent-*.jsonl` files in `folder`, and the names of the rest (a session's own folder
    of sub-agents among them). Listed once per version of the folder (a file or folder added or
    removed changes its mtime): every session file of a folder of thousands asks, and listing
    the folder for each of them made the index's check of what changed quadratic."""
    key = str(folder)
    mtime = folder.stat().st_mtime_ns
    known = _LISTINGS.get(key)
    if known is not None and known[0] == mtime:
        return known[1], known[2]
    with os.scandir(folder) as it:
        names = [e.name for e in it]
    agents = [folder / n for n in names if n.startswith("agent-") and n.endswith(".jsonl")]
    others = frozenset(n for n in names if not n.endswith(".jsonl"))
    if time.time_ns() - mtime > 2 * 10**9:  # not within a clock tick of a change still under way
        _LISTINGS[key] = (mtime, agents, others)
    return agents, others


def session_of_sidecar(path: Path) -> Path | None:
    """The session file a Claude Code 2.0.x sub-agent transcript (`agent-<id>.jsonl`, beside
    its session, its first line naming the session's id) is read with, when that file is
    there; None for any other file (a fixture may be named `agent-…` and be a session)."""
    if not path.name.startswith("agent-"):
        return None
    try:
        with path.open("rb") as f:
            first = f.readline(1 << 20)
        session_id = orjson.loads(first).get("sessionId")
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return None
    if not isinstance(session_id, str) or not session_id or "/" in session_id or session_id == path.stem:
        return None
    session = path.with_name(session_id + ".jsonl")
    try:  # (what `sidecar_files` of that session asks of it)
        read_with = session.is_file() and stays_in(path, path.parent.resolve())
    except (OSError, RuntimeError):
        return None
    return session if read_with else None


def _names_session(agent: Path, session_id: str) -> bool:
    """Whether a sub-agent file's first line belongs to the session `session_id`."""
    try:
        with agent.open("rb") as f:
            first = f.readline(1 << 20)
    except OSError:
        return False
    marker = b'"sessionId":"' + session_id.encode() + b'"'
    return marker in first.replace(b'": "', b'":"')


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


def stays_in(path: Path, folder: Path, through_folders: bool = False) -> bool:
    """False for a symbolic link that leads out of the folder being listed (the agents' own
    folders, or ROOT): a link to any file of the user's is no session of theirs. With
    `through_folders`, a file in a linked folder below `folder` is checked too."""
    if not through_folders and not path.is_symlink():
        return True
    try:
        return path.resolve().is_relative_to(folder)
    except (OSError, RuntimeError):
        return False
