"""Logging in as a person does (webapp/web/auth.py): a browser without the cookie gets the login
page wherever it goes, a wrong secret is said so, the token brings it to the page it asked for;
the printed address with the token leaves the address bar without it, and no script can read the
cookie; a server started with --no-auth says on its pages that it is open."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer

RICH = "2026-03-02T09-14-05-221Z"
TITLE = "Fix rounding in invoice totals"  # (that session's name, in its page's top bar)
LONG_NAMED = "2026-03-03T16-40-12-034Z"  # "Add a `__repr__` to `Invoice` that shows the number and the customer."


@pytest.fixture
def stranger(browser):
    """A page of a browser that has never logged in, and its console errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page, errors
    context.close()


def test_a_browser_without_the_cookie_logs_in_with_the_token_and_lands_where_it_asked(live_server, stranger):
    page, errors = stranger
    asked = live_server.url + live_server.rel(RICH)
    answer = page.goto(asked)
    assert answer.status == 200 and "/-/login?next=" in page.url  # (led there: nothing failed to load)
    expect(page.locator("h1")).to_have_text("Who are you?")
    expect(page.locator("body")).not_to_contain_text(TITLE)
    page.fill("#secret", "not the token")
    page.click("button:text-is('Log in')")
    expect(page.locator("[role=alert]")).to_contain_text("neither this server's token nor its password")
    page.fill("#secret", live_server.token)
    page.click("button:text-is('Log in')")
    expect(page.locator("#node-panel")).to_be_visible()
    assert page.url == asked
    expect(page.locator("body")).to_contain_text(TITLE)
    assert page.evaluate("document.cookie") == ""  # HttpOnly: no script reads it
    assert errors == []


def test_the_printed_address_logs_in_and_leaves_the_address_bar(live_server, stranger):
    page, errors = stranger
    page.goto(f"{live_server.url}/?token={live_server.token}")
    expect(page.locator("body")).to_contain_text("sessions")
    assert page.url == live_server.url + "/"  # the token is in no history, and no Referer carries it
    page.goto(live_server.url + live_server.rel(RICH))  # the cookie now logs in every page
    expect(page.locator("body")).to_contain_text(TITLE)
    cookie = page.context.cookies()[0]
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/")
    assert cookie["value"] != live_server.token
    assert errors == []


def test_an_open_server_says_so_on_its_pages(sessions_root, stranger):
    page, errors = stranger
    server = LiveServer(sessions_root, {"NO_AUTH": True})
    try:
        for url in ("/", server.rel(RICH)):
            page.goto(server.url + url)  # (never logged in: nothing is asked)
            expect(page.locator(".open-warning")).to_have_text("Open to every account on this machine")
            expect(page.locator(".open-warning")).to_be_visible()
        # The session's name stays readable beside the warning (the folder before it gives way):
        # not under the warning, and whole.
        title = page.locator(".crumbs strong")
        expect(title).to_have_text(TITLE)
        shown = title.evaluate("""(el) => { const r = el.getBoundingClientRect(),
            w = document.querySelector('.open-warning').getBoundingClientRect();
            return {clear: r.right <= w.left, whole: el.scrollWidth <= el.clientWidth}; }""")
        assert shown == {"clear": True, "whole": True}
        # A name too long for the bar is cut with an ellipsis inside it, not clipped at its edge.
        page.goto(server.url + server.rel(LONG_NAMED))
        ends = title.evaluate("""(el) => { const r = el.getBoundingClientRect(),
            bar = el.parentElement.getBoundingClientRect(), s = getComputedStyle(el);
            return {inside: r.right <= bar.right + 0.5, cut: el.scrollWidth > el.clientWidth, ellipsis: s.textOverflow}; }""")
        assert ends == {"inside": True, "cut": True, "ellipsis": "ellipsis"}
    finally:
        server.stop()
    assert errors == []
