"""What the CLI writes as JSON: one indented document on stdout, as bytes, after whatever was
printed before it (the commands and their modules share it, so every `--json` reads alike); and
the listing `ls` prints, from the files or from the index alike."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

import orjson

from .cli_input import one_line


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


def path_text(path) -> str:
    """A path as JSON can hold it: bytes that are not UTF-8 as `\\xNN`."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def print_listing(rows: list[dict], as_json: bool) -> None:
    """`ls`'s rows (`SessionSummary.as_dict()` with its path, or a path and its error): JSON, or
    three lines a session, each value on its line (a newline in a name would look like another
    session)."""
    if as_json:
        print_json(rows)
        return
    for r in rows:
        r = {k: one_line(v) if isinstance(v, str) else v for k, v in r.items()}
        if "error" in r:
            print(f"{r['path']}\n    error: {r['error']}")
            continue
        title = r["name"] or (r["firstMessage"] or "")[:60] or "(no messages)"
        print(f"{r['path']}\n    {title}")
        print(f"    {r['format']}  id {r['id']}  cwd {r['cwd']}  entries {r['entries']}  leaves {r['leaves']}  "
              f"compactions {r['compactions']}  bad lines {r['badLines']}  modified {r['modified']}")
