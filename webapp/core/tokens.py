"""Token counts for a context (SPEC §6): real usage where the model reported it, else an estimate.

The one token accounting of the project: every figure people see (graph, inspector, meter,
compaction preview, compare, CLI) comes from `context_tokens` and is written by `token_text`,
which says which part the provider reported and which part is estimated.

The estimate is the usual 4 characters per token; images count a flat amount. A provider's count
also holds what the session does not (the system prompt, the tool definitions): that overhead is
measured at the first reported usage on the path and added to an estimate made without one, so a
figure just after a compaction does not read as a quarter of the next reported one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .context import Context, build_context, entry_messages
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
    """The context size an assistant message reports, or None (no usage, aborted or failed, or a
    usage the client estimated because the server sent none: `usage.estimated`). Taken from the
    body when the entry was read (`entries.entry_facts`)."""
    return entry.usage_tokens


def estimate_entry_tokens(entry: Entry) -> int:
    """The estimated tokens of the messages one entry contributes to a context (`Entry.tokens`
    keeps it, taken when the entry was read where that is quick)."""
    return sum(estimate_message_tokens(m) for m in entry_messages(entry))


@dataclass(frozen=True)
class TokenCount:
    context: int  # the whole context, as best known
    estimated: int  # the part of `context` that is an estimate rather than reported usage
    usage_entry_id: str | None  # the assistant message whose usage anchors the count
    overhead: int = 0  # reported tokens beyond the messages (system prompt, tools), measured at
    # the path's first usage; part of `context` only when nothing is reported (else usage holds it)

    @property
    def reported(self) -> int:
        return self.context - self.estimated


def token_text(count: TokenCount) -> str:
    """The one way a context's size is written: `6.8k tokens (6.6k reported + 0.2k estimated)`."""
    total = f"{format_tokens(count.context)} tokens"
    if not count.estimated:
        return f"{total} (reported)"
    if not count.reported:
        extra = f", {format_tokens(count.overhead)} of it system prompt and tools" if count.overhead else ""
        return f"{total} (estimated{extra})"
    return f"{total} ({format_tokens(count.reported)} reported + {format_tokens(count.estimated)} estimated)"


def compaction_text(before, after) -> str:
    """A compaction's `tokensBefore → tokensAfter`, in the same units as every other figure."""
    def fmt(n) -> str:
        return format_tokens(n) if isinstance(n, (int, float)) and not isinstance(n, bool) else "?"
    tail = " (after: estimated)" if after is not None else ""
    return f"{fmt(before)} → {fmt(after)} tokens{tail}"


def usage_text(usage) -> str:
    """One model call's usage as people read it: `6.6k tokens (reported) · $0.0123`."""
    if not isinstance(usage, dict):
        return "no usage recorded"
    total = usage.get("totalTokens")
    if not isinstance(total, (int, float)):
        total = sum(v for k in ("input", "output", "cacheRead", "cacheWrite")
                    if isinstance(v := usage.get(k), (int, float)))
    text = f"{format_tokens(total)} tokens ({'estimated: the server reported none' if usage.get('estimated') else 'reported'})"
    cost = usage.get("cost", {}).get("total") if isinstance(usage.get("cost"), dict) else None
    if isinstance(cost, (int, float)) and cost:
        text += f" · ${cost:.4f}" if cost < 0.01 else f" · ${cost:.2f}"
    return text


def _estimate(messages: list[dict]) -> int:
    return sum(estimate_message_tokens(m) for m in messages)


def _anchor(ctx: Context, start: int) -> tuple[int, int] | None:
    """(message index, reported tokens) of the last usable usage among ctx.messages[start:]."""
    for i in range(len(ctx.messages) - 1, start - 1, -1):
        used = usage_tokens(ctx.sources[i])
        if used is not None:
            return i, used
    return None


def context_tokens(ctx: Context) -> TokenCount:
    """The last usable assistant usage after the compaction, plus an estimate of what follows it.

    Usage reported before the latest compaction measured the context before it was compacted,
    so only messages after the compaction entry can anchor the count. Without an anchor the
    whole context is estimated, plus the overhead measured at the first usage on the path.
    """
    overhead = _path_overhead(ctx) if ctx.tree is not None else 0
    anchor = _anchor(ctx, ctx.after_index)
    if anchor is not None:
        i, used = anchor
        estimate = _estimate(ctx.messages[i + 1:])
        return TokenCount(used + estimate, estimate, ctx.sources[i].id, overhead)
    estimate = _estimate(ctx.messages)
    return TokenCount(estimate + overhead, estimate + overhead, None, overhead)


def _path_overhead(ctx: Context) -> int:
    """Reported minus estimated tokens at the FIRST usage on the path: there the context is
    smallest, so the difference is the fixed part (system prompt, tools), not estimation error."""
    for e in ctx.path:
        used = usage_tokens(e)
        if used is not None:
            earlier = build_context(ctx.tree, e.id)
            at = _anchor(earlier, 0)
            return max(used - _estimate(earlier.messages[: at[0] + 1]), 0) if at else 0
    return 0


def entry_cost(entry: Entry) -> float:
    """What an entry cost: an assistant message's `usage.cost.total`, or the summary call behind a
    compaction or branch summary (`details.usage.cost.total`); 0 when none is recorded. Taken
    from the body when the entry was read (`entries.entry_facts`)."""
    return entry.cost
