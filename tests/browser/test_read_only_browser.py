"""A session we may not write to (SPEC §5c) shows one write control, "Continue in a new session",
which copies the path into a new pi v3 file and opens it there, ready to be continued."""

from __future__ import annotations

import hashlib
import shutil

from playwright.sync_api import expect

from tests.browser.conftest import LiveServer
from tests.conftest import FIXTURES
from webapp.core.session import Session

CLAUDE = FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl"


def test_continue_a_claude_code_session_in_a_new_file(sessions_root, page):
    folder = sessions_root / "--tmp-claude--"
    folder.mkdir()
    source = shutil.copy(CLAUDE, folder / CLAUDE.name)
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    server = LiveServer(sessions_root)
    try:
        page.goto(server.url + server.rel(CLAUDE.name))
        panel = page.locator("#node-panel")
        expect(panel.locator("button:has-text('Continue in a new session')")).to_be_visible()
        expect(panel).to_contain_text("is a Claude Code session")
        for control in ("Continue here", "Fork here", "Edit and resend", "Save label", "Compact here"):
            expect(panel.get_by_text(control)).to_have_count(0)
        leaf = panel.get_attribute("data-entry")
        panel.locator("button:has-text('Continue in a new session')").click()
        page.wait_for_url(lambda url: CLAUDE.name not in url)
        expect(page.locator("#node-panel button:has-text('Continue here')")).to_be_visible()
        copies = [p for p in folder.glob("*.jsonl") if p.name != CLAUDE.name]
        assert len(copies) == 1
        copy = Session.open(copies[0])
        assert copy.log.format == "pi-v3" and copy.tree.header["parentSession"] == str(source.resolve())
        new_leaf = copy.tree.conversation_leaf(copy.tree.active_leaf)
        assert page.locator("#node-panel").get_attribute("data-entry") == new_leaf  # opened at its leaf
        assert Session.open(source).tree.by_id[leaf].message == copy.tree.by_id[new_leaf].message
        assert hashlib.sha256(source.read_bytes()).hexdigest() == before
        assert page.errors == []
    finally:
        server.stop()
