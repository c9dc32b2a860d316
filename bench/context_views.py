"""Benchmark of the views of issue 25 on the samples and the real pi fixtures: the context
timeline of the Context tab (one walk of the path), the Context tab as served (with the timeline
and the count of entries replaced), the before/after view of each compaction and the diff of the
two longest leaves.

    .venv/bin/python bench/context_views.py [--runs 5]

Each figure is the median of `--runs` runs, in milliseconds, through the Flask test client (no
network). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from webapp.core.context_diff import before_after, diff_contexts  # noqa: E402
from webapp.core.session import Session  # noqa: E402
from webapp.core.timeline import timeline  # noqa: E402
from webapp.web.app import create_app  # noqa: E402
from webapp.web.auth import owner_client  # noqa: E402
from timing import median_ms  # noqa: E402  (bench/ is the script's folder)

FILES = [
    BENCH_DIR.parent / "sample_sessions" / "--home-ana-projects-data-pipeline--" / "2026-02-16T08-02-41-507Z_019c6579-1ae3-78f7-9da1-494c73cf256d.jsonl",
    BENCH_DIR.parent / "tests" / "fixtures" / "pi" / "pi-mono_large-session.jsonl",
    BENCH_DIR.parent / "tests" / "fixtures" / "pi" / "pi-mono_before-compaction.jsonl",
]
# The 100,000-entry session of bench/run.py (made by `bench/run.py` in bench/data/), when there:
# the Context tab at its active leaf is the figure the goal below holds it to.
BIG = BENCH_DIR / "data" / "100k.jsonl"
TAB_GOAL_MS = 300


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    files = FILES + ([BIG] if BIG.exists() else [])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "s"
        (root / "--bench--").mkdir(parents=True)
        print(f"{'file':34} {'entries':>7} {'path':>5} {'points':>6} {'timeline':>9} {'tab':>7} {'before/after':>13} {'diff':>7}")
        for f in files:
            shutil.copy(f, root / "--bench--" / f.name)
            rel = f"--bench--/{f.name}"
            tree = Session.open(root / "--bench--" / f.name).tree
            leaf = tree.conversation_leaf(tree.active_leaf)
            client = owner_client(create_app(root))
            points = len(timeline(tree, leaf))
            comps = [e.id for e in tree.entries if e.type == "compaction" and tree.parent.get(e.id)]
            leaves = sorted(tree.leaves(), key=lambda x: -len(tree.path(x)))[:2]
            t_line = median_ms(lambda: timeline(tree, leaf), args.runs)
            t_tab = median_ms(lambda: client.get(f"/s/{rel}/-/panel/context?node={leaf}", headers={"HX-Request": "true"}), args.runs)
            t_ba = median_ms(lambda: [before_after(tree, c) for c in comps], args.runs) / max(len(comps), 1)
            t_diff = median_ms(lambda: diff_contexts(tree, *leaves), args.runs) if len(leaves) == 2 else float("nan")
            size = len(client.get(f"/s/{rel}/-/panel/context?node={leaf}", headers={"HX-Request": "true"}).data)
            print(f"{f.name[:34]:34} {len(tree.entries):7} {len(tree.path(leaf)):5} {points:6} {t_line:9.0f} {t_tab:7.0f} {t_ba:13.0f} {t_diff:7.0f}"
                  f"   (tab {size / 1e6:.2f} MB{'' if t_tab <= TAB_GOAL_MS else f', over its {TAB_GOAL_MS} ms goal'})")
    if not BIG.exists():
        print(f"({BIG} is not there: `bench/run.py` makes it; the Context tab of its active leaf is the {TAB_GOAL_MS} ms goal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
