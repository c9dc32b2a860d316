"""The corpus tables of a batch of pi files from the projection's columns (the SQL of pi's room,
`agents.pi.projection`, named by the registry: `Agent.projection`), with
the core's own tree walked over them: each entry made from its row without its body (a lazy
`Entry` whose facts are the row's), so that `SessionTree`, `leaf_figures`, the leaves, tips and
problems are the core's, computed on the (id, parent) columns and the few facts each entry
keeps. Only what reads more than those (a branch's last turn for its outcome, its last user
message, the name, the first user message, labels) parses those lines, from the bytes held.

The entries and tool calls tables are the projection's rows as DuckDB made them (Arrow, no row
made in Python), with each entry's tip added; the branches, summaries and sessions rows are made
here, one per leaf, summary and file."""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from types import ModuleType

import duckdb
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ..core.agents import by_name, source_of
from ..core.catalog import first_message_preview
from ..core.entries import BRANCH_SUMMARY, COMPACTION, LEAF, MESSAGE, NO_INSTANT, Entry, as_key
from ..core.formats.base import Problem
from ..core.agents.pi.reader import PiReader, v1_migrated
from ..core.agents.tools import tool_action
from ..core.leaf_figures import leaf_figures
from ..core.reader import SessionLog
from ..core.tree import SessionTree
from ..core.storage import url_name
from .extract import (COLUMNS, as_time, audits_hold, file_mtime, first_instant, link_columns, parse_iso, project_of,
                      tips_finder)
from .lines import FileLines, HeldBodies, lines_table
from .schema import arrow_schema

# The projection's columns each entry of the light tree is made from, as Python lists (the rare
# facts, of a few lines each, come apart: `_Rare`).
_FACTS = ("line", "entry_id", "parent_id", "chained", "type", "role", "usage_tokens", "cost", "call_id", "is_error")


@dataclass
class FileRows:
    """One plain file's rows: the branches, summaries and sessions rows (tuples in COLUMNS order),
    its entries' tips, and where the index reads it again from when it grows."""

    file: str
    rows: dict[str, list[tuple]] = field(default_factory=dict)
    tips: list[tuple[str, str]] = field(default_factory=list)  # (entry, tip) of the entries before from_line
    leaf_of: list[str] = field(default_factory=list)  # the tip of each entry from from_line on, in line order
    next_line: int = 0
    kept_summaries: bool = False


@dataclass
class Projected:
    """A batch's projection: which files it reads as the seam does (`plain`), their rows, and
    why each other one is left to the seam."""

    plain: dict[int, FileRows]  # fileno -> rows
    entries: pa.Table  # the entries rows of the plain files from their from_line (COLUMNS order)
    tool_calls: pa.Table
    left: dict[int, str]  # fileno -> why the seam reads it


def connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB of one thread (a worker process is one core's worth of work)."""
    con = duckdb.connect(":memory:")
    con.execute("SET threads = 1")
    return con


def project(con: duckdb.DuckDBPyConnection, files: list[FileLines], from_lines: list[int],
            trees: dict[int, SessionTree] | None = None, projection: ModuleType | None = None) -> Projected:
    """The rows of `files` (pi files, each read from its `from_lines` entry on) as far as
    `projection` (pi's, unless told) reads them as the seam does; `trees`: given, each file's tree
    is kept in it (fileno -> tree), to be compared with the seam's."""
    sql = projection or by_name("pi").projection()
    for macro in sql.macros():  # (a few statements a batch: the connection may have run another's)
        con.execute(macro)
    con.register("lines", lines_table(files))
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE entries AS " + sql.entries_sql())
        con.execute("CREATE OR REPLACE TEMP TABLE calls AS " + sql.calls_sql())
        status = con.execute(
            "SELECT fileno, bool_and(plain) FILTER (WHERE kind = 0), list(line ORDER BY line) FILTER (WHERE kind = 2), "
            "list(line ORDER BY line) FILTER (WHERE suspect) FROM entries GROUP BY fileno").fetchall()
        odd = {f for (f,) in con.execute("SELECT DISTINCT fileno FROM calls WHERE NOT sound OR deep").fetchall()}
        left: dict[int, str] = {f: "a tool call's id, name or arguments the seam mends" for f in odd}
        for fileno, plain_lines, other, suspect in status:
            if fileno not in left:
                why = _not_plain(files[fileno], plain_lines, other or [], suspect or [])
                if why:
                    left[fileno] = why
        for n, held in enumerate(files):
            if n not in left and (held.torn or held.lines == 0):
                left[n] = "its last line is being written" if held.torn else "no complete line"
        rare = _Rare(con)
        con.register("read_files", pa.table({"fileno": pa.array([n for n in range(len(files)) if n not in left],
                                                                pa.int32())}))
        cols = con.sql(f"SELECT fileno, {', '.join(_FACTS)} FROM entries JOIN read_files USING (fileno) "
                       "WHERE kind = 0 ORDER BY fileno, line").to_arrow_table()
        calls = con.execute("SELECT fileno, line, id FROM calls JOIN read_files USING (fileno) "
                            "WHERE role = 'assistant' ORDER BY fileno, line, idx").fetchall()
        python_calls = con.execute("SELECT fileno, line, idx, name, args FROM calls WHERE kind = 'python'").fetchall()
        con.unregister("read_files")
    finally:
        con.unregister("lines")
    by_file = _split(cols, len(files))
    call_ids: dict[tuple[int, int], tuple[str, ...]] = {}
    for fileno, line, call in calls:
        key = (fileno, line)
        call_ids[key] = call_ids.get(key, ()) + (call,)
    plain: dict[int, FileRows] = {}
    for fileno, (held, start) in enumerate(zip(files, from_lines)):
        if fileno in left:
            continue
        try:
            plain[fileno] = _file_rows(held, by_file[fileno], rare, call_ids, fileno, start, trees)
        except _LeftToSeam as exc:
            left[fileno] = str(exc)
    entries, tool_calls = _tables(con, files, plain, from_lines, python_calls, sql.arg_keys())
    return Projected(plain, entries, tool_calls, left)


class _LeftToSeam(Exception):
    """Something the projection does not read as the seam does: the file is read by the seam."""


class _Rare:
    """The facts few lines hold, per file (fileno -> line -> value), and each file's sums, asked of
    the batch once."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        def per_file(sql: str) -> dict[int, dict[int, object]]:
            out: dict[int, dict[int, object]] = {}
            for fileno, line, *value in con.execute(sql).fetchall():
                out.setdefault(fileno, {})[line] = value[0] if len(value) == 1 else tuple(value)
            return out

        self.model = per_file("SELECT fileno, line, model FROM entries WHERE model IS NOT NULL")
        self.target = per_file("SELECT fileno, line, target_id FROM entries WHERE type = 'leaf'")
        self.missing = per_file("SELECT fileno, line, missing FROM entries WHERE len(missing) > 0")
        self.tokens = per_file("SELECT fileno, line, tokens_before, tokens_after FROM entries "
                               "WHERE kind = 0 AND type IN ('compaction', 'branch_summary')")
        # each file's lines and times (`SessionLog`'s instants: seconds, as a float)
        self.times = {f: (lines, times) for f, lines, times in con.execute(
            "SELECT fileno, list(line), list(time_us) FROM entries WHERE time_us IS NOT NULL GROUP BY fileno").fetchall()}
        # (the ints added up exactly; the last model with a name; the costs as `extract` adds them: in Python)
        self.sums = {r[0]: r[1:] for r in con.execute(
            "SELECT fileno, coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), "
            "arg_max(model, line) FILTER (WHERE model <> '') FROM entries WHERE kind = 0 GROUP BY fileno").fetchall()}


def _split(cols: pa.Table, files: int) -> list[dict[str, list]]:
    """The projection's columns, per file, as Python lists."""
    fileno = cols.column("fileno").to_numpy()
    out = []
    starts = fileno.searchsorted(range(files + 1))
    data = {name: cols.column(name).to_pylist() for name in cols.column_names if name != "fileno"}
    for n in range(files):
        a, b = int(starts[n]), int(starts[n + 1])
        out.append({name: values[a:b] for name, values in data.items()})
    return out


def _not_plain(held: FileLines, plain: bool | None, other: list[int], suspect: list[int]) -> str | None:
    """Why the seam must read this file (None: the projection reads it as the seam does)."""
    if held.torn:
        return "its last line is being written"
    for line in other:
        if held.line(line).strip():  # (a blank line is read as nothing, as the seam does)
            return f"line {line} is damaged or not an object"
    if plain is False:
        return "a field the seam mends"
    for line in suspect:
        try:
            orjson.loads(held.line(line))
        except orjson.JSONDecodeError:
            return f"line {line} is not JSON orjson reads"
    return None


def _header(held: FileLines) -> dict:
    try:
        header = orjson.loads(held.line(1))
    except orjson.JSONDecodeError:
        raise _LeftToSeam("line 1 is damaged") from None
    if type(header) is not dict or header.get("type") != "session":
        raise _LeftToSeam("no session header")
    return header


def _file_rows(held: FileLines, cols: dict[str, list], rare: _Rare, call_ids: dict, fileno: int,
               from_line: int, trees: dict | None) -> FileRows:
    header = _header(held)
    file = url_name(held.path)
    tree, ordered = _light_tree(held, header, cols, rare, call_ids, fileno)
    if trees is not None:
        trees[fileno] = tree
    out = FileRows(file)
    tips = _all_tips(tree, ordered)
    if from_line > 1:
        out.tips = [(e.id, tips[e.id]) for e in tree.entries if e.line < from_line]
        out.leaf_of = [tips[e.id] for e in tree.entries if e.line >= from_line]
    else:
        out.leaf_of = [tips[e.id] for e in tree.entries]
    lines = cols["line"]
    out.next_line = lines[-1] if lines and lines[-1] >= from_line else from_line
    rows = out.rows
    by_id, parent, models = tree.by_id, tree.parent, rare.model.get(fileno, {})
    rows["branches"] = branches = []
    for f in leaf_figures(tree):
        node, model = f.leaf, None
        while node is not None:  # the model that answered last on this branch (`extract`'s walk)
            model = models.get(node.line) if node.type == MESSAGE else None
            if model:
                break
            up = parent.get(node.id)
            node = by_id.get(up) if up else None
        branches.append((file, f.leaf.id, f.label, f.last_user[:500], f.depth, f.turns, f.tokens, f.cost, f.calls,
                         f.errors, f.wall_seconds, f.status, f.active, model, as_time(f.leaf.instant)))
    out.kept_summaries = kept = from_line > 0 and audits_hold(tree, from_line)
    rows["summaries"] = summaries = []
    branch_summaries = compactions = 0
    for e in tree.entries:
        if e.type == COMPACTION:
            compactions += 1
        elif e.type == BRANCH_SUMMARY:
            branch_summaries += 1
        else:
            continue
        if kept and e.line < from_line:
            continue
        summaries.append((file, e.id, e.type, as_time(e.instant), *rare.tokens[fileno][e.line], None, None, None))
    cwd = as_key(header.get("cwd"))
    tokens_in, tokens_out, model = rare.sums.get(fileno, (0, 0, None))
    cost = deque(accumulate(cols["cost"], initial=0.0), maxlen=1)[0]  # (added in order, as `extract` does)
    rows["sessions"] = [(
        file, as_key(header.get("id")), tree.format, source_of(tree.format), project_of(cwd, file), cwd,
        tree.name, first_message_preview(tree), as_time(parse_iso(header.get("timestamp")) or first_instant(tree)),
        as_time(file_mtime(Path(held.path), held.stat)), held.stat.st_size, len(tree.entries), len(tree.leaves()),
        compactions, branch_summaries, 0, *tree.problem_counts(), cost, int(tokens_in), int(tokens_out), model,
        *link_columns(tree))]
    return out


class _V1Bodies(HeldBodies):
    """`HeldBodies` of a file whose lines without `parentId` are read as pi v1's (`v1_migrated`)."""

    def __init__(self, held: FileLines, chained: dict[int, tuple[str, str | None]]) -> None:
        super().__init__(held)
        self.chained = chained

    def body(self, entry) -> dict:
        line = entry.line
        obj = self.parsed.get(line)
        if obj is None:
            obj = orjson.loads(self.held.line(line))
            if line in self.chained:
                obj = v1_migrated(obj, *self.chained[line])
            self.parsed[line] = obj
        return obj


_NOTHING = [(), None, False, None, 0.0, ()]  # the facts of an entry that reports nothing (shared: never changed)


def _all_tips(tree: SessionTree, ordered: bool) -> dict[str, str]:
    """entry id -> its tip (`extract.tips_finder`, which follows each entry down), for every entry. When
    every entry comes after its parent in the file (`ordered`: as pi writes them), each one's
    children come after it, so one pass from the last entry up finds every tip from its chosen
    child's, already found."""
    if not ordered:
        tip = tips_finder(tree)
        return {e.id: tip(e.id) for e in tree.entries}
    active = tree.path_ids(tree.active_leaf) if tree.active_leaf else set()
    kids, marker_parents, conversation = tree.children.kids, tree._marker_parents, tree.conversation_children
    tips: dict[str, str] = {}
    for e in reversed(tree.entries):
        x = e.id
        v = conversation(x) if x in marker_parents else kids.get(x)
        if not v:
            tips[x] = x
        elif type(v) is str:
            tips[x] = tips[v]
        else:
            tips[x] = tips[next((k for k in v if k in active), v[-1])]
    return tips


def _light_tree(held: FileLines, header: dict, cols: dict[str, list], rare: _Rare, call_ids: dict,
                fileno: int) -> tuple[SessionTree, bool]:
    """The file's tree, its entries made from the columns (their bodies parsed from the held bytes
    when read); and whether every entry comes after its parent (`_all_tips`)."""
    n = held.lines + 1
    chained: dict[int, tuple[str, str | None]] = {}
    previous = None
    if any(cols["chained"]):  # pi v1: an entry without `parentId` hangs on the entry before it
        for line, entry, is_chained in zip(cols["line"], cols["entry_id"], cols["chained"]):
            if is_chained:
                chained[line] = (entry, previous)
            previous = entry
    bodies = _V1Bodies(held, chained) if chained else HeldBodies(held)
    bodies.instants = instants = array("d", [NO_INSTANT]) * n
    bodies.estimates = array("q", [-1]) * n
    lines, times = rare.times.get(fileno, ((), ()))
    for line, time_us in zip(lines, times):
        instants[line] = time_us / 1e6
    log = SessionLog(held.path, bodies)
    log.header = header
    log._reader = PiReader(log._weak())  # (a weak proxy, as `SessionLog` gives its readers: no cycle)
    log.lines = held.lines
    entries: list[Entry] = []
    ids: dict[str, Entry] = {}
    add, new, missing, targets = entries.append, object.__new__, rare.missing.get(fileno, {}), rare.target.get(fileno)
    active = None
    ordered = True
    problems: list[Problem] = []
    for line, entry_id, parent, is_chained, t, role, used, cost, call_id, is_error in zip(*(cols[c] for c in _FACTS)):
        if entry_id in ids:
            raise _LeftToSeam(f"id {entry_id!r} is used twice")
        if is_chained:
            parent = chained[line][1]
        elif parent is not None and parent not in ids:  # (written after it, or not at all)
            ordered = False
        e = new(Entry)
        e._raw, e.line, e.id, e.parent_id, e.type, e.role = bodies, line, entry_id, parent, t, role
        if role is None or t != MESSAGE:
            e._facts = _NOTHING if not cost and line not in missing else \
                [(), None, False, None, cost, tuple(missing.get(line, ()))]
        elif role == "assistant":
            e._facts = [call_ids.get((fileno, line), ()), None, False, used, cost, ()]
        elif role == "toolResult":
            e._facts = [(), call_id, is_error, None, cost, ()]
        else:
            e._facts = _NOTHING
        add(e)
        ids[entry_id] = e
        if t == LEAF:  # (`SessionLog._leaf_after`)
            target = targets[line]
            if target is None or target in ids:
                active = target
            else:
                problems.append(Problem("dangling-leaf", f"leaf entry targets unknown id {target!r}; ignored",
                                        line, entry_id))
        else:
            active = entry_id
    log.entries, log.ids, log._active, log.problems = entries, ids, active, problems
    tree = SessionTree(log)
    return tree, ordered and not tree.cycle_cuts


def _tables(con: duckdb.DuckDBPyConnection, files: list[FileLines], plain: dict[int, FileRows],
            from_lines: list[int], python_calls: list, keys: tuple[str, ...]) -> tuple[pa.Table, pa.Table]:
    """The entries and tool calls rows of the plain files, as Arrow tables of the index's schema."""
    keep = pa.table({"fileno": pa.array(sorted(plain), pa.int32()),
                     "from_line": pa.array([from_lines[f] for f in sorted(plain)], pa.int32())})
    con.register("plain_files", keep)
    try:
        entries = con.sql(
            "SELECT e.fileno, e.entry_id, e.parent_id, e.line, e.type, e.role, make_timestamp(e.time_us) AS time, "
            "e.model, e.usage_tokens, e.input_tokens, e.output_tokens, e.cache_read_tokens, e.cache_write_tokens, e.cost, "
            "e.tool_name, e.is_error "
            "FROM (SELECT * REPLACE (CASE WHEN chained THEN lag(entry_id) OVER (PARTITION BY fileno ORDER BY line) "
            "      ELSE parent_id END AS parent_id) FROM entries WHERE kind = 0) e "
            "JOIN plain_files p ON e.fileno = p.fileno AND e.line >= p.from_line ORDER BY e.fileno, e.line").to_arrow_table()
        calls = con.sql(
            "WITH r AS (SELECT fileno, call_id, arg_max(is_error, line) AS failed FROM entries "
            "  WHERE kind = 0 AND type = 'message' AND role = 'toolResult' AND call_id <> '' GROUP BY fileno, call_id), "
            "c AS (SELECT c.*, coalesce(nullif(c.id, ''), c.entry_id || '#' || "
            "  (row_number() OVER (PARTITION BY c.fileno, c.line ORDER BY c.idx) - 1)) AS call_id FROM calls c "
            "  WHERE c.role = 'assistant') "
            "SELECT c.fileno, c.call_id, c.entry_id, c.line, coalesce(nullif(c.name, ''), '?') AS name, c.kind, c.target, "
            "coalesce(r.failed, false) AS is_error, make_timestamp(e.time_us) AS time, c.idx "
            "FROM c JOIN plain_files p ON c.fileno = p.fileno "
            "JOIN entries e ON e.fileno = c.fileno AND e.line = c.line "
            "LEFT JOIN r ON r.fileno = c.fileno AND r.call_id = c.call_id "
            "ORDER BY c.fileno, c.line, c.idx").to_arrow_table()
    finally:
        con.unregister("plain_files")
    names = [plain[f].file if f in plain else "" for f in range(len(files))]
    entry_file = pc.take(pa.array(names, pa.string()), entries.column("fileno"))
    leaf_ids = pa.array([leaf for f in sorted(plain) for leaf in plain[f].leaf_of], pa.string())
    texts = pa.nulls(entries.num_rows, pa.string())
    entries = pa.table([entry_file, entries.column("entry_id"), entries.column("parent_id"), leaf_ids,
                        *(entries.column(c) for c in COLUMNS["entries"][4:-1]), texts],
                       schema=arrow_schema("entries"))
    kinds, targets = calls.column("kind").to_pylist(), calls.column("target").to_pylist()
    if python_calls:  # (a command given as a list of words, a patch: `tool_action` reads them)
        at = {(fileno, line, idx): i for i, (fileno, line, idx) in enumerate(zip(
            calls.column("fileno").to_pylist(), calls.column("line").to_pylist(), calls.column("idx").to_pylist()))}
        for fileno, line, idx, name, args in python_calls:
            i = at.get((fileno, line, idx))
            if i is None:
                continue
            given = {k: orjson.loads(v) for k, v in zip(keys, args) if v is not None}
            action = tool_action({"name": name, "arguments": given})
            kinds[i], targets[i] = action.kind, action.path or action.command
    call_file = pc.take(pa.array(names, pa.string()), calls.column("fileno"))
    calls = pa.table([call_file, calls.column("call_id"), calls.column("entry_id"), calls.column("line"),
                      calls.column("name"), pa.array(kinds, pa.string()), pa.array(targets, pa.string()),
                      calls.column("is_error"), calls.column("time")], schema=arrow_schema("tool_calls"))
    return entries, calls
