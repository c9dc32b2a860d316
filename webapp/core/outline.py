"""What `session-tree show --json` prints of a session: its header, entry counts, roots, orphans,
leaves, active leaf, labels and problems, then every entry's id, type, parent and line, and the
bad lines; `show` prints the same document but its rows as text (`outline_facts`).

Two builders give the same document. `tree_outline` reads it off a `SessionTree`, as every view
reads a session. `outline_json` reads a pi file into columns (`agents.pi.columns.ColumnLog`: no object
per usual entry) and computes the tree's facts over them, with the tree's own rules: parent
indices instead of parent entries, a loop cut where the tree cuts it, the checks of `SessionTree.
_check_references` made on the few entries that can fail them, leaves found among the entries
with no child; the rows are written from the columns' JSON, a batch at a time. What it does not
read (another agent's file, repeated ids: `columns.NotRead`) is read by `tree_outline`.
tests/core/test_show_outline.py holds the two documents equal, byte for byte, on every fixture,
sample, hostile file and crafted line.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterator
from itertools import chain, compress, filterfalse, islice, repeat
from operator import eq, ge, ne

import orjson

from .agents import read_only_formats
from .agents.pi.columns import ColumnLog, NotRead
from .context_edits import is_editable, replacement_problem, target_problem
from .entries import COMPACTION, CONTEXT_EDIT, CUSTOM, LABEL, MARKER_TYPES, MESSAGE, SESSION_INFO, is_marker
from .reader import Problem, gc_paused
from .storage import JsonlStorage
from .tree import (
    NOTED_TYPES,
    bad_context_edit,
    cycle,
    dangling_label,
    first_kept_reason,
    first_kept_tool_result,
    missing_fields,
    orphan,
    unanswered_calls,
)


def tree_outline(session) -> dict:
    """The document, from the tree of `session` (a `session.Session`)."""
    tree = session.tree
    rows = [{"id": e.id, "type": e.type, "parentId": e.parent_id, "line": e.line} for e in tree.entries]
    made_roots = tree.parent.made_roots  # (their own parentId names no entry, or closes a loop)
    if made_roots:  # (few, and most files have none: not looked up for every entry)
        for row in rows:
            if row["id"] in made_roots:
                row["parentId"] = None
    if tree.format in read_only_formats():  # a sub-agent's entry names its own file
        for row, e in zip(rows, tree.entries):
            if e.file:
                row["file"] = e.file
    return {
        "header": tree.header,
        "version": session.log.version,
        "format": tree.format,
        "name": tree.name,
        "counts": tree.counts_by_type(),
        "roots": tree.roots,
        "orphans": tree.orphans,
        "leaves": tree.leaves(),
        "activeLeaf": tree.active_leaf,
        "labels": tree.labels,
        "problems": [p.as_dict() for p in tree.all_problems()],
        "entries": rows,
        "badLines": [{"line": b.line, "reason": b.reason} for b in tree.bad_lines],
    }


def _read(path: str | os.PathLike) -> tuple[dict, _Columns | None]:
    """The document of the session file at `path` but its entries' rows, and the columns they are
    written from; for a file not read into columns (another agent's), its whole document and None."""
    storage = JsonlStorage(path)  # (a missing file, a folder: the errors every reading gives)
    log = ColumnLog(path)
    try:
        with open(storage.path, "rb") as file:
            log.read(file)
    except NotRead:
        from .session import Session  # (what every view reads with; `show` of a pi file does not load it)

        return tree_outline(Session.open(path)), None
    with gc_paused():  # (the facts' lists and sets, none in a cycle: the collector would walk them for nothing)
        columns = _Columns(log)
        return columns.outline(), columns


def outline_json(path: str | os.PathLike, first: dict) -> Iterator[bytes]:
    """The document of the session file at `path` as `show --json` prints it (after the fields of
    `first`, indented, ending in a newline), in pieces: the entries' rows are written from the
    columns a batch at a time, so neither a dict per row nor the whole document's bytes are ever
    held (at 100k entries they were a third of the memory the process touched). Another agent's
    file: from its tree."""
    doc, columns = _read(path)
    if columns is None:
        yield orjson.dumps({**first, **doc}, option=_JSON)
        return
    head, tail = orjson.dumps({**first, **doc}, option=_JSON).split(_ROWS_AT)
    yield head
    yield from columns.rows_json()
    yield tail


def outline_facts(path: str | os.PathLike) -> dict:
    """The document of the session file at `path` but its entries' rows: what `show` prints as
    text (its header, counts, roots, leaves, labels and problems)."""
    return _read(path)[0]


_JSON = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
_ROWS_AT = b"\x00"  # (where the rows go: orjson writes a NUL in a string as \u0000, never as itself)
ROWS_BATCH = 2048  # rows written at a time (~340 KB of JSON)
# A usual row, a message whose parent is the entry before it, as orjson indents it in the document
# (given the JSON of its id and its parent's, and its line).
_ROW = b',\n    {\n      "id": %s,\n      "type": "message",\n      "parentId": %s,\n      "line": %d\n    }'


class _Columns:
    """The tree's facts over a `ColumnLog`'s columns: entry `i` is the i-th in file order, and
    `up[i]` the index of its parent in the tree, -1 for a root (its own parentId is None, names
    no entry, or closes a loop)."""

    def __init__(self, log: ColumnLog):
        self.log = log
        self.ids, self.lines, self.others = log.id_of, log.lines_of, log.others
        ids, parents, index = log.id_of, log.parents, log.index
        n = len(ids)
        # Most entries' parent is the entry before them. (Machine integers: a list would hold an
        # int object per entry, and the entries' lists or counts by parent a dict entry per entry.)
        self.up = up = array("q", range(-1, n - 1))
        self.jumps = list(compress(range(n), map(ne, parents, chain((None,), ids))))  # (compared in C)
        for i in self.jumps:
            up[i] = index.get(parents[i], -1)
        self._kids: dict[int, list[int]] = {}  # the children of entries that are not the entry after them

    def outline(self) -> dict:
        log, ids, lines, up = self.log, self.ids, self.lines, self.up
        n = len(ids)
        problems = list(log.problems)
        parents = log.parents
        made = list(compress(range(n), map(eq, up, repeat(-1))))  # roots and orphans, so far
        orphans = [i for i in made if parents[i] is not None]
        problems += [orphan(parents[i], lines[i], ids[i]) for i in orphans]
        made_roots = set(orphans)
        if any(map(ge, up, range(n))):  # a parent at or after its child: a loop may close
            cuts = self._cut_cycles(problems)
            if cuts:
                made_roots.update(cuts)
                made = list(compress(range(n), map(eq, up, repeat(-1))))
        for c in compress(range(n), map(ne, up, range(-1, n - 1))):
            if up[c] != -1:
                self._kids.setdefault(up[c], []).append(c)
        self.marker_parents: set[int] = set()
        self.labels: dict[str, str] = {}
        self.name: str | None = None
        self._check_references(problems)
        title = (log.header or {}).get("title")
        name = self.name or (title if isinstance(title, str) and title.strip() else None)
        counts: dict[str, int] = {}  # (in the order the types first come: the decoded messages' among the others')
        decoded, first = n - len(self.others), next(filterfalse(self.others.__contains__, range(n)), n)
        for i, e in self.others.items():
            if decoded and first < i:
                counts[MESSAGE], decoded = counts.get(MESSAGE, 0) + decoded, 0
            t = str(e.type)  # (a type that is not a string: its text)
            counts[t] = counts.get(t, 0) + 1
        if decoded:
            counts[MESSAGE] = counts.get(MESSAGE, 0) + decoded
        self.made_roots = made_roots
        bad_lines = log.all_bad_lines()
        bad = [Problem("bad-line", b.reason, b.line) for b in bad_lines]
        active = log.active_leaf
        return {
            "header": log.header,
            "version": log.version,
            "format": log.format,
            "name": name,
            "counts": counts,
            "roots": [ids[i] for i in made],
            "orphans": [ids[i] for i in orphans],
            "leaves": [ids[i] for i in self._leaves(active)],
            "activeLeaf": active,
            "labels": self.labels,
            "problems": [p.as_dict() for p in sorted(bad + problems, key=lambda p: (p.line or 0, p.kind))],
            "entries": orjson.Fragment(_ROWS_AT),  # (`rows_json`)
            "badLines": [{"line": b.line, "reason": b.reason} for b in bad_lines],
        }

    def rows_json(self) -> Iterator[bytes]:
        """The entries' rows, the document's `entries`, a batch at a time. A run of usual rows is
        `_ROW` repeated and filled, in C, with its ids' JSON (made by orjson a list at a time) and
        its lines: no dict per row (measured: 160 ns a row against 250 for a dict dumped, and 210
        for the rows joined from pieces); any other row (another type, a parent that is not the
        entry before, or none in the tree) is dumped whole, at the document's depth."""
        n = len(self.ids)
        if not n:
            yield b"[]"
            return
        odd = sorted({*self.jumps, *self.others, *self.made_roots})
        at = 0  # (in `odd`)
        for start in range(0, n, ROWS_BATCH):
            end = min(start + ROWS_BATCH, n)
            parts = []
            i = start
            while at < len(odd) and odd[at] < end:
                parts += [self._usual_rows(i, odd[at]), self._odd_row(odd[at])]
                i = odd[at] + 1
                at += 1
            parts.append(self._usual_rows(i, end))
            text = b"".join(parts)
            yield b"[\n" + text[2:] if not start else text  # (each row starts with the comma before it)
        yield b"\n  ]"

    def _usual_rows(self, start: int, end: int) -> bytes:
        """Rows `start` to `end` (excluded), each a message whose parent is the entry before it."""
        if start == end:
            return b""
        ids = self.ids
        quoted = orjson.dumps([ids[start - 1] if start else None, *ids[start:end]], option=orjson.OPT_INDENT_2)
        quoted = quoted[4:-2].split(b",\n  ")  # (one id's JSON each: a string's JSON never holds a newline)
        values = [None] * (3 * (end - start))
        values[0::3] = quoted[1:]
        values[1::3] = quoted[:-1]  # (the parent: the id before)
        values[2::3] = self.lines[start:end]
        return _ROW * (end - start) % tuple(values)

    def _odd_row(self, i: int) -> bytes:
        other = self.others.get(i)
        row = {"id": self.ids[i], "type": MESSAGE if other is None else other.type,
               "parentId": None if i in self.made_roots else self.log.parents[i], "line": self.lines[i]}
        return b",\n" + orjson.dumps([[row]], option=orjson.OPT_INDENT_2)[6:-6]  # (a row at its depth in the document)

    # -- structure (`SessionTree._link`, `_cut_cycles`) ------------------------------------------

    def _cut_cycles(self, problems: list[Problem]) -> list[int]:
        """Cut each loop at its earliest entry, as the tree does; the entries cut."""
        up, ids, lines = self.up, self.ids, self.lines
        state = bytearray(len(up))  # 1 = on the current walk, 2 = known to reach a root
        cuts = []
        for start in range(len(up)):
            walk = []
            node = start
            while node != -1 and not state[node]:
                state[node] = 1
                walk.append(node)
                node = up[node]
            if node != -1 and state[node] == 1:
                loop = walk[walk.index(node):]
                cut = min(loop)  # (the earliest line: entries are in file order)
                up[cut] = -1
                cuts.append(cut)
                problems.append(cycle(len(loop), lines[cut], ids[cut]))
            for x in walk:
                state[x] = 2
        return cuts

    def children(self, i: int) -> list[int]:
        """The children of entry `i` (in no order: the checks below need none). Most entries are
        the child of the entry before them; the others are listed by parent once, found in C."""
        up = self.up
        more = self._kids.get(i)
        if i + 1 < len(up) and up[i + 1] == i:
            return [i + 1, *more] if more else [i + 1]
        return list(more) if more else []

    def is_marker(self, i: int) -> bool:
        e = self.others.get(i)
        return e is not None and is_marker(e)

    # -- checks (`SessionTree._check_references`, `_check_tool_results`) ------------------------

    def _check_references(self, problems: list[Problem]) -> None:
        log, ids, lines, up, others = self.log, self.ids, self.lines, self.up, self.others
        index = log.index
        for i in sorted({*others, *log.calls}):  # (a decoded entry can fail one check only: its calls')
            e = others.get(i)
            if e is None:
                self._check_tool_results(i, problems)
                continue
            if e.role is not None:  # a message with a body (which is all a message requires)
                if e.role == "assistant" and e.tool_call_ids:
                    self._check_tool_results(i, problems)
                continue
            if e.missing_fields:
                problems.append(missing_fields(e))
            t = e.type
            if t not in NOTED_TYPES:
                continue
            if (t in MARKER_TYPES or (t == CUSTOM and is_marker(e))) and up[i] != -1:
                self.marker_parents.add(up[i])
            if t == LABEL:
                target = e.target_id
                if target is not None:
                    text = e.get("label")
                    if isinstance(text, str) and text.strip():
                        self.labels[target] = text
                    else:
                        self.labels.pop(target, None)
                if target not in index:
                    problems.append(dangling_label(target, lines[i], ids[i]))
            elif t == SESSION_INFO:
                value = e.get("name")
                self.name = value if isinstance(value, str) and value.strip() else self.name
            elif t == CONTEXT_EDIT and "replacement" in e.raw:
                target = e.target_id
                k = index.get(target, -1) if target is not None else -1
                other = others.get(k)  # (a message read into the columns is a user, custom, assistant
                # or tool result message: editable, but for a `custom` one, which only the tree tells)
                reason = replacement_problem(e.get("replacement")) or target_problem(
                    target, k != -1, k != -1 and up[i] != -1 and self._is_ancestor(k, up[i]),
                    k != -1 and (other is None or is_editable(other)))
                if reason:
                    problems.append(bad_context_edit(reason, lines[i], ids[i]))
            elif t == COMPACTION and "summary" in e.raw:
                kept = e.first_kept_id
                k = index.get(kept, -1)
                problem = first_kept_reason(kept, k != -1, k != -1 and self._is_ancestor(k, i))
                if problem:
                    problems.append(Problem("dangling-first-kept", problem, lines[i], ids[i]))
                elif k != -1 and log.role_of(k) == "toolResult":
                    problems.append(first_kept_tool_result(kept, lines[i], ids[i]))

    def _is_ancestor(self, a: int, node: int) -> bool:
        up = self.up
        while node != -1:
            if node == a:
                return True
            node = up[node]
        return False

    def _check_tool_results(self, i: int, problems: list[Problem]) -> None:
        log = self.log
        calls = log.tool_call_ids(i)
        kids = self.children(i)
        if len(calls) == 1 and len(kids) == 1:  # the usual case: its one result is its child
            k = kids[0]
            if log.tool_call_id(k) == calls[0] and log.role_of(k) == "toolResult":
                return
        answered: set = set()
        stack = kids
        while stack:
            c = stack.pop()
            if log.role_of(c) == "toolResult" or self.is_marker(c):
                answered.add(log.tool_call_id(c))
                stack.extend(self.children(c))
            elif log.type_of(c) == CUSTOM:  # a side line between a call and its result
                stack.extend(self.children(c))
        missing = [c for c in calls if c not in answered]
        if missing:
            problems.append(unanswered_calls(missing, calls, log.stop_reason(i), self.lines[i], self.ids[i]))

    # -- leaves (`SessionTree.leaves`) -----------------------------------------------------------

    def _leaves(self, active: str | None) -> list[int]:
        up, marker_parents, others = self.up, self.marker_parents, self.others
        n = len(up)
        ends = compress(range(n), map(ne, chain(islice(up, 1, None), (None,)), range(n)))  # (no child after it)
        ends = filterfalse(self._kids.__contains__, ends)  # (nor elsewhere; found in C: most entries have a child)
        if marker_parents:
            ends = sorted({*ends, *marker_parents})
        tips = [i for i in ends if (i not in others or not is_marker(others[i]) and not others[i].sidechain)
                and (i not in marker_parents or not self._goes_on(i))]
        shown = None if active is None else self.log.index[active]
        while shown is not None and self.is_marker(shown):  # (`conversation_leaf`)
            shown = self.up[shown] if self.up[shown] != -1 else None
        if shown is not None and shown not in tips:
            tips = [i for i in tips if not self._side_tip_of(i, shown)]
            tips.append(shown)
        return tips

    def _goes_on(self, i: int) -> bool:
        """Whether the conversation goes on after entry `i`, looking through markers."""
        stack = list(self.children(i))
        while stack:
            c = stack.pop()
            if not self.is_marker(c):
                return True
            stack.extend(self.children(c))
        return False

    def _side_tip_of(self, tip: int, leaf: int) -> bool:
        """Whether `tip` ends a chain of `custom` entries written after `leaf` (its branch)."""
        while tip != -1 and self.log.type_of(tip) == CUSTOM:
            tip = self.up[tip]
        return tip == leaf
