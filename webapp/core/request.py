"""The request sent to a model (SPEC §5b): the context of §5 made acceptable to every provider.

The context is what the session holds; a provider refuses some of it (a tool call without its
result, a tool result without its call, an empty assistant message). pi repairs these before each
call, and so does `build_request`, reporting every message it added or skipped with the entry it
came from and why, so a viewer can show the request as sent beside the context.

pi 1.6's system messages are sent as pi sends them to a model that takes no system message
mid-conversation (its default for an OpenAI-style API): folded into one system message that leads
the request, the prompt and tools they leave in force (`system_prompt.replay`), the tools declared
with the request.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .context import Context
from .entries import Entry
from .system_prompt import replay, tool_declarations

NO_RESULT = "No result provided"

SKIP_ERROR = "the assistant turn ended with an error: not sent"
SKIP_ABORTED = "the assistant turn was aborted: not sent"
SKIP_EMPTY = "an assistant message with neither text nor tool calls: not sent"
SKIP_ORPHAN = "a tool result whose call is not in the request: not sent"
ADD_RESULT = "a tool call without a result: an error result \"No result provided\" is sent in its place"
ADD_SYSTEM = "the system prompt in force, folded from the context's system messages: sent first"
SKIP_SYSTEM = "a system message: folded into the system prompt that leads the request"


@dataclass(frozen=True)
class Change:
    """One message the request adds or skips, relative to the context."""

    action: str  # "added" | "skipped"
    entry_id: str
    reason: str
    index: int  # where: the message's index in the request (added) or in the context (skipped)

    def as_dict(self) -> dict:
        return {"action": self.action, "entryId": self.entry_id, "reason": self.reason, "index": self.index}


@dataclass(frozen=True)
class Row:
    """One line of the request as a viewer shows it: a message sent, added, or skipped (why)."""

    message: dict
    status: str  # "sent" | "added" | "skipped"
    reason: str | None = None


@dataclass
class Request:
    messages: list[dict]  # tagged with `entryId`; an added result also with `added: True`
    changes: list[Change] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)  # the context's messages and the added ones, in order
    tools: list[dict] = field(default_factory=list)  # the tools declared (pi 1.6's system messages')

    def llm_messages(self) -> list[dict]:
        """The messages as litellm takes them, without the viewer's tags. An assistant message of
        tool calls alone carries `content: ""` rather than null: OpenAI allows either, but local
        servers' chat templates read the content (llama.cpp's Python server crashes on null)."""
        return [_sendable(m) for m in self.messages]

    @property
    def added(self) -> list[Change]:
        return [c for c in self.changes if c.action == "added"]

    @property
    def skipped(self) -> list[Change]:
        return [c for c in self.changes if c.action == "skipped"]

    def change_for(self, index: int, action: str) -> Change | None:
        return next((c for c in self.changes if c.index == index and c.action == action), None)


def _sendable(message: dict) -> dict:
    out = {k: v for k, v in message.items() if k not in ("entryId", "added")}
    if out.get("role") == "assistant" and out.get("content") is None:
        out["content"] = ""
    return out


def _is_empty(message: dict) -> bool:
    if message.get("tool_calls"):
        return False
    content = message.get("content")
    return not content if isinstance(content, list) else not (content or "").strip()


def _skip_reason(message: dict, source: Entry) -> str | None:
    if message.get("role") != "assistant":
        return None
    stop = source.message.get("stopReason") if source.role == "assistant" else None
    if stop == "error":
        return SKIP_ERROR
    if stop == "aborted":
        return SKIP_ABORTED
    return SKIP_EMPTY if _is_empty(message) else None


def build_request(ctx: Context) -> Request:
    """The messages to send for `ctx`, with what changed and why. A new user message is the
    context's leaf, so it comes last, after the results supplied for the calls before it."""
    req = Request([])
    pending: dict[str, str] = {}  # call id -> the entry id of the assistant message that made it
    state = replay(ctx.messages, ctx.sources)
    req.tools = tool_declarations(state)
    systems = [i for i, m in enumerate(ctx.messages) if m.get("role") == "system"]
    # One system message that leads the context and says all there is goes as it is.
    fold = bool(systems) and not (systems == [0] and ctx.messages[0].get("content") == state.prompt != "")
    if fold and state.prompt:
        head = {"role": "system", "content": state.prompt, "entryId": ctx.messages[systems[0]]["entryId"], "added": True}
        req.changes.append(Change("added", head["entryId"], ADD_SYSTEM, 0))
        req.messages.append(head)
        req.rows.append(Row(head, "added", ADD_SYSTEM))

    def answer_pending() -> None:
        for call_id, entry_id in pending.items():
            req.changes.append(Change("added", entry_id, ADD_RESULT, len(req.messages)))
            req.messages.append({"role": "tool", "tool_call_id": call_id, "content": NO_RESULT,
                                 "entryId": entry_id, "added": True})
            req.rows.append(Row(req.messages[-1], "added", ADD_RESULT))
        pending.clear()

    def skip(i: int, message: dict, reason: str) -> None:
        req.changes.append(Change("skipped", message["entryId"], reason, i))
        req.rows.append(Row(message, "skipped", reason))

    def send(message: dict) -> None:
        req.messages.append(dict(message))
        req.rows.append(Row(message, "sent"))

    for i, (message, source) in enumerate(zip(ctx.messages, ctx.sources)):
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if call_id in pending:
                del pending[call_id]
                send(message)
            else:
                skip(i, message, SKIP_ORPHAN)
            continue
        if fold and message.get("role") == "system":
            skip(i, message, SKIP_SYSTEM)
            continue
        answer_pending()
        reason = _skip_reason(message, source)
        if reason:
            skip(i, message, reason)
            continue
        send(message)
        for call in message.get("tool_calls") or ():
            pending[call.get("id", "")] = message["entryId"]
    answer_pending()
    return req
