"""Token counts for a context (SPEC §6): real usage where the model reported it, else an estimate.

The one token accounting of the project: every figure people see (graph, inspector, meter,
compaction preview, compare, CLI) comes from `context_tokens` and is written by `token_text`,
which says which part the provider reported and which part is estimated.

The estimate of a message is `messages.estimate_message_tokens`'. A provider's count
also holds what the session does not (the system prompt, the tool definitions): that overhead is
measured at the first reported usage on the path and added to an estimate made without one, so a
figure just after a compaction does not read as a quarter of the next reported one.
"""

from __future__ import annotations

from dataclasses import dataclass

from .context import Context, build_context, model_on, own_path
from .entries import COMPACTION, CONTEXT_EDIT, Entry
from .messages import entry_messages, estimate_message_tokens
from .tree import SessionTree

def format_tokens(n: float) -> str:
    """A token count as people read it: `843`, `18.2k`, `1.0M` (never `1000.0k`: a figure that
    rounds to a thousand of one unit is written in the next)."""
    if n < 1000:
        return str(int(n))
    for unit, scale in (("k", 1e3), ("M", 1e6)):
        if round(n / scale, 1) < 1000:
            return f"{n / scale:.1f}{unit}"
    return f"{n / 1e9:.1f}B"


def usage_tokens(entry: Entry) -> int | None:
    """The context size an assistant message reports, or None (no usage, aborted or failed, or a
    usage the client estimated because the server sent none: `usage.estimated`). Taken from the
    body when the entry was read (`entries.entry_facts`)."""
    return entry.usage_tokens


def context_sent(usage: dict) -> dict:
    """The context a reply was sent with: the server's own count where it reported usage
    (`sent_tokens`: input, cache read and cache write), else this app's estimate, said to be one
    (`sent_estimated`). The one figure the Ask page and compare both show, as sent_text says it."""
    tokens = sum(int(usage.get(k) or 0) for k in ("input", "cacheRead", "cacheWrite"))
    return {"sent_tokens": tokens, "sent_estimated": bool(usage.get("estimated"))}


def sent_text(sent: dict) -> str:
    """A context_sent figure in words, as the Ask page's columns say it (static/ask.js)."""
    how = "estimated" if sent["sent_estimated"] else "the server's count"
    return f"{sent['sent_tokens']:,} tokens ({how})"


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

    Usage reported before the latest compaction or context edit measured the context before it
    was compacted or edited (pi's `estimateProjectedContextTokens` distrusts it the same way), so
    only messages after both can anchor the count. Without an anchor the
    whole context is estimated, plus the overhead measured at the first usage on the path.
    """
    overhead = _path_overhead(ctx) if ctx.tree is not None else 0
    anchor = _anchor(ctx, ctx.usable_from)
    if anchor is not None:
        i, used = anchor
        estimate = _estimate(ctx.messages[i + 1:])
        return TokenCount(used + estimate, estimate, ctx.sources[i].id, overhead)
    estimate = _estimate(ctx.messages)
    return TokenCount(estimate + overhead, estimate + overhead, None, overhead)


def _path_overhead(ctx: Context) -> int:
    return _overhead(ctx.tree, ctx.path)


def _overhead(tree: SessionTree, path: list[Entry]) -> int:
    """Reported minus estimated tokens at the FIRST usage on the path: there the context is
    smallest, so the difference is the fixed part (system prompt, tools), not estimation error."""
    for e in path:
        used = usage_tokens(e)
        if used is not None:
            earlier = build_context(tree, e.id)
            at = _anchor(earlier, 0)
            return max(used - _estimate(earlier.messages[: at[0] + 1]), 0) if at else 0
    return 0


def leaf_tokens(tree: SessionTree, leaf_id: str | None) -> tuple[TokenCount, tuple[str | None, str | None]]:
    """`context_tokens(build_context(tree, leaf_id))` and the provider and model in force there,
    reading only the entries after the path's last usage (and up to its first): what every page's
    context meter asks, at the cost of a few entries rather than of every body on a long path.
    Without a usage after the latest compaction the whole context is built."""
    path = own_path(tree.path(leaf_id))
    for i in range(len(path) - 1, -1, -1):
        e = path[i]
        if e.type == COMPACTION or e.type == CONTEXT_EDIT:
            break
        used = usage_tokens(e)
        if used is not None and entry_messages(e):
            estimate = _estimate([m for x in path[i + 1:] for m in entry_messages(x)])
            return TokenCount(used + estimate, estimate, e.id, _overhead(tree, path)), model_on(tree, path)
    ctx = build_context(tree, leaf_id)
    return context_tokens(ctx), (ctx.settings.provider, ctx.settings.model_id)


def entry_cost(entry: Entry) -> float:
    """What an entry cost: an assistant message's `usage.cost.total`, a tool result's or a `usage`
    entry's, or the summary call behind a compaction or branch summary (its `usage`, or the
    `details.usage` session-tree once wrote); 0 when none is recorded. Taken
    from the body when the entry was read (`entries.entry_facts`)."""
    return entry.cost
