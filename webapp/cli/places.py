"""Where the commands that find sessions look (`ls`, `ls --index`, `index`, `serve`): ROOT as it
was typed, else the agents' usual folders under the home folder; and the one way they say that
they found none there (on stderr, exit 0: an empty listing is an answer, not a failure)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.catalog import USUAL_PLACES, agent_places, usual_places
from .output import path_text


def agent_folders(args) -> tuple[Path, list[str]] | None:
    """The folder to list and the sessions folders under it: ROOT as it is, or (no ROOT, or
    --pi/--claude/--codex) the agents' usual folders under the home folder that exist; None when
    there is none of those."""
    chosen = [s for s in USUAL_PLACES if getattr(args, s.replace("-", "_"), False)]
    if args.root is not None and not chosen:
        return args.root, agent_places(args.root)  # a folder holding the agents' folders: as the home is
    home = Path.home()
    places = usual_places(home, chosen or tuple(USUAL_PLACES))
    return (home, places) if places else None


def say_no_sessions(args) -> None:
    """`session-tree: no sessions under …`, naming the ROOTs as typed or the agents' usual folders."""
    chosen = [s for s in USUAL_PLACES if getattr(args, s.replace("-", "_"), False)]
    roots = getattr(args, "roots", None) or [r for r in [getattr(args, "root", None)] if r is not None]
    if roots and not chosen:
        where = ", ".join(path_text(r) for r in roots)
    else:
        wanted = ", ".join("~/" + "/".join(USUAL_PLACES[s]) for s in chosen or USUAL_PLACES)
        where = f"the agents' usual folders ({wanted}); name a ROOT to look elsewhere"
    print(f"session-tree: no sessions under {where}", file=sys.stderr)
