"""The tree of a session (SPEC §3): children order, roots, orphans, cycles, active leaf, labels.

Built from a `SessionLog` in one pass; nothing here changes the log. Broken structure is mended
in the tree only (an orphan or the entry that closes a loop becomes a root) and always reported.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Container, Iterator, Mapping
from itertools import filterfalse

from .agents import read_only_formats
from .context_edits import is_editable, replacement_problem, target_problem
from .entries import COMPACTION, CONTEXT_EDIT, CUSTOM, LABEL, MARKER_TYPES, SESSION_INFO, Entry, is_marker
from .errors import AmbiguousEntry, UnknownEntry
from .reader import BadLine, Problem, SessionLog, first_kept_id, gc_paused


def _instant(e: Entry) -> tuple:
    """Sort key of an entry's timestamp: the instant it names, whatever its precision or UTC
    offset (`...:06Z` is before `...:06.500Z`, which a string comparison gets wrong); text that
    is not ISO-8601 sorts first."""
    return (False, e.timestamp) if e.instant is None else (True, e.instant)


class Parents(Mapping):
    """Entry id -> the id of its parent in the tree, None for a root (`SessionTree.parent`).

    That is the entry's own `parent_id`, except for the few entries the tree made roots (an
    orphan, the entry that closed a loop): those exceptions are kept, not a map of every entry
    (memory is paid per entry, and a big file has hundreds of thousands)."""

    __slots__ = ("by_id", "made_roots")

    def __init__(self, by_id: dict[str, Entry], made_roots: set[str]):
        self.by_id, self.made_roots = by_id, made_roots

    def __getitem__(self, entry_id: str) -> str | None:
        parent = self.by_id[entry_id].parent_id
        return None if parent is None or entry_id in self.made_roots else parent

    def get(self, entry_id: str, default=None):
        e = self.by_id.get(entry_id)
        if e is None:
            return default
        return None if e.parent_id is None or entry_id in self.made_roots else e.parent_id

    def __contains__(self, entry_id) -> bool:
        return entry_id in self.by_id

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_id)

    def __len__(self) -> int:
        return len(self.by_id)


class Children(Mapping):
    """Entry id -> the ids of its children in order (by time, then file order), as a list
    (`SessionTree.children`). Most entries have one child: a lone child is kept as its id, not
    as a list of one (a list would add ~90 bytes to every entry). `kids` is that dict, for the
    loops that walk every entry (a value is an id or a list of two ids or more)."""

    __slots__ = ("kids",)

    def __init__(self, kids: dict[str, str | list[str]]):
        self.kids = kids

    def __getitem__(self, entry_id: str) -> list[str]:
        v = self.kids[entry_id]
        return [v] if type(v) is str else v

    def get(self, entry_id: str, default=None):
        v = self.kids.get(entry_id)
        if v is None:
            return default
        return [v] if type(v) is str else v

    def __contains__(self, entry_id) -> bool:
        return entry_id in self.kids

    def __iter__(self) -> Iterator[str]:
        return iter(self.kids)

    def __len__(self) -> int:
        return len(self.kids)


# Entry types `_check_references` reads: markers, and those whose lines name another entry or the
# session (SPEC §2).
NOTED_TYPES = frozenset({*MARKER_TYPES, CUSTOM, SESSION_INFO, COMPACTION, CONTEXT_EDIT})

# Problems the file can live with: a model request is repaired for them (SPEC §5b).
WARNING_KINDS = frozenset({"first-kept-tool-result", "unanswered-tool-call", "codex-rebuilt-history"})


# What the tree reports, worded once for both builders of it (this one and `outline`'s, which
# computes the same facts over columns for `show --json`).
def orphan(parent: str, line: int, entry_id: str) -> Problem:
    return Problem("orphan", f"parent {parent!r} does not exist; shown as a root", line, entry_id)


def cycle(size: int, line: int, entry_id: str) -> Problem:
    return Problem("cycle", f"parent chain loops through {size} entries; cut here, shown as a root", line, entry_id)


def missing_fields(e: Entry) -> Problem:
    return Problem("missing-field", f"{e.type} entry lacks {', '.join(e.missing_fields)}", e.line, e.id)


def dangling_label(target, line: int, entry_id: str) -> Problem:
    return Problem("dangling-label", f"label targets unknown id {target!r}", line, entry_id)


def first_kept_reason(kept: str | None, known: bool, on_path: bool) -> str | None:
    """Why a pi compaction's `firstKeptEntryId` cannot be honoured (None when it can): `kept`
    is it, `known` whether it names an entry, `on_path` whether that entry is on the path to the
    compaction."""
    if kept is None:
        return "compaction has no firstKeptEntryId; nothing before it is kept"
    if not known:
        return f"firstKeptEntryId {kept!r} names no entry; nothing before the compaction is kept"
    if not on_path:
        return f"firstKeptEntryId {kept!r} is not on the path before the compaction; nothing before it is kept"
    return None


def bad_context_edit(reason: str, line: int, entry_id: str) -> Problem:
    return Problem("bad-context-edit", f"pi refuses this context edit: {reason}", line, entry_id)


def first_kept_tool_result(kept: str, line: int, entry_id: str) -> Problem:
    return Problem("first-kept-tool-result", f"the first entry kept, {kept!r}, is a tool result without its call: "
                   "it is left out of model requests", line, entry_id)


def unanswered_calls(missing: list[str], calls: tuple, stop, line: int, entry_id: str) -> Problem:
    then = (f"the turn {'was aborted' if stop == 'aborted' else 'ended with an error'}, so it is not sent"
            if stop in ("aborted", "error") else "model requests send \"No result provided\" for them")
    return Problem("unanswered-tool-call",
                   f"{len(missing)} of {len(calls)} tool calls have no result ({', '.join(missing)}): {then}",
                   line, entry_id)


class SessionTree:
    # The conversation across files this tree joins (`joined.Conversation`), or None: one file's.
    joined = None

    def __init__(self, log: SessionLog):
        self.header = log.header
        self.format = log.format
        self.metadata = log.metadata  # lines that are not nodes (another agent's titles, events)
        self.entries: list[Entry] = log.all_entries()
        self.bad_lines: list[BadLine] = log.all_bad_lines()
        # Every entry by its id, in file order: the log's own dict, lent, unless a torn last line adds one.
        self.by_id: dict[str, Entry] = log.lend_ids() if log.tail_entry is None else dict(log.ids)
        if log.tail_entry is not None:
            self.by_id[log.tail_entry.id] = log.tail_entry
        self._made_roots: set[str] = set()  # entries whose parent the tree does not follow
        self.parent = Parents(self.by_id, self._made_roots)
        self.children = Children({})
        self.roots: list[str] = []
        self.orphans: list[str] = []
        self.cycle_cuts: list[str] = []
        self.problems: list[Problem] = list(log.problems)
        # Entries with a `leaf` or `label` child: only there must conversation_children look
        # through markers (most entries have none, and the check is made for every entry).
        self._marker_parents: set[str] = set()
        self._leaves: list[str] | None = None
        # What `extend` needs: the log read, how much of it is in the tree, and the ids that
        # earlier entries refer to but that do not exist (an append that brings one changes them).
        self._log, self._log_entries, self._log_problems = log, len(log.entries), len(log.problems)
        self._grows = log.tail_entry is None  # a torn last line is read again: build anew then
        self._wanted: set[str] = set()
        self.labels: dict[str, str] = {}
        self.name: str | None = None
        with gc_paused():
            self._link(self.entries)
            self.active_leaf: str | None = log.active_leaf
            self._check_references(self.entries)
            title = (self.header or {}).get("title")  # another format's title, from the seam
            self.name = self.name or (title if isinstance(title, str) and title.strip() else None)

    # -- building ------------------------------------------------------------------------------

    def extended(self, log: SessionLog) -> SessionTree | None:
        """The tree of `log` (the log this tree was built from) now that it read more, made from
        this one at the cost of the new entries and the sibling lists they join (so an append
        to a big file does not rebuild its tree); equal to `SessionTree(log)`. This tree is left
        as it is, for the requests still reading it. None when the new lines change what was
        decided about earlier ones (an entry they referred to, a parent written after its child,
        a torn line read again): build a new tree then."""
        if log is not self._log or not self._grows or len(log.entries) < self._log_entries:
            return None
        if self.format in read_only_formats():  # their entries are made again from every line
            return None
        new = log.entries[self._log_entries:] + ([log.tail_entry] if log.tail_entry else [])
        ids = {e.id: e for e in new}
        if not ids.keys().isdisjoint(self._wanted) or any(
            e.parent_id in ids and ids[e.parent_id].line >= e.line for e in new
        ):
            return None
        tree = copy.copy(self)
        tree.__dict__.pop("_link_of", None)  # (what the file says it continues: asked again of the new lines)
        for name in ("labels", "_wanted", "_marker_parents", "_made_roots"):
            setattr(tree, name, copy.copy(getattr(self, name)))
        for name in ("roots", "orphans", "problems", "cycle_cuts"):
            setattr(tree, name, list(getattr(self, name)))
        kids = dict(self.children.kids)
        for e in new:  # sibling lists that grow are copied, not changed under a reader
            if type(kids.get(e.parent_id)) is list:
                kids[e.parent_id] = list(kids[e.parent_id])
        tree.children = Children(kids)
        with gc_paused():
            tree.entries = log.all_entries()
            tree.bad_lines = log.all_bad_lines()
            tree.by_id = log.lend_ids() if log.tail_entry is None else {**log.ids, **ids}
            tree.parent = Parents(tree.by_id, tree._made_roots)
            tree.problems += log.problems[self._log_problems:]
            tree._log_entries, tree._log_problems = len(log.entries), len(log.problems)
            tree._grows = log.tail_entry is None
            tree._link(new)
            tree.active_leaf = log.active_leaf
            tree._check_references(new)
            tree._recheck_tool_results(new, ids)
            tree._leaves = None
        return tree

    def _recheck_tool_results(self, new: list[Entry], ids: dict) -> None:
        """An earlier assistant turn whose tool results arrive among `new` is checked again."""
        again = set()
        for e in new:
            node: Entry | None = e
            while node is not None and (node.role == "toolResult" or is_marker(node)):
                parent = self.parent.get(node.id)
                node = self.by_id[parent] if parent is not None else None
            if node is not None and node is not e and node.id not in ids and node.role == "assistant":
                again.add(node.id)
        if again:
            self.problems = [p for p in self.problems if not (p.kind == "unanswered-tool-call" and p.entry_id in again)]
            for entry_id in again:
                self._check_tool_results(self.by_id[entry_id])

    def _link(self, entries: list[Entry]) -> None:
        """Parents, roots, orphans and sibling lists of `entries` (all of them, or those appended),
        in one pass: a loop (rare: only a parent written after its child can close one) is cut
        after it, and the entries it made roots are taken out of their parents' lists then."""
        by_id, made_roots, roots = self.by_id, self._made_roots, self.roots
        kids = self.children.kids
        first_root = len(roots)
        grown: set[str] = set()  # parents with two children or more: sorted at the end
        forward = False
        before = None  # the entry before: the parent of most
        for e in entries:  # (the loop every entry goes through: kept short)
            p = e.parent_id
            if p is None:
                roots.append(e.id)
                before = e
                continue
            pe = by_id.get(p)
            if pe is None:
                self._wanted.add(p)
                self.orphans.append(e.id)
                made_roots.add(e.id)
                self.problems.append(orphan(p, e.line, e.id))
                roots.append(e.id)
                before = e
                continue
            if pe is not before and pe.line >= e.line:
                forward = True
            before = e
            v = kids.get(p)
            if v is None:
                kids[p] = e.id
            elif type(v) is str:
                kids[p] = [v, e.id]
                grown.add(p)
            else:
                v.append(e.id)
                grown.add(p)
        if forward:
            cuts = len(self.cycle_cuts)
            self._cut_cycles()
            for cut in self.cycle_cuts[cuts:]:
                p = by_id[cut].parent_id
                v = kids[p]
                if type(v) is str:
                    del kids[p]
                else:
                    v.remove(cut)
                    if len(v) == 1:
                        kids[p] = v[0]
            if len(self.cycle_cuts) > cuts:  # roots in file order, with the entries made roots
                roots[first_root:] = [e.id for e in entries if e.parent_id is None or e.id in made_roots]
        for p in grown:
            v = kids[p]
            if type(v) is list:
                v.sort(key=lambda k: _instant(by_id[k]))  # stable: file order breaks ties

    def _cut_cycles(self) -> None:
        parent, by_id = self.parent, self.by_id
        state: dict[str, int] = {}  # 1 = on the current walk, 2 = known to reach a root
        for start in by_id:
            walk = []
            node = start
            while node is not None and node not in state:
                state[node] = 1
                walk.append(node)
                node = parent[node]
            if node is not None and state[node] == 1:
                loop = walk[walk.index(node):]
                cut = min(loop, key=lambda k: by_id[k].line)
                self._made_roots.add(cut)
                self.cycle_cuts.append(cut)
                self.problems.append(cycle(len(loop), by_id[cut].line, cut))
            for n in walk:
                state[n] = 2

    def _check_references(self, entries: list[Entry]) -> None:
        """Labels, the session's name, the entries markers hang from, and what entries lack or
        refer to: missing fields, tool calls without results, labels and compactions that name no
        entry (one pass, in file order)."""
        by_id, kids = self.by_id, self.children.kids
        for e in entries:  # (the loop every entry goes through: facts read only where they can say something)
            role = e.role
            if role is not None:  # a message with a body (which is all a message requires)
                if role != "assistant":
                    continue
                calls = e.tool_call_ids
                if not calls:
                    continue
                if len(calls) == 1:  # the usual case: its one result is its child
                    k = kids.get(e.id)
                    if type(k) is str:
                        k = by_id[k]
                        if k.tool_call_id == calls[0] and k.role == "toolResult":
                            continue
                self._check_tool_results(e)
                continue
            if e.missing_fields:  # the required fields of its type it lacks
                self.problems.append(missing_fields(e))
            t = e.type
            if t not in NOTED_TYPES:
                continue
            if t in MARKER_TYPES or (t == CUSTOM and is_marker(e)):  # (conversation_children looks through them)
                p = self.parent.get(e.id)
                if p is not None:
                    self._marker_parents.add(p)
            if t == LABEL:
                target = e.target_id
                if target is not None:  # (without a target it labels nothing)
                    text = e.get("label")
                    if isinstance(text, str) and text.strip():
                        self.labels[target] = text
                    else:
                        self.labels.pop(target, None)
                if target not in by_id:
                    self._wanted.add(target)
                    self.problems.append(dangling_label(target, e.line, e.id))
            elif t == SESSION_INFO:
                value = e.get("name")
                self.name = value if isinstance(value, str) and value.strip() else self.name
            elif t == CONTEXT_EDIT and "replacement" in e.raw:
                target = e.target_id
                known = by_id.get(target) if target is not None else None
                reason = replacement_problem(e.get("replacement")) or target_problem(
                    target, known is not None,
                    known is not None and e.parent_id is not None and self.is_ancestor(target, e.parent_id),
                    known is not None and is_editable(known))
                if reason:
                    self.problems.append(bad_context_edit(reason, e.line, e.id))
            elif t == COMPACTION and "summary" in e.raw:
                problem = self.first_kept_problem(e)
                kept = first_kept_id(e)
                if kept is not None:
                    self._wanted.add(kept)  # (when it exists, wanting it costs nothing)
                if problem:
                    self.problems.append(Problem("dangling-first-kept", problem, e.line, e.id))
                elif kept is not None and by_id[kept].role == "toolResult":
                    self.problems.append(first_kept_tool_result(kept, e.line, e.id))

    def _check_tool_results(self, e: Entry) -> None:
        """Warn of tool calls with no result among the tool results that follow the call, past the
        side lines (`custom` entries, never in the context) between them (read from the facts kept
        of each entry: no body is read unless a warning is made)."""
        calls = e.tool_call_ids
        if not calls:
            return
        answered: set = set()
        stack = list(self.children.get(e.id, ()))
        while stack:
            child = self.by_id[stack.pop()]
            if child.role == "toolResult" or is_marker(child):
                answered.add(child.tool_call_id)
                stack.extend(self.children.get(child.id, ()))
            elif child.type == CUSTOM:  # a side line (a progress report) between a call and its result
                stack.extend(self.children.get(child.id, ()))
        missing = [c for c in calls if c not in answered]
        if missing:
            self.problems.append(unanswered_calls(missing, calls, e.message.get("stopReason"), e.line, e.id))

    def first_kept_problem(self, compaction: Entry) -> str | None:
        """Why a compaction's `firstKeptEntryId` cannot be honoured, or None when it can."""
        kept = first_kept_id(compaction)
        if kept is None and self.format in read_only_formats():
            return None  # these agents' compactions keep nothing before them, by design
        known = kept is not None and kept in self.by_id
        return first_kept_reason(kept, known, known and self.is_ancestor(kept, compaction.id))

    # -- queries -------------------------------------------------------------------------------

    def entry(self, entry_id: str) -> Entry:
        try:
            return self.by_id[entry_id]
        except KeyError:
            raise UnknownEntry(entry_id) from None

    def find(self, ref: str) -> Entry:
        """An entry by its id, or by a unique start or end of it (what `tree` and the web app show
        as short ids), so that people can type what they read."""
        if ref in self.by_id:
            return self.by_id[ref]
        found = [e for e in self.entries if len(ref) >= 4 and (e.id.startswith(ref) or e.id.endswith(ref))]
        if len(found) > 1:
            raise AmbiguousEntry(ref, [e.id for e in found])
        if not found:
            raise UnknownEntry(ref)
        return found[0]

    def path(self, leaf_id: str | None, stop: Container[str] = ()) -> list[Entry]:
        """The entries from the root down to `leaf_id` (empty for None: an empty conversation);
        with `stop`, only those below the deepest of its ids on the path (none when `leaf_id`
        is one of them)."""
        if leaf_id is None:
            return []
        e = self.entry(leaf_id)
        if e.id in stop:
            return []
        by_id, made_roots = self.by_id, self._made_roots
        out = [e]
        while e.parent_id is not None and not (made_roots and e.id in made_roots):  # (what self.parent says)
            e = by_id[e.parent_id]
            if e.id in stop:
                break
            out.append(e)
        out.reverse()
        return out

    def path_ids(self, leaf_id: str | None) -> set[str]:
        return {e.id for e in self.path(leaf_id)}

    def is_ancestor(self, ancestor: str, node: str) -> bool:
        """True when `ancestor` is `node` itself or lies on its path to the root."""
        cur: str | None = node
        while cur is not None:
            if cur == ancestor:
                return True
            cur = self.parent.get(cur)
        return False

    def common_ancestor(self, a: str | None, b: str | None) -> str | None:
        """The deepest entry on both paths, or None when they share nothing."""
        if a is None or b is None:
            return None
        on_a = self.path_ids(a)
        cur: str | None = b
        while cur is not None:
            if cur in on_a:
                return cur
            cur = self.parent[cur]
        return None

    def conversation_children(self, entry_id: str) -> list[str]:
        """Children that continue a conversation. `leaf` and `label` markers are looked through:
        what was appended after a label (which moved the active leaf) continues its parent."""
        if entry_id not in self._marker_parents:
            v = self.children.kids.get(entry_id)
            return [] if v is None else [v] if type(v) is str else list(v)
        out: list[str] = []
        stack = list(reversed(self.children.get(entry_id, ())))
        while stack:
            c = stack.pop()
            if is_marker(self.by_id[c]):
                stack.extend(reversed(self.children.get(c, ())))
            else:
                out.append(c)
        return out

    def leaves(self) -> list[str]:
        """Branch tips in file order: entries with no conversation after them, plus the active leaf.
        Where a sub-agent's run ends (a sidechain tip) is not a branch of the conversation."""
        if self._leaves is None:  # the tree does not change once built: found once
            by_id, kids, marker_parents = self.by_id, self.children.kids, self._marker_parents
            # Entries without children, found at C speed over the ids (in file order, as the
            # entries), then looked at one by one; those with a marker child are looked into.
            ids = ([x for x in by_id if x not in kids or x in marker_parents] if marker_parents
                   else filterfalse(kids.__contains__, by_id))
            tips = [
                x
                for x in ids
                if not is_marker(e := by_id[x]) and not e.sidechain and (
                    x not in marker_parents or not self.conversation_children(x))
            ]
            shown = self.conversation_leaf(self.active_leaf)
            if shown is not None and shown not in tips:
                tips = [x for x in tips if not self._side_tip_of(x, shown)]
                tips.append(shown)
            self._leaves = tips
        return list(self._leaves)

    def _side_tip_of(self, tip: str, leaf: str) -> bool:
        """Whether `tip` ends a chain of side lines (`custom` entries: hook summaries, turn
        durations) written after `leaf`: the same branch as the leaf, not one more."""
        by_id, parent = self.by_id, self.parent
        while tip is not None and by_id[tip].type == CUSTOM:
            tip = parent[tip]
        return tip == leaf

    def conversation_leaf(self, entry_id: str | None) -> str | None:
        """The nearest entry at or above `entry_id` that is not a marker: where a `label` entry
        that became the active leaf shows up in a conversation."""
        while entry_id is not None and is_marker(self.by_id[entry_id]):
            entry_id = self.parent[entry_id]
        return entry_id

    def forks(self, entry_id: str, children: list[str]) -> bool:
        """Whether `children` (of `entry_id`) fork the conversation: more than one of them goes on
        on the same side. A sub-agent's run that hangs under a main-line entry (Claude Code's Task
        call) is not another branch of the conversation, only work done for that call."""
        if len(children) < 2:
            return False
        side = self.by_id[entry_id].sidechain
        return sum(1 for c in children if self.by_id[c].sidechain == side) > 1

    def branch_points(self) -> list[str]:
        return [e.id for e in self.entries if self.forks(e.id, self.conversation_children(e.id))]

    def compactions(self) -> list[Entry]:
        return [e for e in self.entries if e.type == COMPACTION]

    def counts_by_type(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for t, n in Counter(e.type for e in self.entries).items():
            counts[str(t)] = counts.get(str(t), 0) + n  # (a type that is not a string: its text)
        return counts

    def all_problems(self) -> list[Problem]:
        """Bad lines and structural problems, in line order."""
        bad = [
            Problem("bad-line", b.reason, b.line) for b in self.bad_lines
        ]
        return sorted(bad + self.problems, key=lambda p: (p.line or 0, p.kind))

    def problem_counts(self) -> tuple[int, int]:
        """(damage, warnings): what `validate` fails on, and what it only lists (WARNING_KINDS,
        ordinary in sound files, such as an aborted turn's call without a result)."""
        warnings = sum(1 for p in self.problems if p.kind in WARNING_KINDS)
        return len(self.bad_lines) + len(self.problems) - warnings, warnings
