"""How far session-tree's reading of a pi session agrees with pi's own (the oracle's records).

`random_trees.mjs read` records, for every entry of a file taken as the leaf, pi's context
(each message with the id of the entry it came from, as pi holds it and as pi sends it) and pi's
cost breakdown. `compare_file` builds our context at the same leaves and says, leaf by leaf,
where it differs: the messages are compared as what reaches the model (the entry it came from,
its role, its text, its images, its tool calls and results, a system message's prompt and tool
changes), not as the two programs happen to lay them out.

Used by the test suite on the committed records (no node needed) and by `pi_oracle.py measure`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from webapp.core.context import build_context
from webapp.core.session import Session

# pi's own roles, as the chat role session-tree gives each in its context.
_ROLE = {"user": "user", "custom": "user", "bashExecution": "user", "branchSummary": "user",
         "compactionSummary": "user", "assistant": "assistant", "toolResult": "tool", "system": "system"}


def _texts(content) -> tuple[str, int]:
    """(the text blocks joined by newlines, how many images) of pi's message content."""
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        return json.dumps(content), 0
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    images = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")
    return "\n".join(texts), images


def system_text(message: dict) -> str:
    """A system message as one prompt (pi-ai's getSystemMessageText): its content, then the text
    of each section, the non-empty ones joined by blank lines."""
    content = message.get("content")
    parts = [content if isinstance(content, str) else _texts(content)[0] if content is not None else ""]
    parts += [v for v in (message.get("sections") or {}).values() if isinstance(v, str)]
    return "\n\n".join(p for p in parts if p)


def _tools(message: dict) -> tuple:
    added = tuple((t.get("name"), t.get("description")) for t in message.get("toolsAdded") or ())
    removed = tuple(t.get("name") for t in message.get("toolsRemoved") or ())
    return added, removed


def pi_canonical(entry_id: str | None, raw: dict, sent: dict | None) -> tuple | None:
    """What one of pi's messages says to the model, or None when pi does not send it (`sent`:
    the message as pi sends it, 0 when that is `raw` itself)."""
    if sent is None:
        return None
    if sent == 0:
        sent = raw
    role = raw.get("role")
    if role == "system":
        return (entry_id, "system", system_text(raw), _tools(raw))
    ours = _ROLE.get(role, role)
    if role == "assistant":
        blocks = sent.get("content") if isinstance(sent.get("content"), list) else []
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = tuple((b.get("id"), b.get("name"), json.dumps(b.get("arguments"), sort_keys=True))
                      for b in blocks if b.get("type") == "toolCall")
        return (entry_id, ours, text, calls)
    if role == "toolResult":
        content = sent.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        text = "\n".join(b.get("text", "") if b.get("type") == "text" else f"[{b.get('type')}]" for b in blocks)
        return (entry_id, ours, sent.get("toolCallId"), text)
    text, images = _texts(sent.get("content"))
    return (entry_id, ours, text, images)


def our_canonical(message: dict, source) -> tuple:
    """The same reading of one message of our context (`source`: the entry it came from)."""
    role = message.get("role")
    entry_id = message.get("entryId")
    if role == "system" and not (source.type == "compaction" and "<summary>" in (message.get("content") or "")):
        system = source.message if source.type == "message" else source.get("systemMessage") or {}
        return (entry_id, "system", message.get("content") or "", _tools(system))
    if role == "assistant":
        calls = tuple((c.get("id"), c["function"]["name"], json.dumps(json.loads(c["function"]["arguments"]), sort_keys=True))
                      for c in message.get("tool_calls") or ())
        return (entry_id, role, message.get("content") or "", calls)
    if role == "tool":
        return (entry_id, role, message.get("tool_call_id"), message.get("content"))
    content = message.get("content")
    if isinstance(content, list):
        text = "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
        return (entry_id, role, text, sum(1 for p in content if p.get("type") == "image_url"))
    return (entry_id, role, content if isinstance(content, str) else json.dumps(content), 0)


def our_breakdown(tree) -> list[dict] | None:
    """session-tree's cost breakdown of the file, in pi's shape, when it has one."""
    try:
        from webapp.core.costs import usage_breakdown
    except ImportError:
        return None
    return usage_breakdown(tree.entries)


@dataclass
class FileAgreement:
    path: Path
    leaves: int = 0
    agree: int = 0
    differences: list[str] = field(default_factory=list)  # one line per leaf that differs (the first few)
    kinds: dict[str, int] = field(default_factory=dict)  # what the disagreeing leaves' paths hold
    cost_total_agrees: bool = True
    breakdown_agrees: bool | None = None


def _kinds(tree, leaf_id: str) -> set[str]:
    """What on the leaf's path can explain a difference: system messages, context edits, ..."""
    kinds = set()
    for e in tree.path(leaf_id):
        if e.type == "message" and e.role == "system":
            kinds.add("system message")
        elif e.type == "context_edit":
            kinds.add("context edit")
        elif e.type == "compaction" and e.get("systemMessage"):
            kinds.add("compaction checkpoint")
        elif e.type == "compaction" and e.get("firstKeptEntryId") == e.id:
            kinds.add("retain-none compaction")
    return kinds


def compare_file(path: Path, record: dict, keep: int = 5) -> FileAgreement:
    """Our context at every leaf pi recorded, against pi's; and our costs against pi's breakdown."""
    tree = Session.open(path).tree
    table = record["messages"]
    out = FileAgreement(path)
    leaves = dict(record["leaves"])
    leaves[None] = record["active"]  # the file's own leaf, as each program finds it
    for leaf_id, refs in leaves.items():
        out.leaves += 1
        expected = [c for c in (pi_canonical(*table[i]) for i in refs) if c is not None]
        ctx = build_context(tree, tree.active_leaf if leaf_id is None else leaf_id)
        ours = [our_canonical(m, s) for m, s in zip(ctx.messages, ctx.sources)]
        if ours == expected:
            out.agree += 1
            continue
        kind = " + ".join(sorted(_kinds(tree, ctx.leaf_id))) or "nothing else"
        out.kinds[kind] = out.kinds.get(kind, 0) + 1
        if len(out.differences) < keep:
            at = next((i for i, (a, b) in enumerate(zip(ours, expected)) if a != b), min(len(ours), len(expected)))
            out.differences.append(f"{path.name} leaf {leaf_id or '(active)'}: message {at}: "
                                   f"ours {ours[at] if at < len(ours) else '(none)'!r:.300} "
                                   f"pi {expected[at] if at < len(expected) else '(none)'!r:.300}")
    pi_costs = record.get("breakdown")
    if pi_costs is not None:
        total = sum(e.cost for e in tree.entries)
        out.cost_total_agrees = math.isclose(total, sum(b["cost"] for b in pi_costs), rel_tol=1e-9, abs_tol=1e-12)
        ours = our_breakdown(tree)
        if ours is not None:
            out.breakdown_agrees = _same_breakdown(ours, pi_costs)
    return out


def _same_breakdown(ours: list[dict], theirs: list[dict]) -> bool:
    a = {b["key"]: b for b in ours}
    b = {b["key"]: b for b in theirs}
    return a.keys() == b.keys() and all(
        a[k]["tokens"] == b[k]["tokens"] and math.isclose(a[k]["cost"], b[k]["cost"], rel_tol=1e-9, abs_tol=1e-12)
        for k in a)
