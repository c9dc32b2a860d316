"""Claude Code (`shared/formats/claude-code.md`): transcripts session-tree reads and never writes.

- Files: `~/.claude/projects/<cwd with / as ->/<sessionId>.jsonl`, one folder per project; a
  session's own folder beside it (`<sessionId>/`) holds its sub-agents' transcripts
  (`subagents/agent-<id>.jsonl`, read with the session) and its large tool outputs, and a
  project's `memory/` folder holds Claude's notes: none of them is searched for sessions.
- First line: no header; lines carry `sessionId` and `uuid`/`parentUuid`, or are one of its
  metadata lines.
- Reading: `reader.ClaudeReader`, imported when a file of Claude Code's is opened; a session's
  sub-agents (`subagents/agent-*.jsonl`, and a workflow run's, `subagents/workflows/<run>/`) are
  read with it.
- Links (`links.py`): `/branch` and SDK forks mark their copied rows `forkedFrom`; a
  `--resume --fork-session` copy keeps the original uuids and says nothing else.
"""

from __future__ import annotations

from ..agent import EDIT, READ, WRITE, Agent, FileTool, Tools, another_agents_file, links_of, reader_of

# Lines that describe the session rather than continue it (never nodes, even with a uuid).
METADATA_TYPES = frozenset({
    "summary", "custom-title", "ai-title", "agent-name", "last-prompt", "file-history-snapshot",
    "queue-operation", "permission-mode", "mode", "pr-link", "worktree-state",
})


def is_claude_line(obj: dict) -> bool:
    """A line only Claude Code writes: a session id with uuids, or one of its metadata lines."""
    if "sessionId" in obj and ("uuid" in obj or "parentUuid" in obj or obj.get("type") in METADATA_TYPES):
        return True
    return obj.get("type") in ("summary", "file-history-snapshot") and "payload" not in obj


CLAUDE_CODE = Agent(
    name="claude-code", title="Claude Code", flag="claude",
    home_folder=(".claude", "projects"), depth=1,  # <project>/
    recognises=is_claude_line, reader=reader_of(__name__, "ClaudeReader"), links=links_of(__name__),
    why_read_only=another_agents_file("Claude Code"),
    tools=Tools(
        files={
            "Read": FileTool(READ, ("file_path",)),
            "Edit": FileTool(EDIT, ("file_path",), ("old_string", "new_string")),
            "MultiEdit": FileTool(EDIT, ("file_path",)),
            "Write": FileTool(WRITE, ("file_path",), content="content"),
            "NotebookEdit": FileTool(EDIT, ("notebook_path",)),
            "NotebookRead": FileTool(READ, ("notebook_path",)),
        },
        shells={"Bash": "command"},
    ),
    not_sessions=frozenset({"subagents", "memory", "workflows", "tool-results"}),
)
