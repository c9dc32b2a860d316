"""Tree semantics (SPEC §3): children order, orphans, loops, duplicates, active leaf, labels, name."""

import pytest

from tests.conftest import Builder
from webapp.core.context import build_context
from webapp.core.errors import UnknownEntry
from webapp.core.reader import parse_bytes
from webapp.core.tree import SessionTree


def tree_of(b: Builder) -> SessionTree:
    return SessionTree(parse_bytes(b.data()))


def kinds(tree: SessionTree) -> list[tuple[str, str | None]]:
    return [(p.kind, p.entry_id) for p in tree.problems]


def test_children_are_ordered_by_timestamp_then_file_order():
    b = Builder()
    b.user("root", id="r")
    b.user("late", id="c1", parent="r", ts="2026-01-02T03:10:00.000Z")
    b.user("early", id="c2", parent="r", ts="2026-01-02T03:05:00.000Z")
    b.user("late too", id="c3", parent="r", ts="2026-01-02T03:10:00.000Z")
    tree = tree_of(b)
    assert tree.children["r"] == ["c2", "c1", "c3"]
    assert tree.branch_points() == ["r"]
    assert tree.problems == []


def test_children_order_compares_instants_not_timestamp_strings():
    b = Builder()
    b.user("root", id="r")
    b.user("a", id="half", parent="r", ts="2026-01-02T03:04:06.500Z")
    b.user("b", id="whole", parent="r", ts="2026-01-02T03:04:06Z")
    b.user("c", id="offset", parent="r", ts="2026-01-02T04:04:05.000+01:00")  # 03:04:05 UTC
    assert tree_of(b).children["r"] == ["offset", "whole", "half"]


def test_orphan_is_a_flagged_root():
    b = Builder()
    b.user("a")
    b.user("lost", id="o", parent="nowhere")
    b.user("child of orphan", id="k", parent="o")
    tree = tree_of(b)
    assert tree.roots == ["e1", "o"]
    assert tree.orphans == ["o"]
    assert tree.parent["o"] is None
    assert ("orphan", "o") in kinds(tree)
    assert [e.id for e in tree.path("k")] == ["o", "k"]


def test_parent_loop_is_cut_at_its_first_line_and_flagged():
    b = Builder()
    b.user("root", id="r")
    b.user("a", id="a", parent="b")
    b.user("b", id="b", parent="a")
    b.user("c", id="c", parent="b")
    tree = tree_of(b)
    assert tree.cycle_cuts == ["a"]
    assert tree.roots == ["r", "a"]
    assert tree.parent["a"] is None and tree.parent["b"] == "a"
    assert ("cycle", "a") in kinds(tree)
    assert [e.id for e in tree.path("c")] == ["a", "b", "c"]  # terminates


def test_an_entry_that_is_its_own_parent_is_cut():
    b = Builder()
    b.user("self", id="s", parent="s")
    tree = tree_of(b)
    assert tree.cycle_cuts == ["s"] and tree.roots == ["s"]
    assert [e.id for e in tree.path("s")] == ["s"]


def test_forward_parent_reference_without_a_loop_is_not_a_cycle():
    b = Builder()
    b.user("child first", id="c", parent="p")
    b.user("parent later", id="p", parent=None)
    tree = tree_of(b)
    assert tree.cycle_cuts == [] and tree.orphans == []
    assert tree.roots == ["p"] and tree.children["p"] == ["c"]


def test_duplicate_id_first_line_keeps_it():
    b = Builder()
    b.user("first", id="x")
    b.user("child", id="k", parent="x")
    b.user("second", id="x", parent=None)
    tree = tree_of(b)
    assert tree.entry("x").line == 2
    assert tree.entry("x@L4").get("message")["content"] == "second"
    assert tree.parent["k"] == "x"
    assert ("duplicate-id", "x@L4") in kinds(tree)


def test_active_leaf_is_the_last_entry_without_leaf_entries():
    b = Builder()
    r = b.user("a")
    b.user("b")
    b.user("c", parent=r)  # a sibling written last
    assert tree_of(b).active_leaf == "e3"


def test_leaf_entry_moves_the_active_leaf_and_a_later_entry_moves_it_again():
    b = Builder()
    b.user("a")
    b.user("b")
    b.add("leaf", targetId="e1", parent="e1")
    tree = tree_of(b)
    assert tree.active_leaf == "e1"
    b.user("c", parent="e1")
    assert tree_of(b).active_leaf == "e4"


def test_leaf_entry_with_null_target_is_an_empty_conversation():
    b = Builder()
    b.user("a")
    b.add("leaf", targetId=None, parent=None)
    tree = tree_of(b)
    assert tree.active_leaf is None
    assert tree.path(None) == []
    ctx = build_context(tree, tree.active_leaf)
    assert ctx.messages == []


def test_leaf_entry_with_dangling_target_is_ignored_and_flagged():
    b = Builder()
    b.user("a")
    b.user("b")
    b.add("leaf", targetId="ghost", parent="ghost")
    tree = tree_of(b)
    assert tree.active_leaf == "e2"
    assert ("dangling-leaf", "e3") in kinds(tree)


def test_path_follows_parents_from_the_root():
    b = Builder()
    b.user("a")
    b.user("b")
    b.user("c")
    b.user("d", parent="e2")
    tree = tree_of(b)
    assert [e.id for e in tree.path("e3")] == ["e1", "e2", "e3"]
    assert [e.id for e in tree.path("e4")] == ["e1", "e2", "e4"]
    assert tree.common_ancestor("e3", "e4") == "e2"
    assert tree.common_ancestor("e3", None) is None
    assert tree.is_ancestor("e1", "e4") and not tree.is_ancestor("e3", "e4")
    assert len(tree.path("e4")) == 3
    with pytest.raises(UnknownEntry):
        tree.path("nope")


def test_leaves_are_branch_tips_not_markers():
    b = Builder()
    b.user("a")
    b.user("b")
    b.user("c", parent="e1")
    b.add("leaf", targetId="e2", parent="e2")
    tree = tree_of(b)
    assert tree.leaves() == ["e2", "e3"]
    assert tree.conversation_children("e2") == []
    assert tree.active_leaf == "e2"


def test_labels_latest_wins_and_an_empty_or_absent_label_clears():
    b = Builder()
    b.user("a")
    b.user("b")
    b.add("label", targetId="e1", label="first")
    b.add("label", targetId="e1", label="second")
    b.add("label", targetId="e2", label="keep")
    assert tree_of(b).labels == {"e1": "second", "e2": "keep"}
    b.add("label", targetId="e1", label="")
    assert tree_of(b).labels == {"e2": "keep"}
    b.add("label", targetId="e2")
    assert tree_of(b).labels == {}
    b.add("label", targetId="e2", label="back")
    assert tree_of(b).labels == {"e2": "back"}


def test_label_of_an_unknown_entry_is_flagged():
    b = Builder()
    b.user("a")
    b.add("label", targetId="ghost", label="x")
    assert ("dangling-label", "e2") in kinds(tree_of(b))


def test_session_name_latest_wins():
    b = Builder()
    b.user("a")
    assert tree_of(b).name is None
    b.add("session_info", name="one")
    b.add("session_info", name="two")
    assert tree_of(b).name == "two"


def test_missing_required_fields_and_dangling_first_kept_are_flagged():
    b = Builder()
    b.add("model_change", provider="p")
    b.add("compaction", summary="s", firstKeptEntryId="ghost")
    b.add("compaction", summary="s")
    tree = tree_of(b)
    assert ("missing-field", "e1") in kinds(tree)
    assert ("dangling-first-kept", "e2") in kinds(tree)
    assert ("dangling-first-kept", "e3") in kinds(tree)
    assert "names no entry" in tree.first_kept_problem(tree.entry("e2"))


def test_all_problems_include_bad_lines_in_line_order():
    b = Builder()
    b.user("a", id="x")
    b.raw("oops")
    b.user("b", id="x")
    probs = tree_of(b).all_problems()
    assert [(p.kind, p.line) for p in probs] == [("bad-line", 3), ("duplicate-id", 4)]


def test_a_lone_child_is_kept_as_its_id_and_read_as_a_list_of_one():
    b = Builder()
    b.user("root", id="r")
    b.user("only", id="o", parent="r")
    b.user("one", id="x", parent="o")
    b.user("two", id="y", parent="o")
    tree = tree_of(b)
    assert tree.children.kids == {"r": "o", "o": ["x", "y"]}  # (no list of one per entry: a list would cost ~90 bytes each)
    assert tree.children["r"] == ["o"] and tree.children.get("r") == ["o"] and tree.children.get("x") is None
    assert dict(tree.children) == {"r": ["o"], "o": ["x", "y"]} and "x" not in tree.children
    assert tree.conversation_children("r") == ["o"] and tree.leaves() == ["x", "y"]


def test_an_entry_a_loop_cut_made_a_root_leaves_its_parents_children():
    b = Builder()
    b.user("root", id="r")
    b.user("a", id="a", parent="b")
    b.user("b", id="b", parent="a")
    b.user("c", id="c", parent="b")
    tree = tree_of(b)
    assert tree.roots == ["r", "a"]
    assert dict(tree.children) == {"a": ["b"], "b": ["c"]} and tree.children.kids["b"] == "c"
