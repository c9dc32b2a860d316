"""Benchmark of the compaction bands (issue 9.3): the browser's time for a selection change in the
Context tab, where every change redraws the bands of the new path, on the 3k-entry sample with
everything drawn ("Expand all"), against the same change in the Node tab (no bands).

    .venv/bin/python bench/bands.py [--clicks 10]

Same measure as bench/graph.py (Performance API around the click or key handler, then the panel
swap and the overlay it applies; the network wait is not counted). A measurement, not a test.
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
                times = [page.evaluate(SELECT_TIME, i) for i in ids[step // 2::step][:clicks]]
                page.locator("#graph").focus()
                keys = [page.evaluate(KEY_TIME) for _ in range(clicks)]
                figures[f"{tab} tab: click (ms)"] = statistics.median(times)
                figures[f"{tab} tab: arrow key (ms)"] = statistics.median(keys)
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
        print(f"  {k:38s} {v:9.1f}{goal}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
