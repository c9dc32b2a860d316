"""What the CLI writes as JSON: one indented document on stdout, as bytes, after whatever was
printed before it (the commands and their modules share it, so every `--json` reads alike)."""

from __future__ import annotations

import sys
from collections.abc import Iterable

import orjson


def print_json(obj) -> None:
    print_json_pieces([orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)])


def print_json_pieces(pieces: Iterable[bytes]) -> None:
    """Write a document made a piece at a time (`show --json`'s: a big one is never held whole)."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # (a text stream only: a test's)
        sys.stdout.write(b"".join(pieces).decode())
        return
    sys.stdout.flush()  # the bytes go after what was printed before
    for piece in pieces:
        out.write(piece)
