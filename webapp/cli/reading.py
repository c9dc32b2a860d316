"""`session-tree tree FILE [--json]` and `session-tree validate FILE`: a session read whole, drawn
as text (or its drawing's entries as JSON) or checked line by line."""

from __future__ import annotations

from ..core.errors import SessionError
from ..core.session import Session
from ..core.texttree import render_text_tree, text_tree_json
from ..core.tree import WARNING_KINDS
from .output import path_text, print_json


def cmd_tree(args) -> int:
    tree = Session.open(args.file).tree
    if not tree.by_id:
        bad = [p for p in tree.all_problems() if p.kind == "bad-line"]
        if bad:  # not one line was an entry: another kind of file, not a session to draw
            raise SessionError(f"{args.file}: not a session file: no line of it is a JSON entry "
                               f"(line {bad[0].line}: {bad[0].message})")
    if args.json:
        print_json({"path": path_text(args.file), **text_tree_json(tree)})
    else:
        print(render_text_tree(tree) if tree.by_id else "(no entries)")
    return 0


def cmd_validate(args) -> int:
    """Every problem with its line; warnings (WARNING_KINDS) are listed but do not fail it."""
    problems = Session.open(args.file).tree.all_problems()
    for p in problems:
        level = "warning: " if p.kind in WARNING_KINDS else ""
        where = f"{args.file}: {p.where}" if p.file else f"{args.file}:{p.line or '-'}"  # a sub-agent's file
        print(f"{where}: {level}{p.kind}: {p.message}")
    if not problems:
        print(f"{args.file}: no problems")
    return 1 if any(p.kind not in WARNING_KINDS for p in problems) else 0


def register(command) -> None:
    command("tree", cmd_tree).add_argument("--json", action="store_true")
    command("validate", cmd_validate)
