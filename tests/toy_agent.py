"""A toy agent, as a new agent's room would be written (`webapp/core/agents/<agent>/`): its description
and its reader in one module. tests/test_toy_agent.py registers it with one line and reads its
files through every door (`ls`, the index page, the session page) to show that adding an agent
is this module and that line.

Its format, made up for the test: `~/.toy/logs/<name>.jsonl`, the first line
`{"toy": "log", "id": ..., "cwd": ..., "at": ...}`, then one line per turn:
`{"toy": "said", "who": "me" | "it", "text": ..., "at": ...}`, or a tool it used:
`{"toy": "did", "tool": "peek" | "run", "args": {...}, "at": ...}`.
"""

from __future__ import annotations

import orjson

from webapp.core.agents.agent import READ, Agent, FileTool, Tools
from webapp.core.entries import Entry
from webapp.core.formats.base import generated_id
from webapp.core.formats.readonly import Built, ReadOnlyReader

WHY = "is a toy log, which only the toy itself may write"


class ToyReader(ReadOnlyReader):
    """Every line after the first is an entry, each the child of the one before."""

    name = "toy"

    def build(self, items: list[tuple[int, dict]]) -> Built:
        header, entries, prev = None, [], None
        for line, obj in items:
            if obj.get("toy") == "log":
                header = {"type": "session", "version": 3, "id": obj.get("id"), "timestamp": obj.get("at"),
                          "cwd": obj.get("cwd"), "source": "toy"}
                continue
            if obj.get("toy") == "did":
                call = {"type": "toolCall", "id": f"c{line}", "name": obj.get("tool"), "arguments": obj.get("args")}
                message = {"role": "assistant", "content": [call]}
            else:
                message = {"role": "user" if obj.get("who") == "me" else "assistant",
                           "content": [{"type": "text", "text": obj.get("text", "")}]}
            entry_id = generated_id(line)
            raw = {"type": "message", "id": entry_id, "parentId": prev, "timestamp": obj.get("at"), "message": message}
            entries.append(Entry(raw, line, entry_id, prev, True, obj))
            prev = entry_id
        return Built(header or {}, entries, prev)


TOY = Agent(
    name="toy", title="Toy", flag="toy",
    home_folder=(".toy", "logs"), depth=0,
    recognises=lambda first: first.get("toy") == "log", reader=lambda: ToyReader,
    why_read_only=lambda fmt: WHY,
    tools=Tools(files={"peek": FileTool(READ, ("file",))}, shells={"run": "cmd"}),
)


def toy_log(*turns: tuple[str, str]) -> bytes:
    """A toy log of (who, text) turns; who "did" makes a tool call (text: the file it peeks at)."""
    lines = [{"toy": "log", "id": "toy-1", "cwd": "/home/ana/toybox", "at": "2026-11-30T10:00:00.000Z"}]
    for n, (who, text) in enumerate(turns, start=1):
        at = f"2026-11-30T10:00:{n:02d}.000Z"
        lines.append({"toy": "did", "tool": "peek", "args": {"file": text}, "at": at} if who == "did"
                     else {"toy": "said", "who": who, "text": text, "at": at})
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)

