"""The tree and the cold page of a big session, part by part: what each costs in time and memory.

    PYTHONPATH=$PWD .venv/bin/python bench/tree_page.py [--runs 3] [--file lazy-204MB.jsonl] [--project DIR]

In one fresh process per run, on a file of bench/lazy.py's sessions root (bench/data/lazy-root):
the file read (`Session.open` + the log), then the tree (`SessionTree`, then `leaves()`), then the
session page request of a fresh app that serves that open session; RSS (/proc/self/statm) is read
between the steps, so each figure is what that step adds and keeps. The tree is also built
again (min of 3) to time it apart from the first build's allocations. `--project` measures the
code of another checkout (e.g. main, for a before/after) on the same file. A measurement, not a
test: it prints figures and never fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR / "data" / "lazy-root"

RUN = """
import gc, json, sys, time
sys.path.insert(0, sys.argv[1])
from webapp.core.session import Session
from webapp.core.tree import SessionTree
from webapp.web.app import create_app
from webapp.web.auth import owner_client

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1e6

app = create_app(sys.argv[2])
store = app.extensions["session_store"]
path = store.resolve(sys.argv[3])
out = {"app_mb": rss()}
t = time.perf_counter()
session = Session.open(path)
session.log
out["read_s"], out["read_mb"] = time.perf_counter() - t, rss() - out["app_mb"]
before = rss()
t = time.perf_counter()
tree = session.tree
out["tree_s"] = time.perf_counter() - t
t = time.perf_counter()
tree.leaves()
out["leaves_s"] = time.perf_counter() - t
out["tree_mb"] = rss() - before
store._sessions.put(path, session)  # the page is served from this open session
before = rss()
t = time.perf_counter()
status = owner_client(app).get("/s/" + sys.argv[3]).status_code
out["page_s"], out["page_mb"], out["status"] = time.perf_counter() - t, rss() - before, status
out["rss_mb"] = rss()
again = []
for _ in range(3):
    gc.collect()
    t = time.perf_counter()
    SessionTree(session.log)
    again.append(time.perf_counter() - t)
out["tree_again_s"] = min(again)
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--file", default="lazy-204MB.jsonl", help="a file of bench/data/lazy-root (bench/lazy.py makes them)")
    ap.add_argument("--project", type=Path, default=BENCH_DIR.parent, help="the checkout whose code is measured")
    args = ap.parse_args()
    if not (ROOT / args.file).exists():
        sys.exit(f"{ROOT / args.file}: missing (bench/lazy.py makes it)")
    env = {**os.environ, "PYTHONPATH": str(args.project)}
    runs = [json.loads(subprocess.run([sys.executable, "-c", RUN, str(args.project), str(ROOT), args.file], env=env,
                                      check=True, capture_output=True, text=True).stdout) for _ in range(args.runs)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    size = (ROOT / args.file).stat().st_size / 1e6
    print(f"code: {args.project}; load: {os.getloadavg()[0]:.2f}; {args.file} ({size:.0f} MB); medians of {args.runs}")
    print(f"  read (open + log)        {med['read_s']:6.2f} s  +{med['read_mb']:5.1f} MB")
    print(f"  tree (built, then again) {med['tree_s']:6.3f} s / {med['tree_again_s']:.3f} s  +{med['tree_mb']:5.1f} MB"
          f"  (leaves {med['leaves_s']:.3f} s)")
    print(f"  cold page after it       {med['page_s']:6.3f} s  +{med['page_mb']:5.1f} MB  (status {runs[0]['status']})")
    print(f"  RSS after the page       {med['rss_mb']:6.0f} MB = {med['rss_mb'] / size:.2f}x the file"
          f" (bare app {med['app_mb']:.0f} MB)")


if __name__ == "__main__":
    main()
