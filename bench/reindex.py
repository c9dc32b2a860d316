"""Re-index after one session grew, as a user runs it: a fresh `session-tree index ROOT --db DB`
process after one entry was appended to one pi session of the built index (the goal: ≤ 1 s at
10,000 sessions), and the same when nothing changed.

    PYTHONPATH=$PWD .venv/bin/python bench/reindex.py ROOT --db DB [--runs 5] [--size 600]

ROOT is a generated corpus already indexed into DB (`bench/corpus.py --generate --sizes 10000`,
then `session-tree index ROOT --db DB`). The grown session is the first pi session of about
`--size` KB whose bytes are its own (the generator links copies to one file: growing one would
grow them all); each run appends one more entry to it. Modules are compiled once beforehand,
into a cache outside the checkout, as an installed package has them. Each figure is the median
wall time of `--runs` processes with the median CPU (user + system) beside it. A measurement,
not a test: it prints figures against the goal and never fails.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from processes import child_times, compiled_env

PROJECT_DIR = Path(__file__).resolve().parent.parent
GOAL = 1.0
ENTRY = (b'{"type":"custom","id":"bench-grow-%d","parentId":null,"timestamp":"2026-03-01T00:00:00.000Z",'
         b'"customType":"bench"}\n')


def grown_file(root: Path, kb: int) -> Path:
    """The pi session of its own bytes closest to `kb` KB."""
    own = [p for p in (root / ".pi").rglob("*.jsonl") if os.stat(p).st_nlink == 1]
    if not own:
        sys.exit(f"{root}: no pi session with bytes of its own")
    return min(own, key=lambda p: abs(p.stat().st_size - kb * 1000))


def report(name: str, figures: list[tuple[float, float]]) -> None:
    walls, cpus = zip(*figures)
    wall = statistics.median(walls)
    print(f"{name}: {wall:.2f} s wall ({min(walls):.2f}–{max(walls):.2f}), {statistics.median(cpus):.2f} s CPU "
          f"(goal ≤ {GOAL} s: {'met' if wall <= GOAL else 'NOT met'})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", type=int, default=600, help="KB of the session to grow")
    args = ap.parse_args()
    env = compiled_env(PROJECT_DIR, args.db.parent / "pycache")
    cmd = [sys.executable, "-m", "webapp.cli", "index", str(args.root), "--db", str(args.db)]
    grown = grown_file(args.root, args.size)
    print(f"code: {PROJECT_DIR}; {args.root} into {args.db}; growing {grown} ({grown.stat().st_size / 1e3:.0f} KB); "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)

    def timed() -> tuple[float, float]:
        return child_times(cmd, env, PROJECT_DIR)

    timed()  # (brings the index up to date and compiles the modules)
    figures = []
    for _ in range(args.runs):
        with open(grown, "ab") as fh:
            fh.write(ENTRY % time.time_ns())
        figures.append(timed())
    report("re-index after one session grew", figures)
    report("re-index, nothing changed", [timed() for _ in range(args.runs)])
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
