"""What one agent means to session-tree, in one value: the description each agent's room
(`webapp/agents/<agent>/`) gives the registry (`webapp/agents/__init__.py`).

A room holds everything that differs between agents, so that adding one is a module and a line:
where its files lie under a home folder and how deep, how to tell its files from their first
line and which reader reads them, whether they may be written and why not, how the listing names
and orders them, and its tool names. Nothing here imports a reader: a description is read by
every command, a reader only when a file of that agent is opened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# What a tool call does, whichever agent's tool made it (`core/formats/tools.py` reads them).
READ, EDIT, WRITE, BASH, OTHER = "read", "edit", "write", "bash", "other"


@dataclass(frozen=True)
class FileTool:
    """A tool that reads or changes one file: its kind (READ, EDIT, WRITE), the argument naming the
    file (the first of these present), an edit's replaced and new text, a write's content."""

    kind: str
    path: tuple[str, ...]
    edit: tuple[str, str] | None = None
    content: str | None = None


@dataclass(frozen=True)
class Tools:
    """An agent's tool names, by what they do: `files` (name -> FileTool), `shells` (name -> the
    argument holding the command, a string or a list of words), `patches` (names whose `input` or
    `patch` argument is an apply_patch text)."""

    files: Mapping[str, FileTool] = field(default_factory=dict)
    shells: Mapping[str, str] = field(default_factory=dict)
    patches: frozenset[str] = frozenset()


def another_agents_file(title: str) -> Callable[[str], str]:
    """The reason every file of an agent whose format session-tree does not write is read-only."""
    return lambda fmt: f"is a {title} session, another agent's file that session-tree only reads"


@dataclass(frozen=True)
class Agent:
    """An agent whose session files session-tree reads (see the module's docstring)."""

    name: str  # its files' format (`SessionLog.format`) and the listing's `agent` value
    title: str  # as pages and listings say it
    flag: str  # the `ls` option that lists its folder alone: --<flag>
    home_folder: tuple[str, ...]  # its sessions folder under a home folder
    depth: int  # how many folders below its sessions folder its session files lie, at most
    recognises: Callable[[dict], bool]  # whether a file whose first readable line is this is its
    reader: Callable[[], type]  # its reader class (imported when a file of its is opened)
    # Why a file in `fmt` (one of its formats) is not written, in words that follow its name;
    # None for a file session-tree writes (SPEC §5c).
    why_read_only: Callable[[str], str | None]
    tools: Tools = Tools()
    # Folders among its sessions that hold none (files read with a session, its own data): never
    # searched for sessions, and not said to be skipped.
    not_sessions: frozenset[str] = frozenset()
    # Where its sessions are for a home folder, when more than `home_folder` decides it (pi's
    # environment variable and setting); None: `home / home_folder`.
    find_folder: Callable[[Path], Path] | None = None

    @property
    def option(self) -> str:
        """The attribute its `ls` flag sets on the parsed arguments."""
        return self.name.replace("-", "_")

    def sessions_folder(self, home: Path) -> Path:
        """Where it keeps its sessions, for the user whose home folder is `home`."""
        return self.find_folder(home) if self.find_folder else home.joinpath(*self.home_folder)
