"""A file rewritten in place is noticed and read again; appends are never mistaken for one."""

from __future__ import annotations

import os

import orjson

from tests.conftest import Builder
from webapp.core.session import FINGERPRINT_BYTES, Session


def rewrite_in_place(path, data: bytes) -> None:
    """What pi does when it migrates a file: the same inode, written over from the start."""
    ino = path.stat().st_ino
    with open(path, "r+b") as f:
        f.write(data)
        f.truncate()
    assert path.stat().st_ino == ino


def test_a_v1_file_migrated_in_place_is_read_again(tmp_path):
    old = Builder(version=None)
    for i in range(60):
        old.raw({"type": "message", "timestamp": f"2025-01-01T00:00:{i % 60:02d}.000Z",
                 "message": {"role": "user", "content": f"v1 message {i}"}})
    path = old.write(tmp_path / "s.jsonl")
    session = Session.open(path)
    assert session.log.version == 1 and len(session.tree.entries) == 60
    new = Builder(version=3)
    for i in range(60):
        new.user(f"v3 message {i} " + "padding " * 3, id=f"m{i}")
    rewrite_in_place(path, new.data())
    tree = session.tree
    assert session.log.version == 3
    assert [e.id for e in tree.entries] == [f"m{i}" for i in range(60)]
    assert not tree.bad_lines  # no phantom line made of the old bytes and the new ones
    assert session.rewrites == 1


def test_a_rewrite_that_keeps_the_size_is_noticed(tmp_path):
    b = Builder()
    b.user("aaaa", id="x1")
    path = b.write(tmp_path / "s.jsonl")
    session = Session.open(path)
    assert session.tree.entry("x1")
    rewrite_in_place(path, path.read_bytes().replace(b'"x1"', b'"y1"'))
    os.utime(path, ns=(1, 1))  # a new mtime, as any write gives
    assert "y1" in session.tree.by_id and "x1" not in session.tree.by_id
    assert session.rewrites == 1


def test_appends_small_and_large_and_a_completed_torn_line_are_not_rewrites(tmp_path):
    b = Builder()
    b.user("start", id="s")
    path = b.write(tmp_path / "s.jsonl")
    session = Session.open(path)
    session.tree
    for i in range(30):  # appends smaller and larger than the fingerprint window
        text = "x" * (10 if i % 2 else FINGERPRINT_BYTES * 3)
        line = orjson.dumps({"type": "message", "id": f"a{i}", "parentId": "s",
                             "timestamp": "2026-01-02T03:04:05.000Z",
                             "message": {"role": "user", "content": text}}) + b"\n"
        with open(path, "ab") as f:
            f.write(line[:7])  # torn first, completed on the next refresh
        session.tree
        with open(path, "ab") as f:
            f.write(line[7:])
        assert f"a{i}" in session.tree.by_id
    assert session.rewrites == 0
    assert not session.tree.bad_lines
    assert len(session.tree.entries) == 31
