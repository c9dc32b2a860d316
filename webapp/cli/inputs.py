"""What the CLI reads from people and pipes, bounded and checked before any work is done.

A pipe or a device can be endless (`cat /dev/zero | session-tree append F`): reading it all
would exhaust memory, and a summary file that never ends would hang. Each read stops one byte
past its limit and refuses the input in one line instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from ..core.errors import SessionError
from ..core.session import Session

MAX_STDIN_BYTES = 64 * 1024 * 1024  # entries on stdin: far above any one entry an agent writes
MAX_SUMMARY_BYTES = 8 * 1024 * 1024  # a summary file: far above any summary a context can hold


def read_capped(stream: BinaryIO, limit: int, what: str) -> bytes:
    """All of `stream`, refused with a SessionError when it holds more than `limit` bytes."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise SessionError(f"{what} holds more than {limit:,} bytes; nothing was written")
    return data


def read_summary_file(name: str, limit: int | None = None) -> str:
    """A summary file's text (UTF-8), at most `limit` bytes."""
    limit = MAX_SUMMARY_BYTES if limit is None else limit
    with open(Path(name), "rb") as f:
        data = read_capped(f, limit, name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:  # a ValueError: main() would let it out as a traceback
        raise SessionError(f"{name}: not UTF-8 text (byte {exc.start})") from None


def leaf_named(session: Session, ref: str | None) -> str | None:
    """The entry an ID argument names (a unique short id is enough), or the active leaf."""
    tree = session.tree
    return tree.active_leaf if ref is None else tree.find(ref).id
