"""Two (or more) commits' first full index of ROOT, run back to back, each from a `git archive` of
its commit: this machine's speed swings by a fifth from one half hour to the next, so only builds
run side by side compare (BENCHMARKS.md, "Every session at once"). Each build is
`bench/index_build.py` of that commit, in a fresh process; a table of their figures follows, the
first commit's against each other's.

    PYTHONPATH=$PWD .venv/bin/python bench/index_pair.py /tmp/session-tree-bench/corpus2-10000 main HEAD

Run it twice with the commits in the other order to see how much the order weighs. A
measurement, not a test: it prints the figures and never fails on them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
PROJECT = BENCH.parent
FIGURES = (  # (the name index_build prints, the column's heading)
    ("full index", "whole build (s)"),
    ("tables ready after (s)", "tables (s)"),
    ("text ready after (s)", "search ready (s)"),
    ("audits ready after (s)", "audits (s)"),
    ("full index, CPU of all processes", "CPU, every process (s)"),
    ("full index, CPU of the writing process", "CPU, the writer (s)"),
    ("full index, peak memory of the writing process (MB)", "writer's peak (MB)"),
    ("full index, peak memory of a worker process (MB)", "a worker's peak (MB)"),
)


def build(rev: str, root: Path, into: Path) -> dict:
    """`bench/index_build.py ROOT` from a `git archive` of `rev` unpacked in `into`."""
    archive = subprocess.run(["git", "archive", rev], cwd=PROJECT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(into)
    done = subprocess.run([sys.executable, str(into / "bench" / "index_build.py"), str(root)], cwd=into, env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("root", type=Path, help="a generated corpus (bench/corpus.py --generate)")
    p.add_argument("revs", nargs="+", help="commits, in the order they are built")
    args = p.parse_args()
    shas = [subprocess.run(["git", "rev-parse", "--short=7", rev], cwd=PROJECT, capture_output=True, text=True,
                           check=True).stdout.strip() for rev in args.revs]
    got: list[dict] = []
    for rev, sha in zip(args.revs, shas):
        with tempfile.TemporaryDirectory(prefix=f"index-pair-{sha}-") as folder:
            started, load = time.strftime("%H:%M:%S"), os.getloadavg()[0]
            figures = build(sha, args.root, Path(folder))
            print(f"{rev} ({sha}) started {started}, load {load:.1f}: " + json.dumps(figures), flush=True)
            got.append(figures)
    print()
    print("| figure | " + " | ".join(f"{rev} ({sha})" for rev, sha in zip(args.revs, shas)) + " |")
    print("|---|" + "---|" * len(shas))
    for key, heading in FIGURES:
        values = [g.get(key) for g in got]
        cells = [f"{v:.1f}" if isinstance(v, (int, float)) else "–" for v in values]
        if isinstance(values[0], (int, float)) and values[0]:
            cells[1:] = [c if not isinstance(v, (int, float)) else f"{c} ({100 * (v / values[0] - 1):+.0f}%)"
                         for c, v in zip(cells[1:], values[1:])]
        print(f"| {heading} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
