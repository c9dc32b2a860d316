"""Ask several models at one node, at once: the same question, an edited one, or "regenerate the
reply here", each answer written as its own sibling branch.

Every model's reply goes through `llm.reply_to`, the reply path continue and regenerate use, so
each branch gets its `model_change` and a failure writes no assistant entry. With a new message
the user message is written once and every model answers it; without one, the user message the
node is (or answers) is answered again. The calls run in threads, one per model: the wall time
is the slowest model's, not the sum. A column can be cancelled on its own (nothing of its reply
is written).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from ..core.context import build_context
from ..core.errors import InvalidWrite, SessionError
from ..core.session import Session, user_message
from ..core.tokens import context_sent, context_tokens, estimate_message_tokens
from .cancel import Cancel
from .errors import Cancelled, ModelError
from .llm import ModelConfig, check_fits, reply_to, waiting_user
from .table import estimated_cost

MAX_MODELS = 8  # columns side by side; more is a benchmark, not a comparison
NO_MODELS = "name at least one model (litellm strings such as openai/gpt-4o-mini)"

EventCallback = Callable[[int, str, dict], None]  # (column, event, data)


def parse_models(text: str | list[str]) -> list[str]:
    """Model strings from "m1, m2" (or a list of such), each once, in order; InvalidWrite when
    none or too many are named."""
    items = text if isinstance(text, list) else [text]
    models = list(dict.fromkeys(m.strip() for t in items for m in str(t).split(",") if m.strip()))
    if not models:
        raise InvalidWrite(NO_MODELS)
    if len(models) > MAX_MODELS:
        raise InvalidWrite(f"{len(models)} models: at most {MAX_MODELS} at once")
    return models


def answered_user(session: Session, at: str) -> str:
    """The user message a "regenerate here" at `at` answers again: `at` itself, the one an
    assistant message answers, or the one a settings entry follows."""
    tree = session.tree
    entry = tree.entry(at)
    return waiting_user(session, tree.parent[at] if entry.role == "assistant" else at)


@dataclass
class Estimate:
    model: str
    tokens: int  # the context sent (estimated where no usage says)
    cost: float | None  # by the table's input price; None: unknown (no price for that model)


def estimates(session: Session, at: str, models: list[str], message: str | None) -> list[Estimate]:
    """What each call would send and cost before anything is sent: the context there (with the
    new message when there is one) times each model's input price. The reply's own tokens are
    not known yet, so they are not counted."""
    tree = session.tree
    if message is None:
        tokens = context_tokens(build_context(tree, answered_user(session, at))).context
    else:
        tree.entry(at)
        tokens = context_tokens(build_context(tree, at)).context + estimate_message_tokens(user_message(message))
    return [Estimate(m, tokens, estimated_cost(m, tokens)) for m in models]


@dataclass
class Column:
    model: str
    status: str = "waiting"  # waiting, done, failed, cancelled
    text: str = ""  # the reply as it streamed
    entry: str | None = None  # the assistant entry written
    error: str | None = None  # why nothing was written
    seconds: float = 0.0
    cancel: Cancel = field(default_factory=Cancel)
    sent: dict = field(default_factory=dict)  # the context sent, as context_sent says it


@dataclass
class AskRun:
    """One ask: its user message (shared by every column) and a column per model."""

    user: str
    columns: list[Column]
    new_user: bool  # the user message was written by this ask

    @property
    def answers(self) -> list[str]:
        return [c.entry for c in self.columns if c.entry]

    @property
    def finished(self) -> bool:
        return all(c.status != "waiting" for c in self.columns)


def check_models(config: ModelConfig, models: list[str]) -> None:
    """Refuse the whole ask, before its message is written, when a model cannot be called at all
    (its provider's key is missing: ModelConfig.check_usable)."""
    for model in models:
        replace(config, model=model).check_usable()


def start(session: Session, at: str, models: list[str], message: str | None,
          config: ModelConfig | None = None) -> AskRun:
    """Write what the models answer (a new user message at `at`, once) or find it (the user
    message a regenerate at `at` answers); InvalidWrite/UnknownEntry before anything is sent,
    and ModelError "too-long" when the message would not fit a model's window (with `config`,
    the server the models are asked on): nothing is written then."""
    if message is not None:
        if not message.strip():
            raise InvalidWrite("the message is empty")
        session.entry(at)
        for model in models if config is not None else ():
            check_fits(session, replace(config, model=model), at, message)
        user = session.append_message(user_message(message), parent=at)["id"]
        return AskRun(user, [Column(m) for m in models], True)
    return AskRun(answered_user(session, at), [Column(m) for m in models], False)


def run(session: Session, config: ModelConfig, ask: AskRun, on_event: EventCallback | None = None) -> AskRun:
    """Ask every column's model at once (a thread each) and wait for all of them. `on_event`
    gets (column, "delta", {kind, text}) as text arrives and (column, "done"|"failed"|"cancelled",
    {...}) at the end of each column; it is called from the columns' threads."""
    def tell(i: int, event: str, data: dict) -> None:
        if on_event is not None:
            on_event(i, event, data)

    def work(i: int, col: Column) -> None:
        began = time.monotonic()

        def delta(kind: str, text: str) -> None:
            if kind == "text":
                col.text += text
            tell(i, "delta", {"kind": kind, "text": text})

        try:
            entry = reply_to(session, replace(config, model=col.model), ask.user, delta, cancel=col.cancel)
            col.entry, col.status = entry["id"], "done"
            col.sent = context_sent(entry["message"].get("usage") or {})
        except Cancelled as exc:
            col.status, col.error = "cancelled", str(exc)
        except (ModelError, SessionError) as exc:
            col.status, col.error = "failed", f"{exc} Nothing was written for {col.model}."
        except Exception as exc:  # whatever else breaks one column must not lose the others
            col.status, col.error = "failed", f"{type(exc).__name__}: {exc}. Nothing was written for {col.model}."
        col.seconds = time.monotonic() - began
        tell(i, col.status, {"entry": col.entry, "error": col.error, "seconds": round(col.seconds, 2),
                             **col.sent})

    threads = [threading.Thread(target=work, args=(i, c), name=f"ask-{c.model}", daemon=True)
               for i, c in enumerate(ask.columns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ask
