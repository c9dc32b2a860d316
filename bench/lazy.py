"""Lazy entries: what opening a session costs in time and memory, against a bare parse.

    PYTHONPATH=$PWD .venv/bin/python bench/lazy.py [--runs 3] [--big] [--only NAME ...] [--project DIR]

Files (made by `samplegen.synthetic_session`, kept in bench/data/): 10k entries, 100k, the
~200 MB one of bench/growth.py (270k entries) and, with `--big`, ~1.1 GB (500k entries with long
tool results), plus bench/hostile.py's 1e6 tiny lines. Figures, each from fresh processes:
- `session-tree show FILE --json` as a whole process ÷ a whole process that parses every line
  with orjson and keeps nothing (goal ≤ 2×);
- the cold session page: time of the request, RSS of the process after it (and of the bare app
  before it), RSS ÷ file size (goal ≤ 1× from 100 MB up; ≤ 8 s at 1 GB);
- the core read of 1e6 tiny lines: `Session.open(...).tree` in-process, time and RSS.
`--project` measures the code of another checkout (e.g. main, for a before/after) on the same files.
A measurement, not a test: it prints figures against the goals and never fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
CODE_DIR = PROJECT_DIR  # the code measured (--project)
DATA_DIR = BENCH_DIR / "data"
ROOT = DATA_DIR / "lazy-root"  # a sessions root of its own: the page URLs name files in it
sys.path.insert(0, str(PROJECT_DIR))
sys.path.insert(0, str(BENCH_DIR))

FILES = {  # name -> synthetic_session arguments
    "10k": dict(n_entries=10_000, seed=208),
    "100k": dict(n_entries=100_000, seed=208),
    "204MB": dict(n_entries=270_000, seed=208),  # the file of bench/growth.py
    "1GB": dict(n_entries=500_000, seed=208, tool_result_sizes=(1000, 48_000)),
}
SHOW_GOAL, RSS_GOAL, BIG_PAGE_GOAL = 2.0, 1.0, 8.0

BARE = """
import sys, orjson
with open(sys.argv[1], "rb") as f:
    for line in f:
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
"""

PAGE = """
import json, re, resource, sys, time
sys.path.insert(0, sys.argv[1])
from webapp.web.app import create_app
from webapp.web.auth import owner_client
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1e6
client = owner_client(create_app(sys.argv[2]))
app_mb = rss()
t = time.perf_counter()
r = client.get(sys.argv[3])
took = time.perf_counter() - t
svg = re.search(r"<svg.*?</svg>", r.get_data(as_text=True), re.S)
svg = svg.group(0) if svg else ""
print(json.dumps({"status": r.status_code, "s": took, "app_mb": app_mb, "rss_mb": rss(),
                  "svg_mb": len(svg.encode()) / 1e6, "nodes": svg.count('class="node'),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

CORE = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from webapp.core.session import Session
t = time.perf_counter()
tree = Session.open(sys.argv[2]).tree
took = time.perf_counter() - t
with open("/proc/self/statm") as f:
    rss = int(f.read().split()[1]) * 4096 / 1e6
print(json.dumps({"s": took, "entries": len(tree.entries), "rss_mb": rss,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def ensure(name: str) -> Path:
    import samplegen

    spec = FILES[name]
    path = ROOT / f"lazy-{name}.jsonl"
    growth = DATA_DIR / "growth-270000.jsonl"  # the same file as bench/growth.py's: share it
    if not path.exists() and name == "204MB" and growth.exists():
        ROOT.mkdir(parents=True, exist_ok=True)
        os.link(growth, path)
    if not path.exists():
        t = time.perf_counter()
        header, items = samplegen.synthetic_session(**spec)
        samplegen.write_jsonl(path, header, items)
        del items
        print(f"generated {path.name}: {path.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - t:.0f} s", flush=True)
    return path


def wall(cmd: list[str], runs: int) -> float:
    """Median wall time of `cmd` as a whole process."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True, env={**os.environ, "PYTHONPATH": str(CODE_DIR)})
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def child(code: str, args: list[str], runs: int) -> dict:
    out = []
    for _ in range(runs):
        r = subprocess.run([sys.executable, "-c", code, str(CODE_DIR), *args], capture_output=True, text=True, check=True)
        out.append(json.loads(r.stdout.strip().splitlines()[-1]))
    return {k: statistics.median(o[k] for o in out) if k != "peak_mb" else max(o[k] for o in out) for k in out[0]}


def show_times(path: Path, runs: int) -> tuple[float, float]:
    """Median wall times of `session-tree show FILE --json` and of a bare parse, whole processes."""
    exe = Path(sys.executable).with_name("session-tree")
    bare = wall([sys.executable, "-c", BARE, str(path)], runs)
    show = wall([str(exe), "show", str(path), "--json"], runs)
    return show, bare


def show_ratio(path: Path, runs: int) -> None:
    show, bare = show_times(path, runs)
    ratio = show / bare
    print(f"  show --json {show:6.2f} s, bare parse {bare:5.2f} s: {ratio:4.1f}×  "
          f"(goal ≤ {SHOW_GOAL}×: {'met' if ratio <= SHOW_GOAL else 'NOT met'})", flush=True)


def cold_page(root: Path, path: Path, runs: int) -> dict:
    """The session page of `path` (under the sessions root `root`) in fresh processes: medians of
    its time, the RSS before and after it, the SVG's size and nodes; the highest peak RSS."""
    return child(PAGE, [str(root), "/s/" + path.relative_to(root).as_posix()], runs)


def page(path: Path, runs: int, size_mb: float, goal_s: float | None) -> None:
    m = cold_page(ROOT, path, runs)
    ratio = m["rss_mb"] / size_mb
    line = (f"  cold page {m['s']:6.2f} s (status {m['status']}), RSS {m['rss_mb']:5.0f} MB after it "
            f"(bare app {m['app_mb']:.0f} MB, peak {m['peak_mb']:.0f} MB): {ratio:4.2f}× the file")
    if size_mb >= 100:
        line += f" (goal ≤ {RSS_GOAL}×: {'met' if ratio <= RSS_GOAL else 'NOT met'})"
    if goal_s is not None:
        line += f"; time goal ≤ {goal_s} s: {'met' if m['s'] <= goal_s else 'NOT met'}"
    print(line, flush=True)


def tiny(runs: int) -> None:
    import hostile

    path = hostile.ensure(1_000_000)
    m = child(CORE, [str(path)], runs)
    print(f"1e6 tiny lines ({path.stat().st_size / 1e6:.0f} MB): core read + tree {m['s']:.2f} s, "
          f"{m['entries']:,.0f} entries, RSS {m['rss_mb']:.0f} MB (peak {m['peak_mb']:.0f} MB)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="also the ~1.1 GB file (500k entries)")
    ap.add_argument("--only", nargs="*", help=f"some of {', '.join([*FILES, 'tiny'])}")
    ap.add_argument("--project", type=Path, default=PROJECT_DIR, help="the checkout whose code is measured")
    args = ap.parse_args()
    global CODE_DIR
    CODE_DIR = args.project.resolve()
    names = args.only or [n for n in [*FILES, "tiny"] if n != "1GB" or args.big]
    print(f"code: {CODE_DIR}; load: {os.getloadavg()[0]:.2f}; medians of {args.runs} fresh processes", flush=True)
    for name in names:
        if name == "tiny":
            tiny(args.runs)
            continue
        path = ensure(name)
        size_mb = path.stat().st_size / 1e6
        print(f"{name}: {FILES[name]['n_entries']:,} entries, {size_mb:.0f} MB", flush=True)
        if name != "1GB":
            show_ratio(path, args.runs)
        page(path, args.runs, size_mb, BIG_PAGE_GOAL if name == "1GB" else None)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
