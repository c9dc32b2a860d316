"""Costs computed from a named price table where a session records none (Claude Code, Codex):
the corpus page's figures equal a ccusage-style computation made from the same Claude Code files
read line by line (not through the app's reader), with a FIXED price table; a recorded cost is
kept; the page says which figures are computed, from which table, and what no price covers."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import orjson
import pytest

from webapp.core.prices import PriceTable, Rates, litellm_prices, table_of
from webapp.corpus.db import Index
from webapp.corpus.figures import corpus_figures
from webapp.web.app import create_app

# Rates per token (made up, each model its own): what the computation is checked against.
FIXED = PriceTable("the test's fixed price table", {
    "claude-sonnet-4-20250514": Rates("claude-sonnet-4-20250514", 3e-6, 15e-6, 0.3e-6, 3.75e-6),
    "claude-sonnet-4-5-20250929": Rates("claude-sonnet-4-5-20250929", 4e-6, 16e-6, 0.4e-6, 5e-6),
    "claude-opus-4-8": Rates("claude-opus-4-8", 15e-6, 75e-6, 1.5e-6, 18.75e-6),
    "claude-fable-5": Rates("claude-fable-5", 1e-6, 2e-6, None, None),  # (no cache rates: they add nothing)
    "gpt-5-codex": Rates("gpt-5-codex", 1.25e-6, 10e-6, 0.125e-6, None),
})


def ccusage_style(path: Path, prices: PriceTable) -> dict[str, float]:
    """Model -> cost of a Claude Code file, as ccusage computes it: every line with a
    `message.usage`, each API message (message.id and requestId) once, its tokens priced kind by
    kind (input, output, cache read, cache write), a rate the table lacks adding nothing. Claude
    Code writes a streamed message as several lines whose usage grows: the last one's is taken
    (ccusage keeps the first, whose output count is the first piece's)."""
    usage: dict = {}
    for n, line in enumerate(path.read_bytes().splitlines()):
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        msg = obj.get("message") if isinstance(obj, dict) else None
        if not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict) or obj.get("type") != "assistant":
            continue
        key = (msg.get("id"), obj.get("requestId")) if msg.get("id") and obj.get("requestId") else n
        usage[key] = (msg.get("model"), msg["usage"])
    cost: dict[str, float] = defaultdict(float)
    for model, u in usage.values():
        rates = prices.rows.get(model)
        if rates is None:
            continue
        for kind, rate in (("input_tokens", rates.input), ("output_tokens", rates.output),
                           ("cache_read_input_tokens", rates.cache_read), ("cache_creation_input_tokens", rates.cache_write)):
            if rate is not None:
                cost[model] += (u.get(kind) or 0) * rate
    return cost


@pytest.fixture
def index(home, tmp_path):
    root, files = home
    built = Index(tmp_path / "c.duckdb")
    built.build([root])
    return built, str(root.resolve()) + "/", files


def test_claude_code_costs_equal_a_ccusage_style_computation_on_the_same_files(index):
    built, prefix, files = index
    claude = [p for p in files.values() if "/.claude/" in str(p)]
    expected: dict[str, float] = defaultdict(float)
    for path in claude:
        for model, c in ccusage_style(path, FIXED).items():
            expected[model] += c
    assert sum(expected.values()) > 1  # (the fixtures hold real usage: a test of something)
    fig = corpus_figures(built.cursor(), prefix, FIXED)
    by_model = {row[0]: row for row in fig.by_model}
    for model, cost in expected.items():
        assert by_model[model][1] == pytest.approx(cost, rel=1e-9), model
        assert by_model[model][5] == pytest.approx(cost, rel=1e-9)  # all of it computed
        assert by_model[model][6] == model  # priced as that row
    agent = {row[0]: row for row in fig.by_agent}
    assert agent["claude-code"][1] == pytest.approx(sum(expected.values()), rel=1e-9)
    # pi's costs are recorded, and kept as they are: the table is not asked for them
    recorded = corpus_figures(built.cursor(), prefix, PriceTable("no prices"))
    assert {r[0]: r[1] for r in recorded.by_agent}["pi"] == pytest.approx(agent["pi"][1])
    assert agent["pi"][1] > 0 and agent["pi"][5] == 0
    assert fig.costs.recorded == pytest.approx(recorded.costs.recorded)
    assert fig.costs.computed == pytest.approx(sum(r[5] for r in fig.by_agent))
    assert fig.totals[2] == pytest.approx(fig.costs.recorded + fig.costs.computed)


def test_the_corpus_page_says_what_is_recorded_what_computed_and_from_which_table(home, tmp_path):
    root, files = home
    client = create_app(root, CORPUS_DB=tmp_path / "c.duckdb", PRICE_TABLE=FIXED).test_client()
    page = client.get("/corpus").text
    said = page[page.index('id="cost-sources"'):].split("</p>")[0]
    assert "recorded</strong> by the sessions" in said and "computed</strong> from the tokens" in said
    assert "the test&#39;s fixed price table" in said
    assert "claude-opus-5" in said and "no price for" in said  # a model without a price, named, its tokens in no cost
    assert "(all computed)" in page  # a Claude Code bar says its cost is computed
    assert "claude-opus-5: no price · " in page  # a model the table does not price: no cost of nothing
    claude = sum(c for p in files.values() if "/.claude/" in str(p) for c in ccusage_style(p, FIXED).values())
    assert f"${claude:.2f} (all computed)" in page


def test_litellm_s_own_table_is_read_without_litellm_and_finds_agents_model_names():
    table = litellm_prices()
    assert table.name.startswith("litellm ") and len(table.rows) > 1000
    sonnet = table.rates("claude-sonnet-4-5-20250929")
    assert sonnet is not None and sonnet.input and sonnet.output and sonnet.cache_read and sonnet.cache_write
    assert table.rates("no-such-model-anywhere") is None
    made = table_of("t", {"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}, "bad": "x"})
    assert made.rates("openai/m").cost(1000, 500, 100, 100) == pytest.approx(1000 * 1e-6 + 500 * 2e-6)
