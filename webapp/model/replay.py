"""Replay a branch on another model: its user messages after a start node are sent again, in
order, and the model works after each (tool calls → the tool runner → results → the model again)
until it answers without a tool call. Its entries are written as a new branch from the start, beginning with its `model_change` (so
the tree says which model it ran on, and a replay is found from the few model changes of a file).

Each model call sends the request of SPEC §5b for the branch as written so far (so what a replay
sends is what a "continue" from its entries would send), with the next user message appended
in memory: a user message is written only together with the reply to it, so a failure of the
first call writes nothing at all. The first reply records `details.replayOf`, `replayFrom` and
`tools`; every tool result records how it was answered (`details.replay`), which the UI counts.
Budgets (steps, tokens, cost) are checked before each call; when one is reached, or a later call
fails or is cancelled, a `session-tree.replay-stop` entry ends the branch and says why.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

from ..core.context import build_context
from ..core.entries import MESSAGE, MODEL_CHANGE, now_iso, short_id
from ..core.errors import InvalidWrite, SessionError
from ..core.messages import message_messages
from ..core.outcome import REPLAY_STOP
from ..core.replay_plan import (
    DEFAULT_MAX_COPY_MB, DEFAULT_MAX_STEPS, REFUSED, TOOL_MODES, UNFAIR, UNFAIR_SHARE, ReplayPlan, counted,
    plan_replay,
)
from ..core.request import build_request
from ..core.session import Session
from .cancel import Cancel
from .errors import Cancelled, ModelError
from .llm import ModelConfig, complete, model_identity
from .table import cost_text, priced
from .tool_runner import RecordedTools, SandboxTools, ToolResult

USUAL_TOOLS = ("read", "bash", "edit", "write")  # pi's default tool set, offered in a recorded replay

EventCallback = Callable[[str, dict], None]  # (event, data)


@dataclass(frozen=True)
class Budget:
    max_steps: int = DEFAULT_MAX_STEPS
    max_tokens: int | None = None
    max_cost: float | None = None

    def __post_init__(self):
        if self.max_steps < 1:
            raise InvalidWrite("the step limit must be at least 1 (one model call)")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise InvalidWrite("the token budget must be at least 1")
        if self.max_cost is not None and self.max_cost <= 0:
            raise InvalidWrite("the cost budget must be more than 0 USD")

    def reached(self, steps: int, tokens: int, cost: float) -> str | None:
        """Why no further model call may be made, or None."""
        if steps >= self.max_steps:
            return f"step limit {self.max_steps} reached"
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return f"token budget {self.max_tokens} reached ({tokens} used)"
        if self.max_cost is not None and cost >= self.max_cost:
            return f"cost budget ${self.max_cost:g} reached (${cost:.4f} spent)"
        return None


@dataclass
class Replay:
    """One replay: what it sends, who answers its tools, and what it wrote."""

    session: Session
    plan: ReplayPlan
    config: ModelConfig
    tools: RecordedTools | SandboxTools
    budget: Budget = field(default_factory=Budget)
    cancel: Cancel = field(default_factory=Cancel)
    steps: int = 0
    tokens: int = 0
    cost: float = 0.0
    written: list[str] = field(default_factory=list)  # entry ids, in order
    first_reply: str | None = None
    stopped: str | None = None  # why it was stopped (a budget, a failure, a cancel)
    error: str | None = None  # a failure that wrote nothing at all
    seconds: float = 0.0
    began: str | None = None  # when it started (ISO-8601): the stamp of its model_change
    call: Callable | None = None  # what makes each model call (default llm.complete; the lab's pays from its budget)

    @property
    def mode(self) -> str:
        return self.tools.mode

    @property
    def leaf(self) -> str | None:
        """The new branch's last entry (None when nothing was written)."""
        return self.written[-1] if self.written else None

    @property
    def finished(self) -> bool:
        return self.stopped is None and self.error is None

    @property
    def known_cost(self) -> float | None:
        """What the replies cost, or None when the table has no price for the model (not $0)."""
        return self.cost if priced(self.config.model) else None

    def counts(self) -> dict:
        if isinstance(self.tools, RecordedTools):
            return {"hits": self.tools.hits, "misses": self.tools.misses}
        return {"ran": self.tools.ran, "refused": self.tools.refused}

    def describe(self) -> str:
        """The result in one line, for the CLI and the stream's end."""
        if self.error:
            return self.error
        what = f"replay of {short_id(self.plan.leaf)} from {short_id(self.plan.start)} on {self.config.model}: "
        what += f"{counted(self.steps, 'model call')}, {self.tokens} tokens, cost {cost_text(self.known_cost)}"
        c = self.counts()
        if self.mode == "recorded":
            what += f"; recorded tools: {counted(c['hits'], 'hit')}, {counted(c['misses'], 'miss')}"
            if c["misses"] > UNFAIR_SHARE * (c["hits"] + c["misses"]):
                what += f" ({UNFAIR})"
        else:
            what += f"; sandbox tools: {c['ran']} run, {c['refused']} refused"
        return what + (f"; stopped: {self.stopped}" if self.stopped else "; finished")


def prepare(session: Session, config: ModelConfig, leaf: str, start: str, tools: str = "recorded",
            allow_bash: bool = False, budget: Budget | None = None,
            max_copy_mb: float = DEFAULT_MAX_COPY_MB) -> Replay:
    """A replay ready to run, every check made before anything is sent or written: the session
    may be written, a model is named, the start is on the branch, the sandbox's copy is made."""
    session.check_writable()
    config.check_usable("name the model to replay on (e.g. openai/gpt-4o-mini)")
    if tools not in TOOL_MODES:
        raise InvalidWrite(f"tools {tools!r}: use one of {', '.join(TOOL_MODES)}")
    if allow_bash and tools != "sandbox":
        raise InvalidWrite("bash runs only in a sandbox replay (--tools sandbox)")
    if budget is not None and budget.max_cost is not None and not priced(config.model):
        raise InvalidWrite(f"a cost budget needs a model with a known price: {config.model} has none in "
                           "litellm's table, so its cost is unknown (use a step or token budget)")
    tree = session.tree
    plan = plan_replay(tree, tree.find(leaf).id, tree.find(start).id)
    if tools == "sandbox":
        runner = SandboxTools.copy_of((tree.header or {}).get("cwd"), max_copy_mb, allow_bash)
    else:
        runner = RecordedTools.for_plan(plan.recorded, USUAL_TOOLS)
    return Replay(session, plan, config, runner, budget or Budget())


def run(replay: Replay, on_event: EventCallback | None = None) -> Replay:
    """Run the replay to its end (or its stop) and delete the sandbox's copy. A ModelError of the
    first call, which wrote nothing, is raised; a later one stops the replay (written as such)."""
    def tell(event: str, data: dict) -> None:
        if on_event is not None:
            on_event(event, data)

    began = time.monotonic()
    replay.began = now_iso()
    try:
        _work(replay, tell)
    finally:
        replay.tools.close()
        replay.seconds = time.monotonic() - began
    tell("end", {"leaf": replay.leaf, "first": replay.first_reply, "stopped": replay.stopped,
                 "error": replay.error, "summary": replay.describe(), **replay.counts()})
    return replay


def _work(replay: Replay, tell: EventCallback) -> None:
    session, plan = replay.session, replay.plan
    at = plan.start
    prompts: list[dict | None] = ([None] if plan.answers_start else []) + [e.message for e in plan.prompts]
    for prompt in prompts:
        pending = prompt  # the user message, written with the reply to it
        while True:
            reason = replay.budget.reached(replay.steps, replay.tokens, replay.cost)
            if reason is None and replay.cancel.is_set():
                reason = "cancelled"
            if reason and not replay.written:  # (only a cancel comes before the first reply)
                replay.error = "Cancelled before the first reply: nothing was written."
                return
            if reason:
                return _stop(replay, at, reason, tell)
            tell("step", {"step": replay.steps + 1, "prompt": _text(pending)})
            sent_at = now_iso()
            try:
                reply = _call(replay, at, pending, tell)
            except ModelError as exc:
                why = "cancelled" if isinstance(exc, Cancelled) else f"the model failed: {exc}"
                if not replay.written:
                    replay.error = f"{why} Nothing was written." if not isinstance(exc, Cancelled) else \
                        "Cancelled before the first reply: nothing was written."
                    raise
                return _stop(replay, at, why, tell)
            replay.steps += 1
            replay.tokens += int(reply.usage.get("totalTokens") or 0)
            replay.cost += float((reply.usage.get("cost") or {}).get("total") or 0.0)
            at = _write_turn(replay, at, pending, sent_at, reply)
            pending = None
            tell("reply", {"entry": at, "step": replay.steps, "text": reply.text, "tokens": replay.tokens,
                           "cost": None if replay.known_cost is None else round(replay.known_cost, 6),
                           "calls": [c["name"] for c in reply.tool_calls], "cut": reply.cut})
            if not reply.tool_calls and not reply.cut:
                break
            for call in reply.tool_calls:
                result = _tool_result(replay, call)
                message = {"role": "toolResult", "toolCallId": call["id"], "toolName": call["name"],
                           "content": [{"type": "text", "text": result.text}], "isError": result.is_error,
                           "details": {"replay": result.how}, "timestamp": int(time.time() * 1000)}
                at = _written(replay, session.append_message(message, parent=at)["id"])
                tell("tool", {"entry": at, "name": call["name"], "how": result.how, "error": result.is_error,
                              **replay.counts()})
            if reply.cut:  # (its calls answered first: a call without a result is no context to go on from)
                return _stop(replay, at, f"the reply was cut at the length limit ({reply.max_tokens} tokens): "
                                         "the model did not finish", tell)


def _write_turn(replay: Replay, at: str, pending: dict | None, sent_at: str, reply) -> str:
    """Write a step once its reply is whole, each entry stamped when it happened: the branch's
    `model_change` when the replay began (first step only), the user message when it was sent,
    the reply when it came back. Returns the reply's id."""
    batch: list[dict] = []
    stamps: list[str | None] = []
    if not replay.written:  # the branch says which model it ran on, whichever the branch had
        provider, model_id = model_identity(replay.config)
        batch.append({"type": MODEL_CHANGE, "provider": provider, "modelId": model_id})
        stamps.append(replay.began)
    if pending is not None:
        batch.append({"type": MESSAGE, "message": _sent(pending, sent_at)})
        stamps.append(sent_at)
    reply_fields: dict = {"type": MESSAGE, "message": reply.assistant_message()}
    if replay.first_reply is None:
        reply_fields["details"] = {"replayOf": replay.plan.leaf, "replayFrom": replay.plan.start,
                                   "tools": replay.mode}
    batch.append(reply_fields)
    stamps.append(None)
    for entry in replay.session.append_entries(batch, parent=at, stamps=stamps):
        _written(replay, entry["id"])
    replay.first_reply = replay.first_reply or replay.written[-1]
    return replay.written[-1]


def _tool_result(replay: Replay, call: dict) -> ToolResult:
    """The result of one tool call, whatever happens: a call without a result would leave the
    branch one that no model accepts as a context."""
    try:
        return replay.tools.run(call["name"], call["arguments"])
    except Exception as exc:  # (a tool runner's own failure is that call's error, not the replay's end)
        return ToolResult(f"Error: the tool call could not be answered: {type(exc).__name__}: {exc}", True, REFUSED)


def _written(replay: Replay, entry_id: str) -> str:
    """Note an entry the replay wrote."""
    replay.written.append(entry_id)
    return entry_id


def _sent(message: dict, sent_at: str) -> dict:
    """A user message of the original branch, as sent again at `sent_at` (ISO-8601)."""
    moment = datetime.strptime(sent_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return {**message, "timestamp": int(moment.timestamp() * 1000)}


def _text(message: dict | None) -> str | None:
    if message is None:
        return None
    return "".join(m.get("content") if isinstance(m.get("content"), str) else "" for m in message_messages(message))


def _call(replay: Replay, at: str, pending: dict | None, tell: EventCallback):
    built = build_request(build_context(replay.session.tree, at))
    request = built.llm_messages()
    if pending is not None:
        request += message_messages(pending)

    def delta(kind: str, text: str) -> None:
        tell("delta", {"kind": kind, "text": text})

    return (replay.call or complete)(replay.config, request, stream=True, on_delta=delta,
                                     tools=declared_tools(built.tools, replay.tools.schemas()), cancel=replay.cancel)


def declared_tools(session_tools: list[dict], runner_tools: list[dict]) -> list[dict]:
    """The tools a replay's request declares: those the session's system messages leave in force
    there, as `continue` sends them (the model is asked as it was), then the replay's own runner's
    for any other name it answers (a session without system messages declares none)."""
    named = {tool["function"]["name"] for tool in session_tools}
    return [*session_tools, *(tool for tool in runner_tools if tool["function"]["name"] not in named)]


def _stop(replay: Replay, at: str, reason: str, tell: EventCallback) -> None:
    """End the branch with the stop entry of SPEC §5d, saying why."""
    replay.stopped = reason
    data = {"reason": reason, "steps": replay.steps, "tokens": replay.tokens,
            "cost": None if replay.known_cost is None else round(replay.known_cost, 6),
            "replayOf": replay.plan.leaf, **replay.counts()}
    try:
        _written(replay, replay.session.append_custom(REPLAY_STOP, data, parent=at)["id"])
    except SessionError as exc:  # (the file became unwritable mid-way: what was written stands)
        replay.stopped = f"{reason} (the stop could not be written: {exc})"
    tell("stopped", {"reason": replay.stopped})
