"""The index page's search for a query of many words: one common word typed N times, and N
distinct common words, on a built index. Each query is the index page a person's browser asks
for (`GET /?q=…`, the filter and the ranked hits both), through the real app, best of `--runs`.

    PYTHONPATH=$PWD .venv/bin/python bench/search_terms.py ROOT --db DB [--runs 3]

ROOT is the corpus the index DB was built of (`bench/corpus.py --generate --sizes 1000`, then
`session-tree index ROOT --db DB`). To compare two commits, run it from each checkout on the same
DB. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

COMMON = ("the and for not you with are this that from have was but all any can had her one our out day get "
          "has him his how man new now old see two way who boy did its let put say she too use").split()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("root", type=Path)
    p.add_argument("--db", type=Path, required=True)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    from webapp.web.app import create_app
    from webapp.web.auth import owner_client

    app = create_app(args.root, CORPUS_DB=args.db)
    client = owner_client(app)
    client.get("/")  # the index opened, its refresh done: what every query below finds
    app.extensions["corpus"].join()
    queries = {f"'a' x{n}": " ".join(["a"] * n) for n in (1, 50, 500, 5000)}
    queries[f"{len(COMMON)} distinct common words"] = " ".join(COMMON)
    figures = {}
    for name, q in queries.items():
        best = float("inf")
        for _ in range(args.runs):
            start = time.perf_counter()
            assert client.get("/", query_string={"q": q}).status_code == 200
            best = min(best, time.perf_counter() - start)
        figures[name] = round(best, 3)
    print(json.dumps({"seconds (best of %d)" % args.runs: figures, "code": str(BENCH.parent)}, indent=1))


if __name__ == "__main__":
    main()
