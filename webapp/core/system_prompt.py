"""pi 1.6's system messages in a context: the prompt and the tools the model has at each point.

A session holds the prompt and the tool set as a series of system messages (SPEC §2): the first
gives the prompt (`content`, and `sections` by name) and the tools (`toolsAdded`, full
definitions); each later one adds to the prompt, sets or removes (null) sections, and adds or
removes tools. A compaction's `systemMessage` is the whole state at that point, in one message.
`replay` folds them as pi-ai's `getCurrentSystemMessage` does, for what a request sends (one
leading system message and the tool list, as pi sends them to a model that takes no system
message mid-conversation) and for what a viewer shows (each message as the state it leads to,
and what it changed).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from .context import build_context
from .entries import COMPACTION, MESSAGE, Entry, content_text


@dataclass
class SystemState:
    """The prompt and tools in force after some system messages."""

    contents: list[str] = field(default_factory=list)  # each message's own text, in order
    sections: dict[str, str] = field(default_factory=dict)
    tools: dict[str, dict] = field(default_factory=dict)  # name -> definition, in declaration order
    seen: bool = False  # a system message was met

    @property
    def prompt(self) -> str:
        """The whole prompt as pi renders it: the contents, then the sections' texts."""
        return "\n\n".join(p for p in ("\n\n".join(self.contents), *self.sections.values()) if p)

    def apply(self, message: dict) -> None:
        self.seen = True
        text = content_text(message.get("content"))
        if text:
            self.contents.append(text)
        sections = message.get("sections")
        for name, value in (sections.items() if isinstance(sections, dict) else ()):
            if isinstance(value, str):
                self.sections[str(name)] = value
            else:
                self.sections.pop(str(name), None)
        for tool in _tools(message.get("toolsRemoved")):
            self.tools.pop(str(tool.get("name")), None)
        for tool in _tools(message.get("toolsAdded")):
            self.tools[str(tool.get("name"))] = tool

    def copy(self) -> "SystemState":
        return SystemState(list(self.contents), dict(self.sections), dict(self.tools), self.seen)

    def as_message(self) -> dict | None:
        """The state as one system message (pi's checkpoint), or None before any."""
        if not self.seen and not self.tools:
            return None
        out: dict = {"role": "system", "content": "\n\n".join(self.contents)}
        if self.sections:
            out["sections"] = dict(self.sections)
        if self.tools:
            out["toolsAdded"] = list(self.tools.values())
        return out


def _tools(value) -> list[dict]:
    return [t for t in value if isinstance(t, dict)] if isinstance(value, list) else []


def system_message_of(message: dict, source: Entry) -> dict | None:
    """The pi system message behind one system message of a context: the entry's own message,
    or the checkpoint (`systemMessage`) of the compaction it came from."""
    if message.get("role") != "system":
        return None
    if source.type == MESSAGE and source.role == "system":
        return source.message
    if source.type == COMPACTION:
        checkpoint = source.get("systemMessage")
        return checkpoint if isinstance(checkpoint, dict) else None
    return None


def replay(messages: list[dict], sources: list[Entry]) -> SystemState:
    """The prompt and tools in force after the system messages of a context (its messages and
    the entry behind each)."""
    state = SystemState()
    for m, s in zip(messages, sources):
        raw = system_message_of(m, s)
        if raw is not None:
            state.apply(raw)
    return state


def system_checkpoint(tree, leaf_id: str | None) -> dict | None:
    """The prompt and tools in force at `leaf_id` as one system message (pi's `getCurrentSystem
    Message` of the context there), or None where the path holds no system message: what a
    compaction written there keeps of them."""
    ctx = build_context(tree, leaf_id)
    return replay(ctx.messages, ctx.sources).as_message()


def tool_declarations(state: SystemState) -> list[dict]:
    """The tools as a chat request declares them (OpenAI's function tools, which litellm takes)."""
    out = []
    for tool in state.tools.values():
        fn = {"name": str(tool.get("name")), "description": str(tool.get("description") or "")}
        params = tool.get("parameters")
        fn["parameters"] = params if isinstance(params, dict) else {"type": "object", "properties": {}}
        out.append({"type": "function", "function": fn})
    return out


@dataclass
class SystemChange:
    """What one system message of a context changed, for a viewer: the prompt and tools before
    and after it, a line diff of the prompt, and the tools added and removed."""

    index: int  # of the message in the context
    entry_id: str
    before: SystemState
    after: SystemState
    diff: list[tuple[str, str]]  # (" " | "-" | "+", line)
    tools_added: list[str]
    tools_removed: list[str]


def changes(messages: list[dict], sources: list[Entry]) -> list[SystemChange]:
    """Each system message of a context with what it changed."""
    state = SystemState()
    out = []
    for i, (m, s) in enumerate(zip(messages, sources)):
        raw = system_message_of(m, s)
        if raw is None:
            continue
        before = state.copy()
        state.apply(raw)
        after = state.copy()
        diff = [(line[0], line[2:]) for line in difflib.ndiff(before.prompt.splitlines(), after.prompt.splitlines())
                if line[:1] in (" ", "-", "+")]
        out.append(SystemChange(i, s.id, before, after, diff,
                                [n for n in after.tools if n not in before.tools or after.tools[n] != before.tools[n]],
                                [n for n in before.tools if n not in after.tools]))
    return out
