"""The summary prompts a lab compares: pi's own, ours, and those a person wrote and saved by name.

`pi` is pi 1.6.0's compaction request as pi makes it (`generateSummaryWithUsage`: its system
prompt, the conversation serialized as `serializeConversation` does, the previous summary, the
initial or update prompt; a split turn is a second call with its turn-prefix prompt, merged as
pi merges them). The prompt texts are pi's, quoted from @earendil-works/pi-coding-agent 1.6.0
(dist/core/compaction/compaction.js and utils.js), MIT licence, Copyright (c) Mario Zechner;
see webapp/model/prompts/PI-LICENSE.txt. `ours` is summarize.compaction_prompt. A person's prompt
takes the place of the instructions: the conversation and the previous summary come before it
as they do in pi's.

Saved prompts are a JSON object in the data folder (`lab/prompts.json`, name -> text).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import orjson

from ..core.compaction import CompactionPlan, with_file_lists
from ..core.errors import InvalidWrite
from ..core.lab import EXTRACTIVE, RECORDED
from ..core.private import open_private, private_folder
from ..core.verdicts import data_dir
from .summarize import SYSTEM as OUR_SYSTEM, _llm_messages, compaction_prompt, transcript

PI, OURS = "pi", "ours"
BUILT_IN = (PI, OURS)
PROMPT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,39}")
MAX_PROMPT_CHARS = 20_000
_PROMPTS = Path(__file__).resolve().parent / "prompts"


def _pi_text(name: str) -> str:
    return (_PROMPTS / f"pi_{name}.txt").read_text(encoding="utf-8").rstrip("\n")


PI_SYSTEM = _pi_text("system")
PI_INITIAL = _pi_text("initial")
PI_UPDATE = _pi_text("update")
PI_TURN_PREFIX = _pi_text("turn_prefix")
PI_TOOL_RESULT_CHARS = 2000  # pi's TOOL_RESULT_MAX_CHARS


@dataclass
class SummaryRequest:
    """The model calls one candidate's summary takes, and how their texts become one summary."""

    calls: list[list[dict]]
    merge: Callable[[list[str]], str]


def _content_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _pi_truncated(text: str) -> str:
    if len(text) <= PI_TOOL_RESULT_CHARS:
        return text
    return f"{text[:PI_TOOL_RESULT_CHARS]}\n\n[... {len(text) - PI_TOOL_RESULT_CHARS} more characters truncated]"


def pi_serialize(messages: list[dict]) -> str:
    """pi's `serializeConversation` over the context's chat messages: thinking and system
    messages left out, tool calls as `name(key=json, …)`, tool results cut at 2,000 characters."""
    parts = []
    for m in messages:
        role, text = m.get("role"), _content_text(m.get("content"))
        if role == "user":
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            calls = []
            for call in m.get("tool_calls") or ():
                fn = call.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = {}
                args = args if isinstance(args, dict) else {}
                shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, separators=(',', ':'))}"
                                  for k, v in args.items())
                calls.append(f"{fn.get('name', '')}({shown})")
            if text:
                parts.append(f"[Assistant]: {text}")
            if calls:
                parts.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        elif role == "tool":
            if text:
                parts.append(f"[Tool result]: {_pi_truncated(text)}")
    return "\n\n".join(parts)


def _pi_call(prompt: str) -> list[dict]:
    return [{"role": "system", "content": PI_SYSTEM}, {"role": "user", "content": prompt}]


def _previous(plan: CompactionPlan) -> str | None:
    previous = plan.previous_summary
    return previous if previous and previous.strip() else None


def pi_request(plan: CompactionPlan) -> SummaryRequest:
    """pi's request for the plan: the history (when there is any) and, for a split turn, the
    turn's early part, each its own call."""
    history = [m for m in plan.messages_of(plan.summarize) if m.get("role") != "system"]
    prefix = [m for m in plan.messages_of(plan.turn_prefix) if m.get("role") != "system"]
    previous = _previous(plan)
    calls = []
    if history or not prefix:
        text = f"<conversation>\n{pi_serialize(history)}\n</conversation>\n\n"
        if previous:
            text += f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
        calls.append(_pi_call(text + (PI_UPDATE if previous else PI_INITIAL)))
    if prefix:
        calls.append(_pi_call(f"# Conversation\n{pi_serialize(prefix)}\n\n# Instructions\n{PI_TURN_PREFIX}"))

    def merge(texts: list[str]) -> str:
        if not prefix:
            return texts[0]
        head = texts[0] if history else (previous or "No prior history.")
        return f"{head}\n\n---\n\n**Turn Context (split turn):**\n\n{texts[-1]}"

    return SummaryRequest(calls, merge)


def ours_request(plan: CompactionPlan) -> SummaryRequest:
    return SummaryRequest([_llm_messages(compaction_prompt(plan))], lambda texts: texts[0])


def own_request(plan: CompactionPlan, text: str) -> SummaryRequest:
    """A person's prompt: the conversation (and the previous summary) first, then their words;
    the system messages left out, as pi leaves them (the compaction carries the prompt in force)."""
    said = [m for m in plan.messages_to_summarize() if m.get("role") != "system"]
    body = f"<conversation>\n{transcript(said)}\n</conversation>\n\n"
    previous = _previous(plan)
    if previous:
        body += f"<previous-summary>\n{with_file_lists(previous, [], [])}\n</previous-summary>\n\n"
    return SummaryRequest([[{"role": "system", "content": OUR_SYSTEM}, {"role": "user", "content": body + text}]],
                          lambda texts: texts[0])


def summary_request(name: str, plan: CompactionPlan, saved: dict[str, str] | None = None) -> SummaryRequest:
    if name == PI:
        return pi_request(plan)
    if name == OURS:
        return ours_request(plan)
    saved = load_prompts() if saved is None else saved
    if name not in saved:
        raise InvalidWrite(f"no summary prompt named {name!r}: the prompts are {', '.join(prompt_names(saved))}")
    return own_request(plan, saved[name])


# -- saved prompts ------------------------------------------------------------------------------------


def prompts_file() -> Path:
    return data_dir() / "lab" / "prompts.json"


def load_prompts() -> dict[str, str]:
    """The prompts saved by name (none when the file is missing or unreadable)."""
    try:
        data = orjson.loads(prompts_file().read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}


def prompt_names(saved: dict[str, str] | None = None) -> list[str]:
    saved = load_prompts() if saved is None else saved
    return [*BUILT_IN, *sorted(saved)]


def check_prompt(name: str, text: str) -> tuple[str, str]:
    name, text = (name or "").strip(), (text or "").replace("\r\n", "\n").strip()
    if not PROMPT_NAME.fullmatch(name):
        raise InvalidWrite(f"a prompt's name is letters, digits, spaces, '.', '_' and '-' (at most 40), not {name!r}")
    if name in (*BUILT_IN, EXTRACTIVE, RECORDED):
        raise InvalidWrite(f"{name!r} is a built-in name: choose another")
    if not text:
        raise InvalidWrite("the prompt is empty")
    if len(text) > MAX_PROMPT_CHARS:
        raise InvalidWrite(f"the prompt is {len(text):,} characters: at most {MAX_PROMPT_CHARS:,}")
    return name, text


def save_prompt(name: str, text: str) -> str:
    """Save (or replace) a prompt by name; the file is rewritten whole, through a temporary one."""
    name, text = check_prompt(name, text)
    saved = {**load_prompts(), name: text}
    path = prompts_file()
    try:
        private_folder(path.parent, tighten=True)
        tmp = path.with_name(path.name + ".tmp")
        with os.fdopen(open_private(tmp), "wb") as f:
            f.write(orjson.dumps(saved, option=orjson.OPT_INDENT_2))
        os.replace(tmp, path)
    except OSError as exc:
        raise InvalidWrite(f"cannot save the prompt in {path}: {exc.strerror or exc}") from None
    return name
