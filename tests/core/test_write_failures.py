"""A write either happens whole or leaves the file as it was (#14 items 18 and 20): a JSON Lines
batch with one bad object writes nothing, and a write that fails part way (a full disk) is cut
back off under the lock, with a one-line error."""

from __future__ import annotations

import errno
import os

import orjson
import pytest

from tests.conftest import Builder
from tests.test_cli import run
from webapp.core.errors import SessionError
from webapp.core.session import Session


@pytest.fixture
def path(tmp_path):
    b = Builder()
    b.user("one", id="u1")
    b.assistant("a1", id="a1")
    return b.write(tmp_path / "s.jsonl")


def jsonl(*objs) -> bytes:
    return b"".join(orjson.dumps(o) + b"\n" for o in objs)


@pytest.mark.parametrize("bad, says", [
    ({"type": "message"}, "entry 2: a message entry needs message"),
    ({"type": "custom", "customType": "x", "id": "mine"}, "entry 2: do not set id"),
    ([1, 2], "entry 2: an entry must be a JSON object"),
    ({"type": "leaf", "targetId": "u1"}, "entry 2: a leaf entry moves the active leaf, so it must come last"),
])
def test_append_of_json_lines_is_all_or_nothing(path, capsys, monkeypatch, bad, says):
    before = path.read_bytes()
    stdin = jsonl({"type": "custom", "customType": "ok"}, bad, {"type": "custom", "customType": "ok"})
    code, out, err = run(capsys, "append", path, stdin=stdin, monkeypatch=monkeypatch)
    assert code == 2 and out == "" and says in err and err.count("\n") == 1
    assert path.read_bytes() == before


def test_a_valid_batch_is_one_chain_after_the_active_leaf(path, capsys, monkeypatch):
    stdin = jsonl(*({"type": "custom", "customType": "x", "data": i} for i in range(3)), {"type": "leaf", "targetId": "u1"})
    code, out, err = run(capsys, "append", path, stdin=stdin, monkeypatch=monkeypatch)
    assert code == 0, err
    ids = out.split()
    tree = Session.open(path).tree
    assert [tree.parent[i] for i in ids] == ["a1", *ids[:-1]]
    assert tree.active_leaf == "u1" and tree.all_problems() == []


def _disk_full_after_half(monkeypatch):
    """os.write in the storage writes half of what it is given, then fails as a full disk does."""
    real_write = os.write
    calls = []

    def write(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("webapp.core.storage.os.write", write)
    return calls


def test_a_write_that_fails_part_way_leaves_the_file_as_it_was(path, monkeypatch):
    before = path.read_bytes()
    session = Session.open(path)
    calls = _disk_full_after_half(monkeypatch)
    with pytest.raises(SessionError) as exc:
        session.append_message({"role": "user", "content": "x" * 20000})
    assert len(calls) == 2  # half was written before the failure
    message = str(exc.value)
    assert "\n" not in message and "No space left on device" in message and "as it was" in message
    assert path.read_bytes() == before
    monkeypatch.undo()
    entry = session.append_message({"role": "user", "content": "after"})
    assert session.tree.parent[entry["id"]] == "a1" and Session.open(path).tree.all_problems() == []


def test_the_cli_says_so_in_one_line(path, capsys, monkeypatch):
    before = path.read_bytes()
    _disk_full_after_half(monkeypatch)
    stdin = jsonl(*({"type": "custom", "customType": "x", "data": "y" * 5000} for _ in range(4)))
    code, out, err = run(capsys, "append", path, stdin=stdin, monkeypatch=monkeypatch)
    assert code == 2 and err.count("\n") == 1 and "No space left on device" in err
    assert path.read_bytes() == before


def test_a_file_that_cannot_be_opened_for_writing_is_refused_as_read_only(path, monkeypatch):
    from webapp.core.errors import ReadOnlySession

    before = path.read_bytes()
    real_open = os.open

    def open_(file, flags, *args, **kw):
        if flags & os.O_RDWR:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
        return real_open(file, flags, *args, **kw)

    monkeypatch.setattr("webapp.core.storage.os.open", open_)
    with pytest.raises(ReadOnlySession, match="cannot be written by this user"):
        Session.open(path).set_label("u1", "x")
    assert path.read_bytes() == before
