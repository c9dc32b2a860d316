"""Lazy entries: a pi v3 entry keeps the facts the tree needs and reads its body again from
its line when asked; that body is the one an eager read makes, and a file that changed under it
gives the old body or a clear error, never another line's."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from tests.conftest import OTHER_FIXTURES, PI_FIXTURES, header
from tests.test_hostile_files import FILES as HOSTILE_FILES
import samplegen
from webapp.core import bodies as bodies_module
from webapp.core.bodies import BodyChanged, Bodies
from webapp.core.entries import parse_time, tool_calls
from webapp.core.errors import SessionError
from webapp.core.agents.pi.reader import KEPT_TYPES
from webapp.core.leaf_figures import leaf_figures
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.messages import estimate_entry_tokens
from webapp.core.tokens import entry_cost
from webapp.core.tree import SessionTree

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "sample_sessions").glob("*/*.jsonl"))


def usage_from_body(e) -> int | None:
    """What `tokens.usage_tokens` read from the body before the facts kept it."""
    msg = e.message
    if e.role != "assistant" or msg.get("stopReason") in ("aborted", "error"):
        return None
    usage = msg.get("usage")
    if not isinstance(usage, dict) or usage.get("estimated"):
        return None
    total = usage.get("totalTokens")
    if isinstance(total, (int, float)) and total > 0:
        return int(total)
    return int(sum(p for k in ("input", "output", "cacheRead", "cacheWrite")
                   if isinstance(p := usage.get(k), (int, float)))) or None


def cost_from_body(e) -> float:
    if e.role == "assistant":
        usage = e.message.get("usage")
    else:
        details = e.get("details") if e.type in ("compaction", "branch_summary") else None
        usage = details.get("usage") if isinstance(details, dict) else None
    cost = usage.get("cost") if isinstance(usage, dict) else None
    total = cost.get("total") if isinstance(cost, dict) else None
    return float(total) if isinstance(total, (int, float)) else 0.0


def check_against_eager(session: Session, data: bytes) -> int:
    """Every entry of `session` has the body, the original and the facts of an eager read of
    `data`; returns how many were lazy."""
    eager = {e.id: e for e in parse_bytes(data).all_entries()}
    tree = session.tree
    assert [e.id for e in tree.entries] == list(eager)
    lazy = 0
    for e in tree.entries:
        lazy += e.is_lazy
        want = eager[e.id]
        assert e.raw == want.raw and e.original == want.original, e
        assert (e.type, e.timestamp, e.role) == (want.type, want.timestamp, want.raw.get("message", {}).get("role")
                                                 if e.type == "message" and isinstance(want.raw.get("message"), dict)
                                                 else None)
        when = parse_time(want.raw.get("timestamp")) if isinstance(want.raw.get("timestamp"), str) else None
        assert e.instant == (when.timestamp() if when else None)  # what is kept of the timestamp
        assert e.tokens == estimate_entry_tokens(want)
        assert list(e.tool_call_ids) == [str(c.get("id", "")) for c in tool_calls(want)]
        assert e.usage_tokens == usage_from_body(want) and e.cost == cost_from_body(want) == entry_cost(e)
        assert e.tool_call_id == (want.message.get("toolCallId") if e.role == "toolResult" else None)
        assert e.is_error == bool(e.role == "toolResult" and want.message.get("isError"))
        assert e.facts == want.facts and e.tokens == want.tokens and e.instant == want.instant
        assert e.missing_fields == e.facts[5] == want.missing_fields
        figures = (e.instant, e.cost, len(e.tool_call_ids), e.usage_tokens, e.is_error)
        assert e.figures == figures == want.figures
    return lazy


@pytest.mark.parametrize("path", PI_FIXTURES + SAMPLES + OTHER_FIXTURES, ids=lambda p: p.name)
def test_a_lazy_body_is_the_eager_parse_for_every_entry_of_the_real_files(path):
    lazy = check_against_eager(Session.open(path), path.read_bytes())
    if path in PI_FIXTURES and b'"version":3' in path.read_bytes()[:300]:
        assert lazy > 0


def test_a_synthetic_session_is_lazy_but_for_the_kept_types(tmp_path):
    header_line, items = samplegen.synthetic_session(n_entries=3_000, seed=4)
    path = tmp_path / "s.jsonl"
    samplegen.write_jsonl(path, header_line, items)
    session = Session.open(path)
    lazy = check_against_eager(session, path.read_bytes())
    assert lazy == sum(1 for e in items if e["type"] not in KEPT_TYPES) > 2_500


@pytest.mark.parametrize("name", sorted(HOSTILE_FILES))
def test_hostile_lines_read_lazily_or_kept_give_the_eager_body_and_facts(name, tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_bytes(HOSTILE_FILES[name])
    check_against_eager(Session.open(path), HOSTILE_FILES[name])


def write(path: Path, entries: list[dict], mode: str = "wb") -> None:
    with open(path, mode) as f:
        f.write(b"".join(orjson.dumps(e) + b"\n" for e in entries))


def msg(i: int, text: str = "hello", parent: int | None = None) -> dict:
    return {"type": "message", "id": f"m{i}", "parentId": f"m{i - 1}" if parent is None and i else parent,
            "timestamp": f"2026-01-01T00:00:{i:02d}.000Z", "message": {"role": "user", "content": text}}


def test_a_body_read_after_an_append_is_still_its_line_and_new_lines_read_theirs(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, [header(), *(msg(i) for i in range(5))])
    session = Session.open(path)
    tree = session.tree
    write(path, [msg(i, f"more {i}") for i in range(5, 8)], "ab")
    assert tree.entry("m3").raw["message"]["content"] == "hello"  # the old tree reads its old line
    grown = session.tree
    assert grown.entry("m6").is_lazy and grown.entry("m6").message["content"] == "more 6"
    assert grown.entry("m2").raw == msg(2)


def test_a_body_read_after_a_rewrite_in_place_is_a_clear_error_and_a_fresh_read_sees_the_new_lines(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, [header(), *(msg(i) for i in range(5))])
    session = Session.open(path)
    old = session.tree
    assert old.entry("m1").is_lazy
    with open(path, "r+b") as f:  # the same inode, other lines (as pi's migration rewrites files)
        f.write(b"".join(orjson.dumps(e) + b"\n" for e in [header(), *(msg(i, "rewritten") for i in range(5))]))
    with pytest.raises(BodyChanged, match="changed on disk since it was read") as exc:
        old.entry("m2").raw
    assert isinstance(exc.value, SessionError)  # (the web app shows such an error as a page)
    fresh = session.tree
    assert session.rewrites == 1 and fresh.entry("m2").message["content"] == "rewritten"


def test_lines_moved_by_a_rewrite_are_never_read_as_another_entry(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, [header(), *(msg(i) for i in range(5))])
    old = Session.open(path).tree
    write(path, [header(), *(msg(i, "x" * i) for i in (0, 2, 1, 3, 4))], "r+b")  # m1 and m2 change places
    for entry_id in ("m1", "m2"):
        with pytest.raises(BodyChanged):
            old.entry(entry_id).raw


def test_a_deleted_file_still_gives_the_bodies_of_a_handle_already_open_else_a_clear_error(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, [header(), *(msg(i) for i in range(5))])
    opened, unopened = Session.open(path).tree, Session.open(path).tree
    assert opened.entry("m0").raw == msg(0)  # opens its handle
    path.unlink()
    assert opened.entry("m4").raw == msg(4)  # the bytes it read, through the handle
    with pytest.raises(BodyChanged, match="can no longer be read"):
        unopened.entry("m4").raw


def test_a_replaced_file_is_not_read_for_the_bodies_of_the_old_one(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, [header(), *(msg(i) for i in range(5))])
    session = Session.open(path)
    old = session.tree
    other = tmp_path / "other.jsonl"
    write(other, [header(), *(msg(i) for i in range(5))])  # the same bytes, another file
    os.replace(other, path)
    with pytest.raises(BodyChanged, match="was replaced"):
        old.entry("m1").raw
    assert session.tree.entry("m1").raw == msg(1)


def test_bodies_held_in_memory_after_opening_are_bounded_by_the_cache(tmp_path, monkeypatch):
    header_line, items = samplegen.synthetic_session(n_entries=4_000, seed=9)
    path = tmp_path / "s.jsonl"
    samplegen.write_jsonl(path, header_line, items)
    monkeypatch.setattr(bodies_module, "CACHE_ENTRIES", 100)
    session = Session.open(path)
    tree = session.tree
    tree.leaves()
    leaf_figures(tree)  # the branch figures read the facts (and a few bodies per leaf)
    kept = sum(1 for e in items if e["type"] in KEPT_TYPES)
    bodies = session.log.bodies
    assert sum(not e.is_lazy for e in tree.entries) == kept
    assert len(bodies) <= 100
    for e in tree.entries:  # every body read once: the cache still holds at most its size
        e.raw
    assert len(bodies) <= 100 and bodies.reads >= len(items) - kept


def test_the_cache_keeps_what_is_read_again_and_a_body_over_its_byte_bound_alone(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, [header(), *(msg(i, "x" * 1000) for i in range(10))])
    session = Session(Session.open(path).storage)
    session._log = session._new_log()
    session._log.bodies.cache_bytes = 2_500  # two lines
    tree = session.tree
    for _ in range(3):
        tree.entry("m1").raw, tree.entry("m2").raw
    assert session.log.bodies.reads == 2 and len(session.log.bodies) == 2
    tree.entry("m3").raw
    assert len(session.log.bodies) == 2  # m1 went


def test_only_a_few_file_handles_stay_open_across_many_sessions(tmp_path, monkeypatch):
    monkeypatch.setattr(bodies_module, "OPEN_HANDLES", 4)
    trees = []
    for n in range(10):
        path = tmp_path / f"s{n}.jsonl"
        write(path, [header(), *(msg(i) for i in range(3))])
        trees.append(Session.open(path).tree)
    for tree in trees:
        tree.entry("m1").raw
    assert sum(t.entry("m1")._raw._fd is not None for t in trees) <= 4
    for tree in trees:  # a closed handle opens again when asked
        assert tree.entry("m2").raw == msg(2)


def test_an_in_memory_session_is_lazy_too_and_a_tree_built_from_bytes_is_not():
    data = b"".join(orjson.dumps(e) + b"\n" for e in [header(), *(msg(i) for i in range(3))])
    session = Session.in_memory(data)
    assert all(e.is_lazy for e in session.tree.entries)
    assert session.tree.entry("m2").raw == msg(2)
    assert not any(e.is_lazy for e in SessionTree(parse_bytes(data)).entries)


def test_entries_that_need_their_line_changed_keep_their_body(tmp_path):
    bad_role = {**msg(1), "message": {"role": 5, "content": "c"}}
    lines = [header(), msg(0), bad_role, msg(2), {**msg(3), "id": "m2"}, {**msg(4), "id": None}]
    path = tmp_path / "s.jsonl"
    write(path, lines)
    tree = Session.open(path).tree
    lazy = {e.id: e.is_lazy for e in tree.entries}
    assert lazy == {"m0": True, "m1": False, "m2": True, "m2@L5": False, "L6": False}
    assert tree.entry("m1").role == "invalid" and tree.entry("m1").original == bad_role
    assert any(p.kind == "invalid-field" and p.entry_id == "m1" for p in tree.problems)


def test_bodies_of_a_storage_without_a_file_read_through_it():
    data = b"".join(orjson.dumps(e) + b"\n" for e in [header(), msg(0)])
    session = Session.in_memory(data)
    assert isinstance(session.log.bodies, Bodies) and session.log.bodies.path is None
    assert session.tree.entry("m0").raw == msg(0)


SHAPES = [  # messages of every shape the token estimate made while reading must get right
    {"role": "user", "content": "plain"},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "bé"}]},
    {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]},
    {"role": "user", "content": None},
    {"role": "user", "content": ["bare", 5]},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": ""},
                                      {"type": "toolCall", "id": "c1", "name": "édit", "arguments": {"path": "café.py"}}]},
    {"role": "assistant", "content": [{"type": "text", "text": ""}, {"type": "text", "text": ""}]},
    {"role": "assistant", "content": [{"type": "toolCall", "id": 7, "name": 8}, {"type": "text", "text": None}]},
    {"role": "assistant", "content": "just text", "usage": {"input": 3, "output": 4, "cost": {"total": 0.5}}},
    {"role": "assistant", "content": [], "stopReason": "error", "usage": {"totalTokens": 9.5}},
    {"role": "toolResult", "toolCallId": "c1", "isError": 1, "content": [{"type": "text", "text": "ok"}, {"type": "image"}]},
    {"role": "toolResult", "toolCallId": "c1", "content": "str result"},
    {"role": "toolResult", "toolCallId": "c1", "content": [{"type": "text", "text": 5}, "x"]},
    {"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 2},
    {"role": "bashExecution", "command": "ls", "output": "", "excludeFromContext": True},
    {"role": "custom", "content": [{"type": "text", "text": "ext"}]},
    {"role": "system", "content": "not sent"},
    # kept in the columns of a lazy entry, or, where a column cannot hold them, in its facts tuple:
    {"role": "assistant", "content": "huge usage", "usage": {"totalTokens": 18446744073709551615}},
    {"role": "assistant", "content": "negative usage", "usage": {"input": -5, "cost": {"total": -0.25}}},
    {"role": "assistant", "content": "estimated", "usage": {"totalTokens": 40, "estimated": True, "cost": {"total": 3}}},
    {"role": "assistant", "content": [{"type": "toolCall", "id": "c2", "name": "x", "arguments": {"a": {"b": [1]}}},
                                      {"type": "toolCall", "id": "c3", "name": "y", "arguments": [1, [2]]}],
     "usage": {"totalTokens": 12}},
    {"role": "toolResult", "toolCallId": "c2", "isError": True, "content": "boom"},
    {"role": "toolResult", "toolCallId": "c3", "content": [{"type": "text", "text": "fine"}]},
    {"role": "toolResult", "content": "no call id"},
    {"role": "toolResult", "toolCallId": "c3", "content": [{"type": "image", "data": "AAAA"}, {"type": 5}]},
]


def test_the_facts_taken_while_reading_equal_those_of_the_body_for_every_message_shape(tmp_path):
    lines = [header(), *({"type": "message", "id": f"s{i}", "parentId": f"s{i - 1}" if i else None,
                          "timestamp": "2026-01-01T00:00:00Z", "message": m} for i, m in enumerate(SHAPES)),
             {"type": "custom_message", "id": "cm", "parentId": None, "timestamp": "x", "customType": "t",
              "content": [{"type": "text", "text": "injected"}]},
             {"type": "branch_summary", "id": "bs", "parentId": None, "timestamp": "x", "fromId": "s1",
              "summary": "went elsewhere", "details": {"usage": {"cost": {"total": 2}}}},
             {"type": "custom", "id": "cu", "parentId": None, "timestamp": "2026-01-01T00:00:00Z"}]  # (no customType)
    path = tmp_path / "s.jsonl"
    write(path, lines)
    data = path.read_bytes()
    session = Session.open(path)
    assert check_against_eager(session, data) >= len(SHAPES) - 2
    lacking = session.tree.entry("cu")
    assert lacking.is_lazy and lacking.missing_fields == ("customType",) == lacking.facts[5]


def test_a_tree_keeps_what_it_was_built_from_while_its_log_reads_more(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, [header(), *(msg(i) for i in range(3))])
    session = Session.open(path)
    old = session.tree
    write(path, [msg(3), msg(4)], "ab")
    new = session.tree
    assert [e.id for e in old.entries] == ["m0", "m1", "m2"] and "m4" not in old.by_id
    assert [e.id for e in new.entries] == ["m0", "m1", "m2", "m3", "m4"] and new.parent["m4"] == "m3"


def test_the_parent_map_names_every_entry_and_a_root_made_in_an_old_tree_stays_its_own(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, [header(), msg(0), {**msg(2), "parentId": "m1"}])  # m2's parent is written later
    session = Session.open(path)
    old = session.tree
    assert dict(old.parent) == {"m0": None, "m2": None} and old.orphans == ["m2"]
    write(path, [msg(1)], "ab")
    new = session.tree
    assert dict(new.parent) == {"m0": None, "m2": "m1", "m1": "m0"} and new.orphans == []
    assert [e.id for e in new.path("m2")] == ["m0", "m1", "m2"]
    assert old.parent["m2"] is None and old.parent.get("m1", "absent") == "absent" and "m1" not in old.parent


def test_a_lazy_entry_keeps_its_figures_in_columns_and_its_facts_without_a_tuple_of_its_own(tmp_path):
    """The representation that makes a big file cost ~330 bytes per entry: what it keeps
    answers as the body does, an estimate made later is kept once, and a lazy entry given a
    `source` holds its body again with the same facts."""
    calls = {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "ls", "arguments": {}}],
             "usage": {"totalTokens": 70, "cost": {"total": 0.5}}}
    result = {"role": "toolResult", "toolCallId": "c1", "content": "a"}
    later = {"role": "bashExecution", "command": "ls", "output": "x" * 40}  # estimated from its body
    lines = [header(), *({"type": "message", "id": f"m{i}", "parentId": f"m{i - 1}" if i else None,
                          "timestamp": ts, "message": m}
                         for i, (m, ts) in enumerate([(calls, "2026-01-01T00:00:01.500Z"), (result, 5),
                                                      (later, "not a time")]))]
    path = tmp_path / "s.jsonl"
    write(path, lines)
    log = Session.open(path).log
    bodies = log.bodies
    a, r, b = log.entries
    assert all(e.is_lazy and e._raw is bodies for e in (a, r, b))
    assert a._facts == "c1" and a.facts == (("c1",), None, False, 70, 0.5, ()) and a.tool_call_ids == ("c1",)
    assert (bodies.usages[a.line], bodies.costs[a.line], bodies.instants[a.line]) == (70, 0.5, 1767225601.5)
    assert r._facts == "c1" and r._facts is a._facts  # one string for the call and its result
    assert (r.tool_call_id, r.tool_call_ids, a.tool_call_id, r.usage_tokens, r.cost) == ("c1", (), None, None, 0.0)
    assert r.facts == ((), "c1", False, None, 0.0, ()) and r.instant is None and b.instant is None
    assert bodies.estimates[b.line] == -1
    reads = bodies.reads
    assert b.tokens == estimate_entry_tokens(b) > 0 and bodies.estimates[b.line] == b.tokens
    bodies._cache.clear()
    assert b.tokens == bodies.estimates[b.line] and bodies.reads == reads + 1  # (the estimate's one read)
    facts, tokens = a.facts, a.tokens
    a.source = {"as": "written"}
    assert not a.is_lazy and (a.facts, a.tokens, a.instant, a.source) == (facts, tokens, 1767225601.5, {"as": "written"})
    assert a.raw == lines[1]
