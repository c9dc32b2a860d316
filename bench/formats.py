"""Opening a file through the format seam: CPU time of read + tree for pi v3 (the hot path, which
must not get slower) and for the read-only formats (the fixtures).

    PYTHONPATH=. .venv/bin/python bench/formats.py [--sizes 10k,100k] [--runs 5]

CPU time (the fastest of `--runs`), not wall time: the machine is shared, and CPU time moves far
less with the load. To compare two versions of the code, run it with each on PYTHONPATH (e.g. a
`git archive` of the older commit: the `webapp` on PYTHONPATH is the one measured). The pi v3
data is bench/run.py's synthetic sessions in bench/data/ (bench/run.py generates them).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.append(str(PROJECT))  # after PYTHONPATH: the code measured is the one named there

from webapp.core.reader import parse_bytes  # noqa: E402
from webapp.core.tree import SessionTree  # noqa: E402

FIXTURES = PROJECT / "tests" / "fixtures"


def cpu_ms(data: bytes, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        t = time.process_time()
        SessionTree(parse_bytes(data))
        best = min(best, time.process_time() - t)
    return best * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    names = args.sizes.split(",")
    files = [(f"pi v3 {n}", PROJECT / "bench" / "data" / f"{n}.jsonl") for n in names]
    files += [(p.parent.name + " " + p.name, p) for p in sorted(FIXTURES.glob("claude-code/*.jsonl"))]
    files += [(p.parent.name + " " + p.name, p) for p in sorted(FIXTURES.glob("codex/*.jsonl"))]
    for label, path in files:
        data = path.read_bytes()
        print(f"{label}: {cpu_ms(data, args.runs):.0f} ms CPU ({len(data) / 1e6:.1f} MB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
