"""The context at an entry (SPEC §5), the request made of it (§5b) and the difference between two
contexts, as lines of plain text: what `session-tree context` prints and what the MCP server
answers a model, one reading for both. Each message is one block (its heading line, then its
text), so that a reader that must stay short can stop between two messages."""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from .context import Context
from .context_diff import ContextDiff
from .request import build_request
from .tokens import context_tokens, token_text

_MARK = {"both": " ", "only-a": "-", "only-b": "+", "changed": "~"}


def message_block(m: dict, heading: str, call_name) -> str:
    """A chat message as text: `heading` with its tool calls (`call_name(c)` each), then its
    content as text, or its parts as JSON."""
    calls = ", ".join(call_name(c) for c in m.get("tool_calls", ()))
    content = m.get("content")
    text = content if isinstance(content, str) else orjson.dumps(content).decode() if content else ""
    return heading + (f" → {calls}" if calls else "") + (f"\n{text}" if text else "")


def context_head(leaf: str | None, ctx: Context) -> list[str]:
    """The lines before the messages: the leaf, the model, the thinking level, the tokens, the problems."""
    return [f"leaf {leaf}  model {ctx.settings.model_name or '-'}  "
            f"thinking {ctx.settings.thinking_level or '-'}  {token_text(context_tokens(ctx))}",
            *(f"! {p}" for p in ctx.problems)]


def context_blocks(ctx: Context) -> Iterator[str]:
    for m in ctx.messages:
        yield message_block(m, f"--- {m['role']} [{m['entryId']}]", lambda c: c["function"]["name"])


def request_head(leaf: str | None, ctx: Context, request) -> list[str]:
    """The lines before the request's messages: its figures, the tools it declares, what it skipped."""
    tools = ", ".join(t["function"]["name"] for t in request.tools)
    return [f"leaf {leaf}  model {ctx.settings.model_name or '-'}  {len(request.messages)} messages "
            f"({len(request.added)} added, {len(request.skipped)} skipped)" + (f"; tools: {tools}" if tools else ""),
            *(f"- skipped [{c.entry_id}]: {c.reason}" for c in request.skipped)]


def request_blocks(request) -> Iterator[str]:
    for m in request.messages:
        mark = "+ added " if m.get("added") else "--- "
        extra = f" for {m['tool_call_id']}" if m.get("role") == "tool" else ""
        yield message_block(m, f"{mark}{m['role']} [{m['entryId']}]{extra}",
                            lambda c: f"{c['function']['name']} ({c['id']})")


def request_text(leaf: str | None, ctx: Context) -> tuple[list[str], Iterator[str]]:
    """(head lines, message blocks) of the request a model would be sent at `leaf`."""
    request = build_request(ctx)
    return request_head(leaf, ctx, request), request_blocks(request)


def diff_lines(diff: ContextDiff, a: str, b: str, kinds: tuple[str, ...] = tuple(_MARK)) -> Iterator[str]:
    """The contexts at `a` and `b` compared: figures, settings that changed, then one line per
    message of `kinds` (` ` in both, `-` only in A, `+` only in B, `~` changed, with a word diff)."""
    yield f"A {a}  {token_text(diff.a.tokens)}  ({len(diff.a.context.messages)} messages)"
    yield f"B {b}  {token_text(diff.b.tokens)}  ({len(diff.b.context.messages)} messages)"
    yield (f"shared until {diff.shared_until or '(nothing shared)'}; "
           + ", ".join(f"{diff.count(k)} {k}" for k in ("both", "changed", "only-a", "only-b")))
    for s in diff.settings:
        yield f"{s.name}: {s.a or '-'} → {s.b or '-'}".replace("\n", " ")[:300]
    for r in diff.rows:
        if r.kind not in kinds:
            continue
        item = r.a or r.b
        where = item.entry.id if r.kind != "changed" else f"{r.a.entry.id} → {r.b.entry.id}"
        if r.kind == "changed":
            text = "".join(t if op == "equal" else f"[-{t}-]" if op == "delete" else f"{{+{t}+}}" for op, t in r.diff)
        else:
            text = item.text
        line = " ".join(text.split())
        yield f"{_MARK[r.kind]} {item.message.get('role')} [{where}] {line[:200]}"
