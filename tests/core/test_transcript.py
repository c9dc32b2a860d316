"""The transcript of a path: what it shows under each filter, tool results under their calls,
branch points, windows, and the path a selected node leads to."""

from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import Builder
from webapp.core.session import Session
from webapp.core.transcript import Options, build_transcript, other_branches, path_to_leaf, turns


def branching():
    """root user → assistant with a read call → its result → user 2 → custom data → a bash call
    → its result → answer; a side branch at the first assistant; a model change and a label."""
    b = Builder()
    b.add("model_change", provider="p", modelId="m")
    u1 = b.user("first question")
    a1 = b.assistant("let me look", calls=[{"id": "c1", "name": "read", "arguments": {"path": "a.py"}}])
    r1 = b.tool_result("c1", "print('hello')")
    u2 = b.user("second question")
    b.add("custom", customType="todo-state", data={"todo": 1})
    a2 = b.assistant("", calls=[{"id": "c2", "name": "bash", "arguments": {"command": "ls"}}])
    r2 = b.tool_result("c2", "a.py", name="bash")
    a3 = b.assistant("done")
    b.add("label", targetId=u2, label="important")
    side = b.user("side question", parent=a1)
    side_a = b.assistant("side answer")
    b.add("leaf", targetId=a3)  # back to the main branch: it is the active one
    tree = Session.in_memory(b.data()).tree
    return tree, SimpleNamespace(u1=u1, a1=a1, r1=r1, u2=u2, a2=a2, r2=r2, a3=a3, side=side, side_a=side_a)


def kinds(t):
    return [i.kind for i in t.items]


def test_default_shows_the_conversation_with_results_under_their_calls():
    tree, ids = branching()
    t = build_transcript(tree, ids.u1)
    assert [i.entry.id for i in t.items][1:] == [ids.u1, ids.a1, ids.u2, ids.a2, ids.a3]
    assert kinds(t) == ["mark", "user", "assistant", "user", "assistant", "assistant"]
    assert t.items[2].results["c1"].id == ids.r1
    assert t.items[4].results["c2"].id == ids.r2


def test_filters():
    tree, ids = branching()
    ids_of = lambda f: [i.entry.id for i in build_transcript(tree, ids.a3, options=Options(filter=f)).items]  # noqa: E731
    assert ids_of("user") == [ids.u1, ids.u2]
    assert ids_of("labelled") == [ids.u2]
    assert ids.a2 not in ids_of("no-tools")  # an assistant turn that only calls a tool
    assert ids.a1 in ids_of("no-tools")  # it has text
    all_ids = ids_of("all")
    assert all(x in all_ids for x in (ids.u1, ids.a1, ids.u2, ids.a2, ids.a3))
    assert len(all_ids) == len(ids_of("default")) + 1  # custom data only under "all"


def test_options_round_trip_through_the_url():
    o = Options.from_args({"filter": "user", "thinking": "hide"})
    assert o == Options(filter="user", thinking=False, output=True)
    assert o.params() == {"filter": "user", "thinking": "hide"}
    assert Options.from_args({"filter": "<script>"}).filter == "default"
    assert o.params_with(filter="default") == {"thinking": "hide"}


def test_a_node_leads_on_to_a_tip_and_a_given_leaf_is_kept_when_on_the_path():
    tree, ids = branching()
    assert path_to_leaf(tree, ids.u1)[-1].id == ids.a3  # the active branch goes on
    assert path_to_leaf(tree, ids.side)[-1].id == ids.side_a
    assert path_to_leaf(tree, ids.u1, ids.side_a)[-1].id == ids.side_a  # u1 lies on that path
    assert path_to_leaf(tree, ids.u2, ids.side_a)[-1].id == ids.a3  # u2 does not: ignored


def test_branch_points_name_the_other_branches():
    tree, ids = branching()
    t = build_transcript(tree, ids.a3)
    at = next(i.at for i in t.items if i.entry.id == ids.a1)
    assert other_branches(tree, t.path, at) == [ids.side]
    side = build_transcript(tree, ids.side)
    at = next(i.at for i in side.items if i.entry.id == ids.a1)
    assert other_branches(tree, side.path, at) == [ids.r1]


def test_index_of_finds_a_result_by_its_call_and_windows_cut_the_items():
    tree, ids = branching()
    t = build_transcript(tree, ids.r2)
    assert t.items[t.index_of(ids.r2)].entry.id == ids.a2
    assert t.index_of("not-there") == 0
    assert [i.entry.id for i in t.window(1, 2)] == [ids.u1, ids.a1]


def test_turns_start_at_user_messages():
    tree, ids = branching()
    path = path_to_leaf(tree, ids.a3)
    starts = turns(path)
    assert starts[0] == 0 and path[0].type == "model_change"  # the opening settings join turn 1
    assert [path[i].id for i in starts[1:]] == [ids.u2]
    said = Builder()
    said.add("custom_message", customType="note", content="read this first", display=True)
    q = said.user("q")
    assert turns(Session.in_memory(said.data()).tree.path(q)) == [0, 1]  # a message before the first prompt is a turn
