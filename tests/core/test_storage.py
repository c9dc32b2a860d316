"""Storage parity (SPEC §7): every test of the first part runs over a JSONL file and in memory.

Then file names and folders (SPEC §1) and the JSONL-only cases (a replaced file, bad paths).
"""

import os
import re
import uuid

import orjson
import pytest

from tests.conftest import Builder, lines_of, open_session, storage_bytes
from webapp.core.agents.places import discover
from webapp.core.errors import InvalidWrite, SessionError, SessionNotFound, UnknownEntry
from webapp.core.session import Session, create_session
from webapp.core.storage import (
    JsonlStorage,
    MemoryStorage,
    cwd_folder_name,
    session_file_name,
)

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def external_append(session: Session, data: bytes) -> None:
    """Bytes added by another writer, behind the session's back."""
    st = session.storage
    if isinstance(st, MemoryStorage):
        st.data += data
    else:
        with open(st.path, "ab") as f:
            f.write(data)


def external_truncate(session: Session, size: int) -> None:
    st = session.storage
    if isinstance(st, MemoryStorage):
        del st.data[size:]
    else:
        os.truncate(st.path, size)


def two_users() -> Builder:
    b = Builder()
    b.user("a")
    b.user("b")
    return b


# -- append ----------------------------------------------------------------------------------------


def test_append_fills_id_parent_and_timestamp_and_moves_the_active_leaf(make_session):
    s = make_session(two_users().data())
    before = storage_bytes(s)
    entry = s.append({"type": "message", "message": {"role": "user", "content": "c"}})
    assert uuid.UUID(entry["id"]).version == 7
    assert entry["parentId"] == "e2"
    assert ISO.match(entry["timestamp"])
    after = storage_bytes(s)
    assert after.startswith(before)
    assert orjson.loads(after[len(before):]) == entry
    assert after.endswith(b"\n") and after[len(before):].count(b"\n") == 1
    assert s.tree.active_leaf == entry["id"]
    assert s.tree.parent[entry["id"]] == "e2"


def test_appended_ids_are_time_ordered(make_session):
    s = make_session(two_users().data())
    ids = [s.append({"type": "custom", "customType": "x"})["id"] for _ in range(5)]
    assert ids == sorted(ids)
    assert [e.id for e in s.tree.path(ids[-1])][-5:] == ids


@pytest.mark.parametrize("key", ["id", "parentId", "timestamp"])
def test_append_refuses_caller_set_keys_and_writes_nothing(make_session, key):
    s = make_session(two_users().data())
    before = storage_bytes(s)
    with pytest.raises(InvalidWrite, match=key):
        s.append({"type": "custom", "customType": "x", key: "mine"})
    assert storage_bytes(s) == before


@pytest.mark.parametrize("fields", [{"customType": "x"}, {"type": 3}, ["type", "custom"]])
def test_append_refuses_an_entry_without_a_string_type(make_session, fields):
    s = make_session(two_users().data())
    before = storage_bytes(s)
    with pytest.raises(InvalidWrite):
        s.append(fields)
    assert storage_bytes(s) == before


def test_append_refuses_an_unknown_parent_and_writes_nothing(make_session):
    s = make_session(two_users().data())
    before = storage_bytes(s)
    with pytest.raises(InvalidWrite, match="ghost"):
        s.append({"type": "custom", "customType": "x"}, parent="ghost")
    assert storage_bytes(s) == before


def test_append_with_parent_none_makes_a_root(make_session):
    s = make_session(two_users().data())
    e = s.append({"type": "custom", "customType": "x"}, parent=None)
    assert e["parentId"] is None
    assert s.tree.roots == ["e1", e["id"]]


def test_append_to_an_empty_storage_is_refused(make_session):
    s = make_session(b"")
    with pytest.raises(SessionError, match="no header"):
        s.append({"type": "custom", "customType": "x"})
    assert storage_bytes(s) == b""


def test_append_after_a_torn_last_line_writes_a_newline_first(make_session):
    data = two_users().data() + b'{"type":"message","id":"e3","par'
    s = make_session(data)
    assert [b.line for b in s.tree.bad_lines] == [4]
    assert s.tree.bad_lines[0].torn
    e = s.append({"type": "custom", "customType": "x"})
    after = storage_bytes(s)
    assert after == data + b"\n" + orjson.dumps(e) + b"\n"
    assert e["parentId"] == "e2"  # the torn line was never an entry
    tree = s.tree
    assert [(b.line, b.torn) for b in tree.bad_lines] == [(4, False)]
    assert tree.bad_lines[0].raw == '{"type":"message","id":"e3","par'
    assert tree.entry(e["id"]).line == 5
    assert tree.active_leaf == e["id"]


def test_append_after_a_complete_entry_without_newline_continues_from_it(make_session):
    b = two_users()
    s = make_session(b.data()[:-1])
    assert s.tree.active_leaf == "e2"
    e = s.append({"type": "custom", "customType": "x"})
    assert e["parentId"] == "e2"
    assert storage_bytes(s) == b.data() + orjson.dumps(e) + b"\n"
    assert s.tree.bad_lines == []


# -- reading ---------------------------------------------------------------------------------------


def test_refresh_reads_only_what_another_writer_appended(make_session):
    s = make_session(two_users().data())
    log, first = s.log, s.tree.entries[0]
    offset = log.offset
    external_append(s, orjson.dumps({"type": "custom", "id": "x1", "parentId": "e2", "timestamp": "t", "customType": "c"}) + b"\n")
    assert s.tree.active_leaf == "x1"
    assert s.log is log and s.tree.entries[0] is first  # caught up, not re-read
    assert log.offset > offset
    assert [e.id for e in s.tree.entries] == ["e1", "e2", "x1"]


def test_a_second_session_on_the_same_storage_sees_appends(kind, tmp_path):
    a = open_session(kind, two_users().data(), tmp_path)
    b = Session(a.storage) if kind == "memory" else Session(JsonlStorage(a.storage.path))
    assert b.tree.active_leaf == "e2"
    e = a.append({"type": "custom", "customType": "x"})
    assert b.tree.active_leaf == e["id"]
    e2 = b.append({"type": "custom", "customType": "y"})
    assert e2["parentId"] == e["id"]
    assert a.tree.active_leaf == e2["id"]


def test_a_storage_that_shrank_is_read_again_from_scratch(make_session):
    b = two_users()
    b.user("c")
    s = make_session(b.data())
    old = s.log
    assert s.tree.active_leaf == "e3"
    external_truncate(s, len(b.lines[0]) + len(b.lines[1]) + 2)
    assert s.log is not old
    assert [e.id for e in s.tree.entries] == ["e1"]
    assert s.tree.active_leaf == "e1"


def test_append_after_the_storage_shrank_chains_at_what_is_really_there(make_session):
    b = two_users()
    b.user("c")
    s = make_session(b.data())
    assert s.tree.active_leaf == "e3"
    keep = len(b.lines[0]) + len(b.lines[1]) + 2
    external_truncate(s, keep + 10)  # e2's line cut short: a torn write
    e = s.append({"type": "custom", "customType": "x"})
    assert e["parentId"] == "e1"
    data = storage_bytes(s)
    assert data.splitlines()[-1] == orjson.dumps(e)
    tree = s.tree
    assert [x.line for x in tree.bad_lines] == [3]
    assert tree.orphans == []


def test_opening_and_reading_never_writes(make_session):
    b = two_users()
    b.raw("garbage")
    b.add("compaction", summary="s", firstKeptEntryId="ghost")
    data = b.data()[:-1]
    s = make_session(data)
    s.tree.all_problems()
    assert storage_bytes(s) == data


# -- fork and label --------------------------------------------------------------------------------


def test_fork_at_writes_one_leaf_line_and_the_next_append_continues_there(make_session):
    s = make_session(two_users().data())
    before = storage_bytes(s)
    r = s.fork("e1", "at")
    after = storage_bytes(s)
    assert after.startswith(before) and after[len(before):].count(b"\n") == 1
    line = orjson.loads(after[len(before):])
    assert line["type"] == "leaf" and line["targetId"] == "e1" and line["parentId"] == "e1"
    assert r.leaf_id == "e1" and r.edit_text is None
    assert s.tree.active_leaf == "e1"
    e = s.append({"type": "message", "message": {"role": "user", "content": "other"}})
    assert e["parentId"] == "e1"
    assert s.tree.conversation_children("e1") == ["e2", e["id"]]


def test_fork_before_a_user_message_offers_its_text_and_moves_to_its_parent(make_session):
    s = make_session(two_users().data())
    r = s.fork("e2", "before")
    assert r.leaf_id == "e1" and r.edit_text == "b"
    assert s.tree.active_leaf == "e1"


def test_fork_before_a_root_gives_an_empty_conversation(make_session):
    s = make_session(two_users().data())
    r = s.fork("e1", "before")
    assert r.leaf_id is None and r.entry["targetId"] is None and r.entry["parentId"] is None
    assert s.tree.active_leaf is None
    e = s.append({"type": "message", "message": {"role": "user", "content": "fresh"}})
    assert e["parentId"] is None


def test_fork_refuses_unknown_targets_and_positions(make_session):
    s = make_session(two_users().data())
    before = storage_bytes(s)
    with pytest.raises(UnknownEntry):
        s.fork("ghost")
    with pytest.raises(InvalidWrite):
        s.fork("e1", "after")
    assert storage_bytes(s) == before


def test_set_and_clear_a_label(make_session):
    s = make_session(two_users().data())
    e = s.set_label("e1", "  start  ")
    assert e["targetId"] == "e1" and e["label"] == "start"
    assert s.tree.labels == {"e1": "start"}
    cleared = s.set_label("e1", None)
    assert "label" not in cleared
    assert s.tree.labels == {}
    with pytest.raises(UnknownEntry):
        s.set_label("ghost", "x")


# -- files and folders -----------------------------------------------------------------------------


def test_cwd_folder_and_file_names():
    assert cwd_folder_name("/home/ana/proj") == "--home-ana-proj--"
    assert cwd_folder_name("C:\\Users\\ana") == "--C--Users-ana--"
    assert session_file_name("2026-11-30T14:03:22.118Z", "0193") == "2026-11-30T14-03-22-118Z_0193.jsonl"


def test_create_session_writes_a_v3_header_in_the_per_cwd_folder(tmp_path):
    path = create_session(tmp_path, "/home/ana/proj", parent_session="/x/old.jsonl")
    assert path.parent == tmp_path / "--home-ana-proj--"
    (h,) = lines_of(path.read_bytes())
    assert h["type"] == "session" and h["version"] == 3 and h["cwd"] == "/home/ana/proj"
    assert h["parentSession"] == "/x/old.jsonl"
    assert uuid.UUID(h["id"]).version == 7
    assert path.name == session_file_name(h["timestamp"], h["id"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl", path.name)
    s = Session.open(path)
    assert s.tree.entries == [] and s.tree.active_leaf is None
    assert s.append({"type": "custom", "customType": "x"})["parentId"] is None


def test_discover_accepts_a_sessions_root_and_a_plain_folder(tmp_path):
    a = create_session(tmp_path / "root", "/a")
    b = create_session(tmp_path / "root", "/b/c")
    (tmp_path / "root" / "notes.txt").write_text("x")
    assert discover(tmp_path / "root") == sorted([a, b])
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "one.jsonl").write_bytes(two_users().data())
    assert discover(plain) == [plain / "one.jsonl"]
    with pytest.raises(SessionNotFound):
        discover(tmp_path / "missing")


def test_a_replaced_file_is_read_again_from_scratch(tmp_path):
    s = open_session("jsonl", two_users().data(), tmp_path)
    old = s.log
    other = Builder()
    for text in "vwxyz":
        other.user(text, id=f"n{text}")
    tmp = tmp_path / "new.jsonl"
    other.write(tmp)
    os.replace(tmp, s.storage.path)
    assert s.log is not old
    assert [e.id for e in s.tree.entries] == ["nv", "nw", "nx", "ny", "nz"]


def test_jsonl_storage_refuses_missing_files_and_folders_and_writes_outside_the_lock(tmp_path):
    with pytest.raises(SessionNotFound):
        JsonlStorage(tmp_path / "missing.jsonl")
    with pytest.raises(SessionError, match="not a file"):
        JsonlStorage(tmp_path)
    p = two_users().write(tmp_path / "s.jsonl")
    with pytest.raises(RuntimeError):
        JsonlStorage(p).append_bytes(b"x\n")
    assert p.read_bytes() == two_users().data()
