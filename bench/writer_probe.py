"""Where the writing process of one first full index spends its time: the thread CPU and wall
time of each of its parts, around one `Index.build` of ROOT into a fresh database in this process
(its worker processes as a build starts them).

    PYTHONPATH=$PWD .venv/bin/python bench/writer_probe.py /tmp/session-tree-bench/corpus2-1000

The parts: the tables' inserts (`Index._write_arrow`), the rest of each text batch in the writer's
main thread (`text_writes.TextWriter`: the rows made ready, DuckDB's UPDATE and its commit, the
wait for the text index), the text index's inserts in their own thread (`text.add_docs`), the audits' writes, the conversations'
join; then the stages' times after the start, the writer's CPU and peak memory, and the size of
the index on disk. A measurement, not a test: it prints one JSON object.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("root", type=Path)
    args = p.parse_args()

    from webapp.corpus import db

    spent: dict[str, float] = collections.defaultdict(float)

    def timed(owner, name: str, key: str | None = None) -> None:
        fn = getattr(owner, name)

        def wrapper(*a, **k):
            cpu, wall = time.thread_time(), time.monotonic()
            try:
                return fn(*a, **k)
            finally:
                spent[f"{key or name}, thread CPU"] += time.thread_time() - cpu
                spent[f"{key or name}, wall"] += time.monotonic() - wall

        setattr(owner, name, wrapper)

    from webapp.corpus import text_writes

    for name in ("_write_arrow", "_write_audits"):
        timed(db.Index, name)
    for name, key in (("_ready", "text batch made ready"), ("_set_text", "text batch's UPDATE and commit"),
                      ("_finish", "text batch's words waited for")):
        timed(text_writes.TextWriter, name, key)
    timed(text_writes, "add_docs", "text index inserts (own thread)")
    timed(db, "join_conversations")
    with tempfile.TemporaryDirectory(prefix="writer-probe-") as out:
        index = db.Index(Path(out) / "c.duckdb")
        cpu = time.process_time()
        progress = index.build([args.root])
        figures = {k: round(v, 2) for k, v in sorted(spent.items())}
        figures.update({
            "tables ready after (s)": round(progress.tables_ready - progress.started, 1),
            "text ready after (s)": round(progress.text_ready - progress.started, 1),
            "audits ready after (s)": round(progress.finished - progress.started, 1),
            "writer CPU (s)": round(time.process_time() - cpu, 1),
            "writer peak memory (MB)": int(Path("/proc/self/status").read_text().split("VmHWM:")[1].split()[0]) // 1024,
        })
        index.close()
        figures["index on disk (MB)"] = round(sum(p.stat().st_size for p in db.index_files(index.path) if p.exists()) / 1e6)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":  # (the worker processes import this module: the build runs once, here)
    main()
