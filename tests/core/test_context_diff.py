"""Before/after a compaction, the diff of two contexts, and the timeline, on a session whose
compaction span, summary and kept part are known (tests/context_session.py) and on the samples."""

from pathlib import Path

import pytest

from tests.context_session import SUMMARY, context_session
from webapp.core.context import build_context
from webapp.core.context_diff import before_after, diff_contexts
from webapp.core.errors import SessionError
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.storage import JsonlStorage
from webapp.core.timeline import timeline
from webapp.core.tokens import context_tokens
from webapp.core.tree import SessionTree

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


@pytest.fixture
def tree():
    return SessionTree(parse_bytes(context_session().data()))


def ids(items):
    return [i.entry.id for i in items]


def test_before_after_columns_hold_exactly_the_expected_messages(tree):
    ba = before_after(tree, "k1")
    assert ba.before.node_id == "a3" and ba.after.node_id == "k1"
    assert [ids(g.items) for g in ba.left] == [["u1", "a1", "t1", "a2"]]  # one turn, folded
    assert ba.left_entries == ["u1", "a1", "t1", "a2"]
    assert ids(ba.summary) == ["k1"] and SUMMARY in ba.summary[0].text
    assert [(x.entry.id, y.entry.id) for x, y in ba.stayed] == [("u2", "u2"), ("a3", "a3")]
    assert ba.returned == []
    assert ba.before.tokens.context == 900  # a3 reported it
    assert ba.after.tokens == context_tokens(build_context(tree, "k1"))


def test_before_after_refuses_what_is_not_a_compaction(tree):
    with pytest.raises(SessionError, match="not a compaction"):
        before_after(tree, "u1")


def test_diff_of_two_branches_sharing_a_prefix(tree):
    d = diff_contexts(tree, "a3", "b3")
    assert [(r.kind, r.a and r.a.entry.id, r.b and r.b.entry.id) for r in d.rows] == [
        ("both", "u1", "u1"), ("both", "a1", "a1"), ("both", "t1", "t1"), ("both", "a2", "a2"),
        ("changed", "u2", "v2"), ("changed", "a3", "b3"),
    ]
    changed = d.rows[4].diff
    assert ("delete", "server") in changed and ("insert", "parser") in changed
    assert [(s.name, s.a, s.b) for s in d.settings] == [("thinking level", None, "high")]
    assert d.shared_until == "a2"
    assert (d.a.tokens.context, d.b.tokens.context) == (900, 950)


def test_diff_across_a_compaction_shows_what_left_and_the_summary(tree):
    d = diff_contexts(tree, "a3", "a4")
    kinds = {k: [(r.a or r.b).entry.id for r in d.rows if r.kind == k] for k in ("both", "only-a", "only-b")}
    assert kinds == {"both": ["u2", "a3"], "only-a": ["u1", "a1", "t1", "a2"], "only-b": ["k1", "u3", "a4"]}
    assert [s.name for s in d.settings] == []  # the summary is a user message, as pi sends it
    data = d.as_dict()
    assert data["counts"] == {"both": 2, "only-a": 4, "only-b": 3, "changed": 0}


def test_diff_names_an_unknown_entry(tree):
    with pytest.raises(SessionError, match="no entry with id 'zz'"):
        diff_contexts(tree, "a3", "zz")


def test_timeline_points_are_turn_ends_and_compactions_counted_as_context_counts(tree):
    points = timeline(tree, "a4")
    assert [(p.entry.id, p.turn) for p in points] == [("a2", 1), ("a3", 2), ("k1", 2), ("a4", 3)]
    for p in points:
        assert p.tokens == context_tokens(build_context(tree, p.entry.id))
    assert [p.reported for p in points] == [True, True, False, True]
    assert points[2].is_compaction and points[2].tokens.context < points[1].tokens.context


def _sample(name: str) -> SessionTree:
    path = next(SAMPLES.glob(f"*/{name}*.jsonl"))
    return Session(JsonlStorage(path)).tree


def test_samples_before_after_partitions_the_context_before():
    for path in SAMPLES.glob("*/*.jsonl"):
        tree = Session(JsonlStorage(path)).tree
        for e in tree.entries:
            if e.type != "compaction" or not tree.parent.get(e.id):
                continue
            ba = before_after(tree, e.id)
            before_ids = [m["entryId"] for m in ba.before.context.messages]
            assert sorted(ids(ba.left_items) + [x.entry.id for x, _ in ba.stayed]) == sorted(before_ids)
            after_ids = [m["entryId"] for m in ba.after.context.messages]
            assert ids(ba.summary) + [y.entry.id for _, y in ba.stayed] + ids(ba.returned) == after_ids


def test_invoice_sample_compaction_replaced_33_entries():
    tree = _sample("2026-03-02")
    ba = before_after(tree, "019cade2-0005-77b9-affb-86ab4d0a0b37")
    assert len(ba.before.context.messages) == 49 and len(ba.after.context.messages) == 17
    assert len(ba.left_entries) == 33 and len(ba.stayed) == 16


def test_short_ids_are_enough_where_they_are_unique():
    tree = _sample("2026-03-02")
    d = diff_contexts(tree, "fcc01e02", "4d0a0b37")  # the ends of the ids the graph shows
    assert d.a.node_id.endswith("fcc01e02") and d.b.node_id.endswith("4d0a0b37")
    assert before_after(tree, "4d0a0b37").compaction.id == "019cade2-0005-77b9-affb-86ab4d0a0b37"


def test_timeline_counts_are_the_context_counts_on_every_sample_and_fixture():
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    paths = sorted(SAMPLES.glob("*/*.jsonl")) + sorted(fixtures.glob("*/*.jsonl"))
    checked = 0
    for path in paths:
        tree = Session(JsonlStorage(path)).tree
        for leaf in tree.leaves()[:3]:
            for p in timeline(tree, leaf)[-25:]:
                assert p.tokens == context_tokens(build_context(tree, p.entry.id)), (path.name, p.entry.id)
                checked += 1
    assert checked > 150
