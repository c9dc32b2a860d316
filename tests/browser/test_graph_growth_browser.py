"""A followed turn grows in its drawing without `dot` (#13.2): another process appends one more
step, the page shows it as the active leaf, and every text stays inside its node's box."""

from __future__ import annotations

import re
import subprocess
import sys

import orjson
from playwright.sync_api import expect

from tests.browser.test_follow_browser import APPENDER
from tests.conftest import Builder
from webapp.web import graph

OVERFLOW = """() => [...document.querySelectorAll('#graph g.node')].flatMap((g) => {
  const box = g.querySelector('polygon, path').getBBox();
  return [...g.querySelectorAll('text')].filter((t) => {
    const b = t.getBBox();
    return b.x < box.x - 1 || b.x + b.width > box.x + box.width + 1 || b.y < box.y - 1 || b.y + b.height > box.y + box.height + 1;
  }).map((t) => `${g.id}: ${t.textContent}`);
})"""


def test_a_followed_turn_grows_without_dot_and_its_texts_stay_in_their_boxes(tmp_path, browser, monkeypatch):
    from tests.browser.conftest import LiveServer

    runs: list[str] = []
    real = graph.run_dot
    monkeypatch.setattr(graph, "run_dot", lambda source, timeout=None: runs.append(source) or real(source, timeout))
    b = Builder()
    b.user("please fix the importer")
    b.assistant("Reading the importer first.", calls=[{"id": "c1", "name": "read", "arguments": {"path": "a.py"}}])
    b.tool_result("c1", "def load(): ...")
    b.tool_turn("edit", "importer.py", "c2", "edited")
    last = b.assistant("Now running the whole test suite for the importer.")
    path = b.write(tmp_path / "live.jsonl")
    server = LiveServer(tmp_path)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        page.goto(server.url + "/s/live.jsonl?collapse=on")
        expect(page.locator(f'#graph g.node[id="e-{last}"]')).to_have_class(re.compile("active-leaf"))
        turn = page.locator("#graph g.node.segment")
        expect(turn).to_contain_text("4 entries")
        laid_out = len(runs)

        subprocess.run([sys.executable, "-c", APPENDER, str(path), "All green."], check=True)
        new_id = orjson.loads(path.read_bytes().splitlines()[-1])["id"]
        leaf = page.locator(f'#graph g.node[id="e-{new_id}"]')
        expect(leaf).to_have_class(re.compile("active-leaf"), timeout=5000)
        expect(leaf).to_contain_text("All green.")
        expect(page.locator(f'#graph g.node[id="e-{last}"]')).to_have_count(0)  # folded into the turn
        expect(turn).to_contain_text("5 entries")
        assert len(runs) == laid_out  # the drawing was changed in place, not laid out again
        assert page.evaluate(OVERFLOW) == []
        page.screenshot(path=str(tmp_path / "grown.png"))
        assert errors == []
    finally:
        context.close()
        server.stop()
