"""Incremental growth: a tree grown by appends equals the tree of a fresh open, whatever
the appended lines are (orphans that find their parent later, loops, labels of entries yet to
come, duplicates, bad and torn lines, appends cut mid-line)."""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import header
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.tree import SessionTree

IDS = [f"e{i}" for i in range(12)]
ID = st.sampled_from(IDS + [None])
TIME = st.sampled_from(["2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02Z", "2026-01-01T00:00:01.5+01:00", "x"])

ENTRY = st.one_of(
    st.builds(lambda i, p, t, role: {"type": "message", "id": i, "parentId": p, "timestamp": t,
                                     "message": {"role": role, "content": "hi"}},
              ID, ID, TIME, st.sampled_from(["user", "assistant"])),
    st.builds(lambda i, p, t, target, label: {"type": "label", "id": i, "parentId": p, "timestamp": t,
                                             "targetId": target, "label": label},
              ID, ID, TIME, ID, st.sampled_from(["", "good", 5])),
    st.builds(lambda i, p, t, target: {"type": "leaf", "id": i, "parentId": p, "timestamp": t, "targetId": target},
              ID, ID, TIME, ID),
    st.builds(lambda i, p, t, kept: {"type": "compaction", "id": i, "parentId": p, "timestamp": t,
                                    "summary": "s", "firstKeptEntryId": kept, "tokensBefore": 1},
              ID, ID, TIME, ID),
    st.builds(lambda i, p, t, calls: {"type": "message", "id": i, "parentId": p, "timestamp": t,
                                     "message": {"role": "assistant", "stopReason": "toolUse", "content": [
                                         {"type": "toolCall", "id": c, "name": "read", "arguments": {}} for c in calls]}},
              ID, ID, TIME, st.lists(st.sampled_from(["c1", "c2", "c3"]), max_size=2)),
    st.builds(lambda i, p, t, call: {"type": "message", "id": i, "parentId": p, "timestamp": t,
                                     "message": {"role": "toolResult", "toolCallId": call, "toolName": "read",
                                                 "content": [{"type": "text", "text": "r"}]}},
              ID, ID, TIME, st.sampled_from(["c1", "c2", "c3"])),
    st.builds(lambda i, p, n: {"type": "session_info", "id": i, "parentId": p, "timestamp": "x", "name": n},
              ID, ID, st.sampled_from(["one", "", None])),
)
LINE = st.one_of(ENTRY.map(orjson.dumps), st.sampled_from([b"{bad", b"", b"[1]", b"\xff\xfe"]))


def state(tree: SessionTree) -> dict:
    """Everything a tree answers, in a comparable form."""
    return {
        "entries": [(e.id, e.line) for e in tree.entries],
        "by_id": list(tree.by_id),
        "parent": tree.parent,
        "children": tree.children,
        "roots": tree.roots,
        "orphans": sorted(tree.orphans),
        "cycle_cuts": tree.cycle_cuts,
        "active": tree.active_leaf,
        "labels": tree.labels,
        "name": tree.name,
        "problems": [p.as_dict() for p in tree.all_problems()],
        "bad": [(b.line, b.reason) for b in tree.bad_lines],
        "leaves": tree.leaves(),
        "branch_points": tree.branch_points(),
        "conversation": {e.id: tree.conversation_children(e.id) for e in tree.entries},
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(LINE, max_size=25), cuts=st.lists(st.integers(0, 4000), max_size=8))
def test_a_tree_grown_by_appends_equals_a_fresh_open(tmp_path_factory, lines, cuts):
    data = orjson.dumps(header()) + b"\n" + b"".join(line + b"\n" for line in lines)
    path = tmp_path_factory.mktemp("grow") / "s.jsonl"
    path.write_bytes(b"")
    session = Session.open(path)
    for cut in sorted({c % (len(data) + 1) for c in cuts}) + [len(data)]:
        with open(path, "ab") as f:  # the file grows to `cut` bytes, possibly mid-line
            f.write(data[path.stat().st_size:cut])
        tree = session.tree
        assert state(tree) == state(SessionTree(parse_bytes(data[:cut])))
    assert session.rewrites == 0


def test_an_append_grows_the_tree_instead_of_building_it_again(tmp_path):
    lines = [orjson.dumps(header())] + [
        orjson.dumps({"type": "message", "id": f"m{i}", "parentId": f"m{i - 1}" if i else None,
                      "timestamp": "2026-01-01T00:00:01.000Z", "message": {"role": "user", "content": "x"}})
        for i in range(50)
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    session = Session.open(path)
    first = session.tree
    with open(path, "ab") as f:
        f.write(orjson.dumps({"type": "message", "id": "new", "parentId": "m49", "timestamp": "2026-01-01T00:00:02.000Z",
                              "message": {"role": "assistant", "content": "y"}}) + b"\n")
    second = session.tree
    assert second is not first and second.children["m49"] == ["new"] and second.active_leaf == "new"
    assert "new" not in first.by_id and first.active_leaf == "m49"  # the old tree, still read, unchanged
    assert second.parent is not first.parent  # grown from a copy ...
    assert second.by_id["m0"] is first.by_id["m0"]  # ... that shares the entries
    assert first.extended(session.log) is not None  # grown, not rebuilt (what session.tree used)


def test_a_tool_result_appended_later_answers_the_call_of_an_earlier_turn(tmp_path):
    call = {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "assistant", "stopReason": "toolUse",
                        "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}]}}
    result = {"type": "message", "id": "r", "parentId": "a", "timestamp": "2026-01-01T00:00:02Z",
              "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": []}}
    path = tmp_path / "s.jsonl"
    path.write_bytes(orjson.dumps(header()) + b"\n" + orjson.dumps(call) + b"\n")
    session = Session.open(path)
    assert [p.kind for p in session.tree.all_problems()] == ["unanswered-tool-call"]
    with open(path, "ab") as f:
        f.write(orjson.dumps(result) + b"\n")
    assert session.tree.all_problems() == []
    assert state(session.tree) == state(SessionTree(parse_bytes(path.read_bytes())))
