"""`session-tree context FILE [--leaf ID] [--request | --diff A B] [--json]`: what the model sees
at an entry, the request it would be sent there, or what differs between the contexts at two
entries."""

from __future__ import annotations

import sys

import orjson

from ..core.context import build_context
from ..core.context_diff import diff_contexts
from ..core.errors import SessionError
from ..core.request import build_request
from ..core.session import Session
from ..core.tokens import context_tokens, token_text
from .inputs import leaf_named
from .output import print_json

_MARK = {"both": " ", "only-a": "-", "only-b": "+", "changed": "~"}


def cmd_context(args) -> int:
    if args.diff:
        return print_diff(Session.open(args.file).tree, *args.diff, args.json)
    session = Session.open(args.file)
    leaf = leaf_named(session, args.leaf)
    ctx = build_context(session.tree, leaf)
    tokens = context_tokens(ctx)
    if args.request:
        return _print_request(args, leaf, ctx)
    if args.json:
        print_json(
            {
                "sessionId": session.log.session_id,
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
    print(f"leaf {leaf}  model {ctx.settings.model_name or '-'}  "
          f"thinking {ctx.settings.thinking_level or '-'}  {token_text(tokens)}")
    for p in ctx.problems:
        print(f"! {p}")
    _print_messages(ctx.messages, lambda m: f"--- {m['role']} [{m['entryId']}]",
                    lambda c: c["function"]["name"])
    return 0


def _print_messages(messages: list[dict], heading, call_name) -> None:
    """Each chat message: its `heading(m)` line with its tool calls (`call_name(c)` each), then its
    content as text, or its parts as JSON."""
    for m in messages:
        calls = ", ".join(call_name(c) for c in m.get("tool_calls", ()))
        print(heading(m) + (f" → {calls}" if calls else ""))
        content = m.get("content")
        text = content if isinstance(content, str) else orjson.dumps(content).decode() if content else ""
        if text:
            print(text)


def _print_request(args, leaf: str | None, ctx) -> int:
    """The request a model would be sent at `leaf` (SPEC §5b), with what was added or skipped."""
    request = build_request(ctx)
    if args.json:
        print_json({"leafId": leaf, "model": ctx.settings.model, "messages": request.messages,
                    "tools": request.tools, "changes": [c.as_dict() for c in request.changes]})
        return 0
    print(f"leaf {leaf}  model {ctx.settings.model_name or '-'}  {len(request.messages)} messages "
          f"({len(request.added)} added, {len(request.skipped)} skipped)"
          + (f"; tools: {', '.join(t['function']['name'] for t in request.tools)}" if request.tools else ""))
    for c in request.skipped:
        print(f"- skipped [{c.entry_id}]: {c.reason}")

    def heading(m: dict) -> str:
        mark = "+ added " if m.get("added") else "--- "
        extra = f" for {m['tool_call_id']}" if m.get("role") == "tool" else ""
        return f"{mark}{m['role']} [{m['entryId']}]{extra}"

    _print_messages(request.messages, heading, lambda c: f"{c['function']['name']} ({c['id']})")
    return 0


def print_diff(tree, a: str, b: str, as_json: bool) -> int:
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


def register(command) -> None:
    sp = command("context", cmd_context)
    sp.add_argument("--leaf", metavar="ID")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--request", action="store_true",
                    help="the request as it would be sent (SPEC 5b), with what was added or skipped and why")
    sp.add_argument("--diff", nargs=2, metavar=("A", "B"),
                    help="compare the contexts at entries A and B: messages only in A (-), only in B (+), "
                         "changed (~, a word diff), and changes of model, thinking level, tools, system messages")
