"""Every way a model call fails, in one place: litellm/openai/httpx exceptions and HTTP codes
mapped to a `ModelError` whose `kind` a program can test and whose message a person can act on.

litellm wraps the server's answer in layers (class-name prefixes, a 500 for a 200 it could not
parse, a `b'…'` body); the messages here say what the server actually did.
"""

from __future__ import annotations

import ast
import re

import orjson


class ModelError(Exception):
    """A model call that failed; `kind` says how, the message says what to do about it.

    `request` (the messages sent) and `raw` (what came back, as far as it is known) are kept for
    debugging: `--verbose` in the CLI, the "details" fold in the page.
    """

    KINDS = frozenset({
        "no-model", "auth", "rate-limit", "timeout", "connection", "server", "bad-request", "stream",
        "bad-response", "cancelled", "cut", "too-long",
    })

    def __init__(self, kind: str, message: str, raw: str | None = None):
        assert kind in self.KINDS, kind
        super().__init__(message)
        self.kind = kind
        self.raw = raw
        self.request: list[dict] | None = None
        self.kept_user: str | None = None  # a user message written before the call failed

    def debug_text(self) -> str:
        """The request sent and the raw response, for a person debugging the server."""
        parts = []
        if self.request is not None:
            parts.append("request messages:\n" + orjson.dumps(self.request, option=orjson.OPT_INDENT_2).decode())
        parts.append("raw response:\n" + (self.raw or "(none received)"))
        return "\n\n".join(parts)


class Cancelled(ModelError):
    """The person stopped the call before its reply was written: nothing of it is."""

    def __init__(self) -> None:
        super().__init__("cancelled", "Cancelled: no reply was written.")


def _sentence(text: str) -> str:
    """`text` ending in exactly one full stop (a server's "Sorry about that!" keeps its "!")."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _unwrap(text: str) -> str:
    """A `b'…'` body decoded, and a JSON error body reduced to its message."""
    if re.fullmatch(r"b(['\"]).*\1", text, re.S):
        try:
            text = ast.literal_eval(text).decode("utf-8", "replace")
        except (ValueError, SyntaxError):
            pass
    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return err["message"]
    if isinstance(err, str):
        return err
    return text


_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w+(?:Error|Exception|Timeout)(?::| -)\s*)+")


def detail(exc: BaseException) -> str:
    """The provider's own words, without litellm's class-name prefixes, on one line."""
    text = str(getattr(exc, "message", None) or exc).strip()
    text = _PREFIX.sub("", text.splitlines()[0] if text else "")
    text = text.split(" LiteLLM Retried:")[0].strip()
    text = _unwrap(text).strip()
    return text[:300].rstrip(".") or type(exc).__name__


def chain(exc: BaseException | None):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _raw(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    try:
        text = response.text if response is not None else None
    except Exception:  # a streamed body that was never read
        text = None
    return text or str(exc)


def _cut_short(exc: BaseException) -> str | None:
    """The transport's words when the server answered but the body stopped short."""
    for e in chain(exc):
        if type(e).__name__ == "RemoteProtocolError" or "incomplete chunked read" in str(e):
            return str(e).split(" (received")[0]
    return None


def _not_json(exc: BaseException) -> str | None:
    for e in chain(exc):
        if type(e).__name__ == "JSONDecodeError":
            return str(e)
    return None


def model_error(exc: BaseException, model: str | None, where: str, key_var: str, timeout: float) -> ModelError:
    """Map a litellm (or openai/httpx) exception to a ModelError with advice for a person.

    `where` names the server (the api base, or "the openai API"); `key_var` the key's variable."""
    import openai

    if isinstance(exc, ModelError):
        return exc
    status = getattr(exc, "status_code", None)
    code = f" ({status})" if isinstance(status, int) else ""
    said = detail(exc)
    raw = _raw(exc)
    check_base = "Check --api-base / SESSION_TREE_API_BASE"
    if any(isinstance(e, openai.APITimeoutError) for e in chain(exc)):
        return ModelError("timeout", f"The model did not answer within {timeout:g} s. "
                                     "Try again, or raise SESSION_TREE_TIMEOUT.", raw)
    if "Missing credentials" in str(exc) or "api_key client option" in str(exc):
        return ModelError("auth", f"No API key for {model}. Set {key_var} or SESSION_TREE_API_KEY.", raw)
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ModelError("auth", f"The model server refused the API key{code}: {_sentence(said)} "
                                  f"Set {key_var} or SESSION_TREE_API_KEY.", raw)
    if isinstance(exc, openai.RateLimitError):
        return ModelError("rate-limit", f"The model server is rate-limiting requests{code}: {_sentence(said)} "
                                        "Wait a moment and try again.", raw)
    cut = _cut_short(exc)
    if cut:
        return ModelError("stream", f"The server at {where} answered, but its reply was cut short ({cut}). "
                                    "Nothing was written; try again.", raw)
    if "Empty or invalid response from LLM endpoint" in str(exc):
        received = str(exc).partition("Received: ")[2].split(". Check the reverse proxy")[0]
        return ModelError("bad-response", f"The server at {where} did not answer with a model reply "
                                          f"(it sent {received[:120] or 'nothing'}). {check_base}.", received or raw)
    not_json = _not_json(exc)
    if not_json:
        return ModelError("bad-response", f"The server at {where} answered with a body that is not valid JSON "
                                          f"({not_json}). {check_base}.", raw)
    if any(isinstance(e, (openai.APIConnectionError, ConnectionError)) for e in chain(exc)):
        return ModelError("connection", f"Could not connect to the model server at {where}: {_sentence(said)} "
                                        f"{check_base} and that the server is running.", raw)
    if isinstance(exc, (openai.BadRequestError, openai.NotFoundError, openai.UnprocessableEntityError)) or (
        isinstance(status, int) and 400 <= status < 500
    ):
        hint = " Check --model / SESSION_TREE_MODEL." if status == 404 else ""
        return ModelError("bad-request", f"The model server rejected the request{code}: {_sentence(said)}{hint}", raw)
    return ModelError("server", f"The model server failed{code}: {_sentence(said)} Try again later.", raw)
