"""What the CLI reads from people and pipes, bounded and checked before any work is done.

A pipe or a device can be endless (`cat /dev/zero | session-tree append F`): reading it all
would exhaust memory, and a summary file that never ends would hang. Each read stops one byte
past its limit and refuses the input in one line instead.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import BinaryIO

from .core.errors import SessionError

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


def percent(text: str) -> float:
    """An argparse type: a finite percentage from 0 to 100 (`nan` would turn a CI gate off)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be a percentage from 0 to 100, not {text!r}")
    return value


def seconds(text: str) -> float:
    """An argparse type: a time limit, more than 0 and finite (`inf` would overflow a timer, `0`
    or `nan` stop at once)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


def one_line(text) -> str:
    """A value printed on a line of a listing: a newline in it (a session's name) would start a
    line that looks like another session's."""
    return str(text).replace("\n", "\\n").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
