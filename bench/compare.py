"""Benchmark of branch comparison: per-leaf figures from one walk of the
tree, the "compare every leaf" page, the Branches tab and a comparison page.

    .venv/bin/python bench/compare.py [--quick]

Inputs: the 100k-entry session of bench/run.py (327 leaves) and a 10,000-leaf session made here
with the same generator (`samplegen.synthetic_session`), both in bench/data/ (gitignored).
Server times are whole requests through the real app (Flask test client) with the session
already loaded, so they count the figures, the views and the templates, not reading the file.
Every figure is a median; this prints figures against goals and never fails.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import run  # noqa: E402  (bench/run.py: the data generator and its inputs)

import samplegen  # noqa: E402
from webapp.core.context import build_context  # noqa: E402
from webapp.core.leaf_figures import leaf_figures  # noqa: E402
from webapp.core.session import Session  # noqa: E402
from webapp.core.tokens import context_tokens  # noqa: E402

LEAVES_10K = dict(n_entries=250_000, seed=11, branches=10_000, tool_result_sizes=(60, 400))
GOALS = {  # seconds
    "leaf figures, one walk": {"100k": 0.3, "leaves10k": 1.0},
    "compare every leaf (page)": {"100k": 1.0, "leaves10k": 1.0},
    "Branches tab (fragment)": {"100k": 0.3, "leaves10k": 1.0},
}


def ensure_leaves10k() -> Path:
    path = run.DATA_DIR / "compare-leaves10k.jsonl"
    stamp = path.with_suffix(".json")
    spec = {**LEAVES_10K, "tool_result_sizes": list(LEAVES_10K["tool_result_sizes"]), "generator": run.generator_hash()}
    if path.exists() and stamp.exists() and json.loads(stamp.read_text()) == spec:
        return path
    t = time.perf_counter()
    header, entries = samplegen.synthetic_session(**LEAVES_10K)
    samplegen.write_jsonl(path, header, entries)
    stamp.write_text(json.dumps(spec))
    print(f"generated {path.name}: {len(entries)} entries, {path.stat().st_size / 1e6:.0f} MB "
          f"in {time.perf_counter() - t:.0f} s", flush=True)
    return path


class Clock:
    """Wall time and this process's CPU time of a block: on a machine other work loads, the CPU
    time is what the code itself costs, the wall time what a user would have waited."""

    def __enter__(self):
        gc.collect()
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def median_time(fn, runs: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of `fn()`."""
    walls, cpus = [], []
    for _ in range(runs):
        with Clock() as c:
            fn()
        walls.append(c.wall)
        cpus.append(c.cpu)
    return statistics.median(walls), statistics.median(cpus)


def request_times(path: Path, url_suffix: str, runs: int, headers=None, warm_page: bool = False):
    """Median (wall, CPU) of the first request, with nothing of the comparison cached yet but the
    session loaded (and, with `warm_page`, another tab of its page shown first: the Branches tab is
    clicked on a page already open), and the median wall time of the same request again."""
    from webapp.web.app import create_app
    from webapp.web.auth import owner_client

    url = "/s/" + path.name + url_suffix
    walls, cpus = [], []
    for _ in range(runs):
        gc.collect()
        app = create_app(path.parent)
        client = owner_client(app)
        if warm_page:  # another tab first: the graph layout is built and cached, as on a page shown
            client.get("/s/" + path.name + "/-/panel/summaries", headers={"HX-Request": "true"})
        else:
            app.extensions["session_store"].session(path.name).tree  # noqa: B018 - loaded beforehand
        with Clock() as c:
            response = client.get(url, headers=headers or {})
        if response.status_code != 200:
            raise RuntimeError(f"GET {url}: {response.status_code}")
        walls.append(c.wall)
        cpus.append(c.cpu)
    again, _ = median_time(lambda: client.get(url, headers=headers or {}), runs)
    return (statistics.median(walls), statistics.median(cpus)), again


def bench(name: str, path: Path, runs: int) -> list[tuple]:
    tree = Session.open(path).tree
    leaves = tree.leaves()
    rows = []
    tree.leaves()  # found once per tree, by the tree
    walk = median_time(lambda: leaf_figures(tree), runs)
    rows.append(("leaf figures, one walk", name, walk, f"{len(leaves)} leaves, {len(tree.entries)} entries"))
    if len(leaves) < 1000:  # what the Branches tab did before: a context per leaf
        before = median_time(lambda: [context_tokens(build_context(tree, leaf)) for leaf in leaves], 1)
        rows.append(("a context per leaf (before)", name, before, "for comparison only"))
    page, again = request_times(path, "/compare/all", runs)
    rows.append(("compare every leaf (page)", name, page, f"again (figures cached): {again:.3f} s; first 500 rows"))
    if len(leaves) > 500:
        full, again = request_times(path, "/compare/all?all=1", 1)
        rows.append(("compare every leaf, all rows", name, full, f"{len(leaves)} rows of HTML; again {again:.3f} s"))
    tab, again = request_times(path, "/-/panel/branches", runs, {"HX-Request": "true"}, warm_page=True)
    rows.append(("Branches tab (fragment)", name, tab, f"another tab shown before; again (figures cached): {again:.3f} s"))
    seven = ",".join(sorted(leaves, key=lambda leaf: tree.by_id[leaf].line)[-7:])
    cmp, again = request_times(path, f"/compare?ids={seven}", runs)
    rows.append(("compare page, 7 branches", name, cmp, f"the 7 latest leaves; again {again:.3f} s"))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run per figure instead of three")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else 3
    run.DATA_DIR.mkdir(exist_ok=True)
    run.ensure_data(["100k"])
    inputs = {"100k": run.dataset_path("100k"), "leaves10k": ensure_leaves10k()}
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print("| measure | session | wall | CPU | goal | met (CPU / wall) | detail |\n|---|---|---|---|---|---|---|")
    for name, path in inputs.items():
        for measure, size, (wall, cpu), detail in bench(name, path, runs):
            goal = GOALS.get(measure, {}).get(size)
            met = "" if goal is None else " / ".join("yes" if x <= goal else "no" for x in (cpu, wall))
            print(f"| {measure} | {size} | {wall:.3f} s | {cpu:.3f} s | {'' if goal is None else f'≤ {goal} s'} "
                  f"| {met} | {detail} |", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
