"""The HTML the server made last of a text, held by the text: markdown-it and Pygments, in Python,
take 0.2–1 s for 100,000 characters, and each panel, fragment, print, export and comparison of an
entry renders the same text again (a print of a 2 MB session spent 1.1 of its 2.2 s highlighting
tool outputs it had highlighted for the last view).

What is held is bounded in characters (of the texts and their HTML), the least recently asked
forgotten first. A text shorter than a holder's `shortest` costs less to render than to keep.
Rendering is pure (the same text gives the same HTML), so a text is never held with the HTML of a
response whose budget cut its rendering short: the callers hold only what they rendered whole."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable


class HeldHtml:
    def __init__(self, chars: int, shortest: int):
        self.chars, self.shortest = chars, shortest
        self.held = 0  # characters of the texts and their HTML held now
        self.by_key: OrderedDict[tuple[Hashable, str], str] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, kind: Hashable, text: str) -> str | None:
        """The HTML held for `text` rendered as `kind`, if any."""
        if len(text) < self.shortest:
            return None
        with self.lock:
            html = self.by_key.get((kind, text))
            if html is not None:
                self.by_key.move_to_end((kind, text))
            return html

    def keep(self, kind: Hashable, text: str, html: str) -> str:
        """Hold `html` as `text` rendered as `kind`; gives `html` back."""
        if len(text) < self.shortest:
            return html
        with self.lock:
            if (kind, text) not in self.by_key:
                self.by_key[(kind, text)] = html
                self.held += len(text) + len(html)
            while self.held > self.chars and self.by_key:
                (_, old), old_html = self.by_key.popitem(last=False)
                self.held -= len(old) + len(old_html)
        return html
