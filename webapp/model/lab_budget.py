"""A lab's budget in dollars and tokens, never exceeded: each model call is paid for in advance.

What a call will cost is known only after it, so a check of what was spent before it cannot
keep a budget (four calls under way at once, each allowed because the others had not ended,
overspend it four times). Each call therefore reserves, before it is sent, the most it can
cost: its request's tokens at most one per byte of the JSON sent (every tokenizer the providers
use spends at least a byte per token), its answer at most the `max_tokens` it carries, which
is cut to what the budget leaves. A call the budget cannot cover with at least MIN_ANSWER tokens
of answer is not made: `BudgetReached`. When the call ends, its reservation is replaced by what
the server reported (or kept whole when the server reported nothing, or the call broke after it
was sent: what it cost is then unknown, and the bound is what is counted).

Dollars are priced from litellm's table, as the replies' `usage.cost` is; a dollar budget with a
model the table has no price for is refused before anything is sent.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

import orjson

from .errors import ModelError
from .llm import ModelConfig, Reply, complete

MIN_ANSWER = 64  # tokens of answer below which a call is not worth making


class BudgetReached(ModelError):
    """No further call fits in what the lab's budget leaves."""

    kind = "budget"

    def __init__(self, message: str):  # (a kind of its own, outside ModelError's: no server said it)
        Exception.__init__(self, message)
        self.raw, self.request, self.kept_user = None, None, None


@dataclass(frozen=True)
class Prices:
    input: float  # the highest of the input, cache-read and cache-write prices, per token
    output: float


def prices(model: str | None) -> Prices | None:
    """The model's prices per token from litellm's table; None when it has none."""
    from .llm import _litellm

    try:
        info = _litellm().get_model_info(model)
    except Exception:  # not in the table: a local or custom model
        return None
    base = info.get("input_cost_per_token")
    out = info.get("output_cost_per_token")
    if not isinstance(base, (int, float)) or not isinstance(out, (int, float)) or (base <= 0 and out <= 0):
        return None
    highest = max(base, info.get("cache_read_input_token_cost") or 0.0, info.get("cache_creation_input_token_cost") or 0.0)
    return Prices(float(highest), float(out))


def request_bound(messages: list[dict], tools: list[dict] | None = None) -> int:
    """The most tokens a request can count: one per byte of what is sent."""
    return len(orjson.dumps(messages)) + (len(orjson.dumps(tools)) if tools else 0)


@dataclass
class Reservation:
    tokens: int
    cost: float
    max_tokens: int
    what: str


@dataclass
class Ledger:
    """What a lab may spend, has spent and has reserved; shared by every call of a run."""

    max_tokens: int | None = None
    max_cost: float | None = None
    spent_tokens: int = 0
    spent_cost: float = 0.0
    on_spend: Callable[[dict], None] | None = None  # each settled call: {what, tokens, cost, counted}
    reserved_tokens: int = 0
    reserved_cost: float = 0.0
    calls: int = 0
    reached: str | None = None  # why a call was refused, once one was
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _prices: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ModelError("bad-request", "the token budget must be at least 1")
        if self.max_cost is not None and not self.max_cost > 0:
            raise ModelError("bad-request", "the dollar budget must be more than 0")

    def check_priced(self, models: list[str]) -> None:
        """A dollar budget needs every model it pays for to have a price."""
        if self.max_cost is None:
            return
        unpriced = [m for m in dict.fromkeys(models) if self._price(m) is None]
        if unpriced:
            raise ModelError("bad-request", f"a dollar budget needs a price for every model, and litellm's table has "
                                            f"none for {', '.join(unpriced)}: give a token budget instead")

    def _price(self, model: str | None) -> Prices | None:
        if model not in self._prices:
            self._prices[model] = prices(model)
        return self._prices[model]

    def left(self) -> tuple[int | None, float | None]:
        tokens = None if self.max_tokens is None else self.max_tokens - self.spent_tokens - self.reserved_tokens
        cost = None if self.max_cost is None else self.max_cost - self.spent_cost - self.reserved_cost
        return tokens, cost

    def reserve(self, config: ModelConfig, messages: list[dict], tools: list[dict] | None, wanted: int | None,
                what: str) -> Reservation:
        """Set aside the most the call can cost, its answer bounded to fit; BudgetReached when
        not even MIN_ANSWER tokens of answer fit."""
        sent = request_bound(messages, tools)
        price = self._price(config.model) if self.max_cost is not None else None
        with self._lock:
            tokens_left, cost_left = self.left()
            room = []  # the answer the budget leaves room for
            if tokens_left is not None:
                room.append(tokens_left - sent)
            if cost_left is not None:
                if price is None:
                    raise BudgetReached(f"the dollar budget cannot pay for {config.model}: it has no price")
                spare = cost_left - sent * price.input
                room.append(int(spare / price.output) if price.output > 0 else 1 << 30)
            if room and min(room) < MIN_ANSWER:
                self.reached = self.reached or self._why(sent)
                raise BudgetReached(self.reached)
            bound = min([*room, *([wanted] if wanted else [])], default=0)
            cost = (sent * price.input + bound * price.output) if price is not None else 0.0
            self.reserved_tokens += sent + bound
            self.reserved_cost += cost
            return Reservation(sent + bound, cost, bound, what)

    def _why(self, sent: int) -> str:
        parts = []
        if self.max_tokens is not None:
            parts.append(f"{self.spent_tokens:,} of {self.max_tokens:,} tokens spent")
        if self.max_cost is not None:
            parts.append(f"${self.spent_cost:.4f} of ${self.max_cost:g} spent")
        return (f"budget reached: {', '.join(parts)}; the next call (up to {sent:,} tokens sent) "
                f"would not fit with {MIN_ANSWER} tokens of answer")

    def settle(self, r: Reservation, usage: dict | None, config: ModelConfig) -> None:
        """Replace the reservation with what the call cost: the usage the server reported, else
        (none reported, or the call broke after it was sent) the whole reservation."""
        counted = isinstance(usage, dict) and not usage.get("estimated")
        if counted:
            tokens = int(usage.get("totalTokens") or 0)
            cost = float((usage.get("cost") or {}).get("total") or 0.0)
        else:
            tokens, cost = r.tokens, r.cost
        with self._lock:
            self.reserved_tokens -= r.tokens
            self.reserved_cost -= r.cost
            self.spent_tokens += tokens
            self.spent_cost += cost
            self.calls += 1
        if self.on_spend is not None:
            self.on_spend({"what": r.what, "model": config.model, "tokens": tokens, "cost": cost,
                           "counted": "reported" if counted else "bound"})

    def release(self, r: Reservation) -> None:
        """Give back a reservation whose call was never sent."""
        with self._lock:
            self.reserved_tokens -= r.tokens
            self.reserved_cost -= r.cost

    def complete(self, config: ModelConfig, messages: list[dict], *, what: str = "call",
                 max_tokens: int | None = None, **kwargs) -> Reply:
        """`llm.complete`, paid for from this ledger: reserved first, settled after."""
        r = self.reserve(config, messages, kwargs.get("tools"), max_tokens, what)
        try:
            reply = complete(config, messages, max_tokens=r.max_tokens or None, **kwargs)
        except ModelError as exc:
            if exc.kind in NOT_SENT:
                self.release(r)
            else:
                self.settle(r, None, config)
            raise
        except BaseException:
            self.settle(r, None, config)
            raise
        self.settle(r, reply.usage, config)
        return reply


# The failures of a call that was refused before its request reached the model: nothing spent.
NOT_SENT = frozenset({"no-model", "too-long", "auth", "rate-limit", "bad-request", "connection", "budget"})
