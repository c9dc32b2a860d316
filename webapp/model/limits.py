"""How much a model call may ask for: the window it must fit in and the `max_tokens` it carries.

A small local model does not stop by itself: without `max_tokens` it generates until its window
is full (minutes of both cores, a "summary" longer than what it replaced). Every call therefore
carries a bound chosen from its purpose, and a request that cannot fit the model's window is
refused before it is sent, with the figures, rather than by the server's 400 after a turn was
half written.

The window comes from, in order: the person's setting (`--context-window`,
$SESSION_TREE_CONTEXT_WINDOW), litellm's model table, what an OpenAI-compatible server says of
itself (llama.cpp's `/props`, a `/models` row's `meta.n_ctx_train` or `max_model_len`).
"""

from __future__ import annotations

import math
import os
import time

import orjson

from ..core.messages import estimate_message_tokens
from ..core.tokens import format_tokens
from .errors import ModelError
from .table import context_window, model_info, split_model

SUMMARY_SHARE = 0.5  # a summary may be at most half of what it replaces...
SUMMARY_CAP = 8192  # ...and never longer than a long page of notes
JUDGE_MAX_TOKENS = 512  # {"better": ..., "reasons": "one or two sentences"} with room to spare
MIN_REPLY_TOKENS = 64  # a request that leaves less than this for the answer does not fit
SERVER_ASK_SECONDS = 2.0  # how long a server is given to say its window
SILENCE_KEPT = 60.0  # seconds a server that said nothing of its window is not asked again


def estimated_tokens(messages: list[dict]) -> int:
    """The request's size as the project estimates it (about 4 characters a token)."""
    return sum(estimate_message_tokens(m) for m in messages)


def summary_max_tokens(replaced_tokens: int) -> int:
    """A summary's bound: a share of the tokens it replaces, never more than they are."""
    replaced = max(int(replaced_tokens), 1)
    return max(1, min(SUMMARY_CAP, math.floor(replaced * SUMMARY_SHARE)))


def model_output_limit(model: str | None) -> int | None:
    """The longest answer litellm's table says the model gives (`max_output_tokens`), if known."""
    if not model:
        return None
    provider, model_id = split_model(model)
    info = model_info(provider, model_id)
    return info.max_output if info else None


_asked: dict[str, tuple[float, int | None]] = {}  # api base -> (when, what it said)


def server_window(api_base: str | None) -> int | None:
    """The window an OpenAI-compatible server says it serves (llama.cpp: `/props`'s n_ctx, or
    `/models`' `meta.n_ctx_train`; vLLM: `max_model_len`); None when it says nothing (most hosted
    APIs) or does not answer in SERVER_ASK_SECONDS. A window said is kept for the process; a
    silence is asked again after SILENCE_KEPT seconds (the server may have been starting)."""
    if not api_base:
        return None
    known = _asked.get(api_base)
    if known and (known[1] is not None or time.monotonic() - known[0] < SILENCE_KEPT):
        return known[1]
    found = _ask_server(api_base)
    _asked[api_base] = (time.monotonic(), found)
    return found


def _ask_server(api_base: str) -> int | None:
    import httpx

    base = api_base.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    for url, read in ((f"{root}/props", _props_window), (f"{base}/models", _models_window)):
        try:
            response = httpx.get(url, timeout=SERVER_ASK_SECONDS)
            if response.status_code == 200:
                found = read(orjson.loads(response.content))
                if found:
                    return found
        except (httpx.HTTPError, orjson.JSONDecodeError, ValueError):
            continue
    return None


def _positive(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _props_window(body) -> int | None:
    settings = body.get("default_generation_settings") if isinstance(body, dict) else None
    return _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None


def _models_window(body) -> int | None:
    rows = body.get("data") if isinstance(body, dict) else None
    for row in rows if isinstance(rows, list) else ():
        if isinstance(row, dict):
            meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
            found = _positive(row.get("max_model_len")) or _positive(meta.get("n_ctx_train"))
            if found:
                return found
    return None


def window_of(config) -> int | None:
    """The window a call with `config` must fit: the setting, the table, else the server's word."""
    if config.context_window:
        return config.context_window
    provider, model_id = split_model(config.model or "")
    return context_window(provider, model_id) or server_window(config.api_base)


def env_whole_number(name: str) -> int | None:
    """A positive whole number from the environment, or None; anything else is refused."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ModelError("bad-request", f"{name} must be a whole number of tokens above 0, not {raw!r}.")
    return int(raw)


def bounded(config, messages: list[dict], wanted: int | None) -> int | None:
    """The `max_tokens` a call sends: what its purpose wants (None: as much as may be), no more
    than the model gives and the window leaves after the request; ModelError("too-long") before
    anything is sent when the window leaves less than MIN_REPLY_TOKENS (or less than `wanted`
    asks for a summary or a judgment, whose bound is part of what they are)."""
    limit = model_output_limit(config.model)
    caps = [c for c in (wanted, config.max_tokens, limit) if c]
    bound = min(caps) if caps else None
    window = window_of(config)
    if window is None:
        return bound
    sent = estimated_tokens(messages)
    room = window - sent
    if room < MIN_REPLY_TOKENS:
        raise ModelError(
            "too-long",
            f"The request is about {format_tokens(sent)} tokens (estimated) and the model's window is "
            f"{format_tokens(window)}: it cannot fit, so nothing was sent or written. Compact the branch "
            "first, or use a model with a larger window.",
        )
    return min(bound, room) if bound else room
