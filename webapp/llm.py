"""Model calls, all through litellm, and continuing a branch of a session with one.

litellm is imported inside the functions that call a model: importing it takes seconds, which the
CLI and the web server should not pay at start. Its cost map is the copy it ships
(`LITELLM_LOCAL_MODEL_COST_MAP`), so a model call never triggers a second download.
Failures surface as `ModelError` with a `kind` and a message meant for a person; nothing retries
behind the user's back, so a failure is reported at once and they decide what to do.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable

import orjson

from .core.context import build_context
from .core.errors import InvalidWrite
from .core.session import ACTIVE, Session

DEFAULT_TIMEOUT = 60.0
NO_MODEL = "No model configured: pass --model or set SESSION_TREE_MODEL (e.g. openai/gpt-4o-mini)."

DeltaCallback = Callable[[str, str], None]  # (kind: "text" | "thinking", text)


class ModelError(Exception):
    """A model call that failed; `kind` says how, the message says what to do about it."""

    KINDS = frozenset(
        {"no-model", "auth", "rate-limit", "timeout", "connection", "server", "bad-request", "stream"}
    )

    def __init__(self, kind: str, message: str):
        assert kind in self.KINDS, kind
        super().__init__(message)
        self.kind = kind


@dataclass
class ModelConfig:
    model: str | None  # a litellm model string: openai/gpt-4o-mini, anthropic/..., ollama/...
    api_base: str | None = None  # an OpenAI-compatible server (a local one included)
    api_key: str | None = None  # else the provider's usual variable (OPENAI_API_KEY, ...)
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def from_env(cls, model: str | None = None, api_base: str | None = None) -> "ModelConfig":
        """Explicit arguments first, then $SESSION_TREE_MODEL / _API_BASE / _API_KEY / _TIMEOUT."""
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
            api_base=api_base or env.get("SESSION_TREE_API_BASE") or None,
            api_key=env.get("SESSION_TREE_API_KEY") or None,
            timeout=timeout,
        )

    @property
    def configured(self) -> bool:
        return bool(self.model)


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


def user_entry(text: str) -> dict:
    """A user message as pi writes one, ready to append."""
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}],
                                           "timestamp": _now_ms()}}


def _litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banner on every error
    return litellm


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
) -> Reply:
    """One model call. Streaming calls `on_delta` as text arrives and still returns the whole
    Reply; a stream that breaks raises ModelError("stream") rather than return part of one."""
    if not config.configured:
        raise ModelError("no-model", NO_MODEL)
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
    if tools:
        kwargs["tools"] = tools
    if stream:
        kwargs.update(stream=True, stream_options={"include_usage": True})
    import openai  # litellm's exceptions are openai's, subclassed

    try:
        response = litellm.completion(**kwargs)
    except openai.OpenAIError as exc:
        raise _model_error(exc, config) from exc
    if stream:
        response = _collect(litellm, response, messages, on_delta, config)
    return _reply(litellm, response, config, provider, model_id)


def _collect(litellm, chunks_in, messages: list[dict], on_delta: DeltaCallback | None, config: ModelConfig):
    """Read a stream to its end, passing on deltas; assemble the chunks into one response."""
    chunks = []
    received = 0
    it = iter(chunks_in)
    while True:
        try:
            chunk = next(it)
        except StopIteration:
            break
        except Exception as exc:  # whatever breaks the stream loses the reply
            if not chunks:  # some providers report a refused request only here
                raise _model_error(exc, config) from exc
            raise ModelError(
                "stream",
                f"The reply stream broke off after {received} characters ({_detail(exc)}); "
                "the partial reply was discarded. Try again.",
            ) from exc
        chunks.append(chunk)
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        for kind, text in (("thinking", getattr(delta, "reasoning_content", None)), ("text", delta.content)):
            if text:
                received += len(text)
                if on_delta is not None:
                    on_delta(kind, text)
    response = litellm.stream_chunk_builder(chunks, messages=messages) if chunks else None
    if response is None or not response.choices:
        raise ModelError("stream", "The reply stream ended before the model sent anything. Try again.")
    return response


def _reply(litellm, response, config: ModelConfig, provider: str | None, model_id: str) -> Reply:
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
    return Reply(
        text=msg.content or "",
        thinking=getattr(msg, "reasoning_content", None) or "",
        tool_calls=calls,
        usage=_usage(litellm, getattr(response, "usage", None), config),
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

_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w+(?:Error|Exception|Timeout)(?::| -)\s*)+")


def _detail(exc: BaseException) -> str:
    """The provider's own words, without litellm's class-name prefixes, on one line."""
    text = str(getattr(exc, "message", None) or exc).strip()
    text = _PREFIX.sub("", text.splitlines()[0] if text else "")
    text = text.split(" LiteLLM Retried:")[0].strip().rstrip(".")
    return text[:300] or type(exc).__name__


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _kind(exc: BaseException) -> str:
    import openai

    if any(isinstance(e, openai.APITimeoutError) for e in _chain(exc)):
        return "timeout"
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return "auth"
    if isinstance(exc, openai.RateLimitError):
        return "rate-limit"
    if "Missing credentials" in str(exc) or "api_key client option" in str(exc):
        return "auth"
    # litellm reports a refused connection as a 500 whose cause is the connection error
    if any(isinstance(e, (openai.APIConnectionError, ConnectionError)) for e in _chain(exc)):
        return "connection"
    status = getattr(exc, "status_code", None)
    if isinstance(exc, (openai.BadRequestError, openai.NotFoundError, openai.UnprocessableEntityError)) or (
        isinstance(status, int) and 400 <= status < 500
    ):
        return "bad-request"
    return "server"


def _model_error(exc: BaseException, config: ModelConfig) -> ModelError:
    """Map a litellm (or openai/httpx) exception to a ModelError with advice for a person."""
    if isinstance(exc, ModelError):
        return exc
    kind = _kind(exc)
    detail = _detail(exc)
    status = getattr(exc, "status_code", None)
    code = f" ({status})" if isinstance(status, int) else ""
    provider = _route(_litellm(), config)[0] or "openai"
    key_var = f"{provider.upper().replace('-', '_')}_API_KEY"
    where = config.api_base or f"the {provider} API"
    if kind == "auth":
        if "Missing credentials" in str(exc) or "api_key client option" in str(exc):
            message = f"No API key for {config.model}. Set {key_var} or SESSION_TREE_API_KEY."
        else:
            message = (
                f"The model server refused the API key{code}: {detail}. Set {key_var} or SESSION_TREE_API_KEY."
            )
    elif kind == "rate-limit":
        message = f"The model server is rate-limiting requests{code}: {detail}. Wait a moment and try again."
    elif kind == "timeout":
        message = (
            f"The model did not answer within {config.timeout:g} s. "
            "Try again, or raise SESSION_TREE_TIMEOUT."
        )
    elif kind == "connection":
        message = (
            f"Could not connect to the model server at {where}: {detail}. "
            "Check --api-base / SESSION_TREE_API_BASE and that the server is running."
        )
    elif kind == "bad-request":
        hint = " Check --model / SESSION_TREE_MODEL." if status == 404 else ""
        message = f"The model server rejected the request{code}: {detail}.{hint}"
    else:
        message = f"The model server failed{code}: {detail}. Try again later."
    return ModelError(kind, message)


# -- continuing a branch ---------------------------------------------------------------------------


def continue_branch(
    session: Session,
    config: ModelConfig,
    text: str,
    leaf: str | None = None,
    on_delta: DeltaCallback | None = None,
) -> dict:
    """Append a user message at `leaf` (else the active leaf), send the model exactly the core's
    context for it, and append the streamed reply as its child.

    A missing model is refused before anything is written. A failed call leaves the user message
    in place (it was said) and writes no assistant entry. Tool calls in the reply are stored,
    not run.
    """
    if not config.configured:
        raise ModelError("no-model", NO_MODEL)
    if not text.strip():
        raise InvalidWrite("the message is empty")
    user = session.append(user_entry(text), parent=ACTIVE if leaf is None else leaf)
    context = build_context(session.tree, user["id"])
    reply = complete(config, context.llm_messages(), stream=True, on_delta=on_delta)
    assistant = session.append({"type": "message", "message": reply.assistant_message()}, parent=user["id"])
    return {"userEntry": user, "assistantEntry": assistant}
