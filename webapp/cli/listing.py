"""`session-tree ls [ROOT] [--pi|--claude|--codex] [--index] [--json]`: the sessions under a
sessions root, or under the agents' usual folders of the home folder; with --index, read from the
corpus index (`corpus.list_indexed`)."""

from __future__ import annotations

from pathlib import Path

from ..core.catalog import USUAL_PLACES, agent_places, summarize_session, usual_places
from ..core.errors import SessionError
from ..core.storage import discover
from .output import escape_controls, path_text, print_listing


def agent_folders(args) -> tuple[Path, list[str]]:
    """The folder to list and the sessions folders under it: ROOT as it is, or (no ROOT, or
    --pi/--claude/--codex) the agents' usual folders under the home folder that exist (`serve`
    finds its sessions so too)."""
    chosen = [s for s in USUAL_PLACES if getattr(args, s.replace("-", "_"), False)]
    if args.root is not None and not chosen:
        return args.root, agent_places(args.root)  # a folder holding the agents' folders: as the home is
    home = Path.home()
    places = usual_places(home, chosen or tuple(USUAL_PLACES))
    if not places:
        wanted = ", ".join("~/" + "/".join(USUAL_PLACES[s]) for s in chosen or USUAL_PLACES)
        raise SessionError(f"no sessions folder found (looked for {wanted}); name a ROOT")
    return home, places


def cmd_ls(args) -> int:
    if args.index:
        # The index's modules (duckdb) only for --index: 0.09 s of CPU to import (`time.process_time`
        # around the import, modules compiled) on top of this module's 0.035 s, which `ls` of the
        # files does not pay.
        from .corpus import list_indexed

        return list_indexed(args)
    rows = []
    root, within = agent_folders(args)
    for path in discover(root, within):
        try:
            rows.append({**summarize_session(path).as_dict(), "path": path_text(path)})
        except (OSError, SessionError) as exc:
            rows.append({"path": path_text(path), "error": escape_controls(str(exc))})
    print_listing(rows, args.json)
    return 0


def _ls_command(command) -> None:
    sp = command("ls", cmd_ls, file=False)
    sp.add_argument("root", metavar="ROOT", type=Path, nargs="?")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--pi", action="store_true", help="pi's sessions: ~/.pi/agent/sessions")
    sp.add_argument("--claude", dest="claude_code", action="store_true",
                    help="Claude Code's sessions: ~/.claude/projects")
    sp.add_argument("--codex", action="store_true", help="Codex's sessions: ~/.codex/sessions")
    sp.add_argument("--index", action="store_true",
                    help="bring the corpus index up to date and list from it (fast on thousands of sessions; "
                         "the server that holds it does both)")
    sp.add_argument("--db", metavar="PATH", type=Path, help="with --index: the database file")


def register(command) -> None:
    _ls_command(command)
