"""`session-tree context FILE --diff A B`: what differs between the contexts at two entries."""

from __future__ import annotations

import sys

import orjson

from .core.errors import SessionError
from .core.session import Session
from .core.tokens import token_text

_MARK = {"both": " ", "only-a": "-", "only-b": "+", "changed": "~"}


def add_diff_option(sp) -> None:
    """`--diff A B` on the `context` command: with it, the command prints the diff instead."""
    sp.add_argument("--diff", nargs=2, metavar=("A", "B"),
                    help="compare the contexts at entries A and B: messages only in A (-), only in B (+), "
                         "changed (~, a word diff), and changes of model, thinking level, tools, system messages")
    context = sp.get_default("func")

    def run(args) -> int:
        if not args.diff:
            return context(args)
        return print_diff(Session.open(args.file).tree, *args.diff, args.json)

    sp.set_defaults(func=run)


def print_diff(tree, a: str, b: str, as_json: bool) -> int:
    from .core.context_diff import diff_contexts  # (the diff's modules only when a diff is asked for)

    try:
        diff = diff_contexts(tree, a, b)
    except SessionError as exc:
        print(f"session-tree: {exc}", file=sys.stderr)
        return 2
    if as_json:
        sys.stdout.buffer.write(orjson.dumps(diff.as_dict(), option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    print(f"A {a}  {token_text(diff.a.tokens)}  ({len(diff.a.context.messages)} messages)")
    print(f"B {b}  {token_text(diff.b.tokens)}  ({len(diff.b.context.messages)} messages)")
    print(f"shared until {diff.shared_until or '(nothing shared)'}; "
          + ", ".join(f"{diff.count(k)} {k}" for k in ("both", "changed", "only-a", "only-b")))
    for s in diff.settings:
        print(f"{s.name}: {s.a or '-'} → {s.b or '-'}".replace("\n", " ")[:300])
    for r in diff.rows:
        item = r.a or r.b
        where = item.entry.id if r.kind != "changed" else f"{r.a.entry.id} → {r.b.entry.id}"
        if r.kind == "changed":
            text = "".join(t if op == "equal" else f"[-{t}-]" if op == "delete" else f"{{+{t}+}}" for op, t in r.diff)
        else:
            text = item.text
        line = " ".join(text.split())
        print(f"{_MARK[r.kind]} {item.message.get('role')} [{where}] {line[:200]}")
    return 0
