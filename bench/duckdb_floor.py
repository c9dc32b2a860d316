"""The floor under #42's "listing and figures ≤ 15 s": how long DuckDB alone, on every core, takes
to read the fields a listing and its figures need from every pi file of ROOT, with nothing else
running, beside a bare orjson parse of the same files in the same run.

    PYTHONPATH=$PWD .venv/bin/python bench/duckdb_floor.py /tmp/session-tree-bench/corpus2-10000

Three reads, each of every pi file (the Claude Code and Codex copies, a sixth of the corpus, are
left out: this is a floor):
- `scan`: `read_ndjson_objects`, each line's JSON counted and nothing extracted (the read alone);
- `six`: `read_json` with six columns given (the issue's own measure: type, id, parentId,
  timestamp, the message's role and its usage as JSON);
- `listing`: those, made into one row per file with what the sessions list shows (entries, leaves,
  first and last time, tokens in and out, cost, the last model), the sums done in DuckDB.

No tree is walked and no text is made: what a build does beyond this can only add to it. A
measurement, not a test: it prints one JSON object (seconds of wall time and of this process's CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

import duckdb
import orjson


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _timed(fn) -> dict:
    wall, cpu = time.monotonic(), _cpu()
    out = fn()
    return {"wall": round(time.monotonic() - wall, 2), "cpu": round(_cpu() - cpu, 2), "out": out}


SIX = ("{'type': 'VARCHAR', 'id': 'VARCHAR', 'parentId': 'VARCHAR', 'timestamp': 'VARCHAR', "
       "'message': 'STRUCT(role VARCHAR, model VARCHAR, usage JSON)'}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("root", type=Path)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = p.parse_args()
    files = sorted(str(f) for f in (args.root / ".pi").rglob("*.jsonl"))
    size = sum(os.path.getsize(f) for f in files)
    con = duckdb.connect(":memory:")
    con.execute(f"SET threads = {args.threads}")
    con.execute("SET preserve_insertion_order = false")
    listed = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"

    def parse() -> int:
        n = 0
        for f in files:
            with open(f, "rb") as fh:
                for line in fh:
                    orjson.loads(line)
                    n += 1
        return n

    def scan() -> int:
        return con.execute(f"SELECT count(*) FROM read_ndjson_objects({listed}, maximum_object_size = 268435456) "
                           "WHERE json_valid(json)").fetchone()[0]

    read_six = (f"read_json({listed}, format = 'newline_delimited', columns = {SIX}, filename = true, "
                "ignore_errors = true, maximum_object_size = 268435456)")

    def six() -> int:
        return con.execute(f"SELECT count(*), count(DISTINCT filename) FROM {read_six}").fetchone()[0]

    def listing() -> int:
        return len(con.execute(f"""
            WITH e AS MATERIALIZED (
                    SELECT filename, type, id, parentId, timestamp, message.role AS role,
                           message.model AS model,
                           TRY_CAST(message.usage->>'input' AS BIGINT) AS input,
                           TRY_CAST(message.usage->>'output' AS BIGINT) AS output,
                           TRY_CAST(message.usage->'cost'->>'total' AS DOUBLE) AS cost
                    FROM {read_six} WHERE type <> 'session'),
                 leaves AS (SELECT filename, count(*) AS leaves FROM e AS l
                            WHERE NOT EXISTS (SELECT 1 FROM e AS c WHERE c.filename = l.filename
                                              AND c.parentId = l.id)
                            GROUP BY filename)
            SELECT filename, count(*), min(timestamp), max(timestamp), sum(input), sum(output), sum(cost),
                   arg_max(model, timestamp) FILTER (WHERE model IS NOT NULL), any_value(leaves.leaves)
            FROM e LEFT JOIN leaves USING (filename) GROUP BY filename""").fetchall())

    out = {"files": len(files), "mb": round(size / 1e6), "threads": args.threads}
    for name, fn in (("orjson_parse", parse), ("scan", scan), ("six", six), ("listing", listing)):
        out[name] = _timed(fn)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
