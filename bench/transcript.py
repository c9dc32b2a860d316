"""Benchmarks of the transcript, search and export (issue #8) against their goals.

    .venv/bin/python bench/transcript.py [--runs N]

Uses the inputs of bench/run.py (generated into bench/data/ by `webapp.samples.synthetic_session`).
Times are server times through the real app (Flask's test client, no network), medians of
several runs, with the session already open (opening a file is bench/run.py's business): the
first screen of the Transcript tab, a page more, search once the index is built (and the build
itself), and the whole-session export. It prints figures against goals and never fails.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.run import dataset_path, ensure_data, timed  # noqa: E402
from webapp.core.session import Session  # noqa: E402
from webapp.web import search  # noqa: E402
from webapp.web.app import create_app  # noqa: E402

GOALS = {"first_screen_s": 0.3, "search_s": 0.5, "export_s": 3.0}
HX = {"HX-Request": "true"}


def serve_copy(name: str, root: Path):
    """An app over a folder holding a copy of the dataset; the session opened once."""
    (root / "--bench--").mkdir(parents=True)
    shutil.copy(dataset_path(name), root / "--bench--" / f"{name}.jsonl")
    app = create_app(root)
    client = app.test_client()
    rel = f"--bench--/{name}.jsonl"
    tree = app.extensions["session_store"].session(rel).tree
    return client, rel, tree


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
                t, _ = timed(lambda: get(client, url, HX), args.runs)
                rows.append((f"transcript first screen, {where}", name, t, "first_screen_s"))
            url = f"/s/{rel}/-/transcript?node={leaf}&start=0"
            t, _ = timed(lambda: get(client, url, HX), args.runs)
            rows.append(("transcript next page (scrolling)", name, t, "first_screen_s"))
            if name == "100k":
                path = Path(tmp) / name / "--bench--" / f"{name}.jsonl"
                t0 = time.perf_counter()
                search.session_index(path, tree)
                rows.append(("search index build (once per file)", name, time.perf_counter() - t0, None))
                for word in ("currency", "zzzz-not-there", "the"):
                    url = f"/s/{rel}/-/panel/search?q={word}"
                    t, _ = timed(lambda: get(client, url, HX), args.runs)
                    rows.append((f"search “{word}”, index built", name, t, "search_s"))
                t0 = time.perf_counter()
                get(client, "/?q=currency")
                rows.append(("index page content filter, first (indexes files)", name, time.perf_counter() - t0, None))
                t, _ = timed(lambda: get(client, "/?q=currency"), args.runs)
                rows.append(("index page content filter, again", name, t, "search_s"))
        client, rel, tree = serve_copy("10k", Path(tmp) / "10k")
        size = []
        t, _ = timed(lambda: size.append(len(get(client, f"/s/{rel}/export"))), max(3, args.runs // 2))
        rows.append((f"export whole session ({size[-1] / 1e6:.1f} MB, {len(tree.leaves())} branches)", "10k", t, "export_s"))
        n_entries = len(Session.open(dataset_path("10k")).tree.entries)
    print(f"\n{'measure':<58} {'data':<6} {'time':>9}  goal")
    for label, data, t, goal in rows:
        g = GOALS.get(goal)
        verdict = "" if g is None else f"≤ {g:g} s {'met' if t <= g else 'MISSED'}"
        print(f"{label:<58} {data:<6} {t * 1000:>7.0f} ms  {verdict}")
    print(f"\n(10k dataset: {n_entries} entries)")


if __name__ == "__main__":
    main()
