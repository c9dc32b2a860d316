"""Codex (`shared/formats/codex.md`): rollouts session-tree reads and never writes.

- Files: `~/.codex/sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl`: three folders deep.
- First line: `{timestamp, type, payload}`, of one of its line types.
- Reading: `reader.CodexReader`, imported when a file of Codex's is opened.
- Links (`links.py`): a fork's `session_meta` names `forked_from_id` (a paginated one, also where
  the parent's history ends, `history_base`); a sub-agent's names `parent_thread_id`.
"""

from __future__ import annotations

from ..agent import READ, Agent, FileTool, Tools, another_agents_file, links_of, reader_of

LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})


def is_codex_line(obj: dict) -> bool:
    return obj.get("type") in LINE_TYPES and isinstance(obj.get("payload"), dict)


CODEX = Agent(
    name="codex", title="Codex", flag="codex",
    home_folder=(".codex", "sessions"), depth=3,  # YYYY/MM/DD/
    recognises=is_codex_line, reader=reader_of(__name__, "CodexReader"), links=links_of(__name__),
    why_read_only=another_agents_file("Codex"),
    tools=Tools(
        files={"read_file": FileTool(READ, ("path", "file_path")), "view_image": FileTool(READ, ("path",))},
        # (a command as a list of words, or a string; `exec_command` names it `cmd`)
        shells={"shell": "command", "local_shell": "command", "local_shell_call": "command",
                "shell_command": "command", "exec_command": "cmd", "container.exec": "cmd"},
        patches=frozenset({"apply_patch"}),
    ),
)
