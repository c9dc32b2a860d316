"""The format seam: every file is read by one reader, chosen from its first readable line, which
turns the lines of its format into this project's entries (SPEC §2).

- pi (`pi.py`): a `session` header on line 1 (v1, v2, v3), or lines of no known format; the
  only format we write (SPEC §5c).
- Claude Code (`claude.py`): lines with `sessionId` and `uuid`/`parentUuid`, no header. Read-only.
- Codex (`codex.py`): `{timestamp, type, payload}` lines. Read-only.

A reader is made with the `SessionLog` it fills and has `line(obj, n)` for each complete line,
`tail(obj, n)` for an unterminated last line (read again when more bytes come) and `finish()`
after each batch of lines.
"""

from __future__ import annotations

from .pi import PiReader

READ_ONLY_FORMATS = frozenset({"claude-code", "codex"})  # the names of the two readers below


def reader_for(first: dict) -> type:
    """The reader for a file whose first readable line is `first` (the other agents' readers are
    imported when a file needs them: a command that reads a pi file does not pay for them)."""
    kind = first.get("type")
    if kind == "session" or not isinstance(kind, (str, type(None))):  # a list or object is no format's
        return PiReader
    from .claude import ClaudeReader, is_claude_line
    from .codex import CodexReader, is_codex_line

    if is_codex_line(first):
        return CodexReader
    if is_claude_line(first):
        return ClaudeReader
    return PiReader
