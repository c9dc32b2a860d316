"""CPU per MB of each way the corpus index reads files into its tables, one process, no writer,
on the same files: a bare orjson parse of every line (the yardstick), the format seam's tables
without the text and audits (`extract.extract(later=True)`: what the seam gives a big build), the
batch's tables (`batch.tables_of`: pi files by the SQL projection in DuckDB and the core's tree over
its columns, others by the seam), and the seam's whole rows (text and audits made in place, as the
index made them before the projection).

    PYTHONPATH=$PWD .venv/bin/python bench/projection_cpu.py DIR [--runs 2] [--batch 64]

DIR is a generated corpus (`bench/corpus.py --generate --sizes 100`). A measurement, not a test:
it prints the best of the runs of each way.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webapp.corpus.batch import tables_of  # noqa: E402
from webapp.corpus.extract import extract  # noqa: E402


def parse(files: list[str]) -> None:
    for f in files:
        with open(f, "rb") as fh:
            for line in fh:
                try:
                    orjson.loads(line)
                except orjson.JSONDecodeError:
                    pass


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--batch", type=int, default=64, help="files a batch of the projection reads (db.py's)")
    args = p.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "**", "*.jsonl"), recursive=True, include_hidden=True))
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    ways = {
        "bare orjson parse": lambda: parse(files),
        "seam, tables only (extract later=True)": lambda: [extract(f, 0, later=True) for f in files],
        "projection batches, tables only (tables_of)": lambda: [
            tables_of([(f, 0) for f in files[i:i + args.batch]]) for i in range(0, len(files), args.batch)],
        "seam, whole rows with text and audits (extract)": lambda: [extract(f) for f in files],
    }
    print(f"{len(files)} files, {mb:.2f} MB, load {os.getloadavg()[0]:.2f}")
    for name, run in ways.items():
        best = None
        for _ in range(args.runs):
            start = time.process_time()
            run()
            spent = time.process_time() - start
            best = spent if best is None else min(best, spent)
        print(f"  {name:50s} best CPU {best:7.2f} s  {1000 * best / mb:6.1f} ms/MB")
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
