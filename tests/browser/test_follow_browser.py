"""Live follow: the session page shows what another process appends, without a reload."""

from __future__ import annotations

import re
import subprocess
import sys

import orjson
from playwright.sync_api import expect

from tests.conftest import Builder

APPENDER = """
import sys, orjson
from webapp.core.session import Session
session = Session.open_for_append(sys.argv[1])
for text in sys.argv[2:]:
    session.append({"type": "message", "message": {"role": "assistant", "content": text}})
"""


def test_the_page_follows_a_file_another_process_appends_to(tmp_path, page):
    from tests.browser.conftest import LiveServer

    b = Builder()
    b.user("Start the long job", id="u1")
    b.assistant("Working on it", id="a1")
    path = b.write(tmp_path / "live.jsonl")
    server = LiveServer(tmp_path)
    page.set_viewport_size({"width": 1280, "height": 720})  # (console errors: the autouse `console` fixture)
    try:
        page.goto(server.url + "/s/live.jsonl")
        expect(page.locator('#graph g.node[id="e-a1"]')).to_have_class(re.compile("active-leaf"))
        expect(page.locator("[data-follow]")).to_have_attribute("aria-pressed", "true")
        page.evaluate("window.__notReloaded = true")  # gone if the page reloads

        subprocess.run([sys.executable, "-c", APPENDER, str(path), "First result is in"], check=True)
        new_id = orjson.loads(path.read_bytes().splitlines()[-1])["id"]
        new_node = page.locator(f'#graph g.node[id="e-{new_id}"]')
        expect(new_node).to_be_visible()
        expect(new_node).to_have_class(re.compile("active-leaf"))
        expect(page.locator('#graph g.node[id="e-a1"]')).not_to_have_class(re.compile("active-leaf"))
        expect(page.locator("#node-panel")).to_have_attribute("data-entry", new_id)  # the panel moved along
        expect(page.locator("#node-panel")).to_contain_text("First result is in")
        expect(page.locator("#stats")).to_contain_text("3 entries")
        page.screenshot(path=str(tmp_path / "follow.png"))

        # a reader looking at an older node keeps it; the graph still grows
        page.locator('#graph g.node[id="e-u1"] a').click()
        expect(page.locator("#node-panel")).to_have_attribute("data-entry", "u1")
        subprocess.run([sys.executable, "-c", APPENDER, str(path), "Second result"], check=True)
        second = orjson.loads(path.read_bytes().splitlines()[-1])["id"]
        expect(page.locator(f'#graph g.node[id="e-{second}"]')).to_have_class(re.compile("active-leaf"))
        expect(page.locator("#node-panel")).to_have_attribute("data-entry", "u1")

        # turned off, it stops following: a second page that follows the file shows what is
        # appended next, and by then this one has not
        page.click("[data-follow]")
        expect(page.locator("[data-follow]")).to_have_attribute("aria-pressed", "false")
        witness = page.context.new_page()
        witness.goto(server.url + "/s/live.jsonl")
        expect(witness.locator(f'#graph g.node[id="e-{second}"]')).to_have_class(re.compile("active-leaf"))
        subprocess.run([sys.executable, "-c", APPENDER, str(path), "Third result"], check=True)
        third = orjson.loads(path.read_bytes().splitlines()[-1])["id"]
        expect(witness.locator(f'#graph g.node[id="e-{third}"]')).to_have_class(re.compile("active-leaf"))
        expect(page.locator(f'#graph g.node[id="e-{third}"]')).to_have_count(0)
        assert page.evaluate("window.__notReloaded") is True
    finally:
        server.stop()
