"""1e6 tiny lines: the cold session page and the index page, in time and memory.

    PYTHONPATH=$PWD .venv/bin/python bench/hostile.py [--lines 1000000] [--runs 3]

The file is a chain of one million tiny entries (`{"type":"m","id":...,"parentId":...}`, about
50 bytes each) under a sessions root of its own in bench/data/. Each run is a fresh process that
builds the app and asks for one page, so every figure is cold: wall time of the request and the
peak RSS of the process. A measurement, not a test: it prints figures against the goals
(≤ 5 s, ≤ 1 GB) and never fails.
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
PROJECT_DIR = BENCH_DIR.parent
ROOT = BENCH_DIR / "data" / "hostile-root"
GOAL_S, GOAL_MB = 5.0, 1024

CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from webapp.web.app import create_app
from webapp.web.auth import owner_client
client = owner_client(create_app(sys.argv[2]))
t = time.perf_counter()
r = client.get(sys.argv[3])
took = time.perf_counter() - t
print(json.dumps({"status": r.status_code, "s": took, "bytes": len(r.data),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def ensure(lines: int) -> Path:
    path = ROOT / "tiny" / f"tiny-{lines}.jsonl"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        f.write('{"type":"session","version":3,"id":"tiny","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tiny"}\n')
        prev = "null"
        for i in range(lines):
            f.write(f'{{"type":"m","id":"{i:x}","parentId":{prev}}}\n')
            prev = f'"{i:x}"'
    return path


def measure(url: str, runs: int) -> dict:
    out = []
    for _ in range(runs):
        r = subprocess.run([sys.executable, "-c", CHILD, str(PROJECT_DIR), str(ROOT), url],
                           capture_output=True, text=True, check=True)
        out.append(json.loads(r.stdout.strip().splitlines()[-1]))
    return {"status": out[0]["status"], "s": statistics.median(o["s"] for o in out),
            "rss_mb": max(o["rss_mb"] for o in out), "bytes": out[0]["bytes"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    path = ensure(args.lines)
    rel = path.relative_to(ROOT).as_posix()
    print(f"file: {args.lines:,} tiny lines, {path.stat().st_size / 1e6:.0f} MB; load: {os.getloadavg()[0]:.2f}")
    print(f"{'request':28} {'status':>6} {'time':>8} {'peak RSS':>10} {'response':>10}  goal ≤ {GOAL_S} s, ≤ {GOAL_MB} MB")
    for name, url in (("index page, cold", "/"), ("session page, cold", f"/s/{rel}")):
        m = measure(url, args.runs)
        met = "met" if m["s"] <= GOAL_S and m["rss_mb"] <= GOAL_MB else "NOT met"
        print(f"{name:28} {m['status']:>6} {m['s']:>7.2f}s {m['rss_mb']:>8.0f}MB {m['bytes'] / 1e3:>8.0f}kB  {met}")
    print(f"medians of {args.runs} fresh processes (peak RSS: the largest); load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
