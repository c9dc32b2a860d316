"""Property tests: random sessions grown through the real write paths, then the invariants of
SPEC §3–§7 checked on every leaf.

A session is grown by a random list of operations: user and assistant messages (some with a tool
call and its result), forks at/before any entry, labels set and cleared, compactions planned with
a small keepRecentTokens and written through `write_compaction`, and branch summaries.
"""

import tempfile
from pathlib import Path

import orjson
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.conftest import Builder, storage_bytes
from webapp.core.compaction import (
    plan_branch_summary,
    plan_compaction,
    with_file_lists,
)
from webapp.core.context import build_context
from webapp.core.reader import SessionLog, first_kept_id, parse_bytes
from webapp.core.session import Session
from webapp.core.storage import JsonlStorage, MemoryStorage
from webapp.core.summary_writes import write_branch_summary, write_compaction
from webapp.core.tree import SessionTree

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ANY = st.integers(0, 10**6)  # an index into the entries, taken modulo their number
SIZE = st.one_of(st.just(0), st.integers(40, 400))  # characters: 0 or 10..100 estimated tokens
ARGS = {
    "user": st.tuples(st.just("user"), SIZE),
    "assistant": st.tuples(st.just("assistant"), SIZE, st.sampled_from([None, "read", "edit", "bash"])),
    "fork": st.tuples(st.just("fork"), ANY, st.sampled_from(["at", "before"])),
    "label": st.tuples(st.just("label"), ANY, st.sampled_from(["", "x", "y"])),
    "compact": st.tuples(st.just("compact"), st.integers(1, 150)),
    "branch": st.tuples(st.just("branch"), ANY),
}
# Messages are the likeliest operations: compactions need something to compact.
KINDS = ["user"] * 3 + ["assistant"] * 3 + ["fork", "label", "compact", "compact", "branch"]
OPS = st.lists(st.sampled_from(KINDS).flatmap(ARGS.__getitem__), min_size=12, max_size=40)


def user(n: int) -> dict:
    return {"type": "message", "message": {"role": "user", "content": "u" * n}}


def apply(s: Session, op: tuple, counter: list[int]) -> int:
    """Run one operation; return how many lines it should have written."""
    kind = op[0]
    tree = s.tree
    pick = (lambda i: tree.entries[i % len(tree.entries)].id) if tree.entries else None
    if kind == "user":
        s.append(user(op[1]))
        return 1
    if kind == "assistant":
        _, n, tool = op
        content = [{"type": "text", "text": "a" * n}]
        if tool is None:
            s.append({"type": "message", "message": {"role": "assistant", "content": content, "stopReason": "stop"}})
            return 1
        counter[0] += 1
        call_id = f"call{counter[0]}"
        content.append({"type": "toolCall", "id": call_id, "name": tool, "arguments": {"path": f"f{counter[0] % 3}.py"}})
        s.append({"type": "message", "message": {"role": "assistant", "content": content, "stopReason": "toolUse"}})
        s.append({"type": "message", "message": {"role": "toolResult", "toolCallId": call_id, "toolName": tool,
                                                  "content": [{"type": "text", "text": "r" * n}]}})
        return 2
    if pick is None:
        return 0
    if kind == "fork":
        result = s.fork(pick(op[1]), op[2])
        assert s.tree.active_leaf == result.leaf_id
        return 1
    if kind == "label":
        target = pick(op[1])
        s.set_label(target, op[2])
        assert s.tree.labels.get(target) == (op[2] or None)
        return 1
    if kind == "compact":
        plan = plan_compaction(tree, tree.active_leaf, keep_recent_tokens=op[1])
        if not plan.can_compact:
            return 0
        assert tree.entry(plan.first_kept_entry_id).get("message", {}).get("role") != "toolResult"
        entry = write_compaction(s, plan, f"summary {len(tree.entries)}")
        ctx = build_context(s.tree, s.tree.active_leaf)
        kept = [e.id for e in plan.context.sources[plan.context.sources.index(tree.entry(plan.first_kept_entry_id)):]]
        assert [m["entryId"] for m in ctx.messages] == [entry["id"]] + kept
        return 1
    if kind == "branch":
        old, new = tree.active_leaf, pick(op[1])
        if old is None:
            return 0
        entry = write_branch_summary(s, plan_branch_summary(tree, old, new), "left a branch")
        assert s.tree.active_leaf == entry["id"] and entry["parentId"] == new
        return 1
    raise AssertionError(kind)


def grow(ops) -> Session:
    b = Builder()
    s = Session(MemoryStorage(b.data()))
    counter = [0]
    for op in ops:
        before = storage_bytes(s)
        lines = apply(s, op, counter)
        after = storage_bytes(s)
        # Append-only: nothing before the write changed, and exactly the expected lines were added.
        assert after[: len(before)] == before
        assert after[len(before):].count(b"\n") == lines
    return s


def shape(tree: SessionTree) -> tuple:
    return (
        [e.id for e in tree.entries],
        dict(tree.parent),
        {k: list(v) for k, v in tree.children.items()},
        tree.roots,
        tree.active_leaf,
        tree.labels,
        tree.name,
        tree.bad_lines,
        [(p.kind, p.line) for p in tree.problems],
    )


def check_context(tree: SessionTree, leaf: str | None) -> None:
    ctx = build_context(tree, leaf)
    path = [e.id for e in tree.path(leaf)]
    assert ctx.problems == []
    assert ctx.entry_ids <= set(path)
    compactions = [e for e in tree.path(leaf) if e.type == "compaction"]
    summaries = [m for m in ctx.messages if m["entryId"] in {e.id for e in compactions}]
    body = ctx.messages
    if compactions:
        latest = compactions[-1]
        assert summaries == [ctx.messages[0]]
        assert ctx.messages[0]["entryId"] == latest.id
        assert latest.get("summary") in ctx.messages[0]["content"]
        kept = path.index(first_kept_id(latest))
        assert kept < path.index(latest.id)
        assert set(path[:kept]).isdisjoint(ctx.entry_ids)
        body = ctx.messages[1:]
    else:
        assert summaries == []
    positions = [path.index(m["entryId"]) for m in body]
    assert positions == sorted(positions)
    calls = set()
    for m in body:  # a tool result always follows its call: a cut never separates them
        calls.update(c["id"] for c in m.get("tool_calls", ()))
        if m["role"] == "tool":
            assert m["tool_call_id"] in calls


@SETTINGS
@given(OPS)
def test_random_sessions_keep_every_invariant(ops):
    s = grow(ops)
    tree = s.tree
    assert tree.problems == [] and tree.bad_lines == []
    event(f"compactions: {min(len(tree.compactions()), 3)}")
    event(f"branch points: {min(len(tree.branch_points()), 2)}")
    event(f"branch summaries: {min(tree.counts_by_type().get('branch_summary', 0), 1)}")
    for leaf in {tree.active_leaf, *tree.leaves(), *[e.id for e in tree.entries[::3]]}:
        check_context(tree, leaf)
    for parent, kids in tree.children.items():
        assert kids == sorted(kids, key=lambda k: (tree.by_id[k].timestamp, tree.by_id[k].line))

    # Save, then load over both storages: the same tree as the one grown by incremental reads.
    data = storage_bytes(s)
    memory = Session(MemoryStorage(data)).tree
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        path.write_bytes(data)
        on_disk = Session(JsonlStorage(path)).tree
    assert shape(memory) == shape(on_disk) == shape(tree)


@SETTINGS
@given(OPS, st.integers(0, 10**6), st.sampled_from(["at", "before"]))
def test_a_fork_only_adds_one_leaf_line_and_both_storages_agree(ops, target, position):
    s = grow(ops)
    if not s.tree.entries:
        return
    data = storage_bytes(s)
    target_id = s.tree.entries[target % len(s.tree.entries)].id
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        path.write_bytes(data)
        sessions = [Session(MemoryStorage(data)), Session(JsonlStorage(path))]
        leaves = []
        for x in sessions:
            r = x.fork(target_id, position)
            after = storage_bytes(x)
            assert after[: len(data)] == data
            added = after[len(data):]
            assert added.count(b"\n") == 1 and added.endswith(b"\n")
            line = orjson.loads(added)
            assert line["type"] == "leaf" and line["targetId"] == r.leaf_id == line["parentId"]
            leaves.append((r.leaf_id, x.tree.active_leaf))
        assert leaves[0] == leaves[1]
        assert leaves[0][0] == leaves[0][1]
        expected = target_id if position == "at" else s.tree.parent[target_id]
        assert leaves[0][0] == expected


LINE = st.one_of(
    st.builds(lambda i, p: orjson.dumps({"type": "message", "id": f"i{i}", "parentId": f"i{p}" if p >= 0 else None,
                                         "timestamp": "t", "message": {"role": "user", "content": "x"}}),
              st.integers(0, 20), st.integers(-1, 20)),
    st.sampled_from([b"", b"   ", b"{bad", b"[]", b"null", b"\xff\xfe", b'{"type":"leaf","targetId":"i3"}', b"\r"]),
    st.binary(max_size=30).filter(lambda x: b"\n" not in x),
)


@SETTINGS
@given(st.booleans(), st.lists(LINE, max_size=40), st.booleans(), st.lists(st.integers(1, 60), max_size=10))
def test_every_line_is_accounted_for_and_piecewise_reading_equals_whole(with_header, lines, final_newline, steps):
    head = [orjson.dumps({"type": "session", "version": 3, "id": "s"})] if with_header else []
    data = b"\n".join(head + lines) + (b"\n" if final_newline else b"")
    whole = parse_bytes(data)
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    full = parse_bytes(data if data.endswith(b"\n") or not data else data + b"\n")
    assert (full.header is not None) + len(full.entries) + len(full.bad_lines) + full.blank_lines == n_lines
    # Unterminated, the last line is read as a tail: it is still an entry or a bad line, unless blank.
    accounted = (whole.header is not None) + len(whole.all_entries()) + len(whole.all_bad_lines()) + whole.blank_lines
    assert accounted + (full.blank_lines - whole.blank_lines) == n_lines
    assert full.blank_lines - whole.blank_lines in (0, 1)
    tree = SessionTree(whole)
    for e in tree.entries:
        tree.path(e.id)  # terminates, whatever the parents
    log = SessionLog()
    end = 0
    for step in steps:
        end = min(len(data), end + step)
        log.feed(data[log.offset:end])
    log.feed(data[log.offset:])
    assert [(e.id, e.parent_id, e.line) for e in log.all_entries()] == [
        (e.id, e.parent_id, e.line) for e in whole.all_entries()
    ]
    assert log.all_bad_lines() == whole.all_bad_lines()
    assert log.active_leaf == whole.active_leaf
    assert log.problems == whole.problems


@SETTINGS
@given(
    st.text(alphabet=st.characters(blacklist_characters="<"), max_size=200),
    st.lists(st.text(alphabet="abc/._", min_size=1, max_size=12), max_size=4),
    st.lists(st.text(alphabet="abc/._", min_size=1, max_size=12), max_size=4),
)
def test_with_file_lists_is_idempotent(summary, read, modified):
    once = with_file_lists(summary, read, modified)
    assert with_file_lists(once, read, modified) == once
    for f in read + modified:
        assert f in once
