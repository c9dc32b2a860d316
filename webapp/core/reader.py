"""Line-by-line reading of session files (SPEC §1, §2, §7).

`SessionLog` is fed the bytes of a file, possibly in several pieces as the file grows, and keeps
every line accounted for: the header, the entries, and the lines that could not be read, each
with its line number, reason and raw text. Which format the file is in (pi, Claude Code, Codex)
is told from its first readable line; from then on that format's reader (its agent's room,
`webapp/core/agents/`) turns lines into normalised entries. Reading never fails and never writes.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import accumulate, repeat
from operator import add

import orjson

from .agents import reader_for
from .entries import COMPACTION, LEAF, Entry
from .formats.base import BadLine, Problem, generated_id  # noqa: F401 (part of this module's interface)

BOM = b"\xef\xbb\xbf"
WINDOW = 256 * 1024  # bytes of lines split at once (in cache, yet few splits)


def first_kept_id(entry: Entry) -> str | None:
    """A compaction's `firstKeptEntryId` (pi v1's index was made one when the line was read)."""
    return entry.first_kept_id


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many objects that form no cycles.

    Reading a big file makes hundreds of thousands of long-lived objects; the collector would
    walk the growing heap again and again and find nothing to free. Reference counting still
    frees everything as usual. When more objects were made than the young generations hold, they
    are moved out of the collector's sight (`gc.freeze`) instead of being walked even once more
    (that walk cost 0.7 s on a 200 MB file, and every later full collection would repeat it):
    they form no cycles, so reference counting alone frees them when the tree is dropped. The
    young generations are collected first (they are small then), so that the garbage of other
    work is not frozen with them.
    """
    if not gc.isenabled():  # paused already (by another reader, in another thread)
        yield
        return
    gc.collect(1)
    gc.disable()
    try:
        yield
    finally:
        gen0, gen1, _ = gc.get_threshold()
        if gc.get_count()[0] > gen0 * gen1:
            gc.freeze()
        gc.enable()


class SessionLog:
    """Everything read from one session file so far, in file order."""

    def __init__(self, path=None, bodies=None) -> None:
        self.path = path  # the file read, when it is one: a format may read files beside it
        # Where entry bodies are read again (`bodies.Bodies`, which also keeps where each line
        # starts): given, a format may drop the body of an entry read from one line as it is
        # (pi v3) while `as_is` says the line being read parsed as it is.
        self.bodies = bodies
        self.as_is = False
        self.header: dict | None = None
        self.entries: list[Entry] = []
        self.bad_lines: list[BadLine] = []
        self.problems: list[Problem] = []
        self.ids: dict[str, Entry] = {}
        self._lent = False  # a tree holds `ids` and `entries` as its own: copy them before they change
        self.offset = 0  # bytes of complete lines consumed
        self.lines = 0  # complete lines consumed
        self.blank_lines = 0
        self._active: str | None = None
        # Lines that are not nodes (Claude Code titles and snapshots, Codex events): (line, dict).
        self.metadata: list[tuple[int, dict]] = []
        self._reader = None  # the format's reader, chosen by the first readable line
        # The unterminated last line, read again each time more bytes arrive.
        self.tail_entry: Entry | None = None
        self.tail_bad: BadLine | None = None

    # -- reading -------------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Read `data`, the file's bytes from `self.offset` to its current end."""
        self.feed_chunks((data,))

    def feed_chunks(self, chunks: Iterable[bytes]) -> None:
        """Read the file's bytes from `self.offset` to its current end, given in consecutive
        pieces, so that a big file is never held whole in memory next to what is parsed from it."""
        if self._lent:
            self.ids, self.entries, self._lent = dict(self.ids), list(self.entries), False
        if self.tail_entry is not None:  # the tail is read again below: forget what it reported
            self.problems = [p for p in self.problems if p.line != self.tail_entry.line]
        self.tail_entry = self.tail_bad = None
        pending: list[bytes] = []  # the start of a line that goes on in the next piece
        with gc_paused():
            for chunk in chunks:
                if b"\n" not in chunk:
                    pending.append(chunk)
                    continue
                data = b"".join([*pending, chunk]) if pending else chunk
                end = data.rfind(b"\n") + 1
                self._read_lines(data, end)
                pending = [data[end:]] if end < len(data) else []
            rest = b"".join(pending)
            if rest:
                self._read_tail(rest, self.lines + 1)
            if self._reader is not None:
                self._reader.finish()

    def _read_lines(self, data: bytes, end: int) -> None:
        """Read the complete lines in `data[:end]`, a window of them at a time (not a copy of all
        of them at once, when `data` is a whole file). With `bodies`, each window's line starts
        and column defaults are added there first; a format with a loop of its own (`read_lines`,
        pi's) then reads the window, else each line is read here."""
        start = 0
        if self.bodies is None:
            while start < end:
                newline = data.index(b"\n", start)
                self.lines += 1
                self._read_line(data[start:newline], self.lines)
                start = newline + 1
            self.offset += end
            return
        starts = self.bodies.starts
        while start < end:
            stop = data.index(b"\n", min(start + WINDOW, end) - 1) + 1
            lines = data[start:stop].split(b"\n")
            del lines[-1]  # (empty: after the last newline)
            ends = accumulate(map(add, map(len, lines), repeat(1)), initial=self.offset + start)
            next(ends)
            starts.extend(ends)  # where each next line starts
            self.bodies.add_lines(len(lines))
            start = stop
            n, count = 0, len(lines)
            while n < count:
                read_lines = getattr(self._reader, "read_lines", None)
                if read_lines is not None:  # the rest, by the format's own loop
                    read_lines(lines[n:] if n else lines, self.lines)
                    break
                raw = lines[n]
                n += 1
                self.lines += 1
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    obj = None
                self.read_line_as_is(raw, obj, self.lines)
        self.offset += end

    def read_line_as_is(self, raw: bytes, obj, line: int) -> None:
        """Read line `line` of a log with `bodies`, given what it parsed to as it is (`obj`, None
        when it did not parse)."""
        self.as_is = True
        if self._reader is not None and type(obj) is dict:
            self._reader.line(obj, line)
        else:  # the first line, a bad one, or one to parse carefully (a BOM)
            self._read_line(raw, line)
        self.as_is = False

    def _read_line(self, raw: bytes, line: int) -> None:
        obj, reason = self._parse(raw, line)
        if obj is None:
            if reason is None:
                self.blank_lines += 1
            else:
                self.bad_lines.append(BadLine(line, reason, _decode(raw)))
            return
        reader = self._reader
        if reader is None:
            reader = self._reader = self._reader_for(obj)
        reader.line(obj, line)

    def _reader_for(self, first: dict):
        return reader_for(first)(self._weak())

    def _weak(self) -> SessionLog:
        """This log as its format's reader holds it: a weak proxy, so that the log and its reader
        form no reference cycle. The entries of a big file are frozen out of the collector's sight
        (`gc_paused`), and a cycle among frozen objects is never collected: a log dropped by its
        session must be freed by reference counting alone, or it would stay in memory for good."""
        return weakref.proxy(self)

    def _read_tail(self, raw: bytes, line: int) -> None:
        obj, reason = self._parse(raw, line)
        if obj is None:
            if reason is not None:
                self.tail_bad = BadLine(line, f"torn last line (no newline at end): {reason}", _decode(raw), torn=True)
            return
        if self._reader is None:
            self._reader = self._reader_for(obj)
        self._reader.tail(obj, line)

    def _parse(self, raw: bytes, line: int) -> tuple[dict | None, str | None]:
        try:  # the usual line parses as it is (a trailing \r is JSON whitespace)
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return self._parse_carefully(raw, line)
        if not isinstance(obj, dict):
            return None, f"not a JSON object (a {type(obj).__name__})"
        return obj, None

    def _parse_carefully(self, raw: bytes, line: int) -> tuple[dict | None, str | None]:
        """A line that did not parse as it is: a BOM, a blank line, or the reason it is bad."""
        self.as_is = False  # (read again, it would not parse as it is: its body is kept)
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if line == 1 and raw.startswith(BOM):
            raw = raw[len(BOM):]
        if not raw.strip():
            return None, None
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as uexc:
                return None, f"invalid UTF-8 at byte {uexc.start}"
            return None, f"invalid JSON: {exc}"
        if not isinstance(obj, dict):
            return None, f"not a JSON object (a {type(obj).__name__})"
        return obj, None

    def _leaf_after(self, entry: Entry, active: str | None, record: bool) -> str | None:
        """SPEC §3: a `leaf` entry moves the active leaf to its target, any other entry to itself."""
        if entry.type != LEAF:
            return entry.id
        target = entry.target_id
        if target is None or target in self.ids:
            return target
        if record:
            self.problems.append(
                Problem("dangling-leaf", f"leaf entry targets unknown id {target!r}; ignored", entry.line, entry.id)
            )
        return active

    # -- views ---------------------------------------------------------------------------------

    @property
    def version(self) -> int | None:
        """pi's format version: 1 for pi v1 (a header without `version`), None without a pi
        header (the normalised header of another format says 3: its entries are read as v3's)."""
        if self.header is None or self._reader is None:
            return None
        if self._reader.name != "pi":
            return None
        v = self.header.get("version")
        return v if isinstance(v, int) else 1

    @property
    def format(self) -> str:
        """Which writer's format the file is in: `pi-v3` (the one we write), `pi-v1`, `pi-v2`,
        `claude-code`, `codex`, `empty` (nothing read yet), or `unknown` (lines without a session
        header)."""
        if self._reader is not None and self._reader.name != "pi":
            return self._reader.name
        if self.header is None:
            return "unknown" if self.has_entries or self.bad_lines or self.tail_bad else "empty"
        return f"pi-v{self.version}"

    @property
    def session_id(self) -> str | None:
        return self.header.get("id") if self.header else None

    def lend_ids(self) -> dict[str, Entry]:
        """`ids`, for a tree to keep as its own (instead of a copy of every id): the log copies
        it, and `entries` (which `all_entries` gives trees), before it reads more, so that what
        a tree holds never changes."""
        self._lent = True
        return self.ids

    def all_entries(self) -> list[Entry]:
        return self.entries + [self.tail_entry] if self.tail_entry else self.entries

    def all_bad_lines(self) -> list[BadLine]:
        return self.bad_lines + [self.tail_bad] if self.tail_bad else self.bad_lines

    @property
    def active_leaf(self) -> str | None:
        if self.tail_entry is not None:
            return self._leaf_after(self.tail_entry, self._active, record=False)
        return self._active

    @property
    def has_entries(self) -> bool:
        return bool(self.entries) or self.tail_entry is not None

    def compactions(self) -> list[Entry]:
        return [e for e in self.all_entries() if e.type == COMPACTION]


def parse_bytes(data: bytes) -> SessionLog:
    log = SessionLog()
    log.feed(data)
    return log
