"""Conversations across files in the corpus tables (SPEC §5e): once the files are indexed, each
session row is told its conversation's first file (`conversation`) and the file it goes on from
(`parent_file`), from the link columns every row holds (`core.conversations.group`): a file's
conversation depends on files indexed before and after it, so it is decided over the whole table,
not file by file. A few thousand rows take a fraction of a second."""

from __future__ import annotations

import duckdb

from ..core.conversations import Facts, group


def join_conversations(cur: duckdb.DuckDBPyConnection) -> int:
    """Fill `conversation` and `parent_file` of every sessions row; the rows that changed."""
    rows = cur.execute("SELECT file, session_id, strftime(created, '%Y-%m-%dT%H:%M:%S.%f'), root_id, link_kind, "
                       "link_field, link_names, conversation, parent_file FROM sessions").fetchall()
    grouping = group(Facts(*r[:7]) for r in rows)
    changed = [(r[0], grouping.first.get(r[0], r[0]), grouping.parent.get(r[0])) for r in rows
               if (r[7], r[8]) != (grouping.first.get(r[0], r[0]), grouping.parent.get(r[0]))]
    if changed:
        files, firsts, parents = (list(c) for c in zip(*changed))
        cur.execute("UPDATE sessions SET conversation = j.c, parent_file = j.p FROM (SELECT unnest(?::VARCHAR[]) AS f, "
                    "unnest(?::VARCHAR[]) AS c, unnest(?::VARCHAR[]) AS p) j WHERE sessions.file = j.f",
                    [files, firsts, parents])
    return len(changed)
