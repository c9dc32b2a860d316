"""Sharing as a person does, at 1280×720: "Export comparison" leads to the review, which lists
each value with its rule, what precedes it and where it is; the person keeps one, drops the
rest, downloads, and the file holds only the kept one. The print view goes through the same."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import LiveServer
from tests.redaction_corpus import PLANTED, leaked, write_corpus
from webapp.core.session import Session


def test_the_comparison_is_shared_after_its_review_keeping_what_the_person_keeps(tmp_path, page):
    root = tmp_path / "root"
    paths = write_corpus(root)
    rel = "/s/" + paths["pi"].relative_to(root).as_posix()
    a, b = Session.open(paths["pi"]).tree.leaves()[:2]
    page.set_viewport_size({"width": 1280, "height": 720})
    server = LiveServer(root)  # (the page logs in with the server's token, as its printed address does)
    try:
        page.goto(f"{server.url}{rel}/compare?ids={a},{b}")
        page.get_by_role("link", name="Export comparison").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Export the comparison as one HTML file")
        expect(page.locator("#share-redact")).to_be_checked()
        expect(page.get_by_label("also home paths (/home/NAME, /Users/NAME, C:\\Users\\NAME)")).to_be_checked()
        rows = page.locator("table.share-findings tbody tr")
        count = int(re.match(r"\d+", page.locator("h2").inner_text())[0])
        assert rows.count() == count > 40  # a row per distinct value
        # a row says which rule found the value, what precedes it, its first characters and where it is
        row = rows.filter(has_text="…DB_PASSWORD=")
        expect(row).to_have_count(1)
        assert row.locator("td").nth(2).inner_text() == "secret-assignment"
        assert row.locator("code").last.inner_text() == "Qz7;…" and "line 4 (text)" in row.locator("td").nth(4).inner_text()
        assert leaked(page.content(), [n for n in PLANTED if n not in ("file-name", "folder-name")]) == []
        page.screenshot(path=str(tmp_path / "review.png"))
        row.get_by_label("keep").check()  # keep this one, drop the rest
        with page.expect_download() as info:
            page.get_by_role("button", name="Download the comparison").click()
        saved = tmp_path / info.value.suggested_filename
        info.value.save_as(saved)
        assert leaked(saved.read_bytes()) == ["env-semicolon"]
        page.goto(saved.as_uri())
        note = page.locator(".redaction-note")
        expect(note).to_contain_text("1 kept as they were by choice")
        assert "found by detect-secrets, context rules, home" in note.inner_text()

        page.goto(f"{server.url}{rel}?tab=transcript")  # the print view shares too: its review first
        page.get_by_role("link", name="Print", exact=True).click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Print this branch")
        page.get_by_role("button", name="Open the print view").click()
        expect(page.locator(".print-title")).to_be_visible()
        expect(page.locator(".redaction-note")).to_contain_text("Redacted: ")
        assert leaked(page.content()) == []  # (and no console error: the `console` fixture checks)
    finally:
        server.stop()
