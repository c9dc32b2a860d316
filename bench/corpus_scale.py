"""The corpus index at 10,000 sessions without indexing 10,000 files: the figures of `ls --index
--json`, the index page, its text filter, search and a re-index after one session grew.

    PYTHONPATH=$PWD .venv/bin/python bench/corpus_scale.py make [--copies 10]
    PYTHONPATH=$PWD .venv/bin/python bench/corpus_scale.py measure [--runs 3]

`make` takes the 1,000-session corpus `bench/corpus.py` generated and indexed
(/tmp/session-tree-bench/corpus2-1000 and its -db) and makes DATA/c10k: the 1,000 files, hard-linked
`--copies` times under new names (no disk: the same bytes, sizes and mtimes), and the index of
them made by copying each table's rows with the file names changed (DuckDB `INSERT … SELECT`,
the text index's rows and FTS5 text likewise): the database a build of those files writes,
without reading them again. Each word is then in ten times as many sessions (the rare word in
ten). `measure`: every figure in a fresh process, medians of `--runs`. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

from processes import child_times, print_server_figures

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

SOURCE = Path("/tmp/session-tree-bench/corpus2-1000")
SOURCE_DB = Path("/tmp/session-tree-bench/corpus2-1000-db/c.duckdb")
DATA = Path("/tmp/corpusrest")
RARE, COMMON = "quetzalcoatl", "pipeline"


def _renamed(file: str, k: int) -> str:
    return file if k == 0 else file[: -len(".jsonl")] + f"-k{k}.jsonl"


def make(copies: int) -> None:
    import duckdb

    root, db = DATA / "c10k", DATA / "c10k.duckdb"
    shutil.rmtree(root, ignore_errors=True)
    for p in DATA.glob("c10k.duckdb*"):
        p.unlink()
    DATA.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in SOURCE.rglob("*.jsonl"))
    for k in range(copies):
        for f in files:
            dest = root / f.relative_to(SOURCE)
            dest = dest.with_name(_renamed(dest.name, k))
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.link(f, dest)
    shutil.copy(SOURCE_DB, db)
    shutil.copy(SOURCE_DB.with_name(SOURCE_DB.name + ".text.sqlite"), db.with_name(db.name + ".text.sqlite"))
    old, new = str(SOURCE) + "/", str(root) + "/"
    con = duckdb.connect(str(db))
    tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                        "WHERE table_name <> 'meta'").fetchall()]
    for t in tables:
        cols = [r[0] for r in con.execute(f"SELECT column_name FROM information_schema.columns "
                                          f"WHERE table_name = '{t}' ORDER BY ordinal_position").fetchall()]
        con.execute(f"UPDATE {t} SET file = replace(file, ?, ?)", [old, new])
        if "root" in cols:
            con.execute(f"UPDATE {t} SET root = ?", [str(root)])
        if "project" in cols:
            con.execute(f"UPDATE {t} SET project = replace(project, ?, ?)", [old, new])
        for k in range(1, copies):
            picked = ", ".join("regexp_replace(file, '\\.jsonl$', '-k%d.jsonl')" % k if c == "file" else c
                               for c in cols)
            con.execute(f"INSERT INTO {t} SELECT {picked} FROM {t} WHERE NOT regexp_matches(file, '-k[0-9]+\\.jsonl$')")
        print(t, con.execute(f"SELECT count(*) FROM {t}").fetchone()[0], flush=True)
    con.execute("CHECKPOINT")
    con.close()
    text = sqlite3.connect(db.with_name(db.name + ".text.sqlite"), isolation_level=None)
    text.execute("PRAGMA journal_mode=WAL")
    text.execute("BEGIN")
    text.execute("UPDATE docs SET file = replace(file, ?, ?), project = replace(project, ?, ?)", [old, new, old, new])
    top = text.execute("SELECT max(id) FROM docs").fetchone()[0]
    cols = [r[1] for r in text.execute("PRAGMA table_info(docs)")][2:]
    for k in range(1, copies):
        text.execute(f"INSERT INTO docs (id, file, {', '.join(cols)}) SELECT id + ?, "
                     f"substr(file, 1, length(file) - 6) || '-k{k}.jsonl', {', '.join(cols)} FROM docs WHERE id <= ?",
                     [k * top, top])
        text.execute("INSERT INTO body (rowid, text) SELECT rowid + ?, text FROM body WHERE rowid <= ?", [k * top, top])
        print("text copy", k, flush=True)
    text.execute("COMMIT")
    text.close()
    print(json.dumps({"root": str(root), "db": str(db)}))


def timed(fn, runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def _run(cmd: list[str]) -> tuple[float, float]:
    return child_times(cmd, cwd=BENCH.parent)


def _median(pairs: list[tuple[float, float]]) -> str:
    return f"{statistics.median(w for w, _ in pairs):.2f} s wall, {statistics.median(c for _, c in pairs):.2f} s CPU"


def server(root: Path, db: Path, runs: int) -> dict:
    """(in a fresh process) the index page, its filter and search, wall and CPU of each request."""
    from webapp.web.app import create_app
    from webapp.web.auth import owner_client

    app = create_app(root, CORPUS_DB=db)
    client = owner_client(app)

    def get(url: str, htmx: bool = False) -> tuple[float, float]:
        t, c = time.perf_counter(), time.process_time()
        got = client.get(url, headers={"HX-Request": "true"} if htmx else {})
        assert got.status_code == 200, (url, got.status_code)
        return time.perf_counter() - t, time.process_time() - c

    out = {"index page, fresh server": _median([get("/")])}
    app.extensions["corpus"].join()  # the check for changes it started (nothing changed)
    out["index page, again"] = _median([get("/") for _ in range(runs)])
    for word in (RARE, COMMON):
        out[f"index page filtered by {word!r} (list and hits)"] = _median([get(f"/?q={word}", True) for _ in range(runs)])
    out[f"index page filtered by 'pip' (a word being typed)"] = _median([get("/?q=pip", True) for _ in range(runs)])
    out["server RSS MB"] = int(Path("/proc/self/status").read_text().split("VmRSS:")[1].split()[0]) // 1024
    return out


def measure(runs: int) -> None:
    root, db = DATA / "c10k", DATA / "c10k.duckdb"
    cli = [sys.executable, "-m", "webapp.cli"]
    print("sessions:", sum(1 for _ in root.rglob("*.jsonl")), "load average:", os.getloadavg())
    print("ls --index --json:", _median([_run(cli + ["ls", str(root), "--index", "--db", str(db), "--json"])
                                         for _ in range(runs)]))
    grown = next(iter(sorted((root / ".pi").rglob("*-k9.jsonl"))))
    if os.stat(grown).st_nlink > 1:  # a file of its own, not the copies' bytes
        data = grown.read_bytes()
        st = os.stat(grown)
        grown.unlink()
        grown.write_bytes(data)
        os.utime(grown, ns=(st.st_atime_ns, st.st_mtime_ns))
    figures = []
    for _ in range(runs):
        with open(grown, "ab") as fh:
            fh.write(b'{"type":"custom","id":"bench-grow-%d","parentId":null,"timestamp":"2026-03-01T00:00:00.000Z",'
                     b'"customType":"bench"}\n' % time.time_ns())
        figures.append(_run(cli + ["index", str(root), "--db", str(db)]))
    print("re-index after one session grew (index ROOT, a fresh process):", _median(figures))
    print("re-index, nothing changed:", _median([_run(cli + ["index", str(root), "--db", str(db)]) for _ in range(runs)]))
    print_server_figures([sys.executable, __file__, "server", "--runs", str(runs)], cwd=BENCH.parent)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=("make", "measure", "server"))
    p.add_argument("--copies", type=int, default=10)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    if args.what == "make":
        make(args.copies)
    elif args.what == "measure":
        measure(args.runs)
    else:
        print(json.dumps(server(DATA / "c10k", DATA / "c10k.duckdb", args.runs)))


if __name__ == "__main__":
    main()
