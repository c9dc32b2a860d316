"""One file's rows as the index writes them when it reads the file itself (a small update: one
session grew, a few were added): tuples, inserted by DuckDB from one list per column. Arrow is
for the rows worker processes hand back on a big build (`batch.py`); a small update never
imports pyarrow, nor the pandas DuckDB imports with the first Arrow table (a second of a fresh
process: more than the rest of the update), and a list per column inserts 5,000 rows in 0.09 s
of CPU where `executemany` takes 3 s."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from .extract import COLUMNS, Extracted, extract
from .schema import TYPES
from .text import doc_rows

_LINE = COLUMNS["entries"].index("line")


@dataclass
class Rows:
    """As `packed.Packed`, each table's rows a list of tuples (COLUMNS order)."""

    tables: dict[str, list[tuple]]
    next_line: int  # the last entry's line (where a grown file is read again from)
    docs: list[tuple]  # the text index's rows (`text.doc_rows`)
    tips: list[tuple[str, str]]  # as `Extracted.tips`
    kept_summaries: bool = False  # as `Extracted.kept_summaries`


def as_rows(got: Extracted, from_line: int) -> Rows:
    rows = got.rows
    lines = [r[_LINE] for r in rows["entries"]]
    session = rows["sessions"][0] if rows["sessions"] else None
    docs = doc_rows(rows["entries"], session[3], session[4]) if session else []
    return Rows({t: r for t, r in rows.items() if r}, max(lines) if lines else from_line, docs, got.tips,
                got.kept_summaries)


def extract_rows(path: str, from_line: int = 0) -> tuple[Rows | None, str | None]:
    """The rows of the file at `path`, or why it could not be read."""
    try:
        return as_rows(extract(path, from_line), from_line), None
    except Exception as exc:  # any file's failure is its own: listed, the rest go on
        return None, f"{type(exc).__name__}: {exc}"[:500]


FILES_TYPES = ("VARCHAR", "VARCHAR", "BIGINT", "DOUBLE", "VARCHAR", "VARCHAR", "INTEGER", "VARCHAR", "TIMESTAMP")


def insert_rows(cur: duckdb.DuckDBPyConnection, table: str, rows: list[tuple], types: tuple[str, ...] | None = None,
                then: str = "") -> None:
    """Insert `rows` (tuples in COLUMNS order, or of `types`) into `table`, one list parameter per
    column (`executemany` takes a millisecond a row); `then`: what follows (an ON CONFLICT)."""
    if not rows:
        return
    columns = ", ".join(f"unnest(?::{ty}[])" for ty in (types or TYPES[table].values()))
    cur.execute(f"INSERT INTO {table} SELECT {columns} {then}", [list(c) for c in zip(*rows)])


def update_tips(cur: duckdb.DuckDBPyConnection, file: str, tips: list[tuple[str, str]]) -> None:
    """Move the tip of the entries of `file` kept from the last build (a grown file)."""
    if not tips:
        return
    entry_ids, leaf_ids = (list(c) for c in zip(*tips))
    cur.execute("UPDATE entries SET leaf_id = tips.leaf_id FROM (SELECT unnest(?::VARCHAR[]) AS entry_id, "
                "unnest(?::VARCHAR[]) AS leaf_id) tips WHERE entries.file = ? "
                "AND entries.entry_id = tips.entry_id AND entries.leaf_id <> tips.leaf_id",
                [entry_ids, leaf_ids, file])
