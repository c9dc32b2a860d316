"""`session-tree context FILE [--leaf ID] [--request | --diff A B] [--json]`: what the model sees
at an entry, the request it would be sent there, or what differs between the contexts at two
entries; and `session-tree edit-context FILE NODE --omit | --replace-file F`: changing it."""

from __future__ import annotations

import sys


from ..core.beside import conversation_at
from ..core.context import build_context
from ..core.context_diff import diff_contexts
from ..core.context_text import context_blocks, context_head, diff_lines, request_text
from ..core.edit_preview import preview_edit
from ..core.edit_writes import write_context_edit
from ..core.errors import SessionError
from ..core.request import build_request
from ..core.session import Session
from ..core.tokens import context_tokens
from .inputs import leaf_named, read_summary_file
from .output import print_json


def cmd_context(args) -> int:
    """The context at an entry of the file's conversation across files (SPEC §5e: a fork's leaf
    reads what it inherited from the files it names), or of the file alone (`--alone`)."""
    tree = Session.open(args.file).tree if args.alone else conversation_at(args.file)
    if args.diff:
        return print_diff(tree, *args.diff, args.json)
    leaf = tree.active_leaf if args.leaf is None else tree.find(args.leaf).id
    ctx = build_context(tree, leaf)
    tokens = context_tokens(ctx)
    if args.request:
        return _print_request(args, leaf, ctx)
    if args.json:
        print_json(
            {
                "sessionId": (tree.header or {}).get("id"),
                "leafId": leaf,
                "model": ctx.settings.model,
                "thinkingLevel": ctx.settings.thinking_level,
                "activeTools": ctx.settings.active_tools,
                "tokens": {"context": tokens.context, "estimated": tokens.estimated},
                "compactionId": ctx.compaction.id if ctx.compaction else None,
                "problems": ctx.problems,
                "messages": ctx.messages,
            }
        )
        return 0
    _print_text(context_head(leaf, ctx), context_blocks(ctx))
    return 0


def _print_text(head: list[str], blocks) -> None:
    """What `core/context_text` reads out (the MCP server answers a model the same text)."""
    for line in head:
        print(line)
    for block in blocks:
        print(block)


def _print_request(args, leaf: str | None, ctx) -> int:
    """The request a model would be sent at `leaf` (SPEC §5b), with what was added or skipped."""
    if args.json:
        request = build_request(ctx)
        print_json({"leafId": leaf, "model": ctx.settings.model, "messages": request.messages,
                    "tools": request.tools, "changes": [c.as_dict() for c in request.changes]})
        return 0
    _print_text(*request_text(leaf, ctx))
    return 0


def print_diff(tree, a: str, b: str, as_json: bool) -> int:
    try:
        diff = diff_contexts(tree, a, b)
    except SessionError as exc:
        print(f"session-tree: {exc}", file=sys.stderr)
        return 2
    if as_json:
        print_json(diff.as_dict())
        return 0
    for line in diff_lines(diff, a, b):
        print(line)
    return 0


def _register_context(command) -> None:
    sp = command("context", cmd_context)
    sp.add_argument("--leaf", metavar="ID")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--request", action="store_true",
                    help="the request as it would be sent (SPEC 5b), with what was added or skipped and why")
    sp.add_argument("--diff", nargs=2, metavar=("A", "B"),
                    help="compare the contexts at entries A and B: messages only in A (-), only in B (+), "
                         "changed (~, a word diff), and changes of model, thinking level, tools, system messages")
    sp.add_argument("--alone", action="store_true",
                    help="the file by itself: without what it inherits from the files it continues (a fork's "
                         "source, a paginated Codex fork's parent), which are read when found beside it")


def cmd_edit_context(args) -> int:
    """pi 1.6's context edit from a shell: the token figures before and after are printed first,
    then the edit is written at the active leaf (or --at), in the session when it may be written,
    else in a new file that continues it (SPEC §5c); --dry-run writes nothing."""
    session = Session.open(args.file)
    leaf = leaf_named(session, args.at)
    target = session.tree.find(args.node).id
    replacement = None if args.omit else {"content": read_summary_file(args.replace_file)}
    preview = preview_edit(session.tree, leaf, target, replacement)
    written, continued = (None, None) if args.dry_run else write_context_edit(session, leaf, target, replacement)
    if args.json:
        print_json({"targetId": target, "leafId": leaf, "replacement": preview.replacement,
                    "tokensBefore": preview.before.context, "tokensAfter": preview.after.context,
                    "entryId": written["id"] if written else None,
                    "continuedIn": str(continued) if continued else None})
        return 0
    what = "left out of the context" if args.omit else "sent with the new text"
    print(f"{target}: {what}; context {preview.before.context:,} → {preview.after.context:,} tokens (estimated)")
    if continued:
        print(f"{args.file} is not written to: the edit is in {continued}")
    if written:
        print(written["id"])
    return 0


def register(command) -> None:
    _register_context(command)
    sp = command("edit-context", cmd_edit_context)
    sp.add_argument("node", metavar="NODE", help="the entry whose part of the context to change (a short id will do)")
    what = sp.add_mutually_exclusive_group(required=True)
    what.add_argument("--omit", action="store_true", help="take the entry out of what the model is sent")
    what.add_argument("--replace-file", metavar="F",
                      help="send the text of file F in the entry's place (UTF-8; its role and metadata stay)")
    sp.add_argument("--at", metavar="ID", help="the node whose context changes (default: the active leaf)")
    sp.add_argument("--dry-run", action="store_true", help="print the token figures before and after, write nothing")
    sp.add_argument("--json", action="store_true")
