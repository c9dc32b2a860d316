"""A server whose index another server holds reads that index through it, never the files.

DuckDB lets one process write a database and no other open it meanwhile, so a second server on
the same index cannot open it, not even read-only. It asks the first one instead (`holder.py`:
the address and token `serve` writes beside the index): each query of its pages is run there, in
a read-only transaction, as the SQL box's are (one SELECT, no table function that reads a file),
and the rows come back. The text index beside it is SQLite, which a second process reads
itself (read-only). The first server keeps the index up to date; this one builds nothing."""

from __future__ import annotations

import json
import math
from datetime import date, datetime
from pathlib import Path

from .db import Progress
from .holder import Holder, get
from .sql import CutText, QueryResult

SECONDS = 60.0  # the longest a page's query is given on the holder (its figures of 10,000 sessions take ~1 s)


def encoded(value):
    """A value of a row as JSON carries it: a time, a date, a float that is no number and a value
    cut by the query (with its full length) tagged."""
    if isinstance(value, CutText):
        return {"$cut": str(value), "n": value.full_length}
    if isinstance(value, datetime):
        return {"$dt": value.isoformat()}
    if isinstance(value, date):
        return {"$d": value.isoformat()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"$f": repr(value)}
    if isinstance(value, (list, tuple)):
        return [encoded(v) for v in value]
    return value


def decoded(value):
    if isinstance(value, dict):
        if "$dt" in value:
            return datetime.fromisoformat(value["$dt"])
        if "$d" in value:
            return date.fromisoformat(value["$d"])
        if "$f" in value:
            return float(value["$f"])
        if "$cut" in value:
            return CutText.of(value["$cut"], value["n"])
    if isinstance(value, list):
        return [decoded(v) for v in value]
    return value


def ask(holder: Holder, query: str, params: list | None, limit: int | None, seconds: float,
        max_bytes: int | None = None, cell_chars: int | None = None) -> QueryResult:
    """`query`'s rows, run by the server that holds the index."""
    args = {"sql": query, "params": json.dumps([encoded(p) for p in params or []]), "seconds": seconds}
    for name, value in (("limit", limit), ("bytes", max_bytes), ("cell_chars", cell_chars)):
        if value is not None:
            args[name] = value
    got = get(holder, "rows", args, seconds + 30)
    return QueryResult(got["columns"], [tuple(decoded(v) for v in r) for r in got["rows"]], bool(got["truncated"]),
                       bool(got.get("over_bytes")))


class RemoteCursor:
    """As much of a DuckDB cursor as the pages use (`execute`, `fetchall`, `fetchone`)."""

    def __init__(self, holder: Holder):
        self.holder = holder
        self._rows: list[tuple] = []

    def execute(self, query: str, params: list | tuple | None = None) -> RemoteCursor:
        self._rows = ask(self.holder, query, list(params or ()), None, SECONDS).rows
        return self

    def fetchall(self) -> list[tuple]:
        return self._rows

    def fetchone(self) -> tuple | None:
        return self._rows[0] if self._rows else None


class RemoteIndex:
    def __init__(self, holder: Holder, path: Path):
        self.holder, self.path = holder, path

    def cursor(self) -> RemoteCursor:
        return RemoteCursor(self.holder)

    def close(self) -> None:
        pass


class RemoteService:
    """The `CorpusService` of a server reading another server's index: the same questions, asked
    there; no build of its own (its progress is a finished one)."""

    building = False
    error = None

    def __init__(self, holder: Holder, path: Path):
        self.index = RemoteIndex(holder, path)
        self.progress = Progress(finished=0.0)
        self.builds = 1

    def start(self) -> None:
        pass

    def fresh(self, wait: float = 0.0) -> Progress:
        return self.progress

    def memo(self, name: str, make):
        return make()

    def query(self, query: str, limit: int, seconds: float, max_bytes: int, cell_chars: int | None = None) -> QueryResult:
        return ask(self.index.holder, query, None, limit, seconds, max_bytes, cell_chars)

    def refreshed(self) -> Progress:
        return self.progress

    def join(self) -> None:
        pass

    def close(self) -> None:
        pass
