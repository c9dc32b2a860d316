"""Live follow is quiet: a followed page holds one stream, so its server log and its network stay
still while the file does, and what is appended still shows, told by that stream (how soon:
bench/follow.py)."""

from __future__ import annotations

import logging
import re
import subprocess
import sys

import orjson
from playwright.sync_api import expect

from tests.browser.conftest import htmx_settled, until
from tests.browser.test_follow_browser import APPENDER
from tests.conftest import Builder
from webapp.core.storage import JsonlStorage


class Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def test_a_followed_page_costs_one_log_line_and_still_shows_new_entries_at_once(tmp_path, page, monkeypatch):
    from tests.browser.conftest import LiveServer

    b = Builder()
    b.user("Start the long job", id="u1")
    b.assistant("Working on it", id="a1")
    path = b.write(tmp_path / "live.jsonl")
    server = LiveServer(tmp_path)
    log = logging.getLogger("werkzeug")
    lines, level = Lines(), log.level
    log.addHandler(lines)
    log.setLevel(logging.INFO)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    looks = [0]  # the stream's looks at the file (about two a second while it does not change)
    real = JsonlStorage.version_key
    monkeypatch.setattr(JsonlStorage, "version_key", lambda self: looks.__setitem__(0, looks[0] + 1) or real(self))
    try:
        with page.expect_request(lambda r: r.url.endswith("/-/events")):
            page.goto(server.url + "/s/live.jsonl")
        expect(page.locator("[data-follow]")).to_have_attribute("aria-pressed", "true")
        htmx_settled(page)  # the page's own requests are done, the stream's logged
        until(page, lambda: any("/-/events" in line for line in lines.lines), "the stream's log line")
        streams = [u for u in requests if u.endswith("/-/events")]
        assert len(streams) == 1 and not any("/-/version" in u for u in requests)
        before_log, before_requests, since = len(lines.lines), len(requests), looks[0]
        # a file that does not change, looked at eight times by the stream (about four seconds on
        # a quiet machine): nothing is asked, nothing logged, the stream is not opened again
        until(page, lambda: looks[0] >= since + 8, "eight looks of the stream at the file")
        assert requests[before_requests:] == [] and lines.lines[before_log:] == []
        assert sum("/-/events" in line for line in lines.lines) == 1  # the stream, logged once

        subprocess.run([sys.executable, "-c", APPENDER, str(path), "First result is in"], check=True)
        new_id = orjson.loads(path.read_bytes().splitlines()[-1])["id"]
        new_node = page.locator(f'#graph g.node[id="e-{new_id}"]')
        expect(new_node).to_have_class(re.compile("active-leaf"))
        expect(page.locator("#node-panel")).to_contain_text("First result is in")
        assert [u for u in requests if u.endswith("/-/events")] == streams  # still the one stream
    finally:
        log.removeHandler(lines)
        log.setLevel(level)
        server.stop()
