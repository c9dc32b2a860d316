"""Benchmark of `webapp.core.audit`: the audit of one compaction on the 100k-entry session.

    .venv/bin/python bench/audit.py [--size 100k] [--runs 9]

The input is bench/run.py's (samplegen.synthetic_session, generated once into bench/data/).
The file is opened once; each compaction of the active path is audited `--runs` times (the audit
caches nothing); the slowest run of all is the figure held against the goal of 0.5 s. A measurement, not a test: it prints figures and never fails.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.run import DATASETS, dataset_path, ensure_data  # noqa: E402
from webapp.core.audit import audit_entry, summaries_on_path  # noqa: E402
from webapp.core.session import Session  # noqa: E402

GOAL_S = 0.5


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="100k", choices=sorted(DATASETS))
    p.add_argument("--runs", type=int, default=9)
    args = p.parse_args()
    ensure_data([args.size])
    t = time.perf_counter()
    tree = Session.open(dataset_path(args.size)).tree
    opened = time.perf_counter() - t
    compactions = [e for e in summaries_on_path(tree, tree.active_leaf) if e.type == "compaction"]
    print(f"{args.size}: {len(tree.entries)} entries, {len(compactions)} compactions on the active path "
          f"(opened in {opened:.2f} s)")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; load average {os.getloadavg()[0]:.2f}")
    worst = 0.0
    for c in compactions:
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            audit = audit_entry(tree, c.id)
            times.append(time.perf_counter() - t)
        print(f"  compaction {c.id[-8:]}: {len(audit.span)} entries summarized, {len(audit.facts)} facts, "
              f"score {audit.score()}% — median {statistics.median(times) * 1000:.1f} ms, first run "
              f"{times[0] * 1000:.1f} ms, slowest {max(times) * 1000:.1f} ms")
        worst = max(worst, max(times))
    verdict = "meets" if worst <= GOAL_S else "MISSES"
    print(f"slowest audit of a compaction: {worst * 1000:.1f} ms ({verdict} the goal of {GOAL_S * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
