"""pi's file read into columns, for `session-tree show` (`core/outline.py`): the usual line, a pi v3
message of the known shape, is decoded by a compiled decoder (msgspec) into a few lists indexed by
entry: ids, parent ids, line numbers, and, for the few entries whose facts the tree's checks read,
those facts (an assistant turn's tool call ids, a tool result's call id). Every other line (the
header, a bad or blank line, another entry type, a message the decoder does not take) is read by
`SessionLog` and `PiReader` themselves, as the full read reads it: this log *is* a `SessionLog`,
whose `ids` is an index over the columns, so the pi reader's verdicts (duplicate ids, invalid
fields, a `leaf` that targets no entry) are its own. Those entries are kept as `Entry` objects
beside the columns (`others`).

The decoder is strict so that it never accepts a line that `PiReader` would read otherwise: every
field of the line must be one it knows, of a type it checks (numbers within orjson's integer
range; strings checked as UTF-8 by the decoder); the values that may be any JSON (a tool call's
arguments, a tool result's details) are parsed again by orjson, as the pi reader parses them.
Its text is decoded only as far as checking it, never kept.

A file the pi reader does not read (another agent's: told from its first readable line), or one
in which a decoded line repeats an id (the pi reader names the second one: rare, and only the
tree's reading says which), is not read here (`NotRead`): `show` reads it as every view does.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import Annotated, BinaryIO, Literal, Union

import msgspec
import orjson
from msgspec import UNSET, Meta, Raw, Struct, UnsetType

from ...entries import MESSAGE, Entry
from ...reader import SessionLog, gc_paused
from .reader import PiReader

# orjson reads a bigger integer as a float (or not at all): such a line is left to the pi reader.
Int = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]
Number = Union[Int, float]
Text = Union[str, None]
NO_DETAILS = Raw(b"null")


class _Block(Struct, forbid_unknown_fields=True, tag_field="type"):
    pass


class TextBlock(_Block, tag="text"):
    text: str = ""
    textSignature: Text = None


class ThinkingBlock(_Block, tag="thinking"):
    thinking: str = ""
    thinkingSignature: Text = None


Scalar = Union[str, Number, bool, None]


class ToolCallBlock(_Block, tag="toolCall"):
    id: str = ""
    name: str = ""
    # The usual arguments: flat, or lists of plain values (nowhere near too deep); other ones
    # are read by the pi reader, which checks how deep they go.
    arguments: dict[str, Union[Scalar, list[Scalar]]] = {}
    partialJson: Text = None


class ImageBlock(_Block, tag="image"):
    data: str = ""
    mimeType: Text = None


class Cost(Struct, forbid_unknown_fields=True):
    input: Number = 0
    output: Number = 0
    cacheRead: Number = 0
    cacheWrite: Number = 0
    total: Union[Number, None] = None


class Usage(Struct, forbid_unknown_fields=True):
    # Required, and above 0: a usage without it, or of 0 or less (which the pi reader may sum
    # from its parts), is left to the pi reader, so no reading of it needs checking it again.
    totalTokens: Annotated[int, Meta(gt=0, le=2**63 - 1)]
    input: Number = 0
    output: Number = 0
    cacheRead: Number = 0
    cacheWrite: Number = 0
    estimated: bool = False
    cost: Union[Cost, None] = None


class _Message(Struct, forbid_unknown_fields=True, tag_field="role"):
    toolCallId: Union[str, UnsetType] = UNSET  # (checked on every role: another type is an invalid field)
    timestamp: Union[Number, str, None] = None


class UserMessage(_Message, tag="user"):
    content: Union[str, list[TextBlock], None] = None


class CustomMessage(_Message, tag="custom"):
    content: Union[str, list[TextBlock], None] = None
    customType: Text = None
    display: Union[bool, None] = None


class AssistantMessage(_Message, tag="assistant"):
    content: Union[str, list[Union[TextBlock, ThinkingBlock, ToolCallBlock, ImageBlock]], None] = None
    api: Text = None
    provider: Text = None
    model: Text = None
    responseId: Text = None
    usage: Union[Usage, None] = None
    stopReason: Text = None
    errorMessage: Text = None


class ToolResultMessage(_Message, tag="toolResult"):
    content: Union[str, list[Union[TextBlock, ImageBlock]], None] = None
    toolName: Text = None
    isError: bool = False
    details: Raw = NO_DETAILS


class MessageLine(Struct, forbid_unknown_fields=True):
    type: Literal["message"]
    id: str
    parentId: Union[str, None]  # (required: a line without one is pi v1's, read by the pi reader)
    message: Union[UserMessage, CustomMessage, AssistantMessage, ToolResultMessage]
    timestamp: Union[str, UnsetType] = UNSET


_decode = msgspec.json.Decoder(MessageLine).decode
_NOT_READ = (msgspec.DecodeError, RecursionError)


def _parses(raw: Raw) -> bool:
    """Whether a value that may be any JSON parses as orjson parses it (a number out of its
    range, a string that is not UTF-8: not checked by the decoder in a value it skips)."""
    try:
        orjson.loads(memoryview(raw))
    except orjson.JSONDecodeError:
        return False
    return True


# A big file is read a piece at a time, never held whole. Pieces of 64 KiB (and their lines) are
# made and freed inside the heap malloc keeps; pieces of 1 MiB made it give the memory back to the
# system and fault it in again for each piece (100k entries: 2,000 of the read's 12,700 page faults).
READ_SIZE = 1 << 16


class NotRead(Exception):
    """The file is not read here: it is another agent's (its first readable line chose another
    reader), or an id repeats among the lines decoded."""


class _Known:
    """What the pi reader reads of an entry read into the columns: its id and line."""

    __slots__ = ("id", "line")

    def __init__(self, entry_id: str, line: int):
        self.id, self.line = entry_id, line


class _Index:
    """Entry id -> index in the columns, as `PiReader` reads and fills `SessionLog.ids`: it asks
    whether an id is known, and the id and line of a known one; setting an id adds its entry."""

    __slots__ = ("log",)

    def __init__(self, log: ColumnLog):
        self.log = log

    def __contains__(self, entry_id) -> bool:
        return entry_id in self.log.index

    def get(self, entry_id, default=None):
        log = self.log
        i = log.index.get(entry_id)
        if i is None:
            return default
        other = log.others.get(i)
        return other if other is not None else _Known(log.id_of[i], log.lines_of[i])

    def __getitem__(self, entry_id):
        found = self.get(entry_id)
        if found is None:
            raise KeyError(entry_id)
        return found

    def __setitem__(self, entry_id: str, entry: Entry) -> None:
        self.log.add_other(entry)


class ColumnLog(SessionLog):
    """A pi file's lines read into columns (see the module's docstring)."""

    def __init__(self, path=None) -> None:
        super().__init__(path)
        self.ids = _Index(self)  # (what the pi reader reads and fills)
        self.index: dict[str, int] = {}  # (up to `_indexed`: see `_sync`)
        self._indexed = 0
        self.id_of: list[str] = []
        self.parents: list[str | None] = []
        self.lines_of: list[int] = []  # (`lines` is SessionLog's count of the lines read)
        self.others: dict[int, Entry] = {}  # index -> the entry, for those not read by the decoder
        self.calls: dict[int, tuple[str, ...]] = {}  # a decoded turn's tool call ids, if kept (`_turn_ended`)
        self.stops: dict[int, str] = {}  # ... and how it stopped, when aborted or by an error
        self.result_at = array("q")  # every decoded tool result's index
        self.results: dict[int, str | None] = {}  # ... and its call id, unless it answered a turn not kept
        self._turn = (0, None, None, [])  # the turn whose results are being read: index, calls, stop, answers

    def add_other(self, entry: Entry) -> None:
        i = len(self.id_of)
        self.index[entry.id] = i
        self.id_of.append(entry.id)
        self.parents.append(entry.parent_id)
        self.lines_of.append(entry.line)
        self.others[i] = entry
        self._indexed = i + 1

    @property
    def has_entries(self) -> bool:
        return bool(self.id_of)

    def read(self, file: BinaryIO) -> None:
        """Read a binary file from its start to its end, a piece at a time."""
        pieces: list[bytes] = []  # the start of a line that goes on in the next piece
        line = 0
        with gc_paused():
            while chunk := file.read(READ_SIZE):
                if b"\n" not in chunk:
                    pieces.append(chunk)
                    continue
                lines = chunk.split(b"\n")
                if pieces:
                    pieces.append(lines[0])
                    lines[0] = b"".join(pieces)
                    pieces = []
                rest = lines.pop()  # (after the last newline)
                if rest:
                    pieces.append(rest)
                line = self._read_window(lines, line)
            self.lines = line
            turn, calls, stop, answers = self._turn
            if calls is not None and answers != calls:
                self._turn_ended(turn, calls, stop, answers)
            if pieces:
                self._sync()
                self._read_tail(b"".join(pieces), line + 1)
                if type(self._reader) not in (PiReader, type(None)):
                    raise NotRead
                if self.tail_entry is not None:
                    self.add_other(self.tail_entry)
            if self._reader is not None:
                self._reader.finish()

    def _read_window(self, lines: list[bytes], line: int) -> int:
        """Read `lines`, those after line `line`; the number of the last one read. (The hot
        loop: a decoded line costs three appends; ids are indexed in C when a line needs the
        index. A parent id that names the entry before, as most do, is kept as that entry's id
        string: one string less per entry held, and the columns' parent check finds it by
        identity. A decoded turn that calls tools is followed by its results, each the child of
        the one before, whose call ids are gathered until another line comes: the turn is kept
        only if they do not answer every call, see `_turn_ended`.)"""
        ids, parents, lines_of = self.id_of, self.parents, self.lines_of
        add_id, add_parent, add_line = ids.append, parents.append, lines_of.append
        results, add_result = self.results, self.result_at.append
        decode, not_read = _decode, _NOT_READ
        reader = self._reader
        last = ids[-1] or None if ids else None  # (an empty id names no parent)
        turn, calls, stop, answers = self._turn
        for raw in lines:
            line += 1
            if reader is not None:
                try:
                    m = decode(raw)
                except not_read:
                    m = None
                if m is not None and m.id:
                    msg = m.message
                    parent = m.parentId
                    if type(msg) is ToolResultMessage:
                        details = msg.details
                        if details is not NO_DETAILS and not _parses(details):
                            m = None
                        else:
                            call_id = msg.toolCallId
                            if type(call_id) is not str:
                                call_id = None
                            add_result(len(ids))
                            if calls is not None and parent == last:
                                answers.append(call_id)
                            else:
                                if calls is not None and answers != calls:
                                    self._turn_ended(turn, calls, stop, answers)
                                calls = None
                                results[len(ids)] = call_id
                    else:
                        if calls is not None and answers != calls:
                            self._turn_ended(turn, calls, stop, answers)
                        calls = None
                        if type(msg) is AssistantMessage:  # (a usage the pi reader sums from its parts: refused by the decoder)
                            content = msg.content
                            if type(content) is list:
                                found = [b.id for b in content if type(b) is ToolCallBlock]
                                if found:
                                    turn, calls, stop, answers = len(ids), found, msg.stopReason, []
                    if m is not None:
                        add_parent(last if parent == last else parent or None)
                        last = m.id
                        add_id(last)
                        add_line(line)
                        continue
            if calls is not None and answers != calls:
                self._turn_ended(turn, calls, stop, answers)
            calls = None
            self._sync()  # the line as the log reads it, told what was read before it
            self._read_line(raw, line)
            last = ids[-1] or None if ids else None
            if reader is None and self._reader is not None:  # the first readable line chose the reader
                reader = self._reader
                if type(reader) is not PiReader:
                    raise NotRead
        self._turn = turn, calls, stop, answers
        self._sync()
        return line

    def _turn_ended(self, turn: int, calls: list[str], stop, answers: list[str | None]) -> None:
        """The results after decoded turn `turn` (each the child of the one before) answered
        `answers`, not its calls one by one in order. Most turns are answered so: then neither
        the turn's call ids nor those results' are kept, as no check of the tree reads them (a
        result answers the turn it follows, and a search for another turn's results never walks
        through a turn). Otherwise the turn is checked in full, and those results kept for it.
        (At 100k entries the call ids and the results' were 13 MB held until the checks.)"""
        if set(calls).issubset(answers):
            return
        self.calls[turn] = tuple(calls)
        if stop in ("aborted", "error"):
            self.stops[turn] = stop
        self.results.update(zip(range(turn + 1, turn + 1 + len(answers)), answers))

    def _sync(self) -> None:
        """Index the entries decoded since the last line the log read, and tell the pi reader
        the last of them (what a v1 line chains to, and the active leaf so far). An id decoded
        twice is left to the tree's reading (`NotRead`): the pi reader names the second one."""
        ids, done = self.id_of, self._indexed
        n = len(ids)
        if n > done:
            index = self.index
            index.update(zip(ids[done:], range(done, n)))
            if len(index) != n:
                raise NotRead
            self._reader._prev_id = self._active = ids[-1]
            self._indexed = n

    # -- what the tree's checks read of an entry ------------------------------------------------

    def type_of(self, i: int):
        other = self.others.get(i)
        return MESSAGE if other is None else other.type

    def role_of(self, i: int) -> str | None:
        """The role of entry `i` as far as the checks tell it: a decoded message that is not a
        tool result is only known to be no tool result ("")."""
        other = self.others.get(i)
        if other is not None:
            return other.role
        at = self.result_at
        k = bisect_left(at, i)
        return "toolResult" if k < len(at) and at[k] == i else ""

    def tool_call_ids(self, i: int) -> tuple[str, ...]:
        other = self.others.get(i)
        return self.calls.get(i, ()) if other is None else other.tool_call_ids

    def tool_call_id(self, i: int):
        other = self.others.get(i)
        return self.results.get(i) if other is None else other.tool_call_id

    def stop_reason(self, i: int):
        other = self.others.get(i)
        return self.stops.get(i) if other is None else other.message.get("stopReason")
