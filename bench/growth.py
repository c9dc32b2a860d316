"""Incremental growth: what one appended entry costs on a 200 MB session.

    PYTHONPATH=$PWD .venv/bin/python bench/growth.py [--entries 270000] [--runs 5]

Measures, on a ~200 MB file made by `samplegen.synthetic_session` (kept in bench/data/):
the tree update after one append (grown from the previous tree, and, for comparison, built anew),
the same for the graph's drawn tree,
the session page reloaded after one append (whole request through the app, warm server): a user
message (a new node, laid out by `dot`) and one more step of a turn (the drawing keeps its shape
and is changed in place), and
`session-tree append` of one entry: its own work in-process and as a whole process. A measurement,
not a test: it prints figures against the goals of the issue and never fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / "data"
sys.path.insert(0, str(PROJECT_DIR))

import orjson  # noqa: E402

import samplegen  # noqa: E402
from webapp.core.session import Session  # noqa: E402
from webapp.core.tree import SessionTree  # noqa: E402
from webapp.web import graph  # noqa: E402
from webapp.web.graph import drawn  # noqa: E402

GOALS = {"reload_s": 0.3, "append_own_ms": 50.0}


def ensure(entries: int) -> Path:
    path = DATA_DIR / f"growth-{entries}.jsonl"
    if not path.exists():
        t = time.perf_counter()
        header, items = samplegen.synthetic_session(n_entries=entries, seed=208)
        samplegen.write_jsonl(path, header, items)
        print(f"generated {path.name}: {path.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - t:.0f} s", flush=True)
    return path


def one_entry(i: int) -> dict:
    return {"type": "message", "message": {"role": "user", "content": f"one more message {i}"}}


def one_step(i: int) -> dict:
    return {"type": "message", "message": {"role": "assistant", "content": f"one more step {i}"}}


def reload_times(client, path: Path, make, first: int, runs: int, text: str) -> list[float]:
    """The session page reloaded after each of `runs` appends of `make(i)`, each page checked to
    show the new entry's "`text` i"."""
    times = []
    for i in range(first, first + runs):
        Session.open_for_append(path).append(make(i))
        t = time.perf_counter()
        r = client.get("/s/s.jsonl")
        times.append(time.perf_counter() - t)
        assert r.status_code == 200 and f"{text} {i}" in r.get_data(as_text=True)
    return times


def append_own_times(path: Path, first: int, runs: int) -> list[float]:
    """Times of `session-tree append`'s own work (open for append, append one entry), in-process."""
    own = []
    for i in range(first, first + runs):
        t = time.perf_counter()
        Session.open_for_append(path).append(one_entry(i))
        own.append(time.perf_counter() - t)
    return own


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=270_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    source = ensure(args.entries)
    work_dir = DATA_DIR / "growth-work"
    shutil.rmtree(work_dir, ignore_errors=True)
    work_dir.mkdir()
    path = work_dir / "s.jsonl"
    shutil.copyfile(source, path)
    size_mb = path.stat().st_size / 1e6
    print(f"file: {size_mb:.0f} MB, {args.entries:,} entries; load: {os.getloadavg()[0]:.2f}", flush=True)

    # the tree after one append: grown from the previous one, and built anew; the same for the
    # graph's drawn tree (its chains and per-chain figures)
    session = Session.open(path)
    graph.drawn_tree(session.tree)
    grow, rebuild, drawn_grow, drawn_anew = [], [], [], []
    for i in range(args.runs):
        Session.open_for_append(path).append(one_entry(i))
        t = time.perf_counter()
        tree = session.tree  # reads the new line and grows the tree
        grow.append(time.perf_counter() - t)
        t = time.perf_counter()
        graph.drawn_tree(tree)
        drawn_grow.append(time.perf_counter() - t)
        t = time.perf_counter()
        drawn._drawn_anew(tree)
        drawn_anew.append(time.perf_counter() - t)
        t = time.perf_counter()
        SessionTree(session.log)
        rebuild.append(time.perf_counter() - t)
        assert tree.active_leaf == session.log.active_leaf

    # the session page reloaded after one append, through the app, on a warm server
    from webapp.web.app import create_app
    from webapp.web.auth import owner_client

    client = owner_client(create_app(work_dir))
    t = time.perf_counter()
    assert client.get("/s/s.jsonl").status_code == 200
    cold = time.perf_counter() - t
    reload_ = reload_times(client, path, one_entry, 100, args.runs, "one more message")

    # one more step of the turn the agent is in: the drawing keeps its shape (no `dot`)
    for i in range(3):  # steps enough to fold the turn's work into one node
        Session.open_for_append(path).append(one_step(i))
        assert client.get("/s/s.jsonl").status_code == 200
    steps = reload_times(client, path, one_step, 10, args.runs, "one more step")

    # session-tree append: its own work, then as a whole process
    own = append_own_times(path, 200, args.runs)
    cli = Path(sys.executable).with_name("session-tree")
    proc = []
    env = {**os.environ, "PYTHONPATH": str(PROJECT_DIR)}
    for i in range(args.runs):
        t = time.perf_counter()
        subprocess.run([cli, "append", path], input=orjson.dumps(one_entry(300 + i)), check=True,
                       capture_output=True, env=env)
        proc.append(time.perf_counter() - t)
    bare = []
    for _ in range(args.runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import webapp.cli"], check=True, env=env)
        bare.append(time.perf_counter() - t)

    rows = [
        ("tree after one append, grown", median(grow) * 1000, "ms", None),
        ("tree after one append, built anew (before)", median(rebuild) * 1000, "ms", None),
        ("graph's drawn tree after one append, grown", median(drawn_grow) * 1000, "ms", None),
        ("graph's drawn tree, made anew (cold)", median(drawn_anew) * 1000, "ms", None),
        ("session page, cold", cold, "s", None),
        ("page reloaded after a user message (new node)", median(reload_), "s", GOALS["reload_s"]),
        ("page reloaded after a step of a turn (no dot)", median(steps), "s", GOALS["reload_s"]),
        ("session-tree append, own work", median(own) * 1000, "ms", GOALS["append_own_ms"]),
        ("session-tree append, whole process", median(proc), "s", None),
        ("  of which interpreter + imports", median(bare), "s", None),
    ]
    print(f"\n{'figure':48} {'value':>10}  goal")
    for name, value, unit, goal in rows:
        verdict = "" if goal is None else f"≤ {goal} {unit}: {'met' if value <= goal else 'NOT met'}"
        print(f"{name:48} {value:>8.3f} {unit:2}  {verdict}")
    print(f"\nmedians of {args.runs}; load average after: {os.getloadavg()[0]:.2f}")
    shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
