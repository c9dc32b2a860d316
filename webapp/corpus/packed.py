"""One file's rows as the index writes them: Arrow tables and the text index's rows, made where
the file was read (a worker process, on a big build) so that the one process writing the
database only inserts them."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from .extract import Extracted, extract
from .schema import TABLES, arrow_table
from .tuples import as_rows


@dataclass
class Packed:
    """As `tuples.Rows`, each table's rows an Arrow table."""

    tables: dict[str, pa.Table]
    next_line: int  # the last entry's line (where a grown file is read again from)
    docs: list[tuple]  # the text index's rows (`text.doc_rows`)
    tips: list[tuple[str, str]]  # as `Extracted.tips`
    kept_summaries: bool = False  # as `Extracted.kept_summaries`


def pack(got: Extracted, from_line: int) -> Packed:
    rows = as_rows(got, from_line)
    return Packed({t: arrow_table(t, rows.tables[t]) for t in TABLES if t in rows.tables}, rows.next_line,
                  rows.docs, rows.tips, rows.kept_summaries)


def extract_packed(path: str, from_line: int = 0) -> tuple[Packed | None, str | None]:
    """The packed rows of the file at `path`, or why it could not be read (a worker process hands
    this back: an exception of any kind might not survive the trip)."""
    try:
        return pack(extract(path, from_line), from_line), None
    except Exception as exc:  # any file's failure is its own: listed, the rest go on
        return None, f"{type(exc).__name__}: {exc}"[:500]
