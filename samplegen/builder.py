"""The parts every generated session is made of: ids and times on a synthetic clock, usage
that grows along a path, summaries, and `SessionBuilder`, which appends entries the way an agent
writes them.
"""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime
from pathlib import Path

import orjson


DEEP_PATH_ENTRIES = 10_000
SYSTEM_TOKENS = 4_200  # system prompt + tool schemas: the context size before the first message

# model -> (provider, api, $ per million tokens: input, output, cacheRead, cacheWrite)
MODELS = {
    "claude-sonnet-4-5": ("anthropic", "anthropic-messages", (3.0, 15.0, 0.3, 3.75)),
    "claude-opus-4-5": ("anthropic", "anthropic-messages", (5.0, 25.0, 0.5, 6.25)),
    "gpt-5": ("openai", "openai-responses", (1.25, 10.0, 0.125, 0.0)),
}
DEFAULT_MODEL = "claude-sonnet-4-5"

# Pauses before each kind of entry, in ms: people type slowly, tools answer fast.
USER_GAP = (15_000, 240_000)
ASSISTANT_GAP = (1_500, 40_000)
RESULT_GAP = (40, 4_000)
META_GAP = (300, 3_000)
COMPACTION_GAP = (8_000, 40_000)

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_FIELD = re.compile(r"\{(\w+)\}")


# ----------------------------------------------------------------------------- primitives


def uuid7_at(ms: int, rng: random.Random) -> str:
    """A UUID v7 for time `ms` whose random bits come from `rng`, so ids are reproducible."""
    rand = rng.getrandbits(74)
    value = (
        (ms & 0xFFFF_FFFF_FFFF) << 80
        | 0x7 << 76
        | (rand >> 62) << 64
        | 0b10 << 62
        | rand & ((1 << 62) - 1)
    )
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def iso_ms(ms: int) -> str:
    """ISO-8601 UTC with milliseconds and `Z`, the timestamp form pi writes."""
    dt = datetime.fromtimestamp(ms // 1000, UTC)
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def iso_to_ms(iso: str) -> int:
    return round(datetime.fromisoformat(iso).timestamp() * 1000)


def fill(template: str, words: dict[str, str]) -> str:
    """Replace `{name}` for known names only, so code braces in templates survive."""
    return _FIELD.sub(lambda m: words.get(m[1], m[0]), template)


def _tok(text: str) -> int:
    return len(text) // 4 + 1


def session_path(header: dict) -> Path:
    """`--<cwd>--/{timestamp}_{id}.jsonl`, the layout of SPEC §1."""
    folder = "--" + re.sub(r"[/\\:]", "-", header["cwd"].lstrip("/")) + "--"
    stamp = header["timestamp"].replace(":", "-").replace(".", "-")
    return Path(folder) / f"{stamp}_{header['id']}.jsonl"


def write_jsonl(path, header: dict, entries: list) -> None:
    """Write the header and entries, one compact JSON object per line; a `str` item is written as
    it is (that is how a sample carries a damaged line)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [orjson.dumps(header)]
    lines += [e.encode() if isinstance(e, str) else orjson.dumps(e) for e in entries]
    path.write_bytes(b"\n".join(lines) + b"\n")


def _usage(ctx: int, cached: int, output: int, rates: tuple, fresh: int) -> dict:
    """Usage of one call on a prompt of `ctx` tokens, `cached` of them still in the provider's
    cache; providers that write caches bill the rest as a cache write except a few fresh tokens."""
    r_in, r_out, r_read, r_write = rates
    read = min(cached, ctx)
    new = ctx - read
    inp = min(fresh, new) if r_write else new
    write = new - inp
    cost = {
        "input": round(inp * r_in / 1e6, 6),
        "output": round(output * r_out / 1e6, 6),
        "cacheRead": round(read * r_read / 1e6, 6),
        "cacheWrite": round(write * r_write / 1e6, 6),
    }
    cost["total"] = round(sum(cost.values()), 6)
    return {
        "input": inp,
        "output": output,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": ctx + output,
        "cost": cost,
    }


def summary_markdown(goal, *, constraints=(), done=(), in_progress=(), blocked=(), decisions=(),
                     next_steps=(), critical=(), files=((), ())) -> str:
    """The structured summary pi's compaction prompt asks for, with the file lists appended."""

    def bullets(items, mark="- "):
        return "\n".join(mark + item for item in items) if items else "- (none)"

    parts = [
        f"## Goal\n{goal}",
        "## Constraints & Preferences\n" + bullets(constraints),
        "## Progress\n### Done\n" + bullets(done, "- [x] ")
        + "\n\n### In Progress\n" + bullets(in_progress, "- [ ] ")
        + "\n\n### Blocked\n" + bullets(blocked),
        "## Key Decisions\n" + bullets(decisions),
        "## Next Steps\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(next_steps, 1)),
        "## Critical Context\n" + bullets(critical),
    ]
    read, modified = files
    if read:
        parts.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
    if modified:
        parts.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
    return "\n\n".join(parts)


def files_touched(entries) -> tuple[list[str], list[str]]:
    """(read-only files, modified files) from tool calls and earlier summaries' details: the
    cumulative lists SPEC §6 asks a summary to carry."""
    read, modified = set(), set()
    for e in entries:
        if e["type"] in ("compaction", "branch_summary"):
            read.update(e["details"]["readFiles"])
            modified.update(e["details"]["modifiedFiles"])
        elif e["type"] == "message" and e["message"]["role"] == "assistant":
            for block in e["message"]["content"]:
                if block["type"] == "toolCall" and block["name"] in ("read", "edit", "write"):
                    target = read if block["name"] == "read" else modified
                    target.add(block["arguments"]["path"])
    return sorted(read - modified), sorted(modified)


# ----------------------------------------------------------------------------- builder


class SessionBuilder:
    """Appends entries the way an agent does: each one at the current tip, on a synthetic clock.

    Per entry it keeps (context tokens, cached tokens, model) so usage grows along every path,
    restarts from the summary after a compaction, and a branch carries the model it was forked with.
    """

    def __init__(self, cwd: str, seed: int, start_ms: int, model: str = DEFAULT_MODEL):
        self.rng = random.Random(seed)
        self.cwd = cwd
        self.ms = start_ms
        self.header = {"type": "session", "version": 3, "id": uuid7_at(start_ms, self.rng),
                       "timestamp": iso_ms(start_ms), "cwd": cwd}
        self.entries: list[dict] = []
        self.by_id: dict[str, dict] = {}
        self.tip: str | None = None
        self._base = (SYSTEM_TOKENS, 0, model)
        self.state: dict[str, tuple[int, int, str]] = {}

    def _state(self, eid):
        """An unknown id (only the damaged sample's orphan has one) starts from an empty context."""
        return self.state.get(eid, self._base)

    def _add(self, type_: str, gap: tuple[int, int], tokens: int = 0, **fields) -> str:
        self.ms += self.rng.randint(*gap)
        eid = uuid7_at(self.ms, self.rng)
        entry = {"type": type_, "id": eid, "parentId": self.tip, "timestamp": iso_ms(self.ms),
                 **fields}
        ctx, cached, model = self._state(self.tip)
        self.state[eid] = (ctx + tokens, cached, model)
        self.entries.append(entry)
        self.by_id[eid] = entry
        self.tip = eid
        return eid

    def _message(self, message: dict, gap, tokens: int) -> str:
        eid = self._add("message", gap, tokens, message=message)
        message["timestamp"] = self.ms
        return eid

    @property
    def model(self) -> str:
        """The model in force at the tip."""
        return self._state(self.tip)[2]

    def path(self, leaf: str | None) -> list[dict]:
        out = []
        while leaf in self.by_id:
            out.append(self.by_id[leaf])
            leaf = self.by_id[leaf]["parentId"]
        return out[::-1]

    # settings and metadata

    def model_change(self, model: str) -> str:
        eid = self._add("model_change", META_GAP, provider=MODELS[model][0], modelId=model)
        ctx, cached, _ = self.state[eid]
        self.state[eid] = (ctx, 0, model)
        return eid

    def thinking_level(self, level: str) -> str:
        return self._add("thinking_level_change", META_GAP, thinkingLevel=level)

    def active_tools(self, tools: list[str]) -> str:
        return self._add("active_tools_change", META_GAP, tools=tools)

    def session_info(self, name: str) -> str:
        return self._add("session_info", META_GAP, name=name)

    def label(self, target: str, label: str) -> str:
        return self._add("label", META_GAP, targetId=target, label=label)

    def custom(self, custom_type: str, data) -> str:
        return self._add("custom", META_GAP, customType=custom_type, data=data)

    def custom_message(self, custom_type: str, content: str) -> str:
        return self._add("custom_message", META_GAP, _tok(content), customType=custom_type,
                         content=content, display=True)

    # messages

    def user(self, text: str) -> str:
        return self._message({"role": "user", "content": [{"type": "text", "text": text}]},
                             USER_GAP, _tok(text))

    def bash_execution(self, command: str, output: str, exit_code: int = 0) -> str:
        message = {"role": "bashExecution", "command": command, "output": output,
                   "exitCode": exit_code, "cancelled": False, "truncated": False}
        return self._message(message, USER_GAP, _tok(command + output))

    def _call_id(self, model: str) -> str:
        if MODELS[model][0] == "anthropic":
            return "toolu_01" + "".join(self.rng.choices(_ALNUM, k=22))
        return "call_" + "".join(self.rng.choices(_ALNUM, k=24))

    def _assistant(self, blocks: list[dict], stop: str) -> str:
        ctx, cached, model = self._state(self.tip)
        provider, api, rates = MODELS[model]
        written = "".join(b.get("text") or b.get("thinking") or str(b.get("arguments"))
                          for b in blocks)
        output = _tok(written) + self.rng.randint(8, 90)
        message = {"role": "assistant", "content": blocks, "api": api, "provider": provider,
                   "model": model,
                   "usage": _usage(ctx, cached, output, rates, self.rng.randint(3, 40)),
                   "stopReason": stop}
        eid = self._message(message, ASSISTANT_GAP, output)
        self.state[eid] = (ctx + output, ctx, model)
        return eid

    @staticmethod
    def _lead(text, thinking) -> list[dict]:
        blocks = [{"type": "thinking", "thinking": thinking}] if thinking else []
        return blocks + ([{"type": "text", "text": text}] if text else [])

    def answer(self, text: str, thinking: str | None = None) -> str:
        return self._assistant(self._lead(text, thinking), "stop")

    def step(self, calls: list[tuple], text: str | None = None, thinking: str | None = None) -> str:
        """One assistant message with tool calls, then one tool result per call, in order.
        `calls` are (name, arguments, output, isError) as made by read/edit/write/bash."""
        ids = [self._call_id(self.model) for _ in calls]
        blocks = self._lead(text, thinking) + [
            {"type": "toolCall", "id": cid, "name": name, "arguments": args}
            for cid, (name, args, _, _) in zip(ids, calls, strict=True)]
        eid = self._assistant(blocks, "toolUse")
        for cid, (name, _, output, is_error) in zip(ids, calls, strict=True):
            self._message({"role": "toolResult", "toolCallId": cid, "toolName": name,
                           "content": [{"type": "text", "text": output}], "isError": is_error},
                          RESULT_GAP, _tok(output))
        return eid

    # tool calls, as (name, arguments, output, isError)

    def _abs(self, rel: str) -> str:
        return f"{self.cwd}/{rel}"

    def read(self, rel: str, content: str, **window) -> tuple:
        return "read", {"path": self._abs(rel), **window}, content, False

    def edit(self, rel: str, old: str, new: str, applied: bool = True) -> tuple:
        path = self._abs(rel)
        if applied:
            out = (f"Successfully replaced text in {path}. "
                   f"Changed {len(old)} characters to {len(new)} characters.")
        else:
            out = (f"Could not find the exact text in {path}. The old text must match exactly "
                   "including all whitespace and newlines.")
        return "edit", {"path": path, "oldText": old, "newText": new}, out, not applied

    def write(self, rel: str, content: str) -> tuple:
        path = self._abs(rel)
        out = f"Successfully wrote {len(content.encode())} bytes to {path}"
        return "write", {"path": path, "content": content}, out, False

    @staticmethod
    def bash(command: str, output: str, code: int = 0) -> tuple:
        if code:
            output += f"\n\nCommand exited with code {code}"
        return "bash", {"command": command}, output, code != 0

    # tree moves and summaries

    def fork(self, target: str) -> str:
        """A `leaf` entry (SPEC §4): the next append continues after `target`."""
        self.tip = target
        eid = self._add("leaf", META_GAP, targetId=target)
        self.state[eid] = self._state(target)
        self.tip = target
        return eid

    def branch_summary(self, from_id: str, back_to: str, **sections) -> str:
        """Return to `back_to`, summarizing the branch that ends at `from_id`."""
        kept = {e["id"] for e in self.path(back_to)}
        files = files_touched(e for e in self.path(from_id) if e["id"] not in kept)
        summary = summary_markdown(files=files, **sections)
        self.tip = back_to
        return self._add("branch_summary", COMPACTION_GAP, _tok(summary), fromId=from_id,
                         summary=summary,
                         details={"readFiles": files[0], "modifiedFiles": files[1]})

    def compaction(self, first_kept: str, **sections) -> str:
        """Compact at the tip keeping the path from `first_kept`, which must come after any
        earlier compaction so the kept tokens are a plain difference."""
        files = files_touched(self.path(self.tip))
        summary = summary_markdown(files=files, **sections)
        before, _, model = self._state(self.tip)
        kept = before - self._state(self.by_id[first_kept]["parentId"])[0]
        after = SYSTEM_TOKENS + _tok(summary) + kept
        eid = self._add("compaction", COMPACTION_GAP, summary=summary, firstKeptEntryId=first_kept,
                        tokensBefore=before, tokensAfter=after,
                        details={"readFiles": files[0], "modifiedFiles": files[1]})
        self.state[eid] = (after, 0, model)
        return eid
