"""Editing what the model sees from the Context tab, as a person does: omit a tool output and
replace a message's content, read the token figures the preview gives, write the edit, and read
the new figures in the context meter."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import LiveServer
from tests.web.test_context_edit_routes import REL, session_file


def test_omit_and_replace_from_the_context_tab_and_read_the_new_token_figures(tmp_path, page, console):
    (tmp_path / "--home-ana-proj--").mkdir()
    session_file().write(tmp_path / REL)
    server = LiveServer(tmp_path)
    try:
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(f"{server.url}/s/{REL}?tab=context&node=a2")
        meter = page.locator("#context-panel .meter-text strong")
        before = meter.inner_text()
        assert "reported" in before  # a2's usage measures the context as it is
        tool = page.locator('#context-panel li.cm[data-entry="t1"]')
        tool.get_by_role("button", name="Omit from context…").click()
        preview = tool.locator(".edit-preview")
        expect(preview).to_contain_text("(nothing: taken out of the context)")
        assert preview.locator(".tok-before").inner_text() == before
        after = preview.locator(".tok-after").inner_text()
        page.screenshot(path=str(tmp_path / "omit-preview.png"))
        preview.get_by_role("button", name="Write this edit").click()
        expect(page).to_have_url(re.compile(r"node=[0-9a-f-]{36}.*tab=context|tab=context.*node=[0-9a-f-]{36}"))
        expect(meter).to_have_text(after)
        expect(page.locator('#context-panel li.cm[data-entry="t1"]')).to_have_count(0)
        expect(page.locator("#context-panel .omitted-list")).to_contain_text("Taken out of the context by edits (1)")
        omitted = meter.inner_text()

        user = page.locator('#context-panel li.cm[data-entry="u1"]')
        user.locator(".cm-replace > summary").click()
        expect(user.locator("textarea[name=text]")).to_have_value("read big.log")  # the text sent now, to edit
        user.locator("textarea[name=text]").fill("Read big.log and say only how long it is.")
        user.get_by_role("button", name="Preview the edit").click()
        preview = user.locator(".edit-preview")
        expect(preview).to_contain_text("Read big.log and say only how long it is.")
        assert preview.locator(".tok-before").inner_text() == omitted
        after = preview.locator(".tok-after").inner_text()
        preview.get_by_role("button", name="Write this edit").click()
        user = page.locator('#context-panel li.cm[data-entry="u1"]')
        expect(user).to_contain_text("edited by context edit")
        expect(user.locator(":scope > .cm-text")).to_have_text("Read big.log and say only how long it is.")
        expect(meter).to_have_text(after)
        user.locator(".cm-holds > summary").click()
        expect(user.locator(".cm-holds .cm-text")).to_have_text("read big.log")  # what the file holds
        page.screenshot(path=str(tmp_path / "edited.png"), full_page=True)
        assert page.errors == [] and console == []
    finally:
        server.stop()
