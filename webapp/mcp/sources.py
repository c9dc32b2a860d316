"""What the MCP tools read: the sessions under one root (the web app's `SessionStore`: a session is
named by its path under the root, and nothing outside it can be named), and the corpus index when
there is one.

Two places hold an index. Under `session-tree serve`, the server's own (`ServedIndex`), which it
keeps up to date in the background. For `session-tree mcp` on its own, the index file that
`session-tree index` made (`IndexFile`), opened for the length of one question and brought up to
date with the root first, as `ls --index` does: kept open, it would lock `serve` and `index` out of
it for as long as the agent runs. Without one (none made yet, or another process holds it) the
tools read the files, and say so."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..core.private import private_umask
from ..web.store import SessionStore


@dataclass
class Opened:
    """An index open for one question: a DuckDB cursor on its tables, and its text index's path."""

    cursor: object
    text_db: Path
    note: str = ""  # what a reader should know (a build still under way)


class Corpus(Protocol):
    def opened(self) -> Iterator[Opened | str]:
        """A context manager: the index, or why there is none (one line)."""


class IndexFile:
    """The index file at `db` (default: the cache folder's), if it exists."""

    def __init__(self, db: Path | None, roots: list[Path]):
        self.db, self.roots = db, roots

    @contextmanager
    def opened(self) -> Iterator[Opened | str]:
        from ..corpus.db import Index, IndexUnavailable
        from ..corpus.sql import default_db_path
        from ..corpus.text import text_path

        path = self.db or default_db_path()
        if not path.is_file():
            yield f"no corpus index at {path} (`session-tree index ROOT` makes one)"
            return
        with private_umask():  # (DuckDB's log, made as it writes, is the user's alone)
            try:
                index = Index(path)
            except IndexUnavailable as exc:
                yield str(exc).splitlines()[0]
                return
            try:
                index.build(self.roots)
                yield Opened(index.cursor(), text_path(index.path))
            finally:
                index.close()


class ServedIndex:
    """The index of the web app `app` serves from, when it has one."""

    def __init__(self, app):
        self.app = app

    @contextmanager
    def opened(self) -> Iterator[Opened | str]:
        from ..corpus.text import text_path
        from ..web.corpus import open_corpus

        service = open_corpus(self.app)
        if service is None:
            yield f"no corpus index: {self.app.extensions.get('corpus_error') or 'none is kept'}"
            return
        progress = service.fresh()
        note = (f"the index is being built ({progress.done:,} of {progress.total:,} files read): "
                "what it does not hold yet is missing" if progress.running else "")
        yield Opened(service.index.cursor(), text_path(service.index.path), note)


@dataclass
class Sources:
    store: SessionStore
    corpus: Corpus
    allow_writes: bool = False

    @classmethod
    def of_root(cls, root: Path, within: tuple[str, ...] = (), db: Path | None = None,
                allow_writes: bool = False) -> "Sources":
        """The sessions under `root` (only its folders `within`, when given) for `session-tree mcp`."""
        store = SessionStore(root, within)
        roots = [store.root / w for w in within] if within else [store.root]
        return cls(store, IndexFile(db, roots), allow_writes)

    @classmethod
    def of_app(cls, app) -> "Sources":
        """What the web app `app` serves, writable unless it serves read-only."""
        return cls(app.extensions["session_store"], ServedIndex(app), not app.config.get("READ_ONLY"))
