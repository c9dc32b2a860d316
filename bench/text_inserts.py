"""The text index's word inserts alone, CPU per MB of text, for FTS5 settings and two SQLites: the
entries' text of the first N files of ROOT (made as a build makes it, `later.texts_of`) inserted
into a fresh FTS5 table, a transaction per 64 files, as `text.add_docs` does.

    PYTHONPATH=$PWD .venv/bin/python bench/text_inserts.py /tmp/session-tree-bench/corpus2-1000 1000 \\
        sqlite3:full:4 apsw:full:4 apsw:full:16 "apsw:full:16:content=''"

Each variant is SQLITE:DETAIL:AUTOMERGE[:OPTION...]: `sqlite3` is the SQLite Python is built with,
`apsw` the one apsw's wheel holds; an OPTION is given to CREATE (`content=''`), or is one of FTS5's
settings (`hashsize=8000000`). A measurement, not a test: one line per variant.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BATCH_FILES = 64
# FTS5's settings (an OPTION `hashsize=N` is set as `automerge` is, not given to CREATE): `hashsize`,
# the bytes of pending words held before they are written as a segment (1 MB by default).
_SETTINGS = ("hashsize", "crisismerge", "pgsz", "usermerge")


def connect(kind: str, path: Path):
    if kind == "apsw":
        import apsw

        return apsw.Connection(str(path))
    import sqlite3

    return sqlite3.connect(path, isolation_level=None)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("root", type=Path)
    p.add_argument("files", type=int)
    p.add_argument("variants", nargs="+")
    args = p.parse_args()

    from webapp.corpus.later import TextJob, texts_of

    paths = sorted(args.root.rglob("*.jsonl"))[:args.files]
    texts = [list(m.values()) for m in texts_of([TextJob(str(f), 0, True) for f in paths]) if isinstance(m, dict)]
    mb = sum(len(t.encode()) for file in texts for t in file) / 1e6
    print(f"{len(texts)} files, {sum(map(len, texts)):,} texts, {mb:.1f} MB of text")
    for variant in args.variants:
        kind, detail, automerge, *options = variant.split(":")
        folder = Path(tempfile.mkdtemp(prefix="text-inserts-"))
        try:
            con = connect(kind, folder / "t.sqlite")
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "cache_size=-32768", "temp_store=MEMORY",
                           "wal_autocheckpoint=10000"):  # (as `text.connect` sets them)
                con.execute("PRAGMA " + pragma)
            settings = [o.split("=", 1) for o in options if o.split("=", 1)[0] in _SETTINGS]
            extra = "".join(", " + o for o in options if o.split("=", 1)[0] not in _SETTINGS)
            con.execute(f"CREATE VIRTUAL TABLE body USING fts5(text, detail={detail}{extra}, "
                        "tokenize='unicode61 remove_diacritics 2')")
            for name, value in [("automerge", automerge), *settings]:
                con.execute(f"INSERT INTO body(body, rank) VALUES ('{name}', {int(value)})")
            cpu, rowid = time.process_time(), 0
            for i in range(0, len(texts), BATCH_FILES):
                rows = [t for file in texts[i:i + BATCH_FILES] for t in file]
                con.execute("BEGIN")
                con.executemany("INSERT INTO body (rowid, text) VALUES (?, ?)", zip(range(rowid, rowid + len(rows)), rows))
                con.execute("COMMIT")
                rowid += len(rows)
            spent = time.process_time() - cpu
            con.close()
            size = sum(f.stat().st_size for f in folder.iterdir())
            print(f"{variant}: {spent:.2f} s CPU, {spent / mb * 1000:.1f} ms/MB, {size / 1e6:.0f} MB on disk", flush=True)
        finally:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
