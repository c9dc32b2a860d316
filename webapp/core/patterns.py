"""Regular expressions that come from outside the program: a person's redaction patterns (the
export review's `patterns=`, `--redact-pattern`), and any other pattern a request or a file
brings. They are compiled by RE2 (`google-re2`), never by Python's `re`.

Why: `re` backtracks, so a pattern such as `(=+)+!` takes exponential time on a line of `=`,
and it holds the interpreter (every thread of the server) while it runs. RE2 matches in time
linear in the text, bounds the memory a pattern may take, and lets other threads run while it
matches. google-re2 over `regex` with a timeout: linear by construction, rather than stopped
after the harm is done. What RE2 does not have (backreferences, lookaround) is refused with a
clear error, as is a pattern it cannot build within its memory bound.
"""

from __future__ import annotations

import re2

MAX_PATTERN_CHARS = 2_000  # a pattern is a line a person typed, not a file

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # (RE2 would print its own line on stderr besides the error)


class PatternError(ValueError):
    """A pattern that is not run: the message says why, in one line."""


def compile_outside(pattern: str, *, ignore_case: bool = False, literal: bool = False):
    """`pattern` compiled by RE2 (a compiled object with `search`, `finditer`, `sub`, `pattern`
    as `re`'s); PatternError for one it refuses or that is too long."""
    if not isinstance(pattern, str):
        raise PatternError(f"a pattern is text, not {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"a pattern of {len(pattern):,} characters is too long (at most {MAX_PATTERN_CHARS:,})")
    text = re2.escape(pattern) if literal else pattern
    if ignore_case:
        text = "(?i)" + text
    try:
        return re2.compile(text, _OPTIONS)
    except re2.error as exc:
        why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(f"{pattern!r} is not a valid regular expression here: {why} (patterns run in RE2: "
                           "no backreferences, no lookaround)") from None
