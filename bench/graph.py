"""Benchmarks of the graph (issues 9 and 13): cold pages under the node cap, clicks, and the
browser's own time for a selection change (see BENCHMARKS.md, "Graph").

    .venv/bin/python bench/graph.py [--runs 3] [--no-browser]

Inputs: bench/run.py's 100k file, and a session of 10,000 short side branches made with
`samplegen.many_branches_session`, both in the gitignored bench/data/. A measurement, not a
test: it prints figures against goals and never fails on a missed goal.
"""

from __future__ import annotations

import argparse
import gc
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))
sys.path.insert(0, str(BENCH_DIR))

from run import DATA_DIR, dataset_path, ensure_data  # noqa: E402

import samplegen  # noqa: E402
from webapp.web import graph  # noqa: E402
from webapp.web.app import create_app  # noqa: E402
from webapp.web.auth import owner_client  # noqa: E402

SVG_RE = re.compile(r"<svg.*?</svg>", re.S)
SEGMENT_RE = re.compile(r'<g id="(seg-e-[^"]+)" class="node segment turn-work')
NODE_RE = re.compile(r'<g id="e-([^"]+)" class="node')


def branches_file(n: int = 10_000) -> Path:
    path = DATA_DIR / f"branches{n // 1000}k.jsonl"
    if not path.exists():
        header, entries = samplegen.many_branches_session(n)
        DATA_DIR.mkdir(exist_ok=True)
        path.write_bytes(b"\n".join(orjson.dumps(x) for x in (header, *entries)) + b"\n")
    return path


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench_server(path: Path, runs: int) -> dict:
    """Cold page (fresh app), a click on a drawn node, and a click on a folded turn."""
    root = Path(tempfile.mkdtemp())
    shutil.copy(path, root / path.name)
    url = f"/s/{path.name}"
    colds, body = [], ""
    for _ in range(runs):
        gc.collect()
        client = owner_client(create_app(root))
        t = time.perf_counter()
        r = client.get(url)
        colds.append(time.perf_counter() - t)
        body = r.get_data(as_text=True)
    svg = SVG_RE.search(body).group(0)
    clicks, folded = click_times(client, url, svg)
    shutil.rmtree(root)
    return {
        "cold page (s)": statistics.median(colds),
        "SVG (MB)": len(svg.encode()) / 1e6,
        "nodes drawn": svg.count('class="node'),
        "click a drawn node (s)": statistics.median(clicks),
        "click a folded turn (s)": statistics.median(folded) if folded else float("nan"),
    }


def click_times(client, url: str, svg: str, nodes: int = 7, folds: int = 3) -> tuple[list, list]:
    """Times of clicks on `nodes` drawn nodes not clicked before, and on `folds` folded turns, on
    the page at `url` whose drawing is `svg` (the client has shown it)."""
    hx = {"HX-Request": "true"}
    clicks = []
    for node in NODE_RE.findall(svg)[5:5 + nodes]:
        t = time.perf_counter()
        r = client.get(f"{url}/-/panel/node?node={node}", headers=hx)
        clicks.append(time.perf_counter() - t)
        if r.status_code != 200 or 'id="node-panel"' not in r.get_data(as_text=True):
            raise RuntimeError(f"click on {node}: {r.status_code}")
    folded = []
    for seg in SEGMENT_RE.findall(svg)[:folds]:
        first = seg[len("seg-e-"):]
        folded.append(timed(lambda: client.get(f"{url}/-/graph?expand={first}", headers=hx)))
    return clicks, folded


SELECT_TIME = """async (id) => {
  // Browser time of a selection change: the click handler's own work, then the swap of the
  // panel and the overlay it applies (the network wait between the two is not counted).
  let swapStart = 0, swapTime = 0;
  const before = () => { swapStart = performance.now(); };
  const after = () => { swapTime = performance.now() - swapStart; };
  document.addEventListener("htmx:beforeSwap", before, { once: true });
  const done = new Promise((ok) => document.addEventListener("htmx:afterSettle", () => { after(); ok(); }, { once: true }));
  const a = document.getElementById(id).querySelector("a");
  const t = performance.now();
  a.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
  const clickTime = performance.now() - t;
  await done;
  return clickTime + swapTime;
}"""

KEY_TIME = """async () => {
  let swapStart = 0, swapTime = 0;
  document.addEventListener("htmx:beforeSwap", () => { swapStart = performance.now(); }, { once: true });
  const done = new Promise((ok) => document.addEventListener("htmx:afterSettle", () => { swapTime = performance.now() - swapStart; ok(); }, { once: true }));
  const t = performance.now();
  document.getElementById("graph").dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp", bubbles: true }));
  const keyTime = performance.now() - t;
  await done;
  return keyTime + swapTime;
}"""


def bench_browser() -> dict:
    """Everything drawn on the 3k-entry sample ("Expand all"), then clicks and arrow keys."""
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM_ARGS, SAMPLES, LiveServer

    root = Path(tempfile.mkdtemp()) / "s"
    shutil.copytree(SAMPLES, root)
    server = LiveServer(root)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            t = time.perf_counter()
            page.goto(server.url + server.rel("019c6579-1ae3-78f7-9da1-494c73cf256d") + "?collapse=off")
            page.wait_for_selector("#graph svg")
            load = time.perf_counter() - t
            ids = page.eval_on_selector_all("#graph g.node:not(.segment)", "gs => gs.map(g => g.id)")
            nodes = len(ids)
            clicks = [page.evaluate(SELECT_TIME, i) for i in ids[10:200:20]]
            page.locator("#graph").focus()
            keys = [page.evaluate(KEY_TIME) for _ in range(8)]
            browser.close()
    finally:
        server.stop()
    return {
        "expand-all page load (s)": load,
        "nodes drawn": nodes,
        "click: browser time (ms)": statistics.median(clicks),
        "arrow key: browser time (ms)": statistics.median(keys),
    }


GOALS = {
    "cold page (s)": 3.0, "SVG (MB)": 1.0, "click a drawn node (s)": 0.1, "click a folded turn (s)": 0.3,
    "click: browser time (ms)": 100.0, "arrow key: browser time (ms)": 100.0, "nodes drawn": graph.MAX_DRAWN,
}


def report(title: str, figures: dict) -> None:
    print(f"\n{title}")
    for k, v in figures.items():
        goal = GOALS.get(k)
        status = "" if goal is None else ("  met" if v <= goal else "  NOT met") + f" (goal <= {goal:g})"
        print(f"  {k:32s} {v:10.3f}{status}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args(argv)
    ensure_data(["100k"])
    report("100k entries (bench/run.py's file)", bench_server(dataset_path("100k"), args.runs))
    report("10,000 short side branches", bench_server(branches_file(), args.runs))
    if not args.no_browser:
        report("browser, 3k-entry sample, everything drawn (collapse=off)", bench_browser())
    return 0


if __name__ == "__main__":
    sys.exit(main())
