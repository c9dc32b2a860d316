"""Benchmark of the compaction bands: the browser's time for a selection change in the
Context tab, where every change redraws the bands of the new path, on the 3k-entry sample with
everything drawn ("Expand all"), against the same change in the Node tab (no bands).

    .venv/bin/python bench/bands.py [--clicks 10]

Same measure as bench/graph.py (Performance API around the click or key handler, then the panel
swap and the overlay it applies; the network wait is not counted). Each step waits for the panel
of its entry before the next; a key onto an entry folded in a turn draws the graph again and is
counted apart. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))
sys.path.insert(0, str(BENCH_DIR))

from graph import KEY_TIME, SELECT_TIME  # noqa: E402

LARGE = "019c6579-1ae3-78f7-9da1-494c73cf256d"  # 3,000 entries, three compactions on its main path
GOAL_MS = 100.0
# The panel shows the selected entry (its tabs link to it): the selection change is over.
PANEL_CURRENT = """() => {
  const n = document.querySelector('#graph-state [name=node]').value, a = document.querySelector('#panel a.tab.current');
  return !!a && new URL(a.href).searchParams.get('node') === n && !document.querySelector('.htmx-request');
}"""


def measure(clicks: int) -> dict:
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM_ARGS, SAMPLES, LiveServer

    root = Path(tempfile.mkdtemp()) / "s"
    shutil.copytree(SAMPLES, root)
    server = LiveServer(root)
    figures = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            for tab in ("node", "context"):
                page.goto(server.url + server.rel(LARGE) + f"?collapse=off&tab={tab}")
                page.wait_for_selector("#graph svg")
                ids = page.eval_on_selector_all("#graph g.node:not(.segment)", "gs => gs.map(g => g.id)")
                step = max(1, len(ids) // clicks)
                times = []
                for i in ids[step // 2::step][:clicks]:
                    times.append(page.evaluate(SELECT_TIME, i))
                    page.wait_for_function(PANEL_CURRENT)
                page.locator("#graph").focus()
                keys, redrawn = [], []
                for _ in range(clicks):
                    page.evaluate("() => { document.querySelector('#graph svg').dataset.before = '1'; }")
                    t = page.evaluate(KEY_TIME)
                    # The next key is read from the panel of this one: wait for it (the measure
                    # ends at the first swap, the drawing's when the entry was folded in a turn).
                    page.wait_for_function(PANEL_CURRENT)
                    (keys if page.evaluate("() => !!document.querySelector('#graph svg').dataset.before") else redrawn).append(t)
                figures[f"{tab} tab: click (ms)"] = statistics.median(times)
                figures[f"{tab} tab: arrow key (ms)"] = statistics.median(keys + redrawn)
                figures[f"{tab} tab: arrow key, drawn entry ({len(keys)} keys, ms)"] = statistics.median(keys) if keys else 0.0
                figures[f"{tab} tab: arrow key, folded entry: graph redrawn ({len(redrawn)} keys, ms)"] = (
                    statistics.median(redrawn) if redrawn else 0.0)
                if tab == "context":
                    figures["context tab: bands drawn at the end"] = page.locator("#graph g.band").count()
            figures["nodes drawn"] = len(ids)
            browser.close()
    finally:
        server.stop()
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clicks", type=int, default=10)
    args = ap.parse_args(argv)
    print("browser, 3k-entry sample, everything drawn (collapse=off), 1280x720")
    for k, v in measure(args.clicks).items():
        goal = "" if "ms" not in k else ("  met" if v <= GOAL_MS else "  NOT met") + f" (goal <= {GOAL_MS:g})"
        print(f"  {k:58s} {v:9.1f}{goal}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
