"""The context meter's count (`leaf_tokens`, which reads only the entries after the last usage)
is the count of the whole context built (`context_tokens(build_context(...))`), with the same
model, at every leaf and at entries in between, on every sample and fixture file."""

from __future__ import annotations

from pathlib import Path

import pytest

import samplegen
from tests.conftest import Builder
from webapp.core.context import build_context
from webapp.core.session import Session
from webapp.core.tokens import context_tokens, leaf_tokens

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*(ROOT / "sample_sessions").rglob("*.jsonl"), *(ROOT / "tests" / "fixtures").rglob("*.jsonl")])


def same_as_built(tree, node) -> None:
    ctx = build_context(tree, node)
    assert leaf_tokens(tree, node) == (context_tokens(ctx), (ctx.settings.provider, ctx.settings.model_id)), node


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[-40:])
def test_the_meter_counts_what_the_built_context_counts(path):
    tree = Session.open(path).tree
    nodes = [*tree.leaves(), tree.active_leaf, *[e.id for e in tree.entries[:: max(1, len(tree.entries) // 40)]]]
    for node in dict.fromkeys(x for x in nodes if x is not None):
        same_as_built(tree, node)


def test_the_meter_of_a_retried_session_and_of_paths_without_usage(tmp_path):
    header, entries = samplegen.retry_session(30)
    samplegen.write_jsonl(tmp_path / "r.jsonl", header, entries)
    tree = Session.open(tmp_path / "r.jsonl").tree
    for node in (*tree.leaves(), tree.active_leaf):
        same_as_built(tree, node)
    b = Builder()
    b.add("model_change", provider="p1", modelId="m9")
    b.user("no usage anywhere")
    b.assistant("answer")
    b.add("compaction", summary="s", firstKeptEntryId="e2", tokensBefore=10)
    last = b.user("after the compaction")
    tree = Session.open(b.write(tmp_path / "n.jsonl")).tree
    same_as_built(tree, last)
    assert leaf_tokens(tree, last)[1] == ("p1", "m1")  # the answer after the model change names the model
