"""What every format reader reports besides entries: unreadable lines and problems, and the ids
given to lines that have none."""

from __future__ import annotations

from dataclasses import dataclass

# What a field of the wrong type reads as downstream (a role, a block type, a tool call id):
# one string every view shows as it is and the context passes by.
INVALID = "invalid"


@dataclass(frozen=True)
class BadLine:
    line: int
    reason: str
    raw: str
    torn: bool = False


@dataclass(frozen=True)
class Problem:
    """Something wrong in a file that still loads: where it is and what it is."""

    kind: str
    message: str
    line: int | None = None
    entry_id: str | None = None
    file: str | None = None  # the file `line` counts in, when not the session's own (see Entry.file)

    @property
    def where(self) -> str:
        """"line 12", "agent-ab.jsonl line 12", or "line –" for a problem of no one line."""
        line = f"line {self.line or '–'}"
        return f"{self.file} {line}" if self.file else line

    def as_dict(self) -> dict:
        out = {"kind": self.kind, "message": self.message, "line": self.line, "entryId": self.entry_id}
        if self.file:
            out["file"] = self.file
        return out


def generated_id(line: int) -> str:
    """The id of a line that has none (pi v1, Codex): stable for the same file, from its line number."""
    return f"L{line}"
