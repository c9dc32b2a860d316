"""The corpus tables' column types, once: the DuckDB DDL and the Arrow schema (Parquet) are both
made from them, so the embedded index, the Parquet files and a Ray build hold the same columns."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from .extract import COLUMNS

if TYPE_CHECKING:
    import pyarrow as pa

SCHEMA_VERSION = 6  # 2: problems are damage only, warnings apart; 3: entries' cache reads and writes apart;
# 4: conversations across files; 5: the text index names each entry's file by number (`text.DDL`);
# 6: the text index keeps no copy of the text (snippets cut from the entries' `text`)

_V, _I, _B, _D, _T, _F = "VARCHAR", "INTEGER", "BIGINT", "DOUBLE", "TIMESTAMP", "BOOLEAN"
TYPES: dict[str, dict[str, str]] = {
    "sessions": dict(file=_V, session_id=_V, format=_V, agent=_V, project=_V, cwd=_V, name=_V,
                     first_message=_V, created=_T, modified=_T, size=_B, entries=_I, leaves=_I,
                     compactions=_I, branch_summaries=_I, bad_lines=_I, problems=_I, warnings=_I, cost=_D,
                     input_tokens=_B, output_tokens=_B, model=_V, link_kind=_V, link_field=_V, link_names=_V,
                     root_id=_V, conversation=_V, parent_file=_V),
    "entries": dict(file=_V, entry_id=_V, parent_id=_V, leaf_id=_V, line=_I, type=_V, role=_V, time=_T, model=_V,
                    usage_tokens=_B, input_tokens=_B, output_tokens=_B, cache_read_tokens=_B, cache_write_tokens=_B,
                    cost=_D, tool_name=_V,
                    is_error=_F, text=_V),
    "branches": dict(file=_V, leaf_id=_V, label=_V, last_user=_V, depth=_I, turns=_I, tokens=_B, cost=_D,
                     calls=_I, errors=_I, wall_seconds=_D, status=_V, active=_F, model=_V, time=_T),
    "summaries": dict(file=_V, entry_id=_V, kind=_V, time=_T, tokens_before=_B, tokens_after=_B,
                      score=_I, facts=_I, missing=_I),
    "tool_calls": dict(file=_V, call_id=_V, entry_id=_V, line=_I, name=_V, kind=_V, target=_V,
                       is_error=_F, time=_T),
}
assert all(tuple(TYPES[t]) == COLUMNS[t] for t in COLUMNS), "schema.TYPES and extract.COLUMNS differ"

TABLES = tuple(COLUMNS)


@cache  # (made once: a build makes Arrow tables of every file, and making the schema cost more than filling them)
def arrow_schema(table: str) -> pa.Schema:
    # (pyarrow imported here: half a second that a look at the index without a write never pays)
    import pyarrow as pa

    arrow = {_V: pa.string(), _I: pa.int32(), _B: pa.int64(), _D: pa.float64(), _T: pa.timestamp("us"),
             _F: pa.bool_()}
    return pa.schema([(c, arrow[t]) for c, t in TYPES[table].items()])


def arrow_table(table: str, rows: list[tuple]) -> pa.Table:
    """Rows (tuples in COLUMNS order) as an Arrow table of the table's schema."""
    import pyarrow as pa

    schema = arrow_schema(table)
    columns = list(zip(*rows)) if rows else [()] * len(schema)
    return pa.table([pa.array(col, type=f.type) for col, f in zip(columns, schema)], schema=schema)


def duckdb_ddl() -> list[str]:
    out = [f"CREATE TABLE IF NOT EXISTS {t} ({', '.join(f'{c} {ty}' for c, ty in cols.items())})"
           for t, cols in TYPES.items()]
    out.append("CREATE TABLE IF NOT EXISTS files (file VARCHAR PRIMARY KEY, root VARCHAR, size BIGINT, "
               "mtime DOUBLE, head VARCHAR, tail VARCHAR, next_line INTEGER, error VARCHAR, indexed_at TIMESTAMP)")
    out.append("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    # the files whose entries' text (from `from_line` on) and summaries' audits are still to be
    # made (`later.py`); `projected`: read by the SQL projection, their lines are pi's as they are
    out.append("CREATE TABLE IF NOT EXISTS later (file VARCHAR PRIMARY KEY, from_line INTEGER, projected BOOLEAN)")
    return out


BEYOND_64_BITS = "a number in it is beyond what the tables hold (64 bits)"


def why_refused(exc: Exception) -> str:
    """What a file's listing says when its rows could not be made or written: one clear line for
    a number the tables' 64-bit columns cannot hold (Arrow's OverflowError, DuckDB's conversion
    error), else the exception's own words."""
    said = str(exc)
    if isinstance(exc, OverflowError) or ("Conversion Error" in said and "out of range" in said):
        return BEYOND_64_BITS
    return f"{type(exc).__name__}: {exc}"[:500]
