"""`session-tree compare FILE ID ID… [--json | --html OUT]`: the figures of the web comparison,
with each branch's status and verdicts, on the command line."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from flask import g

from ..core.compare import FIGURE_ROWS, compare, comparison_data
from ..core.entries import short_id
from ..core.errors import SessionError
from ..core.session import Session
from ..core.storage import write_new_file
from ..web.app import create_app
from ..web.compare import export_html, figure_text
from .output import print_json, print_wrote
from .share import add_redaction_arguments, shared_copy
from .verdict import verdict_rows


def cmd_compare(args) -> int:
    session = Session.open(args.file)
    tree = session.tree
    ids = list(dict.fromkeys(tree.find(ref).id for ref in args.ids))
    if len(ids) < 2:
        raise SessionError("compare: name at least two different entries")
    base = ids.index(tree.find(args.baseline).id) if args.baseline else 0
    if args.html:
        return _compare_html(args, ids, ids[base])
    cmp = compare(tree, ids, baseline=base, alignment=args.align)
    if args.json:
        print_json(comparison_data(cmp))
        return 0
    where = f"from {short_id(cmp.ancestor)} ({len(cmp.shared)} shared entries)" if cmp.ancestor else "sharing no entry"
    first = "none" if cmp.divergence is None else f"row {cmp.divergence + 1} ({cmp.divergence_kind})"
    print(f"{len(ids)} branches {where}; {len(cmp.rows)} aligned rows; first divergence: {first}")
    print("figures: after the divergence / whole path")
    table = [["", *[f"{i + 1} {short_id(b.tip)}" for i, b in enumerate(cmp.branches)]],
             ["status", *[b.outcome.status_text for b in cmp.branches]]]
    table += verdict_rows(session, [b.tip for b in cmp.branches])
    for row in FIGURE_ROWS:
        cells = []
        for b in cmp.branches:
            mine = figure_text(row.kind, row.mine(b))
            whole = row.whole and figure_text(row.whole_kind or row.kind, row.whole(b))
            cells.append(f"{mine} / {whole}" if whole and row.kind != "names" else mine)
        table.append([row.title.lower(), *cells])
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    for i, b in enumerate(cmp.branches):
        text = " ".join((b.outcome.answer_text or "(no answer)").split())
        why = f"; {b.outcome.detail}" if b.outcome.detail else ""
        print(f"\n[{i + 1}] {short_id(b.tip)} final answer ({b.outcome.status_text}{why}):\n  {text[:400]}{'…' if len(text) > 400 else ''}")
    return 0


def _compare_html(args, ids: list[str], base: str) -> int:
    """The web app's self-contained export, rendered without a server."""
    with shared_copy(args.file.resolve(), args) as (path, redaction, shared):
        if path is None:
            return 0
        if shared:  # (an id may hold a value redacted everywhere: the copy's ids are asked for)
            ids, base = [shared.replace.text(i) for i in ids], shared.replace.text(base)
        query = urlencode({"ids": ",".join(ids), "align": args.align, "base": base})
        app = create_app(path.parent)
        with app.test_request_context(f"/s/{path.name}/compare/export?{query}"):
            if shared:  # a data folder's verdicts are read by the session's id: theirs, redacted, stand instead
                g.branch_verdicts = {path.name: shared.verdicts}
            html, _ = export_html(path.name, ids, redaction)
    write_new_file(Path(args.html), html.encode("utf-8"), replace=True)
    print_wrote(args.html, len(html.encode()))
    return 0


def register(command) -> None:
    sp = command("compare", cmd_compare)
    sp.add_argument("ids", metavar="ID", nargs="+", help="the tips of the branches (two or more)")
    sp.add_argument("--align", choices=("content", "number"), default="content",
                    help="line turns up by their prompts (default) or by their number")
    sp.add_argument("--baseline", metavar="ID", help="the branch word diffs are made against (default: the first)")
    out = sp.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--html", metavar="OUT", help="write the comparison as one self-contained HTML file")
    add_redaction_arguments(sp)
