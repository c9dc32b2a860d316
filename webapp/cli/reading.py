"""`session-tree tree FILE` and `session-tree validate FILE`: a session read whole, drawn as text
or checked line by line."""

from __future__ import annotations

from ..core.session import Session
from ..core.texttree import render_text_tree
from ..core.tree import WARNING_KINDS


def cmd_tree(args) -> int:
    print(render_text_tree(Session.open(args.file).tree))
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
    command("tree", cmd_tree)
    command("validate", cmd_validate)
