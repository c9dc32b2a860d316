"""The MCP server on stdio, as an agent starts it (`session-tree mcp [ROOT] [--allow-writes]`): its
arguments, and the run. stdout carries the protocol alone; anything said to a person goes to
stderr."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.agents.places import agent_places, home_places, looked_in
from ..core.errors import SessionError

DESCRIPTION = ("answer coding agents over MCP on stdio: list, search and read sessions, contexts, "
               "comparisons and corpus figures (labels and verdicts with --allow-writes)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("root", metavar="ROOT", type=Path, nargs="?",
                        help="the sessions folder (default: the agents' usual folders under the home folder)")
    parser.add_argument("--allow-writes", action="store_true",
                        help="offer the tools that write: label an entry, give a verdict on a branch "
                             "(appended to pi v3 files; other files are never written)")
    parser.add_argument("--db", metavar="PATH", type=Path,
                        help="the corpus index to read when it exists (default: $XDG_CACHE_HOME/session-tree/"
                             "corpus.duckdb); without one the tools read the files")


def where(root: Path | None) -> tuple[Path, tuple[str, ...]]:
    """The folder served and the sessions folders under it: ROOT as it is, or the agents' sessions
    folders for the home folder."""
    if root is not None:
        if not root.is_dir():
            raise SessionError(f"{root}: not a folder")
        return root, tuple(agent_places(root))  # (a folder holding the agents' folders: as the home is)
    home = Path.home()
    found = home_places(home, [])
    if found is None:
        raise SessionError(f"no sessions folder found (looked for {looked_in(home, [])}); name a ROOT")
    return found[0], tuple(found[1])


def run(args: argparse.Namespace) -> int:
    """Serve on stdin and stdout until the client closes them."""
    from .server import build_server
    from .sources import Sources

    root, within = where(args.root)
    sources = Sources.of_root(root, within, args.db, args.allow_writes)
    build_server(sources).run("stdio")
    return 0

