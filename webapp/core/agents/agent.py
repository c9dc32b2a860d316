"""What one agent means to session-tree, in one value: the description each agent's room
(`webapp/core/agents/<agent>/`) gives the registry (`webapp/core/agents/__init__.py`).

A room holds everything that differs between agents, so that adding one is a module and a line:
where its files lie under a home folder and how deep, how to tell its files from their first
line and which reader reads them, whether they may be written and why not, how the listing names
and orders them, and its tool names. Nothing here imports a reader: a description is read by
every command, a reader only when a file of that agent is opened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from pathlib import Path
from types import ModuleType

# What a tool call does, whichever agent's tool made it (`tools.py` reads them).
READ, EDIT, WRITE, BASH, OTHER = "read", "edit", "write", "bash", "other"

# (Plain classes, not dataclasses: every command loads these at start-up, and making the three
# dataclasses cost 13 M instructions, 2% of `show --json` of 10,000 entries, timed as a whole
# process by bench/show_json.py.)


class FileTool:
    """A tool that reads or changes one file: its kind (READ, EDIT, WRITE), the argument naming the
    file (the first of `path` present), an edit's replaced and new text, a write's content."""

    __slots__ = ("kind", "path", "edit", "content")

    def __init__(self, kind: str, path: tuple[str, ...], edit: tuple[str, str] | None = None,
                 content: str | None = None) -> None:
        self.kind, self.path, self.edit, self.content = kind, path, edit, content


class Tools:
    """An agent's tool names, by what they do: `files` (name -> FileTool), `shells` (name -> the
    argument holding the command, a string or a list of words), `patches` (names whose `input` or
    `patch` argument is an apply_patch text)."""

    __slots__ = ("files", "shells", "patches")

    def __init__(self, files: Mapping[str, FileTool] | None = None, shells: Mapping[str, str] | None = None,
                 patches: frozenset[str] = frozenset()) -> None:
        self.files, self.shells, self.patches = files or {}, shells or {}, patches


def reader_of(room: str, name: str) -> Callable[[], type]:
    """The reader class `name` of the room (package) `room`, from its `reader` module, imported
    when a file of that agent is first opened: a command that reads only pi files never loads the
    other agents' readers, and one that reads none (`sql`, whose parser lists the agents' flags)
    loads no reader."""
    return lambda: getattr(import_module(f"{room}.reader"), name)


def module_of(room: str, name: str) -> Callable[[], ModuleType]:
    """The module `name` of the room `room`, imported when first asked for (as `reader_of`)."""
    return lambda: import_module(f"{room}.{name}")


def links_of(room: str) -> Callable[[], ModuleType]:
    """The `links` module of the room (package) `room`: how its files name the files they
    continue (`links.py` of this package says what it holds), imported when first asked."""
    return lambda: import_module(f"{room}.links")


_NO_LINKS = links_of(__package__ or "webapp.core.agents")  # (this package's own: a file that names no other)


def another_agents_file(title: str) -> Callable[[str], str]:
    """The reason every file of an agent whose format session-tree does not write is read-only."""
    return lambda fmt: f"is a {title} session, another agent's file that session-tree only reads"


class Agent:
    """An agent whose session files session-tree reads (see the module's docstring).

    - `name`: its files' format (`SessionLog.format`) and the listing's `agent` value;
    - `title`: as pages and listings say it; `flag`: the `ls` option that lists its folder alone;
    - `home_folder`: its sessions folder under a home folder; `depth`: how many folders below it
      its session files lie, at most;
    - `recognises(first)`: whether a file whose first readable line is `first` is its;
    - `reader()`: its reader class (imported when a file of its is opened);
    - `why_read_only(fmt)`: why a file in `fmt` (one of its formats) is not written, in words that
      follow the file's name; None for a file session-tree writes (SPEC §5c);
    - `tools`: its tool names;
    - `not_sessions`: folders among its sessions that hold none (files read with a session, its
      own data): never searched for sessions, and not said to be skipped;
    - `find_folder(home)`: where its sessions are, when more than `home_folder` decides it (pi's
      environment variable and setting); None: `home / home_folder`;
    - `links()`: its `links` module, how its files name the files they continue (forks, resumed
      copies, sub-agents: `links.py`), imported when a conversation across files is joined;
    - `projection()`: the module of its SQL projection of lines into the corpus tables' entry rows
      (`entries_sql`, `calls_sql`, `arg_keys`, `macros`), which a big corpus build runs in DuckDB
      over its files (`corpus.columns`), imported when a build first reads one; None: the format
      seam reads its files for the corpus.
    """

    __slots__ = ("name", "title", "flag", "home_folder", "depth", "recognises", "reader", "why_read_only",
                 "tools", "not_sessions", "find_folder", "links", "projection")

    def __init__(self, *, name: str, title: str, flag: str, home_folder: tuple[str, ...], depth: int,
                 recognises: Callable[[dict], bool], reader: Callable[[], type],
                 why_read_only: Callable[[str], str | None], tools: Tools | None = None,
                 not_sessions: frozenset[str] = frozenset(),
                 find_folder: Callable[[Path], Path] | None = None,
                 links: Callable[[], ModuleType] | None = None,
                 projection: Callable[[], ModuleType] | None = None) -> None:
        self.name, self.title, self.flag, self.home_folder, self.depth = name, title, flag, home_folder, depth
        self.recognises, self.reader, self.why_read_only = recognises, reader, why_read_only
        self.tools = tools or Tools()
        self.not_sessions, self.find_folder = not_sessions, find_folder
        self.links = links or _NO_LINKS
        self.projection = projection

    def __repr__(self) -> str:
        return f"Agent({self.name!r})"

    @property
    def option(self) -> str:
        """The attribute its `ls` flag sets on the parsed arguments."""
        return self.name.replace("-", "_")

    def sessions_folder(self, home: Path) -> Path:
        """Where it keeps its sessions, for the user whose home folder is `home`."""
        return self.find_folder(home) if self.find_folder else home.joinpath(*self.home_folder)
