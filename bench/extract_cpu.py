"""CPU per MB of the corpus index's extraction alone (`webapp.corpus.extract.extract`, one
process, no writer), so a change to the audit, the searchable text or the tree build can be
compared on the same files without the writer's and the pool's share in the figure.

    PYTHONPATH=$PWD .venv/bin/python bench/extract_cpu.py DIR [--runs 2]

DIR is a generated corpus (`bench/corpus.py --generate --sizes 100`, then
/tmp/session-tree-bench/corpus2-100). A measurement, not a test: it prints the best of the runs.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webapp.corpus.extract import extract  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--runs", type=int, default=2)
    args = p.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "**", "*.jsonl"), recursive=True, include_hidden=True))
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    best = None
    for _ in range(args.runs):
        start = time.process_time()
        for f in files:
            extract(f)
        spent = time.process_time() - start
        best = spent if best is None else min(best, spent)
    print(f"{len(files)} files {mb:.2f} MB  best CPU {best:.3f} s  {best / mb:.3f} s/MB  (load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
