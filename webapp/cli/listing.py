"""`session-tree ls [ROOT] [--pi|--claude|--codex] [--index] [--files] [--json]`: the sessions
under a sessions root, or under the agents' usual folders of the home folder, one row per
conversation across files (its other files under it; `--files`: a row each); with --index, read
from the corpus index (`corpus.list_indexed`)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.agents import agents
from ..core.agents.places import discover, skipped_note
from ..core.catalog import summarize_session
from ..core.errors import SessionError
from .output import escape_controls, fold_conversations, path_text, print_listing
from .places import agent_folders, say_no_sessions


def cmd_ls(args) -> int:
    if args.index:
        # The index's modules (duckdb) only for --index: 0.09 s of CPU to import (`time.process_time`
        # around the import, modules compiled) on top of this module's 0.035 s, which `ls` of the
        # files does not pay.
        from .corpus import list_indexed

        return list_indexed(args)
    rows, skipped = [], []
    found = agent_folders(args)
    for path in discover(*found, skipped) if found else ():
        try:
            rows.append({**summarize_session(path).as_dict(), "path": path_text(path)})
        except (OSError, SessionError) as exc:
            rows.append({"path": path_text(path), "error": escape_controls(str(exc))})
    print_listing(fold_conversations(rows, args.files), args.json)
    if not rows:
        say_no_sessions(args)
    if skipped:
        print(f"session-tree: {escape_controls(skipped_note(skipped))}", file=sys.stderr)
    return 0


def _ls_command(command) -> None:
    sp = command("ls", cmd_ls, file=False)
    sp.add_argument("root", metavar="ROOT", type=Path, nargs="?")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--files", action="store_true",
                    help="every file on its own row (a conversation across files is one row, its files under it)")
    for agent in agents():  # --pi, --claude, --codex
        sp.add_argument(f"--{agent.flag}", dest=agent.option, action="store_true",
                        help=f"{agent.title}'s sessions: ~/{'/'.join(agent.home_folder)}")
    sp.add_argument("--index", action="store_true",
                    help="bring the corpus index up to date and list from it (fast on thousands of sessions; "
                         "the server that holds it does both)")
    sp.add_argument("--db", metavar="PATH", type=Path, help="with --index: the database file")


def register(command) -> None:
    _ls_command(command)
