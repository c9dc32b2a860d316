"""What is the user's alone: the folders and files this app keeps of its own (the corpus index and
its text index, the data folder's verdicts, the password, the file a server writes beside its
index) are created 0700 / 0600, as the agents' own sessions are; every account on the machine
could otherwise read what they hold (the whole corpus's text is in the index).

A file only this user can write is also the only kind the CLI trusts: `owned_alone` says whether
a file or folder belongs to this user with no access for anyone else."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600
OTHERS = 0o077  # the group's and everyone else's bits


def private_folder(path: Path, tighten: bool = False) -> Path:
    """`path`, made if missing with every folder made on the way 0700 (XDG asks the same of
    ~/.cache and ~/.local/share). `tighten`: the app's own folder, made 0700 when it exists
    looser (an earlier version made it 0755); a folder the user chose is left as it is."""
    missing = []
    folder = Path(path)
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=FOLDER_MODE)
    if tighten:
        make_private(path)
    return Path(path)


def make_private(path: Path) -> None:
    """Take the others' access away from `path` if it is this user's (another's is left alone:
    chmod would fail, and what it holds is not ours to guard)."""
    try:
        st = os.stat(path)
        if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & OTHERS:
            os.chmod(path, stat.S_IMODE(st.st_mode) & ~OTHERS)
    except OSError:
        pass


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_TRUNC) -> int:
    """A file descriptor on `path`, created 0600 (whatever the umask) and made 0600 if it was not."""
    fd = os.open(path, flags, FILE_MODE)
    st = os.fstat(fd)
    if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & OTHERS:
        os.fchmod(fd, FILE_MODE)
    return fd


@contextlib.contextmanager
def private_umask():
    """Every file and folder the block creates is the user's alone, whoever creates it (DuckDB
    makes its write-ahead log with the process's umask, a build thread at any time). The umask
    is the process's: the block is a command's whole run (`serve`, `index`), restored after."""
    before = os.umask(0)
    os.umask(before | OTHERS)
    try:
        yield
    finally:
        os.umask(before)


def owned_alone(path: Path, *, folder: bool = False, mode: bool = True) -> str | None:
    """Why `path` cannot be trusted as this user's alone, in a few words; None if it is: it is
    this user's and (unless not `mode`) nobody else may read or write it (a file) or write in it
    (a folder)."""
    try:
        return private_stat(os.stat(path), folder=folder, mode=mode)
    except OSError as exc:
        return exc.strerror or str(exc)


def private_stat(st: os.stat_result, *, folder: bool = False, mode: bool = True) -> str | None:
    """`owned_alone` of a file already opened (its fstat)."""
    if st.st_uid != os.getuid():
        return f"it belongs to another user (uid {st.st_uid})"
    loose = stat.S_IMODE(st.st_mode) & (0o022 if folder else OTHERS)
    if mode and loose:
        return f"others may {'write in' if folder else 'read or write'} it (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def process_owner(pid: int) -> int | None:
    """The uid that runs process `pid` (from /proc), None if it cannot be told."""
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
