"""Session text on its way to dot and to the page: ids safe for HTML, SVG and dot, one-line
labels dot cannot misread, and class names from session data. The lowest layer of the drawing:
every other module of the package uses it."""

from __future__ import annotations

import functools
import hashlib
import re

LABEL_WIDTH = 34
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")  # no ":": dot reads `a:b` in an edge as node a, port b
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_CLASS_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@functools.lru_cache(maxsize=1 << 17)  # every drawing asks again for the same ids
def dom_id(entry_id: str) -> str:
    """An id safe for HTML/SVG and for dot: the entry id itself when it is tame, else a hash."""
    if _SAFE_ID.match(entry_id):
        return "e-" + entry_id
    return "x-" + hashlib.sha1(entry_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def dot_text(value, width: int = LABEL_WIDTH) -> str:
    """The one way session text reaches the dot source: any value as one line of at most `width`
    characters, without NUL, control characters or lone surrogates (dot fails on them), and with
    backslashes doubled (dot would read them as escapes, a trailing one as the closing quote's)."""
    text = value if isinstance(value, str) else str(value)
    text = " ".join(_CONTROL.sub(" ", text[: width * 8]).split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.replace("\\", "\\\\")


def css_token(value) -> str:
    """A class name from session data (an entry type, a role): tame characters, cut short."""
    return _CLASS_UNSAFE.sub("-", dot_text(value, 40))
