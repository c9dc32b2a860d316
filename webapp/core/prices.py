"""What tokens cost, from a named price table: the one litellm ships, read without litellm.

Claude Code and Codex record their usage (input, output, cache reads and writes) but not what it
cost; pi records both. A cost computed here is the usage priced as ccusage prices it: each kind
of token at its own rate of the table's row for the model (`input_cost_per_token`,
`output_cost_per_token`, `cache_read_input_token_cost`, `cache_creation_input_token_cost`), a
rate the row does not give counting nothing. Every figure built on these says which of its
costs were recorded and which computed, and from which table.

The table is the file litellm itself falls back to offline
(`model_prices_and_context_window_backup.json`, `litellm.model_cost`'s content): importing
litellm takes seconds, reading its table a fraction of one, and nothing is fetched.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

LITELLM_TABLE = "model_prices_and_context_window_backup.json"
# Where a model's row may be under another key: a provider's prefix, or Bedrock's name for the
# same model (`anthropic.claude-sonnet-4-20250514-v1:0`), which gives the same rates.
_PREFIXES = ("", "anthropic/", "openai/", "anthropic.", "azure/", "openrouter/anthropic/", "openrouter/openai/")
_SUFFIXES = ("", "-v1:0")


@dataclass(frozen=True)
class Rates:
    """Dollars per token of each kind (None: the row gives no rate for it) and the table's key."""

    key: str
    input: float | None
    output: float | None
    cache_read: float | None
    cache_write: float | None

    def cost(self, input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0) -> float:
        """The tokens priced as ccusage prices them: each kind at its rate, a missing rate adds nothing."""
        total = 0.0
        for tokens, rate in ((input_tokens, self.input), (output_tokens, self.output),
                             (cache_read, self.cache_read), (cache_write, self.cache_write)):
            if tokens and rate is not None:
                total += tokens * rate
        return total


@dataclass
class PriceTable:
    """A price table by name (what the page says its computed costs come from) and its rows."""

    name: str
    rows: dict[str, Rates] = field(default_factory=dict)
    _found: dict[str, Rates | None] = field(default_factory=dict, repr=False, compare=False)

    def rates(self, model: str | None) -> Rates | None:
        """The row for `model` as an agent names it (`claude-sonnet-4-5-20250929`, `gpt-5-codex`):
        the key itself, else under a provider's prefix or Bedrock's name for it; None without one."""
        if not model:
            return None
        if model not in self._found:
            self._found[model] = self._lookup(model)
        return self._found[model]

    def _lookup(self, model: str) -> Rates | None:
        bare = model.rsplit("/", 1)[-1]
        for name in dict.fromkeys((model, bare)):
            for prefix in _PREFIXES:
                for suffix in _SUFFIXES:
                    found = self.rows.get(prefix + name + suffix)
                    if found is not None:
                        return found
        return None


def _rate(row: dict, key: str) -> float | None:
    v = row.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def table_of(name: str, data: Any) -> PriceTable:
    """A price table from litellm's format (model key -> row of rates); rows without an input or
    output rate are left out."""
    rows: dict[str, Rates] = {}
    if isinstance(data, dict):
        for key, row in data.items():
            if not isinstance(row, dict) or key == "sample_spec":
                continue
            rates = Rates(key, _rate(row, "input_cost_per_token"), _rate(row, "output_cost_per_token"),
                          _rate(row, "cache_read_input_token_cost"), _rate(row, "cache_creation_input_token_cost"))
            if rates.input is not None or rates.output is not None:
                rows[key] = rates
    return PriceTable(name, rows)


def _litellm_path() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / LITELLM_TABLE


@functools.lru_cache(maxsize=1)
def litellm_prices() -> PriceTable:
    """litellm's own price table, named with litellm's version; an empty table (every cost then
    said to be unknown) when litellm or its file is missing."""
    path = _litellm_path()
    try:
        version = importlib.metadata.version("litellm")
    except importlib.metadata.PackageNotFoundError:
        version = "?"
    name = f"litellm {version} price table"
    if path is None:
        return PriceTable(name + " (litellm is not installed)")
    try:
        return table_of(name, orjson.loads(path.read_bytes()))
    except (OSError, orjson.JSONDecodeError) as exc:
        return PriceTable(f"{name} (unreadable: {exc})")
