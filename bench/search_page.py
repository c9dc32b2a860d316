"""One page of search hits across every session (`corpus.search.search`: the text index's hits,
each entry of a conversation once, their snippets cut from the tables' text), for a few words
of different frequencies, on a built index: the median and best of `--runs` in one process.

    PYTHONPATH=$PWD .venv/bin/python bench/search_page.py DB [WORD ...] [--runs 7]

DB is an index `bench/corpus.py --sizes 10000` built (/tmp/session-tree-bench/corpus2-10000-db/
c.duckdb). The default words: one that a single entry holds, one that about a thousand do (ranked
by bm25, their hits spread over as many files), and one too common to rank. To compare two commits,
run it from each checkout, alternately, on the same DB. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WORDS = ("quetzalcoatl", "retry", "pipeline")


def main() -> None:
    import duckdb

    from webapp.corpus.search import search
    from webapp.corpus.text import text_path

    p = argparse.ArgumentParser()
    p.add_argument("db", type=Path)
    p.add_argument("words", nargs="*", default=list(WORDS))
    p.add_argument("--runs", type=int, default=7)
    args = p.parse_args()
    cur = duckdb.connect(str(args.db), read_only=True)
    for word in args.words:
        spent = []
        for _ in range(args.runs):
            start = time.monotonic()
            got = search(text_path(args.db), cur, word)
            spent.append(time.monotonic() - start)
        print(f"{word}: {got.matches:,} entries, {len(got.hits)} hits ({'ranked' if got.ranked else 'latest first'}), "
              f"median {statistics.median(spent) * 1000:.0f} ms, best {min(spent) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
