"""Model metadata from litellm's table (webapp/model/table.py): only each model's context window,
input price and output limit are kept of it, and it answers as the table does (a table written here stands for litellm's)."""

from __future__ import annotations

import orjson
import pytest

from webapp.model import table as models

TABLE = {
    "sample_spec": {"max_input_tokens": 1, "max_tokens": 1},
    "anthropic/claude-x": {"max_input_tokens": 200_000, "max_tokens": 8_192, "max_output_tokens": 8_192,
                           "input_cost_per_token": 3e-06},
    "claude-x": {"max_tokens": 100_000},
    "gpt-y": {"max_input_tokens": None, "max_tokens": 64_000},
    "no-window": {"mode": "embedding", "max_input_tokens": "lots"},
    "not-a-row": "text",
}


@pytest.fixture
def table(tmp_path, monkeypatch):
    path = tmp_path / models.TABLE
    path.write_bytes(orjson.dumps(TABLE))
    monkeypatch.setattr(models, "_table_path", lambda: path)
    for cached in (models._windows, models.model_info):
        cached.cache_clear()
    yield path
    for cached in (models._windows, models.model_info):
        cached.cache_clear()


def info(provider, model_id):
    found = models.model_info(provider, model_id)
    return None if found is None else (found.key, found.context_window)


def test_a_model_is_found_as_provider_slash_model_then_model_then_its_last_part(table):
    assert info("anthropic", "claude-x") == ("anthropic/claude-x", 200_000)  # max_input_tokens first
    assert info("openai", "claude-x") == ("claude-x", 100_000)  # else max_tokens
    assert info(None, "router/vendor/gpt-y") == ("gpt-y", 64_000)


def test_rows_that_are_not_models_and_unknown_models_answer_none(table):
    assert info(None, "no-window") == ("no-window", None)  # a row without an int window
    assert info(None, "not-a-row") is None and info(None, "sample_spec") is None
    assert info("x", "unknown") is None and info("x", "") is None


def test_only_the_windows_input_prices_and_output_limits_are_kept_of_the_table(table):
    assert models._windows() == {"anthropic/claude-x": (200_000, 3e-06, 8_192), "claude-x": (100_000, None, None),
                                 "gpt-y": (64_000, None, None), "no-window": (None, None, None)}
    assert models.model_info("anthropic", "claude-x").max_output == 8_192


def test_an_estimated_cost_is_tokens_times_the_input_price_or_unknown(table):
    assert models.estimated_cost("anthropic/claude-x", 1000) == pytest.approx(0.003)
    assert models.estimated_cost("openai/claude-x", 1000) is None  # a row without a price
    assert models.estimated_cost("ollama/local-thing", 1000) is None  # not in the table


def test_the_window_to_compact_against_comes_from_the_override_the_environment_or_the_table(table, monkeypatch):
    monkeypatch.delenv("SESSION_TREE_CONTEXT_WINDOW", raising=False)
    assert models.context_window("anthropic", "claude-x") == 200_000
    assert models.context_window("anthropic", "claude-x", override=5) == 5
    monkeypatch.setenv("SESSION_TREE_CONTEXT_WINDOW", "77")
    assert models.context_window("anthropic", "claude-x") == 77


def test_a_missing_or_broken_table_knows_no_model(table):
    table.write_bytes(b"{not json")
    assert info("anthropic", "claude-x") is None
    table.unlink()
    models._windows.cache_clear()
    models.model_info.cache_clear()
    assert info("anthropic", "claude-x") is None
