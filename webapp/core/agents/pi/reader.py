"""pi's own format, read line by line as the file grows (SPEC §1, §2).

v3 lines are the normalised entries already. pi's migrations run here, once per line, in memory
(opening a file never writes to it): v1 lines without ids get ids from their line number and are
chained in file order, a v1 compaction's `firstKeptEntryIndex` (counting the header as 0) becomes
the `firstKeptEntryId` of that line, and v2's `hookMessage` role is v3's `custom`.
"""

from __future__ import annotations

from datetime import datetime, timezone

import orjson

from ...entries import COMPACTION, LEAF, MESSAGE, USAGE_MAX, Entry, message_facts
from ...formats.base import Problem, generated_id
from ...formats.fields import checked_entry, message_ok


def _v1_first_kept(obj: dict) -> dict:
    index = obj.get("firstKeptEntryIndex")
    kept = generated_id(index + 1) if isinstance(index, int) and not isinstance(index, bool) else None
    out = {k: v for k, v in obj.items() if k != "firstKeptEntryIndex"}
    out["firstKeptEntryId"] = kept
    return out


def v1_migrated(obj: dict, entry_id: str, parent: str | None) -> dict:
    """A pi v1 line (no `parentId`) as v3 reads it: its id and parent given (chained in file
    order), a compaction's first kept entry named by its id."""
    obj = {**obj, "id": entry_id, "parentId": parent}
    if obj.get("type") == "compaction" and "firstKeptEntryId" not in obj:
        obj = _v1_first_kept(obj)
    return obj


def as_v1(header: dict, entries: list[dict]) -> tuple[dict, list[dict]]:
    """A v3 session written as pi v1 wrote it (what the migrations above read back): no
    `version`, no ids, the model in the header, a compaction's first kept entry as a line index
    (the header is line 0). For sample files of the old format."""
    index = {e["id"]: i for i, e in enumerate(entries, start=1)}
    v1 = []
    for e in entries:
        e = {k: v for k, v in e.items() if k not in ("id", "parentId")}
        if e["type"] == "compaction":
            e = {"type": "compaction", "timestamp": e["timestamp"], "summary": e["summary"],
                 "firstKeptEntryIndex": index[e["firstKeptEntryId"]], "tokensBefore": e["tokensBefore"]}
        v1.append(e)
    return {k: v for k, v in header.items() if k != "version"}, v1


# Entries whose body is kept even when it could be read again: few and small, and read by the
# tree itself (labels, the active leaf, the name, a compaction's kept entry) or by every context.
KEPT_TYPES = frozenset({"leaf", "label", "session_info", COMPACTION, "branch_summary", "model_change",
                        "thinking_level_change", "active_tools_change"})


fromisoformat = datetime.fromisoformat


class PiReader:
    """Feeds a `SessionLog` from pi lines: the header on line 1, then one entry per line."""

    name = "pi"

    def __init__(self, log) -> None:
        self.log = log
        self._prev_id: str | None = None
        self._calls: tuple[str, ...] = ()  # the tool call ids of the last assistant message that made calls

    def line(self, obj: dict, line: int) -> None:
        log = self.log
        if line == 1 and obj.get("type") == "session":
            log.header = obj
            return
        if line == 1:
            log.problems.append(Problem("no-header", "line 1 is not a session header", 1))
        entry = self.entry(obj, line)
        log.entries.append(entry)
        log.ids[entry.id] = entry
        self._prev_id = entry.id
        if entry.type == LEAF:
            log._active = log._leaf_after(entry, log._active, record=True)
        else:
            log._active = entry.id  # what _leaf_after says, without a call for most lines

    def read_lines(self, lines: list[bytes], line: int) -> None:
        """Read `lines`, the lines after line `line` of a log with `bodies`, as `line` would.

        The hot loop of a big file: the usual line, a pi v3 message as it is (parsed as it is,
        with a new id, a parent, and fields of sound types), is read here in one walk over its
        content (`message_facts`) into a lazy entry made directly with its facts; any other is
        handed to the log (`SessionLog.read_line_as_is`, then `line`)."""
        log = self.log
        ids, bodies, add_entry, other = log.ids, log.bodies, log.entries.append, log.read_line_as_is
        instants, estimates, usages, costs = bodies.instants, bodies.estimates, bodies.usages, bodies.costs
        loads, decode_error, facts_of, new = orjson.loads, orjson.JSONDecodeError, message_facts, object.__new__
        calls_made = self._calls
        last = None  # the id of the last entry read here, not yet told to the log
        for raw in lines:
            line += 1
            try:
                obj = loads(raw)
            except decode_error:
                obj = None
            if type(obj) is dict and obj.get("type") == "message":
                msg = obj.get("message")
                entry_id = obj.get("id")
                parent = obj.get("parentId", ids)  # (`ids`: none, a pi v1 line)
                if type(msg) is dict and type(entry_id) is str and entry_id and parent is not ids \
                        and entry_id not in ids:
                    role, calls, call_id, is_error, used, cost, tokens, ok = facts_of(msg)
                    if ok and role != "hookMessage":
                        if type(parent) is str and parent:  # (one string for both ids:)
                            if parent == last:  # (the usual parent: one lookup less in a big dict)
                                parent = last
                            else:
                                known = ids.get(parent)
                                if known is not None:
                                    parent = known.id
                        else:
                            parent = None
                        if calls:
                            calls_made = calls
                            facts = calls[0] if len(calls) == 1 else calls
                        elif type(call_id) is str:
                            if call_id in calls_made:  # its call's: one string for both ids
                                call_id = calls_made[calls_made.index(call_id)]
                            facts = [(), call_id, True, None, cost, ()] if is_error else call_id
                        elif role == "toolResult":
                            facts = [(), call_id, is_error, None, cost, ()]
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
                        if tokens is not None:
                            estimates[line] = tokens
                        ts = obj.get("timestamp")
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
            if last is not None:
                self._prev_id = log._active = last
                last = None
            self._calls = calls_made
            log.lines = line
            other(raw, obj, line)
            calls_made = self._calls
        if last is not None:
            self._prev_id = log._active = last
        self._calls = calls_made
        log.lines = line

    def tail(self, obj: dict, line: int) -> None:
        if line == 1 and obj.get("type") == "session":
            self.log.header = obj  # whole, only its newline is missing: the next append writes one first
            return
        self.log.tail_entry = self.entry(obj, line)

    def finish(self) -> None:
        """Nothing to do: every line was read as it came."""

    def entry(self, obj: dict, line: int) -> Entry:
        log = self.log
        ids = log.ids
        source = None
        why: list[str] | tuple = ()
        t = obj.get("type")
        if t == "message":
            msg = obj.get("message")
            if type(msg) is dict and (not message_ok(msg) or msg.get("role") == "hookMessage"):
                source = obj
                obj, why = checked_entry(obj)
                if obj["message"].get("role") == "hookMessage":
                    obj = {**obj, "message": {**obj["message"], "role": "custom"}}
        elif t == "custom_message" or t == "compaction":
            fixed, why = checked_entry(obj)
            if why:
                source, obj = obj, fixed
        raw_id = obj.get("id")
        generated = type(raw_id) is not str or not raw_id
        entry_id = generated_id(line) if generated else raw_id
        if "parentId" in obj:
            parent = obj["parentId"]
            if type(parent) is str and parent:
                known = ids.get(parent)
                parent = known.id if known is not None else parent  # (one string for both ids)
            else:
                parent = None
        else:  # pi v1: entries form a chain in file order
            parent = self._prev_id
            source = source or obj
            obj = v1_migrated(obj, entry_id, parent)
        if entry_id in ids:
            first = ids[entry_id].line
            entry_id = f"{entry_id}@L{line}"
            log.problems.append(Problem("duplicate-id", f"id {raw_id!r} already used on line {first}", line, entry_id))
        if why:
            log.problems.append(Problem("invalid-field", "; ".join(why) + ": shown as invalid", line, entry_id))
        entry = Entry(obj, line, entry_id, parent, generated, source)
        facts = entry.facts
        if facts[0]:
            self._calls = facts[0]
        elif type(facts[1]) is str and facts[1] in self._calls:  # its result: one string for both ids
            entry.facts = (facts[0], self._calls[self._calls.index(facts[1])], *facts[2:])
        if log.as_is and source is None and entry_id is raw_id and entry.type not in KEPT_TYPES:
            entry.make_lazy(log.bodies)  # its line as it is, with its own id
        return entry
