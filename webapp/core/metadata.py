"""The lines of a session that are not nodes (Claude Code titles, file snapshots, last prompts;
Codex events), told in one short row each: which kind, on which line, and what it says."""

from __future__ import annotations

from dataclasses import dataclass

import orjson

# Fields every line of a format repeats: they tell nothing about this one line.
_COMMON = frozenset({"type", "sessionId", "uuid", "parentUuid", "timestamp", "version", "cwd", "gitBranch",
                     "userType", "isSidechain", "entrypoint"})
SUMMARY_CHARS = 160  # of one row's summary


@dataclass(frozen=True)
class MetadataRow:
    line: int
    kind: str
    summary: str


def _value(v) -> str:
    if isinstance(v, str):
        return " ".join(v.split())
    if isinstance(v, dict):
        return f"{{{len(v)} field{'' if len(v) == 1 else 's'}}}"
    if isinstance(v, list):
        return f"[{len(v)} item{'' if len(v) == 1 else 's'}]"
    return orjson.dumps(v).decode()


def summarise(line: int, obj: dict, chars: int = SUMMARY_CHARS) -> MetadataRow:
    """A line's kind (`type`, with a Codex `payload.type`) and its own fields, `key: value`, cut
    to `chars` characters."""
    kind = str(obj.get("type", "?"))
    fields = obj
    payload = obj.get("payload")
    if isinstance(payload, dict):
        fields = payload
        if isinstance(payload.get("type"), str):
            kind = f"{kind}/{payload['type']}"
    parts = [f"{k}: {_value(v)}" for k, v in fields.items() if k not in _COMMON]
    text = " · ".join(parts)
    if len(text) > chars:
        text = text[: chars - 1] + "…"
    return MetadataRow(line, kind, text)


def metadata_rows(metadata: list[tuple[int, dict]], limit: int) -> list[MetadataRow]:
    """The first `limit` lines that are not nodes, one row each, in file order."""
    return [summarise(line, obj) for line, obj in metadata[:limit]]
