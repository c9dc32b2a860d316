"""The tables' rows of a batch of session files, made where the files are read (a worker process
of a big build, a Ray task, or the indexing process itself): the files of an agent whose room
gives a SQL projection (`Agent.projection`: pi's) by that projection and the core's tree over its
columns (`columns.py`), every other file, and any file the projection leaves to it, by the format
seam (`extract.extract`). The entries' text and the
summaries' audits are not made here: a build makes them once the tables are written
(`later.py`), so that the list of sessions and the figures come first.

Each file's rows are exactly what `extract.extract` gives it (tests/corpus/test_projection.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson
import pyarrow as pa

from ..core.agents import agents
from ..core.agents.agent import Agent
from .columns import connection, project
from .extract import COLUMNS, extract
from .lines import FileLines, read_file
from .schema import TABLES, arrow_table, why_refused

_LINE = COLUMNS["entries"].index("line")


@dataclass
class Done:
    """What the index keeps of one file of a batch besides its rows."""

    next_line: int = 0  # the last entry's line (where a grown file is read again from)
    tips: list[tuple[str, str]] = field(default_factory=list)  # (entry, tip) of the entries kept from before
    kept_summaries: bool = False  # as `extract.Extracted.kept_summaries`
    error: str | None = None  # why it could not be read (then it has no rows)
    projected: bool = False  # read by the projection (its text is made from its lines as they are)


@dataclass
class Batch:
    tables: dict[str, pa.Table]  # every table's rows of the batch's files
    done: list[Done]  # one per file, in the order given


_con = None  # this process's DuckDB (one thread, in memory), made with its first batch


def _projected_by(held: FileLines) -> Agent | None:
    """The agent whose projection reads the file: the first that recognises its first line, if
    its room gives one (None: the seam reads the file)."""
    if held.lines == 0:
        return None
    try:
        first = orjson.loads(held.line(1))
    except orjson.JSONDecodeError:
        return None
    if type(first) is not dict:
        return None
    agent = next((a for a in agents() if a.recognises(first)), None)
    return agent if agent is not None and agent.projection is not None else None


def tables_of(jobs: list[tuple[str, int]]) -> Batch:
    """The rows of each (path, from_line) of `jobs` (see `extract.extract` for `from_line`)."""
    global _con
    done = [Done() for _ in jobs]
    held: dict[int, FileLines] = {}
    for n, (path, _) in enumerate(jobs):
        try:
            held[n] = read_file(path)
        except OSError as exc:
            done[n].error = f"{type(exc).__name__}: {exc}"[:500]
    by_agent: dict[str, tuple[Agent, list[int]]] = {}
    for n, h in held.items():
        agent = _projected_by(h)
        if agent is not None:
            by_agent.setdefault(agent.name, (agent, []))[1].append(n)
    parts: dict[str, list[pa.Table]] = {t: [] for t in TABLES}
    projected = {n for _, ns in by_agent.values() for n in ns}
    seam = [n for n in held if n not in projected]  # (read by the seam)
    for agent, ns in by_agent.values():
        if _con is None:
            _con = connection()
        got = project(_con, [held[n] for n in ns], [jobs[n][1] for n in ns], projection=agent.projection())
        parts["entries"].append(got.entries)
        parts["tool_calls"].append(got.tool_calls)
        rows: dict[str, list[tuple]] = {t: [] for t in ("sessions", "branches", "summaries")}
        for i, n in enumerate(ns):
            fr = got.plain.get(i)
            if fr is None:
                seam.append(n)
                continue
            for t in rows:
                rows[t].extend(fr.rows[t])
            done[n] = Done(fr.next_line, fr.tips, fr.kept_summaries, None, True)
        for t, r in rows.items():
            parts[t].append(arrow_table(t, r))
    for n in sorted(seam):
        path, from_line = jobs[n]
        try:
            got = extract(path, from_line, later=True)
            # (in the try too: a value the tables' types cannot hold, a count beyond 64 bits, is
            # the file's failure, not the batch's)
            made = {t: arrow_table(t, got.rows[t]) for t in TABLES if got.rows[t]}
        except Exception as exc:  # any file's failure is its own: listed, the rest go on
            done[n].error = why_refused(exc)
            continue
        lines = [r[_LINE] for r in got.rows["entries"]]
        done[n] = Done(max(lines) if lines else from_line, got.tips, got.kept_summaries)
        for t, table in made.items():
            parts[t].append(table)
    tables = {t: pa.concat_tables(p) if p else arrow_table(t, []) for t, p in parts.items()}
    return Batch(tables, done)


def whole_tables(paths: list[str]) -> dict[str, pa.Table]:
    """Every table's rows of `paths` (read whole) with the entries' text and the summaries' audits
    made in place: what a Parquet file, written once, holds (a Ray task makes one per batch)."""
    from ..core.storage import url_name
    from .later import AuditJob, TextJob, audits_of, texts_of

    got = tables_of([(p, 0) for p in paths])
    read = [(p, url_name(p), d) for p, d in zip(paths, got.done) if d.error is None]
    texts = dict(zip((file for _, file, _ in read), texts_of([TextJob(p, 0, d.projected) for p, _, d in read])))
    summaries = got.tables["summaries"]
    wanted: dict[str, list[str]] = {}
    for file, entry in zip(summaries.column("file").to_pylist(), summaries.column("entry_id").to_pylist()):
        wanted.setdefault(file, []).append(entry)
    audit_files = [(p, file) for p, file, _ in read if file in wanted]
    audited = audits_of([AuditJob(p, tuple(wanted[file])) for p, file in audit_files])
    entries = got.tables["entries"]
    text = [(texts.get(f) if isinstance(texts.get(f), dict) else {}).get(e) for f, e in
            zip(entries.column("file").to_pylist(), entries.column("entry_id").to_pylist())]
    tables = dict(got.tables)
    tables["entries"] = entries.set_column(entries.schema.get_field_index("text"), "text", pa.array(text, pa.string()))
    scores = {(file, a[0]): a[1:] for (_, file), made in zip(audit_files, audited) if not isinstance(made, str)
              for a in made}
    keys = list(zip(summaries.column("file").to_pylist(), summaries.column("entry_id").to_pylist()))
    for i, name in enumerate(("score", "facts", "missing")):
        column = pa.array([scores.get(k, (None, None, None))[i] for k in keys], pa.int32())
        summaries = summaries.set_column(summaries.schema.get_field_index(name), name, column)
    tables["summaries"] = summaries
    return tables
