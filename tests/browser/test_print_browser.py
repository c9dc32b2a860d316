"""Printing: the Print page and a printed export hold the whole branch (more than the Transcript
tab's window) under a title block on page 1, each turn kept on one page where it fits."""

from __future__ import annotations

import io
import unicodedata

from pypdf import PdfReader

from tests.conftest import Builder


def long_branch(root):
    b = Builder()
    b.add("session_info", name="Quarterly report clean-up")
    b.add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    for n in range(1, 31):
        b.user(f"Step {n}: tidy section {n} of the report")
        b.assistant(f"Section {n} tidied. " + "A longer answer line. " * 20, usage=1000 + n)
    b.user("Last step: the final check of the whole report")
    (root / "--proj--").mkdir(parents=True)
    return b.write(root / "--proj--" / "report.jsonl")


def pdf_pages(page) -> list[str]:
    reader = PdfReader(io.BytesIO(page.pdf(format="A4")))
    return [unicodedata.normalize("NFKC", p.extract_text()) for p in reader.pages]  # (ligatures: "ﬁ" is "fi")


def test_the_print_page_prints_the_whole_branch_under_a_title_block(tmp_path, page):
    from tests.browser.conftest import LiveServer

    long_branch(tmp_path)
    server = LiveServer(tmp_path)
    try:
        page.goto(server.url + "/s/--proj--/report.jsonl?tab=transcript")
        page.click("a.button:text-is('Print')")
        page.wait_for_url("**/print/review?leaf=*")  # what is printed is shared: the review comes first
        page.click("#share-download")
        page.wait_for_url("**/print?*")
        page.emulate_media(media="print")
        assert not page.locator(".print-hint").is_visible() and not page.locator(".topbar").is_visible()
        pages = pdf_pages(page)
        first = pages[0]
        assert "Quarterly report clean-up" in first and "Branch: Last step: the final check" in first
        assert "anthropic/claude-sonnet-4-5" in first and "user turns" in first and "31" in first
        text = "\n".join(pages)
        assert "Step 1: tidy section 1" in text and "Last step: the final check of the whole report" in text  # all 63 entries
        assert len(pages) >= 3
        # a turn is not cut across pages where it fits: each "Section n tidied" answer is on one page
        for n in (5, 17, 29):
            holding = [i for i, t in enumerate(pages) if f"Section {n} tidied" in t]
            assert len(holding) == 1, (n, holding)
    finally:
        server.stop()


def test_a_printed_export_starts_with_the_title_block(tmp_path, page):
    from webapp.web.app import export_session

    path = long_branch(tmp_path)
    out = tmp_path / "report.html"
    out.write_text(export_session(path))
    page.goto(out.as_uri())
    assert not page.locator(".print-title").is_visible()  # on screen, the sidebar says it
    page.emulate_media(media="print")
    assert page.locator(".print-title").is_visible() and not page.locator(".export-side").is_visible()
    pages = pdf_pages(page)
    assert "Quarterly report clean-up" in pages[0] and "Branch: Last step" in pages[0] and "entries" in pages[0]
    assert "Last step: the final check of the whole report" in pages[-1]
