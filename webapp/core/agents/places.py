"""Where the agents keep their session files, and the walk that finds them.

A sessions root is searched as its agent lays its files out: pi's per-cwd folders and Claude
Code's per-project folders one level down, Codex's YYYY/MM/DD folders three (each room's
`depth`). A root that is no agent's own folder (a copy, a plain folder of files) is searched as
deep as the deepest agent's layout. A folder the walk reaches at that depth and does not enter is
*skipped*, and said so (`skipped_note`): nothing under a root is passed over without a word, but
the folders an agent keeps beside its sessions (`Agent.not_sessions`, and a session's own folder
named as its file) hold no sessions and are neither searched nor said.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from ..errors import SessionNotFound
from ..storage import orphaned_sidecars, session_of_sidecar, stays_in
from . import agents
from .agent import Agent


def deepest() -> int:
    """How deep a folder that is no agent's own is searched: as deep as any agent lays its files."""
    return max(a.depth for a in agents())


def agent_at(folder: Path) -> Agent | None:
    """The agent whose sessions folder `folder` is: it ends in the agent's folder under a home
    (`.codex/sessions`), or it is where the agent keeps its sessions for this user (pi's
    `sessionDir`, say)."""
    parts = folder.parts
    for agent in agents():
        if parts[-len(agent.home_folder):] == agent.home_folder:
            return agent
    home = Path.home()
    for agent in agents():
        if agent.find_folder is not None and os.path.abspath(folder) == os.path.abspath(agent.sessions_folder(home)):
            return agent
    return None


def depth_at(folder: Path) -> int:
    """How many folders below `folder` session files are looked for."""
    agent = agent_at(folder)
    return agent.depth if agent is not None else deepest()


def max_parts(root: Path, within: Iterable[str] = ()) -> int:
    """The most parts the path of a session file under `root` (and `within`) has: what a URL
    naming one may hold."""
    tops = [PurePosixPath(Path(w).as_posix()) for w in within]
    if not tops:
        return deepest() + 1
    return max(len(top.parts) + depth_at(root / top) + 1 for top in tops)


def usual_places(home: Path, chosen: Iterable[Agent] | None = None) -> list[str]:
    """The sessions folders of the `chosen` agents (all by default) that exist for the user whose
    home folder is `home`: relative to it, or whole where an agent keeps them elsewhere (pi's
    `PI_CODING_AGENT_SESSION_DIR`)."""
    out = []
    for agent in agents() if chosen is None else chosen:
        folder = agent.sessions_folder(home)
        if folder.is_dir():
            out.append(str(folder.relative_to(home)) if folder.is_relative_to(home) else str(folder))
    return out


def home_places(home: Path, chosen: list[Agent]) -> tuple[Path, list[str]] | None:
    """(the folder to list, the sessions folders under it) of the `chosen` agents (all when none is)
    for the home folder: the home folder, or, when an agent keeps its sessions outside it, the
    folder holding both; None when none of those folders exists."""
    places = usual_places(home, chosen or None)
    if not places:
        return None
    outside = [Path(p) for p in places if Path(p).is_absolute()]
    if not outside:
        return home, places
    root = Path(os.path.commonpath([home, *outside]))
    return root, [str((home / p).relative_to(root)) for p in places]


def looked_in(home: Path, chosen: list[Agent]) -> str:
    """Where `home_places` looks for the `chosen` agents' (all when none is) sessions, as a person
    reads it: `~/.pi/agent/sessions, ~/.claude/projects, ~/.codex/sessions`."""
    folders = [a.sessions_folder(home) for a in chosen or agents()]
    return ", ".join("~/" + f.relative_to(home).as_posix() if f.is_relative_to(home) else str(f) for f in folders)


def agent_places(root: Path) -> list[str]:
    """The agents' sessions folders a ROOT holds, relative to it, as if it were the home folder:
    `.claude/projects`, `.pi/agent/sessions`, `.codex/sessions` below it (a home folder, or a copy
    of a colleague's `.claude`), or the rest of that path when ROOT is one of the agents' own
    folders (`.codex` itself: its YYYY/MM/DD folders are then found at their depth). Empty when it
    holds none: ROOT is then a sessions folder of its own."""
    found = [str(Path(*a.home_folder)) for a in agents() if root.joinpath(*a.home_folder).is_dir()]
    for agent in agents():
        first, rest = agent.home_folder[0], agent.home_folder[1:]
        if root.name == first and rest and root.joinpath(*rest).is_dir():
            found.append(str(Path(*rest)))
    return found


def discover(root: str | os.PathLike, within: Iterable[str] = (), skipped: list[str] | None = None) -> list[Path]:
    """Every session file under a sessions root, each folder searched as deep as its agent lays
    out its files (see the module's docstring); only under the folders `within` (relative to the
    root) when given. Hidden folders and the folders an agent keeps beside its sessions are not
    entered, and a Claude Code 2.0.x sub-agent transcript beside its session (`session_of_sidecar`)
    is no session of its own; the sub-agents' transcripts in a session's own folder whose session
    file is gone (`orphaned_sidecars`) are each one. The folders not entered for their depth are added to `skipped`."""
    return [Path(name) for name in discover_names(root, within, skipped)]


def discover_names(root: str | os.PathLike, within: Iterable[str] = (), skipped: list[str] | None = None) -> list[str]:
    """`discover`'s files as path names (str), in the same order: what a check of thousands of
    files for changes asks, without a Path made and compared per file (half its time)."""
    root = Path(root)
    if not root.is_dir():
        raise SessionNotFound(f"{root}: not a folder")
    found: list[str] = []
    not_sessions = frozenset().union(*(a.not_sessions for a in agents()))
    for top in [root / w for w in within] or [root]:
        try:
            inside = top.resolve()
        except (OSError, RuntimeError):
            continue
        _walk(str(top), inside, depth_at(top), not_sessions, found, skipped)
    return sorted(found, key=lambda name: name.split(os.sep))  # (as Paths sort: part by part)


def _walk(top: str, inside: Path, depth: int, not_sessions: frozenset[str], found: list[str],
          skipped: list[str] | None) -> None:
    join = os.path.join
    level = [top]
    for at in range(depth + 1):
        below = []
        for folder in level:
            try:  # (scandir: what each child is comes with the listing, not a stat of each)
                with os.scandir(folder) as it:
                    children = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            files = None  # (the names in this folder, when a folder in it is not entered)
            for e in children:
                name = e.name
                try:
                    if name.endswith(".jsonl") and e.is_file():
                        p = join(folder, name)
                        # (the entry knows whether it is a link, and only an `agent-` file may
                        # be a sub-agent's: a stat and a call fewer per file of thousands)
                        if (not e.is_symlink() or stays_in(Path(p), inside)) and (
                                not name.startswith("agent-") or session_of_sidecar(Path(p)) is None):
                            found.append(p)
                    elif not name.startswith(".") and name not in not_sessions and e.is_dir(follow_symlinks=False):
                        files = files if files is not None else {c.name for c in children}
                        if name + ".jsonl" not in files and (orphans := orphaned_sidecars(Path(folder, name))):
                            found.extend(str(p) for p in orphans)  # (a session's own folder, its session gone)
                        elif at < depth:
                            below.append(join(folder, name))
                        elif skipped is not None and name + ".jsonl" not in files:  # (else: read with its session)
                            skipped.append(join(folder, name))
                except OSError:
                    continue
        level = below


def skipped_note(skipped: list[str]) -> str:
    """What a listing says of the folders it did not search (`discover`'s `skipped`), in one line."""
    n = len(skipped)
    examples = ", ".join(skipped[:2]) + (f" and {n - 2:,} more" if n > 2 else "")
    return (f"{n:,} folder{'s' if n != 1 else ''} deeper than the agents keep their sessions "
            f"{'were' if n != 1 else 'was'} not searched ({examples}); name one as ROOT to list the sessions in it")
