"""Compaction bands: for each compaction on a path, the span its summary replaced, the span it
kept and where it cut, named by the drawn nodes that show them, in path order.

The browser (static/bands.js) draws them as brackets beside the laid-out path from the nodes'
boxes, so a selection change never asks `dot` for a new layout. A folded turn or segment stands
for its members: the counts are entries, the nodes are what is drawn.
"""

from __future__ import annotations

from ..core.compaction import CompactionPlan
from ..core.messages import entry_messages
from ..core.entries import COMPACTION, Entry, short_id
from ..core.reader import first_kept_id
from ..core.tokens import format_tokens
from ..core.tree import SessionTree
from .graph import GraphLayout, dom_id


def _drawn(layout: GraphLayout, entries: list[Entry]) -> list[str]:
    """The drawn nodes that show `entries`, in order, each once (a segment holds many)."""
    out: list[str] = []
    for e in entries:
        d = layout.dom_for(e.id)
        if not out or out[-1] != d:
            out.append(d)
    return out


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def _band(tree: SessionTree, layout: GraphLayout, key: str, verb: str, summarized: list[Entry], kept: list[Entry],
          cut: str | None, cut_label: str) -> dict:
    """One band: what `verb` ("summarized by compaction 1a2b3c4d") replaced, what it kept, the cut.
    Each label comes long to short: the browser prints the longest that fits beside its span.
    The count is of entries whose messages leave the context (`context_diff.replaced_entries`):
    an earlier compaction inside a span counts as one (its summary leaves), settings entries not."""
    replaced = [e for e in summarized if e.type == COMPACTION or entry_messages(e)]
    n, k = len(replaced), sum(1 for e in kept if e.type != COMPACTION and entry_messages(e))
    tokens = format_tokens(sum(e.tokens for e in replaced))
    head = verb.split(" by ")[0]
    return {
        "key": key,
        "summarized": _drawn(layout, summarized),
        "kept": _drawn(layout, kept),
        "cut": layout.dom_for(cut) if cut else None,
        "summaryLabels": [f"{verb} · {_entries(n)} · {tokens} tokens", f"{head} · {_entries(n)}", f"{head} · {n}"],
        "keptLabels": [f"kept · {_entries(k)}", f"kept · {k}"],
        "cutLabel": cut_label,
    }


def compaction_bands(tree: SessionTree, path: list[Entry], layout: GraphLayout) -> list[dict]:
    """A band per compaction on `path` (root first), the way the context is built (SPEC §5): a
    compaction summarizes what the context held before its first kept entry (the previous
    compaction's kept part onwards, with that summary) and keeps from there to itself. One whose
    first kept entry is not before it on the path keeps nothing. The last one is `latest`: the
    only one that counts for the context."""
    position = {e.id: i for i, e in enumerate(path)}
    bands: list[dict] = []
    start = 0  # where the context the next compaction sees begins
    for i, e in enumerate(path):
        if e.type != COMPACTION:
            continue
        k = position.get(first_kept_id(e))
        if k is None or k >= i:
            summarized, kept, cut, start = path[start:i], [], None, i + 1
        else:
            summarized, kept, cut, start = path[start:k], path[k:i], path[k].id, k
        name = f"compaction {short_id(e.id)}"
        band = _band(tree, layout, dom_id(e.id), "summarized by " + name, summarized, kept, cut,
                     f"cut: {name} keeps the context from this line on")
        band["compaction"] = layout.dom_for(e.id)
        bands.append(band)
    if bands:
        bands[-1]["latest"] = True
    return bands


def preview_band(plan: CompactionPlan, layout: GraphLayout) -> dict | None:
    """The band of a compaction not written yet: from its first summarized entry to the cut,
    then from the cut to the leaf it would be appended at."""
    cut = plan.first_kept_entry_id
    todo = plan.entries_to_summarize()
    if not plan.can_compact or not cut or not todo:
        return None
    path = plan.context.path
    position = {e.id: i for i, e in enumerate(path)}
    first, k = position.get(todo[0].id), position.get(cut)
    if first is None or k is None:
        return None
    band = _band(plan.context.tree, layout, "preview", "would be summarized", path[first:k], path[k:], cut,
                 "cut: the compaction would keep the context from this line on")
    band["latest"] = True
    return band
