"""Submitting a share's review page as a browser would: its form's action with its hidden
fields, its ticked boxes and its text, so a test downloads what a person's click downloads."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlencode


class _Form(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.action = ""
        self.fields: list[tuple[str, str]] = []
        self._in_form = False
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and "share-form" in (a.get("class") or ""):
            self._in_form, self.action = True, a.get("action") or ""
        elif self._in_form and tag == "input" and a.get("name"):
            if a.get("type") == "hidden" or (a.get("type") == "checkbox" and "checked" in a):
                self.fields.append((a["name"], a.get("value") or ""))
        elif self._in_form and tag == "textarea":
            self._textarea = a.get("name")

    def handle_data(self, data):
        if self._textarea:
            self.fields.append((self._textarea, data))
            self._textarea = None

    def handle_endtag(self, tag):
        if tag == "textarea" and self._textarea:
            self.fields.append((self._textarea, ""))
            self._textarea = None
        if tag == "form":
            self._in_form = False


def review_form(html: str, keep: tuple[str, ...] = ()) -> str:
    """The URL the review's main button leads to (with `keep`'s tags ticked as well)."""
    form = _Form()
    form.feed(html)
    fields = form.fields + [("keep", tag) for tag in keep]
    return form.action + "?" + urlencode(fields)


def download_after_review(client, url: str, keep: tuple[str, ...] = ()):
    """Follow a share link (to its review) and press the review's button: the response."""
    page = client.get(url)
    assert page.status_code == 200, page.status_code
    return client.get(review_form(page.get_data(as_text=True), keep))
