"""What the CLI writes. Human output escapes control characters (a label holding ESC or OSC
sequences cannot drive the terminal) and file names that are not UTF-8; JSON is one indented
document on stdout, as bytes, after whatever was printed before it (every `--json` reads alike),
and shows such names with `\\xNN` escapes. Also the listing `ls` prints, from the files or from
the index alike."""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterable

import orjson

from ..core.conversations import Facts, group

# C0 controls but newline and tab, DEL, C1 controls, and lone surrogates (the bytes of a name
# that is not UTF-8): none of them reaches a terminal as it is.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape_char(m: re.Match) -> str:
    o = ord(m.group())
    if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8, as Python keeps it
        return f"\\x{o - 0xDC00:02x}"
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def escape_controls(text: str) -> str:
    return _UNSAFE.sub(_escape_char, text)


class SafeText(io.TextIOBase):
    """A text stream that escapes what `escape_controls` does before it reaches the terminal."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(escape_controls(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def streaming(out=None):
    """An on_delta that writes a model's text as it comes (a reply to stdout; a summary, whose
    entry id is what stdout prints, to stderr: `out`), escaped as human output is, and a state
    saying whether anything was written."""
    state = {"streamed": False}

    def show(kind: str, text: str) -> None:
        stream = out or sys.stdout
        if kind == "text":
            stream.write(text if isinstance(stream, SafeText) else escape_controls(text))
            stream.flush()
            state["streamed"] = True

    return show, state


def end_line(state: dict, out=None) -> None:
    """End the streamed text's line, when something was streamed."""
    if state["streamed"]:
        print(file=out or sys.stdout)


# orjson escapes the C0 controls but writes DEL and the C1 controls as they are (U+0080-U+009F are
# \xc2\x80-\xc2\x9f in UTF-8), and a terminal obeys C1 (U+009B is CSI) as it does ESC: escaped
# too, the document reads back the same values. In orjson's output they only occur inside strings.
_JSON_RAW = re.compile(rb"\x7f|\xc2[\x80-\x9f]")


def json_escaped(document: bytes) -> bytes:
    """A JSON document (orjson's, or pieces of one, each whole UTF-8) with no control left raw."""
    return _JSON_RAW.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), document)


def print_json(obj) -> None:
    print_json_pieces([orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)])


def print_json_line(obj) -> None:
    """A JSON document on one line (what `ask`, `replay`, `judge` and `verdict` print)."""
    print_json_pieces([orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)])


def print_json_pieces(pieces: Iterable[bytes]) -> None:
    """Write a document made a piece at a time (`show --json`'s: a big one is never held whole);
    every --json output of the CLI goes through here, escaped alike."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # (a text stream only: a test's)
        sys.stdout.write(b"".join(json_escaped(piece) for piece in pieces).decode())
        return
    sys.stdout.flush()  # the bytes go after what was printed before
    for piece in pieces:
        out.write(json_escaped(piece))


def path_text(path) -> str:
    """A path as JSON can hold it: bytes that are not UTF-8 as `\\xNN`."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def one_line(text) -> str:
    """A value printed on a line of a listing: a newline in it (a session's name) would start a
    line that looks like another session's."""
    return str(text).replace("\n", "\\n").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def title_line(text, width: int = 60) -> str:
    """A session's title on a listing's line, at most `width` characters: one cut short says so
    with an ellipsis ("… shows the number and the…", not "… and the ")."""
    text = one_line(text)
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


def print_wrote(path, size: int) -> None:
    """The line a command that wrote a file ends with: where, and its size (in bytes, as every
    size the CLI prints)."""
    print(f"session-tree: wrote {path} ({size:,} bytes)")


def shown(value) -> str:
    """A value as a line of human output shows it: "-" for one that is missing (never `None`),
    on one line."""
    return "-" if value is None or value == "" else one_line(value)


def fold_conversations(rows: list[dict], flat: bool = False) -> list[dict]:
    """`ls`'s rows as conversations across files (SPEC §5e): each conversation's first file's
    row, with the others under it in `files` (each naming the file it goes on from, `parent`),
    in the order of the first files; `flat`: every row as it was, each naming its conversation's
    first file and its parent. A file whose source is not among the rows says what it names
    (`missing`)."""
    facts = [Facts(r["path"], r.get("id"), r.get("created"), r.get("rootId"), r.get("linkKind"), r.get("linkField"),
                   r.get("linkNames")) for r in rows if "error" not in r]
    grouping = group(facts)
    by_path = {r["path"]: r for r in rows}
    for r in rows:
        if "error" not in r:
            r["conversation"] = grouping.first.get(r["path"], r["path"])
            r["parent"] = grouping.parent.get(r["path"])
            r["missing"] = grouping.missing.get(r["path"])
    if flat:
        return rows
    out, placed = [], set()
    for r in rows:
        if "error" in r:
            out.append(r)
        elif r["conversation"] == r["path"]:
            members = grouping.members(r["path"])
            r["files"] = [by_path[m] for m in members[1:]]
            placed.update(members)
            out.append(r)
    return out


def print_listing(rows: list[dict], as_json: bool) -> None:
    """`ls`'s rows (`SessionSummary.as_dict()` with its path, or a path and its error; a
    conversation's first file with the others in `files`): JSON, or three lines a session, each
    value on its line (a newline in a name would look like another session), the other files of
    a conversation indented under its first."""
    if as_json:
        print_json(rows)
        return
    for r in rows:
        if "error" in r:
            print(f"{one_line(r['path'])}\n    error: {one_line(r['error'])}")
            continue
        _print_row(r)
        others = r.get("files") or []
        if others:
            print(f"    one conversation of {len(others) + 1} files; the others:")
        for f in others:
            how = {"fork": "fork", "subagent": "sub-agent", "resume": "copy that goes on"}.get(f.get("linkKind"), "continues")
            print(f"      {how} of {one_line(os.path.basename(f['parent'])) if f.get('parent') else '-'}:")
            _print_row(f, "        ")


def _print_row(r: dict, indent: str = "") -> None:
    title = one_line(r["name"]) if r["name"] else title_line(r["firstMessage"] or "(no messages)")
    missing = r.get("missing")
    r = {k: shown(v) for k, v in r.items() if k != "files"}
    print(f"{indent}{r['path']}\n{indent}    {title}")
    print(f"{indent}    {r['format']}  id {r['id']}  cwd {r['cwd']}  entries {r['entries']}  leaves {r['leaves']}  "
          f"compactions {r['compactions']}  bad lines {r['badLines']}  modified {r['modified']}")
    if missing:
        print(f"{indent}    continues a file that is not here: {one_line(missing)}")
