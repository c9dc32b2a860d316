"""What a session spent, by model, as pi 1.6's `/session` shows it (`getUsageCostBreakdown`).

Every model call a session records: each assistant message (under its provider and the model
that answered, `responseModel`, when the provider names one), each `usage` entry (spending that is
no reply, such as a cache warm-up, under its provider and model), and the calls made for tools and
summaries (a tool result's own `usage`, a compaction's or a branch summary's) in one bucket of
their own. The rows' costs add up to the session's cost (`tokens.entry_cost` of every entry).
"""

from __future__ import annotations

from dataclasses import dataclass

from .entries import BRANCH_SUMMARY, COMPACTION, MESSAGE, USAGE, Entry, spent_usage

TOOLS_AND_SUMMARIES = "Tools/summaries"  # pi's name for the bucket of calls no model is named for
_PARTS = ("input", "output", "cacheRead", "cacheWrite")


@dataclass
class CostRow:
    key: str  # `provider/model`, or TOOLS_AND_SUMMARIES
    cost: float
    tokens: int

    def as_dict(self) -> dict:
        return {"key": self.key, "cost": self.cost, "tokens": self.tokens}


def _js(value) -> str:
    """A value as pi's template string writes it (`undefined` for a field that is not there)."""
    return "undefined" if value is None else str(value)


def _spending(e: Entry) -> tuple[str, dict] | None:
    if e.type == MESSAGE:
        if e.role == "assistant":
            msg = e.message
            return f"{_js(msg.get('provider'))}/{_js(msg.get('responseModel') or msg.get('model'))}", msg.get("usage")
        if e.role == "toolResult" and e.cost:
            return TOOLS_AND_SUMMARIES, e.message.get("usage")
        return None
    if e.type == USAGE:
        return f"{_js(e.get('provider'))}/{_js(e.get('model'))}", e.get("usage")
    if e.type in (COMPACTION, BRANCH_SUMMARY) and e.cost:
        return TOOLS_AND_SUMMARIES, spent_usage(e.raw)
    return None


def _number(value) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def usage_breakdown(entries: list[Entry]) -> list[dict]:
    """pi's breakdown of `entries`' spending: one row per key, those that spent nothing left out,
    the costliest first."""
    rows: dict[str, CostRow] = {}
    for e in entries:
        spent = _spending(e)
        if spent is None or not isinstance(spent[1], dict):
            continue
        key, usage = spent
        row = rows.setdefault(key, CostRow(key, 0.0, 0))
        cost = usage.get("cost")
        row.cost += _number(cost.get("total")) if isinstance(cost, dict) else 0
        row.tokens += int(sum(_number(usage.get(p)) for p in _PARTS))
    kept = [r for r in rows.values() if r.cost > 0 or r.tokens > 0]
    return [r.as_dict() for r in sorted(kept, key=lambda r: -r.cost)]
