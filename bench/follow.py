"""How soon a followed page shows what another process appends (static/follow.js, the stream of
webapp/web/follow.py): the goal is within a second, its redraw included.

    .venv/bin/python bench/follow.py [--runs 10]

A session page is opened in Chromium (served as the browser tests serve it, on 127.0.0.1); an
entry is appended `--runs` times by a separate process, and each time the wall time from the end
of the append to the new node drawn as the active leaf is taken. Prints the median and the
slowest, and the load average: on a shared machine the figure moves with the others' load. The
browser test (tests/browser/test_quiet_follow_browser.py) checks that the new node comes, told
by the one stream; how soon it comes is measured here.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import orjson  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

import tests.conftest  # noqa: E402,F401  (the test client that answers as the owner)
from tests.browser.conftest import CHROMIUM_ARGS, LiveServer  # noqa: E402
from tests.browser.test_follow_browser import APPENDER  # noqa: E402
from tests.conftest import Builder  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    runs = ap.parse_args().runs
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    root = Path(tempfile.mkdtemp())
    b = Builder()
    b.user("Start the long job", id="u1")
    b.assistant("Working on it", id="a1")
    path = b.write(root / "live.jsonl")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    load = os.getloadavg()[0]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        LiveServer.page = page
        server = LiveServer(root)
        page.goto(server.url + "/s/live.jsonl")
        expect(page.locator('#graph g.node.active-leaf[id="e-a1"]')).to_have_count(1, timeout=60_000)
        took = []
        for i in range(runs):
            subprocess.run([sys.executable, "-c", APPENDER, str(path), f"result {i}"], check=True, env=env)
            appended = time.perf_counter()
            new_id = orjson.loads(path.read_bytes().splitlines()[-1])["id"]
            shown = page.locator(f'#graph g.node.active-leaf[id="e-{new_id}"]')
            while not shown.count():  # (looked at every 10 ms: the page's CSP allows no evaluated strings)
                assert time.perf_counter() - appended < 60, "the appended entry never showed"
                page.wait_for_timeout(10)
            took.append(time.perf_counter() - appended)
        server.stop()
        browser.close()
    print(f"appended entry shown as the active leaf, {runs} runs: median {statistics.median(took):.2f} s, "
          f"slowest {max(took):.2f} s (goal: within 1 s); load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
