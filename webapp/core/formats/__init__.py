"""What every format reader shares: unreadable lines and problems (`base`), the checks of a
field's type (`fields`), and the frame of the readers of formats session-tree never writes
(`readonly`).

The readers themselves live in each agent's room (`webapp/core/agents/<agent>/reader.py`), chosen by
the registry (`agents.reader_for`) from a file's first readable line. A reader is made with the
`SessionLog` it fills and has `line(obj, n)` for each complete line, `tail(obj, n)` for an
unterminated last line (read again when more bytes come) and `finish()` after each batch of
lines; its `name` is the format it reads (`SessionLog.format`).
"""
