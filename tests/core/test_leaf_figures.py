"""Per-leaf figures from one walk down the tree (webapp.core.leaf_figures) agree with the figures
computed path by path (build_context, compare.figures, compare.outcome) on real and generated
sessions, compactions and branch summaries included."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, Builder
import samplegen
from webapp.core.compare import figures, outcome
from webapp.core.context import build_context
from webapp.core.leaf_figures import leaf_figures, sort_leaves
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.tokens import context_tokens
from webapp.core.tree import SessionTree

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
FILES = sorted(SAMPLES.rglob("*.jsonl")) + sorted(FIXTURES.rglob("*.jsonl"))


def path_by_path(tree, leaf):
    f = figures(tree, leaf)
    return {
        "tokens": context_tokens(build_context(tree, leaf)).context,
        "turns": f.turns, "cost": pytest.approx(f.cost), "calls": f.tool_call_count, "errors": f.tool_errors,
        "wall_seconds": f.wall_seconds, "depth": len(tree.path(leaf)),
        "status": outcome(tree.path(leaf)).status,
    }


def one_walk(row):
    return {k: getattr(row, k) for k in ("tokens", "turns", "cost", "calls", "errors", "wall_seconds", "depth", "status")}


@pytest.mark.parametrize("file", FILES, ids=lambda p: p.name[:40])
def test_one_walk_gives_every_leaf_the_figures_of_its_path(file):
    tree = Session.open(file).tree
    rows = leaf_figures(tree)
    assert [r.leaf.id for r in rows] == tree.leaves()
    for row in rows:
        assert one_walk(row) == path_by_path(tree, row.leaf.id)


@pytest.mark.parametrize("seed", [3, 7])
def test_generated_sessions_with_compactions_and_many_branches(tmp_path, seed):
    header, entries = samplegen.synthetic_session(4_000, seed=seed, branches=12, compactions=3)
    file = tmp_path / "s.jsonl"
    samplegen.write_jsonl(file, header, entries)
    tree = Session.open(file).tree
    rows = leaf_figures(tree)
    assert len(rows) == len(tree.leaves()) >= 12
    assert any(e.type == "compaction" for e in tree.entries)
    for row in rows:
        assert one_walk(row) == path_by_path(tree, row.leaf.id)


def test_labels_belong_to_the_branch_below_its_last_split_and_rows_sort():
    rich = next(SAMPLES.rglob("*019cadd3-8025-7970-85d9-5954058b4714.jsonl"))
    tree = Session.open(rich).tree
    rows = leaf_figures(tree)
    own = {r.leaf.id: r.label for r in rows}
    for leaf, label in own.items():  # the label, when any, is on the path below the last split
        path = tree.path(leaf)
        splits = [i for i, e in enumerate(path) if len(tree.conversation_children(e.id)) > 1]
        below = [tree.labels[e.id] for e in path[(splits[-1] if splits else 0):] if e.id in tree.labels]
        assert label == (below[-1] if below else None)
    assert any(own.values())
    by_cost = sort_leaves(rows, "cost")
    assert [r.cost for r in by_cost] == sorted((r.cost for r in rows), reverse=True)
    assert [r.turns for r in sort_leaves(rows, "turns", descending=False)] == sorted(r.turns for r in rows)
    with pytest.raises(ValueError):
        sort_leaves(rows, "colour")


def test_a_branch_costs_its_usage_entries_and_tool_results_spending_and_an_edit_drops_the_anchor():
    b = Builder()
    b.user("q")
    a = b.assistant("", calls=[{"id": "c1", "name": "task", "arguments": {}}], usage=300)
    b.add("message", message={"role": "toolResult", "toolCallId": "c1", "toolName": "task",
                              "content": [{"type": "text", "text": "done"}], "usage": {"cost": {"total": 0.25}}})
    b.add("usage", kind="cache_warm", provider="p1", model="m1", usage={"cost": {"total": 0.5}})
    b.add("context_edit", targetId="e1", replacement={"content": "q, said again"})
    leaf = b.assistant("answer")
    tree = SessionTree(parse_bytes(b.data()))
    row = next(r for r in leaf_figures(tree) if r.leaf.id == leaf)
    assert row.cost == 0.75 and a in tree.by_id
    assert row.tokens == context_tokens(build_context(tree, leaf)).context
