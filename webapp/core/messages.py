"""What an entry says to a model (SPEC §5): the OpenAI-style chat messages each entry
contributes to a context, the summary messages a compaction stands for, what a context edit
makes of its target, and their estimated size.

pi's roles become chat roles as pi's `convertToLlm` sends them: a system message (pi 1.6) stays a
system message (its sections rendered after its content); everything else pi sends as the user's
(a custom message, a bash execution, a branch or compaction summary) is a user message.

Below the entries: an entry's token estimate is made from these messages when it was not taken
as it was read (`Entry.tokens`), so this module reads entries only by their fields (`type`,
`message`, `get`) and imports nothing but `entry_types`. The context (`context.build_context`)
puts these messages in path order; `tokens` adds them up.

The estimate is the usual 4 characters per token; images count a flat amount.
"""

from __future__ import annotations

import math

import orjson

from .entry_types import BRANCH_SUMMARY, CUSTOM_MESSAGE, MESSAGE, content_blocks, content_text

COMPACTION_PREFIX = "The conversation history before this point was compacted into the following summary:"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:"

IMAGE_TOKENS = 1200


def _text_or_parts(content) -> str | list[dict]:
    """User content as a plain string, or OpenAI content parts when images are present."""
    blocks = content_blocks(content)
    if all(b.get("type") == "text" for b in blocks):
        return "\n".join(b.get("text", "") for b in blocks)
    parts: list[dict] = []
    for b in blocks:
        if b.get("type") == "text":
            parts.append({"type": "text", "text": b.get("text", "")})
        elif b.get("type") == "image":
            url = f"data:{b.get('mimeType', 'image/png')};base64,{b.get('data', '')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _tool_result_text(content) -> str:
    blocks = content_blocks(content)
    texts = [b.get("text", "") if b.get("type") == "text" else f"[{b.get('type')}]" for b in blocks]
    return "\n".join(texts)


def _assistant(msg: dict) -> dict:
    blocks = content_blocks(msg.get("content"))
    text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    calls = [
        {
            "id": b.get("id", ""),
            "type": "function",
            "function": {
                "name": str(b.get("name", "")),
                "arguments": orjson.dumps(b.get("arguments", {})).decode(),
            },
        }
        for b in blocks
        if b.get("type") == "toolCall"
    ]
    out: dict = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        out["tool_calls"] = calls
    return out


def _bash(msg: dict) -> str:
    """A bash execution as pi renders it for the model (its `bashExecutionToText`), to the byte."""
    output = msg.get("output")
    text = f"Ran `{msg.get('command', '')}`\n"
    text += f"```\n{output}\n```" if output else "(no output)"
    code = msg.get("exitCode")
    if msg.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif code is not None and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if msg.get("truncated") and msg.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {msg['fullOutputPath']}]"
    return text


def message_messages(msg: dict) -> list[dict]:
    """The LLM messages one SPEC §2 message contributes (none for a role the model does not take)."""
    role = msg.get("role")
    if role == "user":
        return [{"role": "user", "content": _text_or_parts(msg.get("content"))}]
    if role == "assistant":
        return [_assistant(msg)]
    if role == "toolResult":
        return [
            {
                "role": "tool",
                "tool_call_id": msg.get("toolCallId", ""),
                "content": _tool_result_text(msg.get("content")),
            }
        ]
    if role == "bashExecution":
        return [] if msg.get("excludeFromContext") else [{"role": "user", "content": _bash(msg)}]
    if role == "custom":
        return [{"role": "user", "content": _text_or_parts(msg.get("content"))}]
    if role == "system":
        return [{"role": "system", "content": system_prompt_text(msg)}]
    return []


def system_prompt_text(msg: dict) -> str:
    """A pi 1.6 system message as one prompt (pi-ai's `getSystemMessageText`): its content, then
    each section's text, the non-empty parts joined by blank lines."""
    parts = [content_text(msg.get("content"))]
    sections = msg.get("sections")
    if isinstance(sections, dict):
        parts += [v for v in sections.values() if isinstance(v, str)]
    return "\n\n".join(p for p in parts if p)


# The roles whose content a context edit replaces (pi's `projectContextEntry`); any other message
# of the target (a bash execution, a summary, a system message) is only ever dropped by one.
EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})


def edited_messages(entry, replacement) -> list[dict]:
    """What `entry` says to the model under a context edit's `replacement` (SPEC §5): nothing for
    null; otherwise the same messages with their content replaced, a string becoming one text
    block for an assistant message or a tool result. A replacement that is not an object (a
    file pi would refuse to write) replaces the content with nothing, as pi reads it."""
    if replacement is None:
        return []
    content = replacement.get("content") if isinstance(replacement, dict) else None
    if entry.type == CUSTOM_MESSAGE:
        return [{"role": "user", "content": _text_or_parts(content)}]
    msg = entry.message
    role = msg.get("role")
    if entry.type != MESSAGE or role not in EDITABLE_ROLES:
        return entry_messages(entry)
    if role in ("assistant", "toolResult") and isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return message_messages({**msg, "content": content})


def entry_messages(entry) -> list[dict]:
    """The LLM messages one path entry contributes (none for meta entries)."""
    t = entry.type
    if t == MESSAGE:
        return message_messages(entry.message)
    if t == CUSTOM_MESSAGE:
        return [{"role": "user", "content": _text_or_parts(entry.get("content"))}]
    if t == BRANCH_SUMMARY:
        summary = entry.get("summary")
        if isinstance(summary, str) and summary.strip():
            return [{"role": "user", "content": f"{BRANCH_PREFIX}\n\n<summary>\n{summary}</summary>"}]
    return []


def compaction_messages(compaction) -> list[dict]:
    """What stands for the entries a compaction replaced: its summary, after its `systemMessage`
    (pi 1.6: the prompt and tools in force at that point) when it has one; or, when the
    compaction records what the whole context before it became (Codex's replacement history),
    that."""
    history = compaction.get("replacementHistory")
    if isinstance(history, list):
        return [m for msg in history for m in message_messages(msg)]
    checkpoint = compaction.get("systemMessage")
    head = message_messages(checkpoint) if isinstance(checkpoint, dict) and checkpoint.get("role") == "system" else []
    return [*head, summary_message(compaction)]


def summary_message(compaction) -> dict:
    return summary_message_of(compaction.get("summary") or "")


def summary_message_of(summary: str) -> dict:
    """The message a compaction's summary becomes (SPEC §5): a user message, as pi sends it."""
    return {"role": "user", "content": f"{COMPACTION_PREFIX}\n\n<summary>\n{summary}\n</summary>"}


def estimate_message_tokens(message: dict) -> int:
    chars = 0
    images = 0
    content = message.get("content")
    if isinstance(content, str):
        chars += len(content)
    elif isinstance(content, list):
        for part in content:
            if part.get("type") == "text":
                chars += len(part.get("text", ""))
            else:
                images += 1
    for call in message.get("tool_calls") or ():
        fn = call.get("function", {})
        chars += len(fn.get("name", "")) + len(fn.get("arguments", ""))
    return math.ceil(chars / 4) + images * IMAGE_TOKENS


def estimate_entry_tokens(entry) -> int:
    """The estimated tokens of the messages one entry contributes to a context (`Entry.tokens`
    keeps it, taken when the entry was read where that is quick)."""
    return sum(estimate_message_tokens(m) for m in entry_messages(entry))
