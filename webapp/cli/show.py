"""`session-tree show FILE [--json]`: a session's header, counts, roots, leaves, labels and problems.

A script runs it after every session it writes: `show --json` is timed as a whole process against
a bare parse of the file (bench/show_json.py), so the CLI imports this module alone to run `show`,
and this module the outline reader alone: pi's columns read (`core/agents/pi/columns.py`), which
the text prints too.
"""

from __future__ import annotations

from ..core.outline import outline_facts, outline_json
from .output import path_text, print_json_pieces, shown


def cmd_show(args) -> int:
    if args.json:
        print_json_pieces(outline_json(args.file, {"path": path_text(args.file)}))
        return 0
    facts = outline_facts(args.file)  # (the document `--json` prints, read the same way)
    header = facts["header"] or {}
    version = f"format {facts['format']}" if facts["format"] != "unknown" else "no session header"
    print(f"session   {shown(header.get('id'))}  ({version})")
    print(f"name      {shown(facts['name'])}")
    print(f"cwd       {shown(header.get('cwd'))}")
    print(f"created   {shown(header.get('timestamp'))}")
    print("entries   " + (", ".join(f"{k} {v}" for k, v in sorted(facts["counts"].items())) or "none"))
    print(f"roots     {', '.join(facts['roots']) or '-'}")
    print(f"orphans   {', '.join(facts['orphans']) or '-'}")
    print(f"leaves    {', '.join(facts['leaves']) or '-'}")
    print(f"active    {facts['activeLeaf'] or '(empty conversation)'}")
    for target, label in facts["labels"].items():
        print(f"label     {target}: {label}")
    print(f"problems  {len(facts['problems'])}")
    for p in facts["problems"]:
        where = f"line {p['line'] or '–'}"
        print(f"  {p['file'] + ' ' + where if p.get('file') else where}: {p['kind']}: {p['message']}")
    return 0


def register(command) -> None:
    command("show", cmd_show).add_argument("--json", action="store_true")
