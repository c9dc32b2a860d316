"""A project export of sample_sessions/ read from disk (file://) as a person reads it: the index,
its filter and sorting, a session page and back, with no request anywhere but the files of the
export and no console error; and, with scripts off, the index and a page still read."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from webapp.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
LOAD_MS = 120_000  # a 3,000-entry page (5 MB) on a loaded machine takes longer than Playwright's 30 s default


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project") / "sample_sessions"
    shutil.copytree(SAMPLES, root)
    out = tmp_path_factory.mktemp("site") / "site"
    assert main(["export", str(root), "-o", str(out)]) == 0
    return out


def _titles(page) -> list[str]:
    return [t.strip() for t in page.locator("tr.session-row:visible td.title > a").all_inner_texts()]


def test_the_index_and_a_session_page_open_from_disk_with_no_request_but_their_files(page, site):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto((site / "index.html").as_uri())
    assert page.locator("h1").inner_text() == "7 sessions"
    titles = _titles(page)
    assert len(titles) == 7 and titles[0].startswith("Add a CSV export")  # newest first

    box = page.get_by_label("Filter sessions")
    box.fill("invoice")
    assert len(_titles(page)) == 2 and page.locator("#project-count").inner_text() == "2 of 7"
    box.fill("")
    page.get_by_role("button", name="Entries").click()  # the headings sort
    entries = [int(x.replace(",", "")) for x in page.locator("tr.session-row td:nth-child(6)").all_inner_texts()]
    assert entries == sorted(entries, reverse=True) and entries[0] == 3000

    page.get_by_role("link", name="Speed up the nightly CSV import").click()
    page.wait_for_url(site.as_uri() + "/sessions/*", wait_until="load", timeout=LOAD_MS)
    side = page.locator(".export-side")
    assert side.locator("h1").inner_text() == "Speed up the nightly CSV import"
    assert side.locator("dl.meta").inner_text().count("3000") == 1  # the figures read in the sidebar
    branches = side.locator(".export-branches li")
    assert branches.count() == 7 and branches.first.is_visible()
    lines = side.locator("#text-tree .tt-line")  # the tree as text, one link a line
    expect(lines.first).to_be_visible(timeout=LOAD_MS)
    assert lines.count() > 10 and "Add type hints" in side.locator("#text-tree").inner_text()
    side.locator("details.export-drawing > summary").click()  # and the drawing, opened
    drawing = side.locator(".export-tree svg")
    expect(drawing).to_be_visible(timeout=LOAD_MS)
    assert drawing.locator("g.node text").count() > 10
    first_turn = page.locator("section.branch .t-item").filter(has_text="Add type hints to").first
    assert first_turn.is_visible() and "mypy --strict" in first_turn.inner_text()  # the transcript reads
    assert page.evaluate("getComputedStyle(document.querySelector('.topbar')).backgroundColor") == "rgb(15, 23, 42)"  # the linked styles applied

    page.get_by_role("link", name="All sessions").click()
    page.wait_for_url((site / "index.html").as_uri(), wait_until="load", timeout=LOAD_MS)
    assert len(_titles(page)) == 7
    assert requests and all(u.startswith("file://") for u in requests), [u for u in requests if not u.startswith("file://")]
    assert {re.sub(r".*/site/", "", u) for u in requests} >= {"index.html", "static/app.css", "static/project-export.js",
                                                            "static/export.css", "static/export.js"}


def test_with_scripts_off_the_index_shows_no_dead_filter_and_its_links_still_lead(browser, site):
    context = browser.new_context(viewport={"width": 1280, "height": 720}, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto((site / "index.html").as_uri())
        assert not page.locator(".project-filter").is_visible()  # no box that would do nothing
        assert page.locator("th button").count() == 0  # headings are text, not buttons that do nothing
        assert len(_titles(page)) == 7
        page.get_by_role("link", name="Fix rounding in invoice totals").click()
        page.wait_for_url(site.as_uri() + "/sessions/*", wait_until="load", timeout=LOAD_MS)
        assert page.locator(".export-side h1").inner_text() == "Fix rounding in invoice totals"
        assert page.locator("section.branch").count() == 4 and page.locator(".t-item").first.is_visible()
    finally:
        context.close()
