"""`session-tree show FILE [--json]`: a session's header, counts, roots, leaves, labels and problems.

A script runs it after every session it writes: `show --json` is timed as a whole process against
a bare parse of the file (bench/show_json.py), so the CLI imports this module alone to run `show`,
and this module the outline reader alone for `--json`.
"""

from __future__ import annotations

from ..core.outline import outline_json
from .output import path_text, print_json_pieces, shown


def cmd_show(args) -> int:
    if args.json:
        print_json_pieces(outline_json(args.file, {"path": path_text(args.file)}))
        return 0
    # The session's module (with the context, compaction and token modules) only for the text:
    # importing it made `show --json` of 10,000 entries cost 1.14x the CPU (0.144 s against
    # 0.125 s, the median of 20 runs in turn) and 4 MiB more.
    from ..core.session import Session

    session = Session.open_outline(args.file)  # (it reads no token estimates)
    tree = session.tree
    header = tree.header or {}
    version = f"format {tree.format}" if tree.format != "unknown" else "no session header"
    print(f"session   {shown(header.get('id'))}  ({version})")
    print(f"name      {shown(tree.name)}")
    print(f"cwd       {shown(header.get('cwd'))}")
    print(f"created   {shown(header.get('timestamp'))}")
    print("entries   " + (", ".join(f"{k} {v}" for k, v in sorted(tree.counts_by_type().items())) or "none"))
    print(f"roots     {', '.join(tree.roots) or '-'}")
    print(f"orphans   {', '.join(tree.orphans) or '-'}")
    print(f"leaves    {', '.join(tree.leaves()) or '-'}")
    print(f"active    {tree.active_leaf or '(empty conversation)'}")
    for target, label in tree.labels.items():
        print(f"label     {target}: {label}")
    problems = tree.all_problems()
    print(f"problems  {len(problems)}")
    for p in problems:
        print(f"  {p.where}: {p.kind}: {p.message}")
    return 0


def register(command) -> None:
    command("show", cmd_show).add_argument("--json", action="store_true")
