"""Benchmarks of the transcript, search and export against their goals.

    .venv/bin/python bench/transcript.py [--runs N]

Uses the inputs of bench/run.py (generated into bench/data/ by `samplegen.synthetic_session`).
Times are server times through the real app (Flask's test client, no network), medians of
several runs, with the session already open (opening a file is bench/run.py's business): the
first screen of the Transcript tab, a page more, search once the index is built (and the build
itself), and the whole-session export. It prints figures against goals and never fails.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.run import dataset_path, ensure_data  # noqa: E402
from webapp.core.session import Session  # noqa: E402
from webapp.web import search  # noqa: E402
from webapp.web.app import create_app  # noqa: E402
from webapp.web.auth import owner_client  # noqa: E402

GOALS = {"first_screen_s": 0.3, "search_s": 0.5, "export_s": 3.0}
HX = {"HX-Request": "true"}


def serve_copy(name: str, root: Path):
    """An app over a folder holding a copy of the dataset; the session opened once."""
    (root / "--bench--").mkdir(parents=True)
    shutil.copy(dataset_path(name), root / "--bench--" / f"{name}.jsonl")
    app = create_app(root)
    client = owner_client(app)
    rel = f"--bench--/{name}.jsonl"
    tree = app.extensions["session_store"].session(rel).tree
    return client, rel, tree


def _cpu() -> float:
    """CPU seconds of this process and its finished children (`dot`): on a shared machine the
    wall time says how long a person waits, the CPU time what the work costs."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(fn, runs: int) -> tuple[float, float]:
    """Median wall and median CPU seconds of `fn()`."""
    walls, cpus = [], []
    for _ in range(runs):
        gc.collect()
        w, c = time.perf_counter(), _cpu()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(_cpu() - c)
    return statistics.median(walls), statistics.median(cpus)


def get(client, url: str, headers=None) -> bytes:
    r = client.get(url, headers=headers or {})
    assert r.status_code == 200, (url, r.status_code)
    return r.data


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    ensure_data(["10k", "100k", "deep"])
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (other helpers share this machine)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("100k", "deep"):
            client, rel, tree = serve_copy(name, Path(tmp) / name)
            leaf = tree.conversation_leaf(tree.active_leaf)
            mid = tree.path(leaf)[len(tree.path(leaf)) // 2].id
            for where, node in (("active leaf", leaf), ("middle of the path", mid)):
                url = f"/s/{rel}/-/panel/transcript?node={node}"
                rows.append((f"transcript first screen, {where}", name, *timed(lambda: get(client, url, HX), args.runs), "first_screen_s"))
            url = f"/s/{rel}/-/transcript?node={leaf}&start=0"
            rows.append(("transcript next page (scrolling)", name, *timed(lambda: get(client, url, HX), args.runs), "first_screen_s"))
            if name == "100k":
                path = Path(tmp) / name / "--bench--" / f"{name}.jsonl"
                rows.append(("search index build (once per file)", name, *timed(lambda: search.session_index(path, tree), 1), None))
                for word in ("currency", "zzzz-not-there", "the"):
                    url = f"/s/{rel}/-/panel/search?q={word}"
                    rows.append((f"search “{word}”, index built", name, *timed(lambda: get(client, url, HX), args.runs), "search_s"))
                rows.append(("index page content filter, first (indexes files)", name, *timed(lambda: get(client, "/?q=currency"), 1), None))
                rows.append(("index page content filter, again", name, *timed(lambda: get(client, "/?q=currency"), args.runs), "search_s"))
        client, rel, tree = serve_copy("10k", Path(tmp) / "10k")
        size = []
        t = timed(lambda: size.append(len(get(client, f"/s/{rel}/export"))), max(3, args.runs // 2))
        rows.append((f"export whole session ({size[-1] / 1e6:.1f} MB, {len(tree.leaves())} branches)", "10k", *t, "export_s"))
        n_entries = len(Session.open(dataset_path("10k")).tree.entries)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n{'measure':<52} {'data':<5} {'wall':>9} {'cpu':>9}  goal (on wall time)")
    for label, data, wall, cpu, goal in rows:
        g = GOALS.get(goal)
        verdict = "" if g is None else f"≤ {g:g} s {'met' if wall <= g else 'MISSED'}"
        print(f"{label:<52} {data:<5} {wall * 1000:>6.0f} ms {cpu * 1000:>6.0f} ms  {verdict}")
    print(f"\n(10k dataset: {n_entries} entries)")


if __name__ == "__main__":
    main()
