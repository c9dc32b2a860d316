"""Cross-session search from the index page, and the corpus page, as a person uses them."""

from __future__ import annotations

import re

from playwright.sync_api import expect


def test_search_every_session_from_the_index_page_and_open_a_hit(live_server, page):
    page.goto(live_server.url + "/")
    page.fill("input[name=q]", "invoice")
    hits = page.locator(".corpus-hits li.hit")
    expect(hits.first).to_be_visible()
    expect(hits.first.locator(".snippet mark").first).to_have_text(re.compile("invoice", re.I))
    assert hits.count() > 1
    page.locator("details.search-filters summary").click()
    page.select_option("select[name=role]", "user")
    expect(page.locator(".corpus-hits li.hit .sub").first).to_contain_text("user")
    for text in page.locator(".corpus-hits li.hit .sub").all_inner_texts():
        assert " user" in text
    expect(page).to_have_url(re.compile(r"role=user"))
    assert "agent=" not in page.url and "project=" not in page.url  # the empty fields ("any") are left out
    href = hits.first.locator("a.hit-open").get_attribute("href")
    hits.first.locator("a.hit-open").click()
    expect(page).to_have_url(re.compile(re.escape(href.split("?")[0]) + r"\?node="))
    node = href.split("node=")[1]
    expect(page.locator(f'#graph g.node[id="e-{node}"]')).to_have_class(re.compile("selected"))


def test_the_corpus_page_shows_its_figures_and_answers_sql(live_server, page):
    page.goto(live_server.url + "/")
    page.get_by_role("link", name="Corpus figures").click()
    charts = page.locator("svg.chart")
    expect(charts).to_have_count(8)
    first_bar = charts.first.locator("a").first
    label = first_bar.locator("text.chart-label").text_content()
    first_bar.click()
    expect(page.locator("#behind h2")).to_contain_text(label)
    assert page.locator("#behind tbody tr").count() >= 1
    page.fill("textarea[name=sql]", "SELECT agent, count(*) AS n FROM sessions GROUP BY agent")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("table.sql-rows")).to_contain_text("pi")
    page.fill("textarea[name=sql]", "DROP TABLE sessions")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#sql-result .error")).to_contain_text("only SELECT")
    expect(charts).to_have_count(8)


def test_the_index_page_fits_1280_pixels_with_a_title_of_one_long_word(sessions_root, live_server, page):
    # A title that is one long word (a test's name in backticks) once pushed the table past the
    # window; and the narrow time columns broke "2026-02-11 08:02" over three lines.
    word = "`tests/test_transform.py::test_normalize_dates_skips_rows_without_id_and_keeps_the_rest`"
    (sessions_root / "long-title.jsonl").write_text(
        '{"type":"session","version":3,"id":"long-1","timestamp":"2026-02-11T08:02:00.000Z","cwd":"/p"}\n'
        '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-02-11T08:02:01.000Z",'
        f'"message":{{"role":"user","content":"{word} fails on CI","timestamp":1}}}}\n')
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + "/")
    expect(page.locator("td.title a", has_text="test_normalize_dates")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    lines = page.evaluate("""[...document.querySelectorAll('td.when')].map(td => {
        const r = document.createRange(); r.selectNodeContents(td); return r.getClientRects().length; })""")
    assert lines and set(lines) == {1}, lines
