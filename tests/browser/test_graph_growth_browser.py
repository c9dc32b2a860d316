"""A followed turn grows in its drawing without `dot`: another process appends one more
step, the page shows it as the active leaf, and every text stays inside its node's box."""

from __future__ import annotations

import re
import subprocess
import sys

import orjson
from playwright.sync_api import expect

from tests.browser.test_follow_browser import APPENDER
from tests.conftest import count_dot_runs, turn_under_way

OVERFLOW = """() => [...document.querySelectorAll('#graph g.node')].flatMap((g) => {
  const box = g.querySelector('polygon, path').getBBox();
  return [...g.querySelectorAll('text')].filter((t) => {
    const b = t.getBBox();
    return b.x < box.x - 1 || b.x + b.width > box.x + box.width + 1 || b.y < box.y - 1 || b.y + b.height > box.y + box.height + 1;
  }).map((t) => `${g.id}: ${t.textContent}`);
})"""


def test_a_followed_turn_grows_without_dot_and_its_texts_stay_in_their_boxes(tmp_path, page, monkeypatch):
    from tests.browser.conftest import LiveServer

    runs = count_dot_runs(monkeypatch)
    b, last = turn_under_way()
    path = b.write(tmp_path / "live.jsonl")
    server = LiveServer(tmp_path)
    page.set_viewport_size({"width": 1280, "height": 720})
    try:
        page.goto(server.url + "/s/live.jsonl?collapse=on")
        expect(page.locator(f'#graph g.node[id="e-{last}"]')).to_have_class(re.compile("active-leaf"))
        turn = page.locator("#graph g.node.segment")
        expect(turn).to_contain_text("4 entries")
        laid_out = len(runs)

        subprocess.run([sys.executable, "-c", APPENDER, str(path), "All green."], check=True)
        new_id = orjson.loads(path.read_bytes().splitlines()[-1])["id"]
        leaf = page.locator(f'#graph g.node[id="e-{new_id}"]')
        expect(leaf).to_have_class(re.compile("active-leaf"))
        expect(leaf).to_contain_text("All green.")
        expect(page.locator(f'#graph g.node[id="e-{last}"]')).to_have_count(0)  # folded into the turn
        expect(turn).to_contain_text("5 entries")
        assert len(runs) == laid_out  # the drawing was changed in place, not laid out again
        assert page.evaluate(OVERFLOW) == []
        page.screenshot(path=str(tmp_path / "grown.png"))  # (console errors: the autouse `console` fixture)
    finally:
        server.stop()
