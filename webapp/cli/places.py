"""Where the commands that find sessions look (`ls`, `ls --index`, `index`, `serve`): ROOT as it
was typed, else the agents' sessions folders for the home folder (`core/agents/places.py`); and the
one way they say that they found none there (on stderr, exit 0: an empty listing is an answer, not
a failure)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.agents import agents
from ..core.agents.places import agent_places, home_places, looked_in
from .output import path_text


def chosen_agents(args) -> list:
    """The agents whose flag (`--pi`, `--claude`, `--codex`, ...) the command was given."""
    return [a for a in agents() if getattr(args, a.option, False)]


def agent_folders(args) -> tuple[Path, list[str]] | None:
    """The folder to list and the sessions folders under it: ROOT as it is, or (no ROOT, or an
    agent's flag) the agents' sessions folders for the home folder that exist; None when there is
    none of those."""
    chosen = chosen_agents(args)
    if args.root is not None and not chosen:
        return args.root, agent_places(args.root)  # a folder holding the agents' folders: as the home is
    return home_places(Path.home(), chosen)


def say_no_sessions(args) -> None:
    """`session-tree: no sessions under …`, naming the ROOTs as typed or the agents' usual folders."""
    chosen = chosen_agents(args)
    roots = getattr(args, "roots", None) or [r for r in [getattr(args, "root", None)] if r is not None]
    if roots and not chosen:
        where = ", ".join(path_text(r) for r in roots)
    else:
        where = f"the agents' usual folders ({looked_in(Path.home(), chosen)}); name a ROOT to look elsewhere"
    print(f"session-tree: no sessions under {where}", file=sys.stderr)
