"""The scale table: every action against its goal at every size, in one table (`make bench`).

    PYTHONPATH=$PWD .venv/bin/python bench/scale.py [--runs 3] [--quick] [--big] [--only 10k 100k ...]

Columns: 10k entries (bench/lazy.py's file), 100k (bench/run.py's, 327 leaves), the ~204 MB file
(bench/growth.py's, 270k entries), 10,000 short side branches (bench/graph.py's) and, with `--big`,
~1.1 GB (bench/lazy.py's, 500k entries: cold page and RSS only). Inputs are made when missing; the
files are only read (they are linked into bench/data/scale-root/, a sessions root of their own),
the appends go to a copy. Each cell is a median of `--runs`, measured by those scripts' functions:
- cold session page, SVG and nodes drawn, server RSS ÷ file size: fresh processes (lazy.py);
- click a drawn node not clicked before, click a folded run: one server, the page shown (graph.py);
- Branches tab: a fresh server with the page's other tab shown first, nothing of it cached (compare.py);
- reload after one appended entry (a user message) and `session-tree append`'s own work, on a
  copy of the file (growth.py);
- `session-tree show FILE --json` ÷ a bare orjson parse, whole processes (lazy.py).
A measurement, not a test: it prints a table of figures against the issue's goals and never fails.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))
sys.path.insert(0, str(BENCH_DIR))

import compare  # noqa: E402
import graph  # noqa: E402
import growth  # noqa: E402
import lazy  # noqa: E402
import run  # noqa: E402

ROOT = run.DATA_DIR / "scale-root"  # hard links to the inputs, under names of their own
WORK = run.DATA_DIR / "scale-work"  # the copy that is appended to
SVG_RE = re.compile(r"<svg.*?</svg>", re.S)
HX = {"HX-Request": "true"}

COLUMNS = ["10k", "100k", "204 MB", "10,000 branches", "1 GB"]

# row -> (unit, goal per column: a number, or None for a figure without a goal)
ROWS = {
    "cold session page": ("s", {"10k": 2.0, "100k": 2.0, "204 MB": 2.0, "10,000 branches": 3.0, "1 GB": 8.0}),
    "cold page: SVG size": ("MB", dict.fromkeys(COLUMNS, 1.0)),
    "cold page: nodes drawn": ("", {}),
    "click a node not clicked before": ("s", dict.fromkeys(COLUMNS, 0.1)),
    "click a folded run": ("s", dict.fromkeys(COLUMNS, 0.3)),
    "Branches tab (nothing cached)": ("s", dict.fromkeys(COLUMNS, 0.3)),
    "reload after one appended entry": ("s", dict.fromkeys(COLUMNS, 0.3)),
    "`session-tree append`, own work": ("ms", dict.fromkeys(COLUMNS, 50.0)),
    "server RSS ÷ file size": ("×", {"204 MB": 1.0, "1 GB": 1.0}),  # goal from 100 MB up
    "`show --json` ÷ bare parse": ("×", {"10k": 2.0, "100k": 2.0, "204 MB": 2.0}),
}


def sources(names: list[str]) -> dict[str, Path]:
    """The input file of each column, made when missing."""
    made = {
        "10k": lambda: lazy.ensure("10k"),
        "100k": lambda: (run.ensure_data(["100k"]), run.dataset_path("100k"))[1],
        "204 MB": lambda: growth.ensure(270_000),
        "10,000 branches": graph.branches_file,
        "1 GB": lambda: lazy.ensure("1GB"),
    }
    return {name: made[name]() for name in names}


def linked(name: str, source: Path) -> Path:
    """`source` under the scale root (a hard link, renewed when the source was made anew)."""
    ROOT.mkdir(parents=True, exist_ok=True)
    path = ROOT / (name.replace(",", "").replace(" ", "-") + ".jsonl")
    if path.exists() and path.stat().st_ino != source.stat().st_ino:
        path.unlink()
    if not path.exists():
        os.link(source, path)
    return path


def measure(name: str, path: Path, runs: int) -> dict[str, float | None]:
    """Every row's figure for one column (None where a row was not measured or found nothing)."""
    size_mb = path.stat().st_size / 1e6
    cells: dict[str, float | None] = dict.fromkeys(ROWS)
    page = lazy.cold_page(ROOT, path, runs)
    if page["status"] != 200:
        raise RuntimeError(f"{name}: cold page answered {page['status']}")
    cells["cold session page"] = page["s"]
    cells["cold page: SVG size"] = page["svg_mb"]
    cells["cold page: nodes drawn"] = page["nodes"]
    cells["server RSS ÷ file size"] = page["rss_mb"] / size_mb
    if name == "1 GB":
        return cells

    from webapp.web.app import create_app

    from webapp.web.auth import owner_client

    url = "/s/" + path.name
    client = owner_client(create_app(ROOT))
    svg = SVG_RE.search(client.get(url).get_data(as_text=True)).group(0)
    clicks, folded = graph.click_times(client, url, svg, nodes=runs, folds=runs)
    cells["click a node not clicked before"] = statistics.median(clicks) if clicks else None
    cells["click a folded run"] = statistics.median(folded) if folded else None
    del client
    gc.collect()

    (tab, _cpu), _again = compare.request_times(path, "/-/panel/branches", runs, HX, warm_page=True)
    cells["Branches tab (nothing cached)"] = tab
    gc.collect()

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    try:
        copy = WORK / "s.jsonl"  # growth.reload_times asks for /s/s.jsonl
        shutil.copyfile(path, copy)
        client = owner_client(create_app(WORK))
        client.get("/s/s.jsonl")
        reload = growth.reload_times(client, copy, growth.one_entry, 100, runs, "one more message")
        cells["reload after one appended entry"] = statistics.median(reload)
        del client
        gc.collect()
        cells["`session-tree append`, own work"] = statistics.median(growth.append_own_times(copy, 200, runs)) * 1000
    finally:
        shutil.rmtree(WORK, ignore_errors=True)

    show, bare = lazy.show_times(path, runs)
    cells["`show --json` ÷ bare parse"] = show / bare
    return cells


def cell(row: str, column: str, value: float | None) -> str:
    unit, goals = ROWS[row]
    if value is None:
        return "none drawn" if row == "click a folded run" and column != "1 GB" else "–"
    if unit == "":
        return f"{value:,.0f}"
    text = {"s": f"{value:.2f} s" if value >= 1 else f"{value:.3f} s", "ms": f"{value:.1f} ms", "MB": f"{value:.2f} MB", "×": f"{value:.2f}×"}[unit]
    goal = goals.get(column)
    if goal is None:
        return text
    return f"{text} (≤ {goal:g}{'' if unit == '×' else ' ' + unit}: {'met' if value <= goal else '**NOT met**'})"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per cell, the median is shown (default 3)")
    ap.add_argument("--quick", action="store_true", help="one run per cell")
    ap.add_argument("--big", action="store_true", help="also the ~1.1 GB file (cold page and RSS)")
    ap.add_argument("--only", nargs="+", choices=COLUMNS, metavar="COLUMN", help=f"some of: {', '.join(COLUMNS)}")
    args = ap.parse_args(argv)
    runs = 1 if args.quick else args.runs
    names = args.only or [c for c in COLUMNS if c != "1 GB" or args.big]
    info = run.machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores; {info['platform']}; Python {info['python']}, "
          f"orjson {info['orjson']}; {info['dot']}", flush=True)
    before = load()
    print(f"load average before: {before}; medians of {runs} run(s) per cell", flush=True)
    paths = {name: linked(name, source) for name, source in sources(names).items()}
    table = {}
    for name, path in paths.items():
        t = time.perf_counter()
        print(f"  {name}: {path.stat().st_size / 1e6:.0f} MB ...", flush=True)
        table[name] = measure(name, path, runs)
        print(f"  {name}: done in {time.perf_counter() - t:.0f} s", flush=True)
    print(f"\n| action | {' | '.join(paths)} |\n|---|{'---|' * len(paths)}")
    for row in ROWS:
        print(f"| {row} | {' | '.join(cell(row, n, table[n][row]) for n in paths)} |")
    print(f"\nload average before: {before}; after: {load()} (1, 5, 15 min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
