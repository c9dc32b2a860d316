"""What the CLI writes as JSON: one indented document on stdout, as bytes, after whatever was
printed before it (the commands and their modules share it, so every `--json` reads alike)."""

from __future__ import annotations

import sys

import orjson


def print_json(obj) -> None:
    data = orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # (a text stream only: a test's)
        sys.stdout.write(data.decode())
        return
    sys.stdout.flush()  # the bytes go after what was printed before
    out.write(data)
