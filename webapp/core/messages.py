"""What an entry says to a model (SPEC §5): the OpenAI-style chat messages each entry
contributes to a context, the summary messages a compaction stands for, and their estimated size.

Below the entries: an entry's token estimate is made from these messages when it was not taken
as it was read (`Entry.tokens`), so this module reads entries only by their fields (`type`,
`message`, `get`) and imports nothing but `entry_types`. The context (`context.build_context`)
puts these messages in path order; `tokens` adds them up.

The estimate is the usual 4 characters per token; images count a flat amount.
"""

from __future__ import annotations

import math

import orjson

from .entry_types import BRANCH_SUMMARY, CUSTOM_MESSAGE, MESSAGE, content_blocks

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
    return []


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
    """What stands for the entries a compaction replaced: its summary, or, when the compaction
    records what the whole context before it became (Codex's replacement history), that."""
    history = compaction.get("replacementHistory")
    if isinstance(history, list):
        return [m for msg in history for m in message_messages(msg)]
    return [summary_message(compaction)]


def summary_message(compaction) -> dict:
    return summary_message_of(compaction.get("summary") or "")


def summary_message_of(summary: str) -> dict:
    """The system message a compaction's summary becomes (SPEC §5)."""
    return {"role": "system", "content": f"{COMPACTION_PREFIX}\n\n<summary>\n{summary}\n</summary>"}


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
