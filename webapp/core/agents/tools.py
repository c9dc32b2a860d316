"""What a tool call does, whichever agent made it: its kind (read, edit, write, bash) and the file,
command, edit or patch it names, read from each agent's tool names (`agents.agent.Tools`, in each
agent's room).

pi calls its tools `read`/`edit`/`write`/`bash` with `path`, `oldText`/`newText`, `content`,
`command`; Claude Code `Read`/`Edit`/`MultiEdit`/`Write`/`NotebookEdit`/`Bash` with `file_path`,
`old_string`/`new_string`, `command`; Codex `shell`/`exec_command`/`local_shell` with a command
(a list of words or a string) and `apply_patch` with a patch. `tool_action` reads any of them as
what the call does, so that file lists, tool cards and graph labels need no format's vocabulary.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from . import agents
from .agent import BASH, EDIT, OTHER, READ, WRITE, FileTool  # noqa: F401 (the kinds are this module's too)


@dataclass(frozen=True)
class ToolAction:
    kind: str  # read | edit | write | bash | other
    path: str | None = None  # the file read or changed (the first one, for a patch)
    command: str | None = None  # the shell command
    old: str | None = None  # an edit's replaced text
    new: str | None = None  # an edit's new text
    content: str | None = None  # a written file's content
    patch: str | None = None  # a patch (Codex apply_patch)
    paths: tuple[str, ...] = ()  # every file the call touches (a patch may touch several)
    shown: tuple[str, ...] = ()  # the argument names read into the fields above


_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)
_Tables = tuple[dict[str, FileTool], dict[str, str], frozenset[str]]
_made: tuple[tuple, _Tables] | None = None  # (the agents the tables were made from, the tables)


def _tables() -> _Tables:
    """Every registered agent's tool names, merged: file tools, shell tools (name -> the argument
    holding the command), patch tools. Made again when an agent is registered."""
    global _made
    known = agents()
    if _made is None or _made[0] is not known:
        files: dict[str, FileTool] = {}
        shells: dict[str, str] = {}
        patches: set[str] = set()
        for agent in reversed(known):  # (a name two agents use reads as the first one's)
            files.update(agent.tools.files)
            shells.update(agent.tools.shells)
            patches.update(agent.tools.patches)
        _made = known, (files, shells, frozenset(patches))
    return _made[1]


def action_tables() -> tuple[dict[str, tuple[str, tuple[str, ...]]], dict[str, str], frozenset[str]]:
    """(file tool -> (kind, the arguments its path may be in, in order), shell tool -> the argument
    of its command, the patch tools): what `tool_action` reads, for a reader that does the same
    elsewhere (the corpus index's SQL projection of tool calls)."""
    files, shells, patches = _tables()
    return {name: (tool.kind, tuple(tool.path)) for name, tool in files.items()}, dict(shells), patches


def _command_text(value: Any) -> str | None:
    """A command as one line: a list of words is joined (Codex's `["bash", "-lc", "make"]` reads
    as the script it runs)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        if len(value) == 3 and value[0] in ("bash", "sh", "zsh") and value[1] in ("-lc", "-c"):
            return value[2]
        return shlex.join(value)
    return None


def tool_action(call: Any) -> ToolAction:
    """What a `toolCall` block (`{name, arguments}`) does, whichever agent wrote it."""
    if not isinstance(call, dict):
        return ToolAction(OTHER)
    name, args = call.get("name"), call.get("arguments")
    if not isinstance(name, str) or not isinstance(args, dict):
        return ToolAction(OTHER)
    file_tools, shell_tools, patch_tools = _tables()
    tool = file_tools.get(name)
    if tool is not None:
        kind, edit_keys, content_key = tool.kind, tool.edit, tool.content
        key = next((k for k in tool.path if isinstance(args.get(k), str)), None)
        if key is None:
            return ToolAction(OTHER)
        path = args[key]
        shown = [key]
        old = new = content = None
        if edit_keys and all(isinstance(args.get(k), str) for k in edit_keys):
            old, new = args[edit_keys[0]], args[edit_keys[1]]
            shown += edit_keys
        if content_key and isinstance(args.get(content_key), str):
            content = args[content_key]
            shown.append(content_key)
        return ToolAction(kind, path, None, old, new, content, None, (path,), tuple(shown))
    if name in shell_tools:
        key = shell_tools[name]
        command = _command_text(args.get(key))
        if command is None:
            return ToolAction(OTHER)
        return ToolAction(BASH, command=command, shown=(key,))
    if name in patch_tools:
        key = next((k for k in ("input", "patch") if isinstance(args.get(k), str)), None)
        if key is None:
            return ToolAction(OTHER)
        paths = tuple(p.strip() for p in _PATCH_FILE.findall(args[key]))
        return ToolAction(EDIT, paths[0] if paths else None, patch=args[key], paths=paths, shown=(key,))
    return ToolAction(OTHER)
