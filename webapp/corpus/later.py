"""What a big build makes once the tables are written: each entry's searchable text (the entries
table's `text` and the text index beside it) and each summary's audit (`summaries.score`,
`facts`, `missing`). They are most of what reading a session costs (the audits walk every entry a
summary replaced; the text index tokenizes every word) and are what a person looks at last, so
the list of sessions and the figures come first and these follow, file by file, with progress.

A file whose text is still to come has a row in the `later` table (from which line its entries
lack it), and a summary whose audit is has no `facts` yet, so that a build stopped half way
finishes them the next time. The text comes first (search waits for it), the audits after. The
rows made here are those the seam's extraction gives (`extract.extract`), compared in the tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from ..core.search import searchable_text
from .extract import TEXT_CHARS, audit_scores, read_tree


@dataclass
class TextJob:
    path: str  # the file, as the file system names it
    from_line: int  # its entries from this line on lack their text
    projected: bool  # its lines are pi's as they are (the projection read them): no tree is needed


@dataclass
class AuditJob:
    path: str
    summaries: tuple[str, ...]  # the ids of the summaries whose audit is to come


def texts_of(jobs: list[TextJob]) -> list[dict[str, str] | str]:
    """entry id -> searchable text of each job's entries from its line on, or why its file could
    not be read (it changed or went: its text stays to come). A worker process makes them on a
    big build."""
    out: list[dict[str, str] | str] = []
    for job in jobs:
        try:
            if job.projected:
                out.append(_line_texts(Path(job.path).read_bytes(), job.from_line))
            else:
                tree = read_tree(Path(job.path))
                out.append({e.id: searchable_text(e.raw)[:TEXT_CHARS] for e in tree.entries if e.line >= job.from_line})
        except Exception as exc:
            out.append(f"{type(exc).__name__}: {exc}"[:500])
    return out


def audits_of(jobs: list[AuditJob]) -> list[list[tuple[str, int | None, int, int]] | str]:
    """(summary id, score, facts, missing) of each job's summaries, or why its file could not be read."""
    out: list[list[tuple[str, int | None, int, int]] | str] = []
    for job in jobs:
        try:
            tree = read_tree(Path(job.path))
            out.append([(i, *audit_scores(tree, i)) for i in job.summaries if i in tree.by_id])
        except Exception as exc:
            out.append(f"{type(exc).__name__}: {exc}"[:500])
    return out


def _line_texts(data: bytes, from_line: int) -> dict[str, str]:
    """entry id -> text of a file the projection read: each line an entry as it is, its id its
    `id` (or its line's, when it has none: pi v1), its text that of the dict the line is."""
    out: dict[str, str] = {}
    for n, raw in enumerate(data.split(b"\n")[:-1], 1):
        if n < max(from_line, 2):
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if type(obj) is not dict:
            continue
        oid = obj.get("id")
        out[oid if type(oid) is str and oid else f"L{n}"] = searchable_text(obj)[:TEXT_CHARS]
    return out
