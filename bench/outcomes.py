"""What a branch's status from its last turn (webapp/core/outcome.py) costs the per-leaf walk.

    PYTHONPATH=. .venv/bin/python bench/outcomes.py [--quick]

`leaf_figures` now reads the last turn of every leaf (its messages after the last user message)
to tell "answered" from "asks a question" and "checks failed". This times the walk as it is and
with the status read from the leaf's last message alone (what it did before), on the 100k session
of bench/run.py and (without --quick) the 10,000-leaf session of bench/compare.py. Fresh sessions
each run (no body cache), CPU time (`time.process_time`) and wall time, medians of 3.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import compare as compare_bench  # noqa: E402  (bench/compare.py: the 10,000-leaf input)
import run  # noqa: E402

from webapp.core import leaf_figures as lf  # noqa: E402
from webapp.core.outcome import outcome  # noqa: E402
from webapp.core.session import Session  # noqa: E402


def last_message_only(path):
    last = next((e for e in reversed(path) if e.type == "message"), None)
    return outcome([last] if last is not None else [])


def timed(path: Path, status) -> tuple[float, float, int]:
    walls, cpus = [], []
    for _ in range(3):
        tree = Session.open(path).tree
        lf.outcome = status
        w, c = time.perf_counter(), time.process_time()
        rows = lf.leaf_figures(tree)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    lf.outcome = outcome
    return statistics.median(walls), statistics.median(cpus), len(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the 100k session only")
    args = ap.parse_args()
    run.ensure_data(["100k"])
    inputs = {"100k": run.dataset_path("100k")}
    if not args.quick:
        inputs["leaves10k"] = compare_bench.ensure_leaves10k()
    print("| session | leaves | status from | wall | CPU |\n|---|---|---|---|---|")
    for name, path in inputs.items():
        for label, status in (("the last message (before)", last_message_only), ("the last turn (now)", outcome)):
            wall, cpu, n = timed(path, status)
            print(f"| {name} | {n:,} | {label} | {wall:.3f} s | {cpu:.3f} s |")


if __name__ == "__main__":
    main()
