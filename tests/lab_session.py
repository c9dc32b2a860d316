"""A hand-built session for the compaction lab: a pi 1.6 system message, a task with tool calls,
a failed command, the user's instructions, two context edits (one on a message the compaction
summarized, one on a message it kept), a compaction, and three user turns after it whose tool
calls the branch recorded. Every fact of it is known, so the tests can say exactly what each
request must hold."""

from __future__ import annotations

from tests.conftest import Builder

SYSTEM = "You are a careful coding agent."
SUMMARY = "## Goal\nA CSV importer in src/importer.py.\n\n## Next Steps\n1. Add a --strict flag."
TURNS = ("Run the tests again.", "Document the --strict flag in README.md.", "Thanks, commit it.")
EDITED_A1 = "I read the spec."
EDITED_T4 = "edited src/cli.py (42 lines)"
MODEL = {"provider": "openai", "model": "test-model"}


def lab_session(compacted: bool = True, secret: str | None = None, version: int = 3) -> Builder:
    """The session; `secret` is said by the user in the summarized part (what a redacted report
    must not show); `version` 2 makes a file the app may read but never write (SPEC §5c)."""
    b = Builder(version=version)
    b.add("model_change", id="h0", provider="openai", modelId="test-model")
    b.add("message", id="s0", message={"role": "system", "content": SYSTEM, "sections": {"tools": "Use read, edit, bash."}})
    b.user("Build a CSV importer in src/importer.py. Never use global state in the importer.", id="u1")
    b.assistant("I will read the spec first.", calls=[{"id": "c1", "name": "read", "arguments": {"path": "docs/spec.md"}}],
                id="a1", **MODEL)
    b.tool_result("c1", "Columns: id, name, amount", id="t1")
    b.assistant("", calls=[{"id": "c2", "name": "bash", "arguments": {"command": "pytest -q"}}], id="a2", **MODEL)
    b.add("message", id="t2", message={
        "role": "toolResult", "toolCallId": "c2", "toolName": "bash", "isError": True,
        "content": [{"type": "text", "text": "FAILED tests/test_importer.py::test_load - KeyError: 'amount'\n"
                                             "Command exited with code 1"}]})
    b.assistant("The test fails in `parse_row`; fixing it.",
                calls=[{"id": "c3", "name": "edit", "arguments": {"path": "src/importer.py", "oldText": "a", "newText": "b"}}],
                id="a3", **MODEL)
    b.tool_result("c3", "edited src/importer.py", name="edit", id="t3")
    b.assistant("Fixed: the amount is parsed as a Decimal.", usage=3000, id="a4", **MODEL)
    b.user("Keep the public API unchanged" + (f"; the key {secret} stays out of the code" if secret else "") + ".",
           id="u2")
    b.assistant("Understood: `load_csv` keeps its signature.", usage=3200, id="a5", **MODEL)
    b.user("Now add a --strict flag.", id="u3")
    b.assistant("", calls=[{"id": "c4", "name": "edit", "arguments": {"path": "src/cli.py", "oldText": "x", "newText": "y"}}],
                id="a6", **MODEL)
    b.tool_result("c4", "edited src/cli.py", name="edit", id="t4")
    b.assistant("Added --strict to the CLI.", usage=3500, id="a7", **MODEL)
    b.add("context_edit", id="e1", targetId="a1", replacement={"content": EDITED_A1})
    b.add("context_edit", id="e2", targetId="t4", replacement={"content": EDITED_T4})
    if compacted:
        b.add("compaction", id="k1", summary=SUMMARY, firstKeptEntryId="u3", tokensBefore=3500,
              details={"readFiles": ["docs/spec.md"], "modifiedFiles": ["src/importer.py"]})
    b.user(TURNS[0], id="u4")
    b.assistant("", calls=[{"id": "c5", "name": "bash", "arguments": {"command": "pytest -q"}}], id="a8", **MODEL)
    b.tool_result("c5", "3 passed", name="bash", id="t5")
    b.assistant("All 3 tests pass.", usage=3900, id="a9", **MODEL)
    b.user(TURNS[1], id="u5")
    b.assistant("", calls=[{"id": "c6", "name": "edit", "arguments": {"path": "README.md", "oldText": "", "newText": "--strict"}}],
                id="a10", **MODEL)
    b.tool_result("c6", "edited README.md", name="edit", id="t6")
    b.assistant("Documented --strict in README.md.", usage=4100, id="a11", **MODEL)
    b.user(TURNS[2], id="u6")
    b.assistant("Committed as abc123.", usage=4200, id="a12", **MODEL)
    return b
