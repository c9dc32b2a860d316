"""pi's format read for an outline of the file (`session-tree show`): the same log, tree and
problems as `pi.PiReader` gives, from a compiled decoder that reads only the fields they need.

The usual line, a pi v3 message of the known shape, is decoded by msgspec into the few typed
fields the tree and the checks read (ids, role, tool call ids, usage, cost, timestamp); its text
is decoded only as far as checking it, never kept. Token estimates are not taken: each is made
from the entry's body if something asks (`Entry.tokens`), which `show` never does.

The decoder is strict so that it never accepts a line that `pi.PiReader` would read otherwise:
every field of the line must be one it knows, of a type it checks (numbers within orjson's
integer range; strings checked as UTF-8 by the decoder); the values that may be any JSON (a tool
call's arguments, a tool result's details) are parsed again by orjson, as the pi reader parses
them. Any line it does not accept (an unknown field, another type, a bad line, a header) is read
by `pi.PiReader` itself, line by line, so its verdict is the pi reader's by construction.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

import msgspec
import orjson
from msgspec import UNSET, Meta, Raw, Struct, UnsetType

from ..entries import MESSAGE, USAGE_MAX, Entry
from .pi import PiReader, fromisoformat, timezone

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
_ROLES = {UserMessage: "user", CustomMessage: "custom", AssistantMessage: "assistant",
          ToolResultMessage: "toolResult"}


def _parses(raw: Raw) -> bool:
    """Whether a value that may be any JSON parses as orjson parses it (a number out of its
    range, a string that is not UTF-8: not checked by the decoder in a value it skips)."""
    try:
        orjson.loads(memoryview(raw))
    except orjson.JSONDecodeError:
        return False
    return True


class OutlineReader(PiReader):
    """`PiReader` with a compiled decoder for its usual line (see the module's docstring)."""

    def read_lines(self, lines: list[bytes], line: int) -> None:
        log = self.log
        ids, bodies, add_entry = log.ids, log.bodies, log.entries.append
        instants, usages, costs = bodies.instants, bodies.usages, bodies.costs
        decode, not_read, roles, new, read_as_pi = _decode, _NOT_READ, _ROLES, object.__new__, super().read_lines
        calls_made = self._calls
        last = None  # the id of the last entry read here, not yet told to the log
        for raw in lines:
            line += 1
            try:
                m = decode(raw)
            except not_read:
                m = None
            if m is not None:
                entry_id = m.id
                if entry_id and entry_id not in ids:
                    msg = m.message
                    role = roles[type(msg)]
                    calls: tuple = ()
                    used, cost, ok = None, 0.0, True
                    if role == "assistant":
                        content = msg.content
                        if type(content) is list:
                            for b in content:
                                if type(b) is ToolCallBlock:
                                    calls += (b.id,)
                        usage = msg.usage
                        if usage is not None:  # (`entries.usage_facts`, for a usage of the usual shape)
                            if not usage.estimated and msg.stopReason not in ("aborted", "error"):
                                used = usage.totalTokens
                            total = usage.cost.total if usage.cost is not None else None
                            cost = total if type(total) is float else 0.0 if total is None else float(total)
                    elif role == "toolResult":
                        details = msg.details
                        ok = details is NO_DETAILS or _parses(details)
                    if ok:
                        parent = m.parentId
                        if parent:  # (one string for both ids:)
                            if parent == last:
                                parent = last
                            else:
                                known = ids.get(parent)
                                if known is not None:
                                    parent = known.id
                        else:
                            parent = None
                        call_id = msg.toolCallId if role == "toolResult" else None
                        if calls:
                            calls_made = calls
                            facts = calls[0] if len(calls) == 1 else calls
                        elif type(call_id) is str:
                            if call_id in calls_made:  # its call's: one string for both ids
                                call_id = calls_made[calls_made.index(call_id)]
                            facts = [(), call_id, True, None, 0.0, ()] if msg.isError else call_id
                        elif role == "toolResult":
                            facts = [(), None, msg.isError, None, 0.0, ()]
                        else:
                            facts = calls
                        if used is not None:
                            if 0 <= used <= USAGE_MAX:
                                usages[line] = used
                            else:
                                facts = [calls, None, False, used, cost, ()]
                                cost = 0.0
                        if cost:
                            costs[line] = cost
                        ts = m.timestamp
                        if type(ts) is str:  # (`entries.instant_of`, inline)
                            try:
                                t = fromisoformat(ts)
                                instants[line] = (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()
                            except (ValueError, OverflowError):
                                pass
                        entry = new(Entry)  # (lazy: its body is read again from `bodies`)
                        entry._raw, entry.line, entry.id, entry.parent_id = bodies, line, entry_id, parent
                        entry.type, entry.role, entry._facts = MESSAGE, role, facts
                        add_entry(entry)
                        ids[entry_id] = entry
                        last = entry_id
                        continue
            if last is not None:  # the line as the pi reader reads it, told what was read before it
                self._prev_id = log._active = last
                last = None
            self._calls = calls_made
            read_as_pi([raw], line - 1)
            calls_made = self._calls
        if last is not None:
            self._prev_id = log._active = last
        self._calls = calls_made
        log.lines = line
