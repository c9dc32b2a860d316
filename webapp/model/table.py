"""Model metadata (context windows, prices) from the table litellm ships, read without litellm.

Importing litellm takes seconds; the page that shows a context meter should not. The table is
the same file litellm itself falls back to offline (`model_prices_and_context_window_backup.json`),
so the figures match what litellm would report, and nothing is fetched from the network.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import orjson

TABLE = "model_prices_and_context_window_backup.json"


@dataclass(frozen=True)
class ModelInfo:
    key: str
    context_window: int | None
    input_price: float | None = None  # dollars per input token; None: the table gives none
    max_output: int | None = None  # the longest answer it gives (`max_output_tokens`), if known


def _table_path() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / TABLE


@functools.lru_cache(maxsize=1)
def _windows() -> dict[str, tuple[int | None, float | None, int | None]]:
    """Model key -> its context window, input price and output limit (None when the table gives none), for
    the rows of the table that describe a model: all that is looked up of it, kept instead of the
    whole table (tens of thousands of objects a page would hold for two figures)."""
    path = _table_path()
    if path is None:
        return {}
    try:
        table = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(table, dict):
        return {}
    windows: dict[str, tuple[int | None, float | None, int | None]] = {}
    for key, row in table.items():
        if isinstance(row, dict) and key != "sample_spec":
            window = row.get("max_input_tokens") or row.get("max_tokens")
            price = row.get("input_cost_per_token")
            output = row.get("max_output_tokens")
            windows[key] = (window if isinstance(window, int) else None,
                            float(price) if isinstance(price, (int, float)) else None,
                            output if isinstance(output, int) else None)
    return windows


@functools.lru_cache(maxsize=256)
def model_info(provider: str | None, model_id: str | None) -> ModelInfo | None:
    """What the table knows of a model, tried as `provider/model`, `model`, and without a prefix."""
    if not model_id:
        return None
    windows = _windows()
    candidates = [f"{provider}/{model_id}" if provider else None, model_id, model_id.split("/")[-1]]
    for key in candidates:
        if key and key in windows:
            return ModelInfo(key, *windows[key])
    return None


def split_model(model: str) -> tuple[str | None, str]:
    """A litellm model string as (provider, model id): `openai/gpt-4o-mini` -> ("openai", "gpt-4o-mini")."""
    provider, _, model_id = model.partition("/")
    return (provider, model_id) if model_id else (None, provider)


def estimated_cost(model: str, tokens: int) -> float | None:
    """What sending `tokens` of context to `model` costs by the table's input price; None when
    the table has no price for it (a local or custom model)."""
    provider, model_id = split_model(model)
    info = model_info(provider, model_id)
    return tokens * info.input_price if info and info.input_price is not None else None


def priced(model: str | None) -> bool:
    """Whether the table has a price for `model`: a cost reckoned without one is not $0 but
    unknown (a local or custom model)."""
    info = model_info(*split_model(model)) if model else None
    return bool(info and info.input_price is not None)


def cost_text(cost: float | None) -> str:
    """A cost as the CLI says it: dollars, or "unknown" (None: no price for the model)."""
    return "unknown" if cost is None else f"${cost:.4f}"


def context_window(provider: str | None, model_id: str | None, override: int | None = None) -> int | None:
    """The window to compact against: an explicit override, $SESSION_TREE_CONTEXT_WINDOW, the table."""
    if override:
        return override
    env = os.environ.get("SESSION_TREE_CONTEXT_WINDOW")
    if env and env.isdigit():
        return int(env)
    info = model_info(provider, model_id)
    return info.context_window if info else None
