"""What the skeleton costs the cold session page: the 10,000-branch session (bench/graph.py's),
the 100k-entry one (bench/lazy.py's) and a session retried often (10,000 fork points along its
active path, each with a one-turn retry: `samplegen.retry_session`, kept in bench/data/), opened
as a person opens them (no level in the URL: all have branches, so the skeleton) and by turns
(`collapse=auto`, the first view before the skeleton), each a median of `--runs` fresh
processes (bench/lazy.py's cold page). The retried session's goal, at both levels: a drawing
in <= 3 s, an SVG of <= 1 MB.

    PYTHONPATH=$PWD .venv/bin/python bench/skeleton.py [--runs 3] [--only NAME ...] [--project DIR] [--skeleton-only]

A measurement, not a test: it prints the figures and never fails.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))
sys.path.insert(0, str(BENCH_DIR))

import graph  # noqa: E402
import lazy  # noqa: E402
import orjson  # noqa: E402

import samplegen  # noqa: E402

ROOT = lazy.DATA_DIR / "skeleton-root"  # hard links to the inputs: a sessions root of its own
RETRIED_GOAL = (3.0, 1.0)  # seconds, MB of SVG


def retries_file(turns: int = 10_000) -> Path:
    """The session retried at every turn (about 100k entries, 10,001 leaves), made once."""
    path = lazy.DATA_DIR / f"retries{turns // 1000}k.jsonl"
    if not path.exists():
        header, entries = samplegen.retry_session(turns)
        lazy.DATA_DIR.mkdir(exist_ok=True)
        path.write_bytes(b"\n".join(orjson.dumps(x) for x in (header, *entries)) + b"\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per figure, the median is shown")
    ap.add_argument("--only", nargs="*", choices=["branches", "100k", "retries"], help="only these sessions")
    ap.add_argument("--project", type=Path, help="measure the code of another checkout (a before/after)")
    ap.add_argument("--skeleton-only", action="store_true", help="leave out the drawing by turns")
    args = ap.parse_args(argv)
    if args.project:
        lazy.CODE_DIR = args.project.resolve()
    ROOT.mkdir(parents=True, exist_ok=True)
    sessions = {"branches": ("10,000 branches", graph.branches_file), "100k": ("100k", lambda: lazy.ensure("100k")),
                "retries": ("10,000 retries", retries_file)}
    for key in args.only or sessions:
        name, make = sessions[key]
        path = make()
        link = ROOT / path.name
        if not link.exists():
            os.link(path, link)
        for level, query in (("skeleton (default)", ""), ("by turns", "?collapse=auto"))[:1 if args.skeleton_only else 2]:
            m = lazy.child(lazy.PAGE, [str(ROOT), f"/s/{path.name}{query}"], args.runs)
            goal = ""
            if key == "retries":  # by turns too: its fork points fold when its path is over the cap
                met = m["s"] <= RETRIED_GOAL[0] and m["svg_mb"] <= RETRIED_GOAL[1] and m["nodes"] > 0
                goal = f"   goal <= {RETRIED_GOAL[0]:g} s, <= {RETRIED_GOAL[1]:g} MB: {'met' if met else 'MISSED'}"
            print(f"{name:16} {level:19} cold page {m['s']:5.2f} s   SVG {m['svg_mb']:4.2f} MB   "
                  f"{m['nodes']:5.0f} nodes   HTTP {m['status']:.0f}{goal}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
