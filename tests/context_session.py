"""A hand-built session whose compaction is known exactly: what it summarized, its summary, what
it kept; and a second branch that shares the first turn with the main one."""

from __future__ import annotations

from tests.conftest import Builder

SUMMARY = "The user asked to read config.toml; it sets the port to 8080."


def context_session() -> Builder:
    b = Builder()
    b.add("model_change", id="m0", provider="p1", modelId="m1")
    b.user("please read config.toml", id="u1")
    b.assistant("", calls=[{"id": "c1", "name": "read", "arguments": {"path": "config.toml"}}], id="a1")
    b.tool_result("c1", "port = 8080", id="t1")
    b.assistant("The port is 8080.", usage=500, id="a2")
    b.user("now fix the bug in the server loop", id="u2")
    b.assistant("fixed the server loop", usage=900, id="a3")
    b.add("compaction", id="k1", summary=SUMMARY, firstKeptEntryId="u2", tokensBefore=900)
    b.user("next please run the tests", id="u3")
    b.assistant("all tests pass", usage=400, id="a4")
    # a second branch after the first turn: the same request about the bug, worded differently
    b.add("thinking_level_change", id="h1", parent="a2", thinkingLevel="high")
    b.user("now fix the bug in the parser loop", id="v2")
    b.assistant("fixed the parser loop", usage=950, id="b3")
    return b
