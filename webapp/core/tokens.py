"""Token counts for a context (SPEC §6): real usage where the model reported it, else an estimate.

The estimate is the usual 4 characters per token; images count a flat amount. It only has to be
good enough to place a cut point and to warn before the window fills.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .context import Context
from .entries import Entry

IMAGE_TOKENS = 1200


def format_tokens(n: float) -> str:
    """A token count as people read it: `843`, `18.2k`."""
    return f"{n / 1000:.1f}k" if n >= 1000 else str(int(n))


def estimate_message_tokens(message: dict) -> int:
    chars = 0
    images = 0
    content = message.get("content")
    if isinstance(content, str):
        chars += len(content)
    elif isinstance(content, list):
        for part in content:
            if part.get("type") == "text":
                chars += len(part.get("text", ""))
            else:
                images += 1
    for call in message.get("tool_calls") or ():
        fn = call.get("function", {})
        chars += len(fn.get("name", "")) + len(fn.get("arguments", ""))
    return math.ceil(chars / 4) + images * IMAGE_TOKENS


def usage_tokens(entry: Entry) -> int | None:
    """The context size an assistant message reports, or None (no usage, aborted or failed)."""
    msg = entry.message
    if entry.role != "assistant" or msg.get("stopReason") in ("aborted", "error"):
        return None
    usage = msg.get("usage")
    if not isinstance(usage, dict):
        return None
    total = usage.get("totalTokens")
    if isinstance(total, (int, float)) and total > 0:
        return int(total)
    parts = [usage.get(k) for k in ("input", "output", "cacheRead", "cacheWrite")]
    total = sum(p for p in parts if isinstance(p, (int, float)))
    return int(total) or None


@dataclass(frozen=True)
class TokenCount:
    context: int  # the whole context, as best known
    estimated: int  # the part of `context` that is an estimate rather than reported usage
    usage_entry_id: str | None  # the assistant message whose usage anchors the count


def context_tokens(ctx: Context) -> TokenCount:
    """The last usable assistant usage after the compaction, plus an estimate of what follows it.

    Usage reported before the latest compaction measured the context before it was compacted,
    so only messages after the compaction entry can anchor the count.
    """
    anchor = None
    for i in range(len(ctx.messages) - 1, ctx.after_index - 1, -1):
        used = usage_tokens(ctx.sources[i])
        if used is not None:
            anchor = (i, used)
            break
    if anchor is None:
        estimate = sum(estimate_message_tokens(m) for m in ctx.messages)
        return TokenCount(estimate, estimate, None)
    i, used = anchor
    estimate = sum(estimate_message_tokens(m) for m in ctx.messages[i + 1:])
    return TokenCount(used + estimate, estimate, ctx.sources[i].id)
