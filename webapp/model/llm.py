"""Model calls, all through litellm, and continuing a branch of a session with one.

litellm is imported inside the functions that call a model: importing it takes seconds, which the
CLI and the web server should not pay at start. Its cost map is the copy it ships
(`LITELLM_LOCAL_MODEL_COST_MAP`), so a model call never triggers a second download.
Failures surface as `ModelError` with a `kind` and a message meant for a person; nothing retries
behind the user's back, so a failure is reported at once and they decide what to do.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import urlsplit

import orjson

from ..core.context import build_context
from ..core.entries import MESSAGE, MODEL_CHANGE, THINKING_LEVEL_CHANGE, now_iso
from ..core.errors import InvalidWrite
from ..core.messages import message_messages
from ..core.request import build_request
from ..core.session import ACTIVE, Session, user_message
from .cancel import Cancel
from .errors import Cancelled, ModelError, detail, model_error
from .keys import missing_key
from .limits import bounded, env_whole_number

DEFAULT_TIMEOUT = 60.0
NO_MODEL = "No model configured: pass --model or set SESSION_TREE_MODEL (e.g. openai/gpt-4o-mini)."

DeltaCallback = Callable[[str, str], None]  # (kind: "text" | "thinking", text)


def checked_api_base(url: str | None) -> str | None:
    """An --api-base / $SESSION_TREE_API_BASE a client can call: http(s), a host, printable ASCII.
    Anything else is refused here, by name, before a request library fails on it mid-call."""
    if url is None:
        return None
    parts = urlsplit(url)
    if not url.isascii() or not url.isprintable() or " " in url or parts.scheme not in ("http", "https") \
            or not parts.hostname:
        raise ModelError("bad-request", f"the API base must be an http:// or https:// URL with a host, not {url!r}.")
    return url


@dataclass
class ModelConfig:
    model: str | None  # a litellm model string: openai/gpt-4o-mini, anthropic/..., ollama/...
    api_base: str | None = None  # an OpenAI-compatible server (a local one included)
    api_key: str | None = None  # else the provider's usual variable (OPENAI_API_KEY, ...)
    timeout: float = DEFAULT_TIMEOUT  # seconds of silence: a streamed answer may take longer, if it keeps coming
    context_window: int | None = None  # the person's word for the window (else the table, else the server's)
    max_tokens: int | None = None  # the longest reply the person allows (else the model's limit)

    @classmethod
    def from_env(cls, model: str | None = None, api_base: str | None = None,
                 context_window: int | None = None, max_tokens: int | None = None) -> "ModelConfig":
        """Explicit arguments first, then $SESSION_TREE_MODEL / _API_BASE / _API_KEY / _TIMEOUT /
        _CONTEXT_WINDOW / _MAX_TOKENS."""
        env = os.environ
        raw_timeout = env.get("SESSION_TREE_TIMEOUT", "").strip()
        try:
            timeout = float(raw_timeout) if raw_timeout else DEFAULT_TIMEOUT
        except ValueError:
            raise ModelError(
                "bad-request", f"SESSION_TREE_TIMEOUT must be a number of seconds, not {raw_timeout!r}."
            ) from None
        return cls(
            model=model or env.get("SESSION_TREE_MODEL") or None,
            api_base=checked_api_base(api_base or env.get("SESSION_TREE_API_BASE") or None),
            api_key=env.get("SESSION_TREE_API_KEY") or None,
            timeout=timeout,
            context_window=context_window or env_whole_number("SESSION_TREE_CONTEXT_WINDOW"),
            max_tokens=max_tokens or env_whole_number("SESSION_TREE_MAX_TOKENS"),
        )

    @property
    def configured(self) -> bool:
        return bool(self.model)

    def check_usable(self, no_model: str = NO_MODEL) -> None:
        """Refuse a configuration that cannot call a model (none named, or a known provider's key
        missing: model/keys.py) before anything is written, and before litellm is imported."""
        if not self.configured:
            raise ModelError("no-model", no_model)
        why = missing_key(self.model, self.api_base, self.api_key)
        if why:
            raise ModelError("auth", why)


@dataclass
class Reply:
    text: str
    thinking: str
    tool_calls: list[dict]  # {id, name, arguments (dict)}
    usage: dict  # pi shape: input, output, cacheRead, cacheWrite, totalTokens, cost{...}
    stop_reason: str  # "stop" | "toolUse" | "length"
    provider: str | None
    model: str
    response_id: str | None
    timestamp: int = field(default_factory=lambda: _now_ms())  # when it finished
    max_tokens: int | None = None  # the bound the call carried

    @property
    def cut(self) -> bool:
        """The model stopped at the length limit, mid-answer: not a finished reply."""
        return self.stop_reason == "length"

    def assistant_message(self) -> dict:
        """The pi-style assistant message, ready for a `{"type": "message", "message": ...}` entry."""
        content: list[dict] = []
        if self.thinking:
            content.append({"type": "thinking", "thinking": self.thinking})
        if self.text:
            content.append({"type": "text", "text": self.text})
        content += [{"type": "toolCall", **call} for call in self.tool_calls]
        return {
            "role": "assistant",
            "content": content,
            "api": "litellm",
            "provider": self.provider,
            "model": self.model,
            "usage": self.usage,
            "stopReason": self.stop_reason,
            "timestamp": self.timestamp,
            "responseId": self.response_id,
        }


def _now_ms() -> int:
    return int(time.time() * 1000)


def _litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banner on every error
    return litellm


def warm_up(config: ModelConfig) -> None:
    """Import litellm in the background when a model is configured: the import takes seconds,
    which would otherwise be spent after the first "Send", while the person waits.

    Not a daemon, and a server joins it before it exits (warmed_up): a daemon thread still
    importing when a stopped server shut down was ended by the interpreter inside an extension's
    C++ code, which aborted the process (SIGABRT, "exception not rethrown"); one left running into
    the shutdown fails to import what registers an atexit hook."""
    if config.configured:
        thread = threading.Thread(target=_litellm, name="litellm-import")
        _warming.append(thread)
        thread.start()


_warming: list[threading.Thread] = []  # the imports warm_up started, joined by warmed_up


def warmed_up() -> None:
    """Wait until the imports warm_up started have ended: what a server does before it exits."""
    while _warming:
        _warming.pop().join()


def model_identity(config: ModelConfig) -> tuple[str | None, str]:
    """(provider, model id) as a reply from this configuration records them, e.g. a bare `qwen`
    behind --api-base answers as ("openai", "qwen")."""
    provider, model_id, _ = _route(_litellm(), config)
    return provider, model_id


def _route(litellm, config: ModelConfig) -> tuple[str | None, str, dict]:
    """(provider, model id, extra litellm arguments) for the configured model string.

    With an api_base and no provider prefix litellm knows, the server is taken to be
    OpenAI-compatible; a local one may need no key, so a placeholder stands in for a missing one.
    """
    model = config.model or ""
    extra: dict = {}
    if config.api_base and model.split("/", 1)[0] not in litellm.provider_list:
        extra["custom_llm_provider"] = "openai"
    try:
        model_id, provider, _, _ = litellm.get_llm_provider(model, extra.get("custom_llm_provider"))
    except litellm.BadRequestError:  # an unknown provider: litellm.completion will say so
        provider, _, model_id = model.rpartition("/")
        return provider or None, model_id, extra
    if config.api_base and provider == "openai" and not (config.api_key or os.environ.get("OPENAI_API_KEY")):
        extra["api_key"] = "none"
    return provider, model_id, extra


def complete(
    config: ModelConfig,
    messages: list[dict],
    *,
    stream: bool = False,
    on_delta: DeltaCallback | None = None,
    tools: list[dict] | None = None,
    max_tokens: int | None = None,
    cancel: Cancel | None = None,
) -> Reply:
    """One model call. Streaming calls `on_delta` as text arrives and still returns the whole
    Reply; a stream that breaks raises ModelError("stream") rather than return part of one.
    A reply with neither text nor tool calls is not a reply: ModelError("bad-response").

    Every call carries a `max_tokens`: `max_tokens` (what the purpose wants), bounded by the
    person's setting, the model's limit and the room its window leaves; a request that cannot fit
    is refused here, before it is sent (limits.bounded). A `cancel` set while the answer streams
    closes the connection at once (the server stops generating) and raises Cancelled.
    Every ModelError raised here carries the messages that were sent (`request`)."""
    config.check_usable()
    try:
        bound = bounded(config, messages, max_tokens)
    except ModelError as exc:
        exc.request = messages
        raise
    litellm = _litellm()
    provider, model_id, extra = _route(litellm, config)
    kwargs = {
        "model": config.model,
        "messages": messages,
        "api_base": config.api_base,
        "api_key": config.api_key,
        "timeout": config.timeout,
        "num_retries": 0,
        "drop_params": True,
        **extra,
    }
    if bound:
        kwargs["max_tokens"] = bound
    if tools:
        kwargs["tools"] = tools
    if stream:
        kwargs.update(stream=True, stream_options={"include_usage": True})
    import openai  # litellm's exceptions are openai's, subclassed

    try:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        try:
            response = litellm.completion(**kwargs)
        except openai.OpenAIError as exc:
            raise _model_error(exc, config) from exc
        if stream:
            forget = cancel.on_cancel(_closer(response)) if cancel is not None else (lambda: None)
            try:
                response, raw, reported = _collect(litellm, response, messages, on_delta, config, cancel)
            finally:
                forget()
        else:
            raw = orjson.dumps(response.model_dump(exclude_none=True)).decode()
            usage = getattr(response, "usage", None)
            reported = bool(usage and (usage.prompt_tokens or usage.completion_tokens))
        reply = _reply(litellm, response, config, provider, model_id, reported)
        reply.max_tokens = bound
        if not reply.text.strip() and not reply.tool_calls:
            if reply.cut:
                raise ModelError("cut", f"The model {config.model} used all {bound} tokens it was allowed "
                                        "without saying anything, so nothing was written.", raw)
            raise ModelError("bad-response", f"The model {config.model} answered with neither text nor tool "
                                             "calls, so nothing was written. Try again.", raw)
        return reply
    except ModelError as exc:
        exc.request = messages
        raise


def _collect(litellm, chunks_in, messages: list[dict], on_delta: DeltaCallback | None, config: ModelConfig,
             cancel: Cancel | None = None):
    """Read a stream to its end, passing on deltas; assemble the chunks into one response.
    A cancel ends the reading at the next piece (the connection is already closed by then).

    Returns (response, raw, reported): raw is the server's chunks as received, for debugging;
    reported says whether the server sent usage (litellm makes up an estimate when it did not)."""
    chunks = []
    received = 0
    finished = False  # a server that ends its answer says why (finish_reason); a crashed one does not
    it = iter(chunks_in)
    ctype = (getattr(chunks_in, "_response_headers", None) or {}).get("content-type", "")
    if ctype and "event-stream" not in ctype and "json" not in ctype:
        raise ModelError("bad-response", f"The server at {config.api_base or 'the provider'} answered with "
                                         f"{ctype.split(';')[0]}, not a model reply. "
                                         "Check --api-base / SESSION_TREE_API_BASE.", f"content-type: {ctype}")
    while True:
        if cancel is not None and cancel.is_set():
            chunks_in.close()
            raise Cancelled()
        try:
            chunk = next(it)
        except StopIteration:
            break
        except Exception as exc:  # whatever breaks the stream loses the reply
            if cancel is not None and cancel.is_set():
                raise Cancelled() from exc
            if not chunks:  # some providers report a refused request only here
                raise _model_error(exc, config) from exc
            raise ModelError(
                "stream",
                f"The reply stream broke off after {received} characters ({detail(exc)}); "
                "the partial reply was discarded. Try again.",
                _raw_chunks(chunks),
            ) from exc
        chunks.append(chunk)
        if not chunk.choices:
            continue
        finished = finished or bool(chunk.choices[0].finish_reason)
        delta = chunk.choices[0].delta
        for kind, text in (("thinking", getattr(delta, "reasoning_content", None)), ("text", delta.content)):
            if text:
                received += len(text)
                if on_delta is not None:
                    on_delta(kind, text)
    if cancel is not None and cancel.is_set():
        raise Cancelled()
    server_chunks = getattr(chunks_in, "chunks", None) or chunks  # litellm keeps the server's own
    raw = _raw_chunks(server_chunks)
    response = litellm.stream_chunk_builder(chunks, messages=messages) if chunks else None
    sent_nothing = getattr(chunks_in, "chunks", None) == [] and not received  # (litellm adds a "stop" of its own)
    if response is None or not response.choices or sent_nothing or not (finished or received or _has_calls(response)):
        raise ModelError("stream", f"The server at {config.api_base or 'the provider'} accepted the request "
                                   "and then sent nothing (it may have crashed: see its log). Nothing was "
                                   "written; try again.", raw)
    return response, raw, any(getattr(c, "usage", None) is not None for c in server_chunks)


def _has_calls(response) -> bool:
    return bool(getattr(response.choices[0].message, "tool_calls", None))


def _closer(response) -> Callable[[], None]:
    """What closes a streamed answer from another thread, at once: the socket is shut down
    (a close alone does not wake a thread blocked reading it, so a model still reading a long
    prompt would go on until its first token), then the stream is closed as litellm closes it."""
    http = getattr(getattr(response, "completion_stream", None), "response", None)
    network = (getattr(http, "extensions", None) or {}).get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None

    def close() -> None:
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed
                pass
        response.close()

    return close


def _raw_chunks(chunks) -> str:
    lines = []
    for c in chunks:
        try:
            lines.append(orjson.dumps(c.model_dump(exclude_none=True)).decode())
        except Exception:  # a chunk litellm built oddly is still shown
            lines.append(repr(c))
    return "\n".join(lines)


def _reply(litellm, response, config: ModelConfig, provider: str | None, model_id: str, reported: bool) -> Reply:
    choice = response.choices[0]
    msg = choice.message
    calls = [
        {"id": c.id or "", "name": c.function.name or "", "arguments": _arguments(c.function.arguments)}
        for c in msg.tool_calls or ()
    ]
    if calls:
        stop = "toolUse"
    elif choice.finish_reason == "length":
        stop = "length"
    else:
        stop = "stop"
    usage = _usage(litellm, getattr(response, "usage", None), config)
    if not reported:
        usage["estimated"] = True
    return Reply(
        text=msg.content or "",
        thinking=getattr(msg, "reasoning_content", None) or "",
        tool_calls=calls,
        usage=usage,
        stop_reason=stop,
        provider=provider,
        model=model_id,
        response_id=getattr(response, "id", None),
    )


def _arguments(raw) -> dict:
    """Tool call arguments as an object; text that is not a JSON object is kept under `_raw`."""
    if isinstance(raw, dict):
        return raw
    try:
        value = orjson.loads(raw or "{}")
    except orjson.JSONDecodeError:
        try:  # (JSON orjson refuses, `1e400` say: the tool then says which argument it cannot take)
            value = json.loads(raw)
        except (ValueError, TypeError, RecursionError):
            return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def _usage(litellm, usage, config: ModelConfig) -> dict:
    """litellm's usage in pi's shape, priced from litellm's model table (0 when it is unknown).

    litellm counts cached tokens inside prompt_tokens, as OpenAI does; pi counts them apart.
    """
    def num(obj, name) -> int:
        value = getattr(obj, name, None) if obj is not None else None
        return int(value) if isinstance(value, (int, float)) else 0

    details = getattr(usage, "prompt_tokens_details", None)
    cache_read = num(details, "cached_tokens") or num(usage, "cache_read_input_tokens")
    cache_write = num(details, "cache_creation_tokens") or num(usage, "cache_creation_input_tokens")
    tokens = {
        "input": max(num(usage, "prompt_tokens") - cache_read - cache_write, 0),
        "output": num(usage, "completion_tokens"),
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
    }
    try:
        info = litellm.get_model_info(config.model)
    except Exception:  # not in litellm's table: a local or custom model
        info = {}
    input_price = info.get("input_cost_per_token") or 0.0
    prices = {
        "input": input_price,
        "output": info.get("output_cost_per_token") or 0.0,
        "cacheRead": info.get("cache_read_input_token_cost") or input_price,
        "cacheWrite": info.get("cache_creation_input_token_cost") or input_price,
    }
    cost = {k: tokens[k] * prices[k] for k in tokens}
    cost["total"] = sum(cost.values())
    return {**tokens, "totalTokens": sum(tokens.values()), "cost": cost}


# -- errors ----------------------------------------------------------------------------------------


def _model_error(exc: BaseException, config: ModelConfig) -> ModelError:
    """webapp.model_errors' mapping, told which server and key variable this configuration uses."""
    provider = _route(_litellm(), config)[0] or "openai"
    key_var = f"{provider.upper().replace('-', '_')}_API_KEY"
    return model_error(exc, config.model, config.api_base or f"the {provider} API", key_var, config.timeout)


# -- continuing a branch ---------------------------------------------------------------------------


def model_choice(session: Session, config: ModelConfig, user_id: str) -> tuple[str, dict | None]:
    """Where the reply to `user_id` goes, and the `model_change` to write before it (None when
    none is needed). A model that differs from the branch's is recorded after the user message,
    so the tree says which model answers from here on; one an earlier attempt wrote is reused."""
    tree = session.tree
    settings = build_context(tree, user_id).settings
    provider, model_id = model_identity(config)
    if (settings.provider, settings.model_id) == (provider, model_id):
        return user_id, None
    for child in tree.children.get(user_id, ()):
        e = tree.by_id[child]
        if e.type == MODEL_CHANGE and (e.get("provider"), e.get("modelId")) == (provider, model_id):
            return child, None
    return user_id, {"type": MODEL_CHANGE, "provider": provider, "modelId": model_id}


def waiting_user(session: Session, entry_id: str | None) -> str:
    """The user message a reply at `entry_id` answers: the entry itself, or the user message a
    settings entry (model or thinking change) right after it follows. Anything else is refused."""
    tree = session.tree
    node = tree.conversation_leaf(entry_id)  # a label that moved the active leaf is not an answer
    while node is not None and tree.by_id[node].type in (MODEL_CHANGE, THINKING_LEVEL_CHANGE):
        node = tree.parent[node]
    if node is None or tree.by_id[node].role != "user":
        what = "an empty conversation" if node is None else f"{tree.by_id[node].role or tree.by_id[node].type} {node}"
        raise InvalidWrite(f"nothing waits for a reply there: it is {what}, not a user message")
    return node


def reply_to(session: Session, config: ModelConfig, user_id: str, on_delta: DeltaCallback | None = None,
             cancel: Cancel | None = None) -> dict:
    """The one way a reply is asked for and written, by the CLI and the web alike (continue, retry,
    fork with a message, regenerate, several models at once): send the request of SPEC §5b for
    the context there, then append the model choice (stamped when the call began) and the reply
    together once the reply is whole. A failure writes nothing; nor does a `cancel` (`Cancelled`).
    A reply cut at the length limit is written as what it is (`stopReason: "length"`)."""
    config.check_usable()
    at, change = model_choice(session, config, user_id)
    request = build_request(build_context(session.tree, at))
    began = now_iso()
    reply = complete(config, request.llm_messages(), stream=True, on_delta=on_delta, cancel=cancel,
                     tools=request.tools or None)
    if cancel is not None and cancel.is_set():
        raise Cancelled()
    batch = [change] if change else []
    batch.append({"type": MESSAGE, "message": reply.assistant_message()})
    return session.append_entries(batch, parent=at, stamps=[began] if change else None)[-1]


def check_fits(session: Session, config: ModelConfig, leaf: str | None, text: str) -> None:
    """Refuse, before a user message is written, one that the model's window could not take
    with the context before it (ModelError "too-long", with the figures)."""
    request = build_request(build_context(session.tree, leaf)).llm_messages()
    bounded(config, request + message_messages(user_message(text)), None)


def continue_branch(
    session: Session,
    config: ModelConfig,
    text: str | None,
    leaf: str | None = None,
    on_delta: DeltaCallback | None = None,
) -> dict:
    """Append a user message at `leaf` (else the active leaf) and ask the model to answer it;
    with `text` None, ask again for the user message already waiting at `leaf` (a retry).

    A missing model is refused before anything is written. A failed call leaves the user message
    in place (it was said; `ModelError.kept_user` names it) and writes no assistant entry. Tool
    calls in the reply are stored, not run.
    """
    config.check_usable()
    if text is None:
        user_id = waiting_user(session, session.tree.active_leaf if leaf is None else leaf)
        user = {**session.entry(user_id).raw, "id": user_id}
    else:
        if not text.strip():
            raise InvalidWrite("the message is empty")
        check_fits(session, config, session.tree.active_leaf if leaf is None else leaf, text)
        user = session.append_message(user_message(text), parent=ACTIVE if leaf is None else leaf)
    try:
        assistant = reply_to(session, config, user["id"], on_delta)
    except ModelError as exc:
        exc.kept_user = user["id"]
        raise
    return {"userEntry": user, "assistantEntry": assistant}


def regenerate_reply(session: Session, config: ModelConfig, entry_id: str,
                     on_delta: DeltaCallback | None = None) -> dict:
    """Another answer beside an assistant message (or to a user message): a sibling, the old one
    stays. It is written where the old one was answered (the user message or its model change)."""
    tree = session.tree
    entry = tree.entry(entry_id)
    target = tree.parent[entry_id] if entry.role == "assistant" else entry_id
    return reply_to(session, config, waiting_user(session, target), on_delta)
