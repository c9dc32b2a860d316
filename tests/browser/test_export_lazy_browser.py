"""An export's entries past its first screens, which its script renders from the page's data, as
a person meets them: shown as they are scrolled to, reached by a link of the text tree, printed
whole; hostile text in them shows literally and runs nothing; with scripts off the page says
how many entries it leaves out."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import until
from tests.export_fixture import HOSTILE, write_long_hostile_session
from webapp.web.app import export_session


def exported(tmp_path):
    path = tmp_path / "long.jsonl"
    ids = write_long_hostile_session(path)
    out = tmp_path / "long.html"
    out.write_text(export_session(path))
    return out, ids


def test_scrolling_renders_the_rest_and_hostile_text_stays_text(tmp_path, page, console):
    out, ids = exported(tmp_path)
    page.goto(out.as_uri())
    items = page.locator("ol.transcript > li.t-item")
    assert items.count() == 60 and not page.locator("#export-partial").is_visible()  # (nothing is left out with scripts on)
    last = page.locator("li.t-item", has_text="The very last question of the session")
    def scrolled_to_the_end() -> bool:  # as a person scrolls
        page.mouse.move(900, 400)
        page.mouse.wheel(0, 4000)
        return bool(last.count())

    until(page, scrolled_to_the_end, "the last question, scrolled to")
    expect(last).to_be_visible()
    assert not page.locator(".export-more").is_visible()
    main = page.locator("main")
    expect(main).to_contain_text('<script>alert("xss-user")</script> and <img src=x onerror=alert("xss-img")>')
    expect(main).to_contain_text('</script><script>alert("xss-code")</script>')
    expect(main).to_contain_text('</script><svg onload=alert("xss-fence")>')
    expect(main).to_contain_text(HOSTILE["tool"])
    expect(main).to_contain_text(HOSTILE["command"])
    expect(main).to_contain_text(HOSTILE["model"])
    expect(main).to_contain_text(HOSTILE["label"])
    link_item = page.locator(f"li[data-entry='{ids['link']}']")
    assert link_item.locator("a", has_text="the docs").count() == 0  # a javascript: link is text, not a link
    assert link_item.locator("a", has_text="a page").get_attribute("href") == 'https://example.com/a?b=1&c="2"'
    assert link_item.locator("span.tag").inner_text() == HOSTILE["label"]
    call = page.locator(f"li[data-entry='{ids['thinking']}']")
    call.locator("details.thinking > summary").click()
    expect(call.locator("details.thinking")).to_contain_text(HOSTILE["thinking"])
    call.locator("details.t-result > summary").click()
    expect(call.locator("details.t-result")).to_contain_text(HOSTILE["result"])  # the result under its call
    assert call.locator("img").count() == 0 and "[image: unsupported]" in call.inner_text()
    assert main.locator("script, iframe, svg[onload], img[onerror], b[onmouseover], i[onclick]").count() == 0
    assert main.locator("a[href^='javascript']").count() == 0
    page.fill("#export-search", "xss-")  # the search counts every entry, rendered or not
    expect(page.locator("#export-count")).to_have_text("4 entries")
    page.fill("#export-search", "Filler question 49")
    expect(page.locator("#export-count")).to_have_text("1 entry")
    expect(page.locator("li.t-item:visible")).to_have_count(1)
    assert console == [] and page.errors == []  # no dialog opened, nothing failed


def test_a_text_tree_link_and_printing_render_what_was_not_yet(tmp_path, page):
    out, ids = exported(tmp_path)
    page.goto(out.as_uri())
    target = page.locator(f"#text-tree a[href='#t-e-{ids['last']}']")
    target.click()  # an entry far below the first screens: rendered and scrolled to
    entry = page.locator(f"#t-e-{ids['last']}")
    expect(entry).to_be_in_viewport()
    assert "The very last question of the session" in entry.inner_text()
    page.goto(out.as_uri())
    page.emulate_media(media="print")  # the whole branch before printing
    expect(page.locator("ol.transcript > li.t-item")).to_have_count(page.evaluate(
        "JSON.parse(document.getElementById('export-data').textContent).entries.length") - 1)  # (a result shows under its call)


def test_with_scripts_off_the_page_says_what_it_leaves_out(tmp_path, browser):
    out, ids = exported(tmp_path)
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.goto(out.as_uri())
        note = page.locator("#export-partial")
        expect(note).to_be_visible()
        assert "its first 60 entries; the other 47" in note.inner_text() and "show with scripts on" in note.inner_text()
        expect(page.locator(".export-more")).to_contain_text("47 more entries of this part: they need scripts")
        assert not page.locator(".search-form").is_visible()  # no box that would do nothing
        assert page.locator("li.t-item").count() == 60 and page.locator("li.t-item").first.is_visible()
        page.locator(f"#text-tree a[href='#t-e-{ids['last']}']").click()  # lands on the line that says why
        assert page.evaluate("document.querySelector(':target').closest('.export-more') !== null")
    finally:
        context.close()
