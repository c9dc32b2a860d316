"""The registry of agents: one room per agent (`pi/`, `claude_code/`, `codex/`), each describing
all that agent means (`agent.Agent`), listed here in the order a listing shows them. Everything
else asks this module, so that adding an agent is its room and one line in `_AGENTS`.

It sits between the core's entries (which the readers make) and the core's log, tree and session
(which ask it which reader reads a file and whether a file may be written): it imports no module
that imports it. Where the agents' files lie on disk, and the walk that finds them, is `places`.
"""

from __future__ import annotations

from .agent import Agent
from .claude_code import CLAUDE_CODE
from .codex import CODEX
from .pi import PI

_AGENTS: tuple[Agent, ...] = (PI, CLAUDE_CODE, CODEX)

# The agent whose format session-tree writes, and whose reader reads a file of no known format.
DEFAULT = PI


def agents() -> tuple[Agent, ...]:
    """Every agent, in the order a listing shows them (and their first lines are told apart)."""
    return _AGENTS


def register(agent: Agent) -> None:
    """Add an agent after the others (what a room's line in `_AGENTS` does, for a test's agent)."""
    global _AGENTS
    if any(a.name == agent.name or a.flag == agent.flag for a in _AGENTS):
        raise ValueError(f"an agent named {agent.name!r} (or --{agent.flag}) is registered already")
    _AGENTS = (*_AGENTS, agent)


def unregister(agent: Agent) -> None:
    global _AGENTS
    _AGENTS = tuple(a for a in _AGENTS if a is not agent)


def by_name(name: str) -> Agent | None:
    return next((a for a in _AGENTS if a.name == name), None)


def of_format(fmt: str) -> Agent:
    """The agent a `SessionLog.format` belongs to: pi's versions, and a file of no known format or
    with nothing in it yet, are pi's."""
    return by_name(fmt) or DEFAULT


def source_of(fmt: str) -> str:
    """The name of the agent that wrote a file in format `fmt` (the listing's `agent`)."""
    return of_format(fmt).name


def reader_for(first: dict) -> type:
    """The reader of a file whose first readable line is `first`: the first agent that recognises
    it, else pi's (which reads lines of no known format as entries, and says it has no header)."""
    for agent in _AGENTS:
        if agent.recognises(first):
            return agent.reader()
    return DEFAULT.reader()


def read_only_formats() -> frozenset[str]:
    """The formats of the agents whose files are never written: every agent's but pi's. Their
    readers make the entries again from every line, their compactions keep nothing before them,
    and their sub-agents' entries name the file they come from."""
    return frozenset(a.name for a in _AGENTS if a is not DEFAULT)


def why_read_only(fmt: str) -> str | None:
    """Why a file in format `fmt` is not written (words that follow its name), or None."""
    return of_format(fmt).why_read_only(fmt)


def titles() -> dict[str, str]:
    """Agent name -> title, in listing order."""
    return {a.name: a.title for a in _AGENTS}


def order_sql(column: str) -> str:
    """A SQL expression ordering rows by the agent named in `column`, in listing order."""
    whens = " ".join(f"WHEN '{a.name.replace(chr(39), chr(39) * 2)}' THEN {i}" for i, a in enumerate(_AGENTS))
    return f"CASE {column} {whens} ELSE {len(_AGENTS)} END"
