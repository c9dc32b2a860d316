"""Codex's reader: its rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) as entries.

The mapping is `shared/formats/codex.md`. Lines are `{timestamp, type, payload}` with no ids: a
rollout is linear, ids come from line numbers and each entry's parent is the previous entry of
the rollout (a later `session_meta`, written on a resume, continues it). A `compacted` line is a
compaction whose context after it is exactly its `replacement_history` (as `replacementHistory`),
or, for older rollouts without one, the history Codex rebuilds in its place.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...entries import Entry
from ...formats.base import INVALID, Problem, generated_id
from ...formats.fields import checked_entry
from ...formats.readonly import Built, ReadOnlyReader
from . import CODEX

SOURCE = CODEX.name
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
# What Codex sends before the conversation and never counts as a user message of it.
_PREFIX_TAGS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions")
# The start of the user message a compaction's summary becomes (an earlier summary is no user message).
SUMMARY_PREFIX = "Another language model started to solve this problem and produced a summary"
COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000


def _text_of(value: Any) -> str:
    """Text from an output or content value: a string, a content item, or a list of them."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return value["text"] if isinstance(value.get("text"), str) else ""
    if isinstance(value, list):
        return "\n".join(t for t in (_text_of(v) for v in value) if t)
    return ""


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out = []
    for b in content if isinstance(content, list) else ():
        t = b.get("type") if isinstance(b, dict) else None
        if t in ("input_text", "output_text", "text", "summary_text"):
            out.append({"type": "text", "text": b["text"] if isinstance(b.get("text"), str) else ""})
        elif t == "input_image":
            url = b.get("image_url")
            if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
                mime, data = url[5:].split(";base64,", 1)
                out.append({"type": "image", "mimeType": mime, "data": data})
            else:
                out.append({"type": "text", "text": f"[image{': ' + url if isinstance(url, str) else ''}]"})
        elif isinstance(b, dict):
            out.append(b)
    return out


def _arguments(payload: dict) -> Any:
    """A call's arguments as a JSON object: Codex stores them as JSON text (or a patch's text)."""
    if payload.get("type") == "local_shell_call":
        action = payload.get("action")
        return {"command": action.get("command")} if isinstance(action, dict) else {}
    value = payload.get("arguments", payload.get("input"))
    if isinstance(value, str):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            return {"input": value}
        return parsed if isinstance(parsed, dict) else {"input": value}
    return value if isinstance(value, dict) else {}


def _output(payload: dict) -> tuple[str, bool]:
    """A tool's output text as the model was sent it, and whether it failed (a non-zero exit
    code). Older rollouts hold the output in a JSON envelope (`{"output": …, "metadata": …}`):
    the model got that whole string, so it is kept whole; only the exit code is read from it."""
    out = payload.get("output")
    if isinstance(out, str):
        try:
            parsed = orjson.loads(out) if out.startswith("{") else None
        except orjson.JSONDecodeError:
            parsed = None
        meta = parsed.get("metadata") if isinstance(parsed, dict) else None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return out, isinstance(code, int) and not isinstance(code, bool) and code != 0
    return _text_of(out), False


def opaque_message(item: dict) -> dict | None:
    """A `web_search_call` or `compaction` response item as the message that holds its place
    in the context: Codex sends both back to the model with the history. A chat request has no
    slot for them, so each stands as a short text saying what it is (the search made; the
    encrypted summary the server compacted into, which only the server can read)."""
    t = item.get("type")
    if t == "web_search_call":
        action = item.get("action") if isinstance(item.get("action"), dict) else {}
        what = next((str(action[k]) for k in ("query", "url", "pattern") if action.get(k)), "")
        kind = str(action.get("type") or "search")
        return {"role": "assistant", "content": [{"type": "text", "text": f"[web {kind}: {what}]" if what
                                                  else f"[web {kind}]"}]}
    if t == "compaction":
        secret = item.get("encrypted_content")
        size = f", {len(secret):,} characters" if isinstance(secret, str) else ""
        return {"role": "user", "content": [{"type": "text", "text": f"[compacted history: encrypted{size}]"}]}
    return None


def history_message(item: Any) -> dict | None:
    """A `replacement_history` item as a SPEC §2 message (None for what the context ignores)."""
    if not isinstance(item, dict):
        return None
    t = item.get("type")
    if t == "message" and item.get("role") in ("user", "assistant"):
        return {"role": item["role"], "content": _blocks(item.get("content"))}
    if t == "message":  # developer / system text reaches the model as user text here too
        return {"role": "user", "content": _blocks(item.get("content"))}
    if t in _CALLS:
        return {"role": "assistant", "content": [{"type": "toolCall", "id": str(item.get("call_id", "")),
                                                   "name": str(item.get("name", "shell")),
                                                   "arguments": _arguments(item)}]}
    if t in _OUTPUTS:
        text, failed = _output(item)
        return {"role": "toolResult", "toolCallId": str(item.get("call_id", "")), "toolName": "?",
                "content": [{"type": "text", "text": text}], "isError": failed}
    return opaque_message(item)


class CodexReader(ReadOnlyReader):
    name = SOURCE

    def build(self, items: list[tuple[int, dict]]) -> Built:
        b = _Build()
        for line, obj in items:
            b.line(line, obj)
        return b.result()


class _Build:
    def __init__(self) -> None:
        self.header: dict | None = None
        self.entries: list[Entry] = []
        self.problems: list[Problem] = []
        self.metadata: list[tuple[int, dict]] = []
        self.prev: str | None = None  # the previous entry of the current segment
        self.reasoning: list[tuple[int, dict, dict]] = []  # (line, dict, thinking block) for the next assistant message
        self.last_assistant: Entry | None = None
        self.open_call: Entry | None = None  # an assistant entry more calls may join
        self.tool_names: dict[str, str] = {}
        self.model: tuple[Any, Any] = (None, None)
        self.effort: Any = None
        self.provider: str | None = None
        # Codex records no token counts on a compaction: the ones around it are the context of
        # the last request before it and of the first after it (`token_count` events).
        self.context_size: int | None = None
        self.compaction: Entry | None = None  # the latest compaction, until a request follows it

    def _thinking(self) -> tuple[list[dict], list[dict]]:
        """The reasoning waiting for an assistant message: its blocks and its lines, taken."""
        blocks, lines = [b for _, _, b in self.reasoning], [o for _, o, _ in self.reasoning]
        self.reasoning = []
        return blocks, lines

    def _add(self, line: int, obj: dict, raw: dict, suffix: str = "") -> Entry:
        """The next entry of the segment; `suffix` tells apart a second entry made from one line.
        Reasoning no assistant message took is kept with the session's metadata."""
        is_assistant = raw["type"] == "message" and raw["message"]["role"] == "assistant"
        thinking, lines = self._thinking() if is_assistant else ([], [])
        if not is_assistant:
            self.metadata.extend((n, o) for n, o, _ in self.reasoning)
            self.reasoning = []
        else:
            raw["message"]["content"][:0] = thinking
        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else ""
        entry_id = generated_id(line) + suffix
        raw = {"type": raw.pop("type"), "id": entry_id, "parentId": self.prev, "timestamp": ts, **raw}
        entry = Entry(raw, line, entry_id, self.prev, True, [*lines, obj] if lines else obj)
        self.entries.append(entry)
        self.prev = entry_id
        self.open_call = None
        return entry

    def line(self, line: int, obj: dict) -> None:
        t, p = obj.get("type"), obj.get("payload")
        if not isinstance(p, dict):
            self.metadata.append((line, obj))
            return
        if t == "session_meta":
            self._session_meta(line, obj, p)
        elif t == "turn_context":
            self._turn_context(line, obj, p)
        elif t == "response_item":
            self._response_item(line, obj, p)
        elif t == "compacted":
            summary = p.get("message") if isinstance(p.get("message"), str) else ""
            replacement = p.get("replacement_history")
            if isinstance(replacement, list):
                history = [m for m in map(history_message, replacement) if m]
            else:
                history = self._rebuilt_history(line, summary)
            self.compaction = self._add(line, obj, {
                "type": "compaction", "summary": summary, "firstKeptEntryId": None, "tokensBefore": self.context_size,
                "replacementHistory": history,
                "details": {k: v for k, v in p.items() if k not in ("message", "replacement_history")}})
        elif t == "event_msg" and p.get("type") == "token_count":
            self._token_count(p)
            self.metadata.append((line, obj))
        elif t == "event_msg":
            self.metadata.append((line, obj))
        else:
            self._add(line, obj, {"type": "custom", "customType": f"{SOURCE}/{t}", "data": p})

    def _session_meta(self, line: int, obj: dict, p: dict) -> None:
        if self.header is None:
            self.header = {"type": "session", "version": 3, "id": p.get("id"), "timestamp": p.get("timestamp"),
                           "cwd": p.get("cwd"), "source": SOURCE, "sourceVersion": p.get("cli_version"),
                           "modelProvider": p.get("model_provider")}
            # what names other rollouts (links.py): the fork's parent and where its history ends,
            # a sub-agent's parent thread (said in `source` by some versions only)
            for key in ("forked_from_id", "parent_thread_id", "history_mode", "history_base",
                        "forked_from_ordinal_exclusive"):
                if p.get(key) is not None and p.get(key) != "":
                    self.header[key] = p[key]
            spawn = p.get("source")
            for key in ("subagent", "thread_spawn"):
                spawn = spawn.get(key) if isinstance(spawn, dict) else None
            if isinstance(spawn, dict) and spawn.get("parent_thread_id") and "parent_thread_id" not in self.header:
                self.header["parent_thread_id"] = spawn["parent_thread_id"]
            self.provider = p.get("model_provider") if isinstance(p.get("model_provider"), str) else None
            self.metadata.append((line, obj))
            return
        # Codex writes another one when it resumes or forks into the same rollout: the rollout
        # goes on (one history), it does not branch.
        self._add(line, obj, {"type": "custom", "customType": f"{SOURCE}/session_meta", "data": p})

    def _turn_context(self, line: int, obj: dict, p: dict) -> None:
        model = (self.provider, p.get("model"))
        effort = p.get("effort", p.get("reasoning_effort"))
        changed = False
        if isinstance(model[1], str) and model != self.model:
            self.model = model
            self._add(line, obj, {"type": "model_change", "provider": model[0] or "openai", "modelId": model[1]})
            changed = True
        if isinstance(effort, str) and effort != self.effort:
            self.effort = effort
            self._add(line, obj, {"type": "thinking_level_change", "thinkingLevel": effort}, ":2" if changed else "")
            changed = True
        if not changed:
            self.metadata.append((line, obj))

    def _response_item(self, line: int, obj: dict, p: dict) -> None:
        t = p.get("type")
        if t == "message":
            role = p.get("role")
            if role in ("user", "assistant"):
                content = _blocks(p.get("content"))
                entry = self._add(line, obj, {"type": "message", "message": {"role": role, "content": content,
                                              **self._model_fields(role)}})
                if role == "assistant":
                    self.last_assistant = self.open_call = entry
            else:
                self._add(line, obj, {"type": "custom_message", "customType": f"{SOURCE}/{role}",
                                      "content": _blocks(p.get("content")), "display": False})
        elif t == "reasoning":
            text = _text_of(p.get("content")) or _text_of(p.get("summary"))
            self.reasoning.append((line, obj, {"type": "thinking", "thinking": text or "(encrypted reasoning)"}))
        elif t in _CALLS:
            call = {"type": "toolCall", "id": str(p.get("call_id", "")), "name": str(p.get("name", "shell")),
                    "arguments": _arguments(p)}
            self.tool_names[call["id"]] = call["name"]
            if self.open_call is not None:  # calls made together are one assistant message
                entry = self.open_call
                thinking, lines = self._thinking()
                entry.raw["message"]["content"].extend([*thinking, call])
                entry.source = [*(entry.source if isinstance(entry.source, list) else [entry.source]), *lines, obj]
                return
            entry = self._add(line, obj, {"type": "message", "message": {"role": "assistant", "content": [call],
                                          **self._model_fields("assistant")}})
            self.last_assistant = self.open_call = entry
        elif t in _OUTPUTS:
            call_id = p.get("call_id")
            text, failed = _output(p)
            self._add(line, obj, {"type": "message", "message": {
                "role": "toolResult", "toolCallId": call_id if isinstance(call_id, str) else INVALID,
                "toolName": self.tool_names.get(call_id, "?") if isinstance(call_id, str) else "?",
                "content": [{"type": "text", "text": text}], "isError": failed}})
        elif t in ("web_search_call", "compaction"):
            msg = opaque_message(p)
            if msg["role"] == "assistant":
                msg.update(self._model_fields("assistant"))
                self._add(line, obj, {"type": "message", "message": msg})
            else:  # not something the user wrote: hidden like developer text
                self._add(line, obj, {"type": "custom_message", "customType": f"{SOURCE}/{t}",
                                      "content": msg["content"], "display": False})
        else:
            self._add(line, obj, {"type": "custom", "customType": f"{SOURCE}/{t}", "data": p})

    def _history(self) -> list[dict]:
        """The messages of the current segment's context so far, as Codex holds its history:
        the latest compaction's replacement, then every message after it."""
        by_id = {e.id: e for e in self.entries}
        chain: list[Entry] = []
        at = by_id.get(self.prev) if self.prev else None
        while at is not None:
            chain.append(at)
            if at.type == "compaction":
                break
            at = by_id.get(at.parent_id) if at.parent_id else None
        out: list[dict] = []
        for e in reversed(chain):
            if e.type == "compaction":
                out.extend(e.raw.get("replacementHistory") or [])
            elif e.type == "message":
                out.append(e.raw["message"])
            elif e.type == "custom_message" and e.raw.get("customType") in (f"{SOURCE}/developer", f"{SOURCE}/system"):
                out.append({"role": "developer", "content": e.raw.get("content")})
        return out

    def _rebuilt_history(self, line: int, summary: str) -> list[dict]:
        """What Codex puts in place of the history when a `compacted` line has no
        `replacement_history` (older rollouts): the initial context (developer instructions,
        user instructions, environment), the user messages (the latest ones, up to 20,000
        tokens of four bytes each), then the summary as a user message. The initial context is
        the one this rollout recorded; where it recorded none the rebuilt history lacks it,
        and a warning says so."""
        initial: list[dict] = []
        users: list[str] = []
        for msg in self._history():
            text = _text_of(msg.get("content")) if isinstance(msg.get("content"), (list, str)) else ""
            if msg.get("role") == "developer" or (msg.get("role") == "user" and text.lstrip().startswith(_PREFIX_TAGS)):
                initial.append({"role": "user", "content": msg.get("content") or []})
            elif msg.get("role") == "user" and not text.startswith(SUMMARY_PREFIX):
                users.append(text)
        if not initial:
            self.problems.append(Problem(
                "codex-rebuilt-history", "this compaction has no replacement_history and the rollout records no "
                "initial context before it: the context after it is rebuilt from the user messages and the summary "
                "only, without the instructions Codex adds", line, generated_id(line)))
        kept: list[str] = []
        budget = COMPACT_USER_MESSAGE_MAX_TOKENS * 4
        for text in reversed(users):
            if budget <= 0:
                break
            size = len(text.encode())
            if size > budget:
                raw = text.encode()
                half = budget // 2
                cut = (size - budget + 3) // 4
                text = (raw[:half].decode(errors="ignore") + f"…{cut} tokens truncated…"
                        + raw[size - half:].decode(errors="ignore"))
                size = budget
            kept.append(text)
            budget -= size
        history = [*initial, *({"role": "user", "content": [{"type": "text", "text": t}]} for t in reversed(kept))]
        history.append({"role": "user", "content": [{"type": "text", "text": summary or "(no summary available)"}]})
        return history

    def _model_fields(self, role: str) -> dict:
        if role != "assistant" or not isinstance(self.model[1], str):
            return {}
        return {"provider": self.model[0] or "openai", "model": self.model[1]}

    def _token_count(self, p: dict) -> None:
        info = p.get("info")
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        if not isinstance(last, dict):
            return
        total, sent = last.get("total_tokens"), last.get("input_tokens")
        if isinstance(total, int) and not isinstance(total, bool):
            self.context_size = total
        if self.compaction is not None and isinstance(sent, int) and not isinstance(sent, bool):
            self.compaction.raw["tokensAfter"] = sent
            self.compaction = None
        if self.last_assistant is None:
            return
        def n(key: str) -> int:
            v = last.get(key)
            return v if isinstance(v, int) and not isinstance(v, bool) else 0
        cached = n("cached_input_tokens")
        usage = {"input": max(n("input_tokens") - cached, 0), "output": n("output_tokens"),
                 "cacheRead": cached, "cacheWrite": n("cache_write_input_tokens")}
        usage["totalTokens"] = n("total_tokens") or sum(usage.values())
        self.last_assistant.raw["message"]["usage"] = usage

    def result(self) -> Built:
        header = self.header or {"type": "session", "version": 3, "id": None, "timestamp": None, "cwd": None,
                                 "source": SOURCE}
        self.metadata.extend((n, o) for n, o, _ in self.reasoning)
        for e in self.entries:
            e.raw, why = checked_entry(e.raw)
            if why:
                self.problems.append(Problem("invalid-field", "; ".join(why) + ": shown as invalid", e.line, e.id))
        leaf = self.entries[-1].id if self.entries else None
        self.metadata.sort(key=lambda item: item[0])
        return Built(header, self.entries, leaf, self.problems, self.metadata)
