"""A session is titled by what the person asked: not by the context an agent puts in user
messages (Codex's `<environment_context>` and AGENTS.md blocks)."""

from __future__ import annotations

import orjson

from webapp.core.catalog import first_message_preview, first_user_message
from webapp.core.session import Session

META = {"timestamp": "2026-08-03T10:00:00.000Z", "type": "session_meta",
        "payload": {"id": "0199a000-0000-7000-8000-000000000001", "timestamp": "2026-08-03T10:00:00.000Z",
                    "cwd": "/home/ana/proj", "originator": "codex_cli_rs", "cli_version": "0.50.0"}}


def user(text: str, at: str) -> dict:
    return {"timestamp": at, "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}


def test_a_codex_session_is_titled_by_the_first_thing_the_person_asked(tmp_path):
    lines = [META,
             user("# AGENTS.md instructions for /home/ana/proj\n\n<INSTRUCTIONS>be brief</INSTRUCTIONS>", "2026-08-03T10:00:01.000Z"),
             user("<environment_context>\n  <cwd>/home/ana/proj</cwd>\n</environment_context>", "2026-08-03T10:00:02.000Z"),
             user("Why does the importer skip rows?", "2026-08-03T10:00:03.000Z")]
    path = tmp_path / "rollout-2026-08-03T10-00-00-0199a000-0000-7000-8000-000000000001.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    tree = Session.open(path).tree
    assert first_user_message(tree) == "Why does the importer skip rows?"
    assert first_message_preview(tree) == "Why does the importer skip rows?"
