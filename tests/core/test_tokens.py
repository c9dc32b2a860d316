"""One token accounting: which part of a figure is reported and which estimated, in one format."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Builder
from webapp.core.context import build_context
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.tokens import TokenCount, compaction_text, context_tokens, token_text, usage_text, usage_tokens
from webapp.core.tree import SessionTree

RICH = next((Path(__file__).resolve().parents[2] / "sample_sessions").rglob("*019cadd3-8025-7970-85d9-5954058b4714.jsonl"))
COMPACTION = "019cade2-0005-77b9-affb-86ab4d0a0b37"  # "10.1k → 6.4k"; the next call reported 6.6k


def test_one_format_says_what_is_reported_and_what_estimated():
    assert token_text(TokenCount(6600, 0, "a")) == "6.6k tokens (reported)"
    assert token_text(TokenCount(6800, 200, "a")) == "6.8k tokens (6.6k reported + 200 estimated)"
    assert token_text(TokenCount(1800, 1800, None)) == "1.8k tokens (estimated)"
    assert token_text(TokenCount(6100, 6100, None, 4300)) == "6.1k tokens (estimated, 4.3k of it system prompt and tools)"
    assert compaction_text(7196, 1150) == "7.2k → 1.1k tokens (after: estimated)"
    assert compaction_text(7196, None) == "7.2k → ? tokens"
    assert usage_text({"totalTokens": 6622, "cost": {"total": 0.0123}}) == "6.6k tokens (reported) · $0.01"
    assert usage_text({"totalTokens": 9, "estimated": True}) == "9 tokens (estimated: the server reported none)"


def test_after_a_compaction_the_estimate_agrees_with_the_next_reported_usage():
    tree = Session.open(RICH).tree
    at = context_tokens(build_context(tree, COMPACTION))
    nxt = next(e for e in tree.entries if tree.is_ancestor(COMPACTION, e.id) and usage_tokens(e))
    before_call = context_tokens(build_context(tree, tree.parent[nxt.id]))
    assert usage_tokens(nxt) == 6622
    assert at.reported == 0 and at.overhead > 3000  # the system prompt and tools, measured
    assert abs(before_call.context - 6622) / 6622 < 0.1  # was 1.8k against 6.6k


def test_a_usage_the_client_estimated_does_not_count_as_reported():
    b = Builder()
    b.user("hello there")
    b.assistant("hi", usage=5000)
    tree = SessionTree(parse_bytes(b.data()))
    assert context_tokens(build_context(tree, tree.active_leaf)).reported == 5000
    b2 = Builder()
    b2.user("hello there")
    b2.add("message", message={"role": "assistant", "content": [{"type": "text", "text": "hi"}], "stopReason": "stop",
                               "usage": {"input": 5000, "output": 0, "totalTokens": 5000, "estimated": True}})
    tree = SessionTree(parse_bytes(b2.data()))
    count = context_tokens(build_context(tree, tree.active_leaf))
    assert count.reported == 0 and count.context == count.estimated < 100


def test_figures_read_as_people_write_them():
    from webapp.core.tokens import format_tokens
    assert [format_tokens(n) for n in (843, 1000, 18_240, 999_949, 999_950, 1_000_000, 1_250_000,
                                       2_000_000_000)] == \
        ["843", "1.0k", "18.2k", "999.9k", "1.0M", "1.0M", "1.2M", "2.0B"]
