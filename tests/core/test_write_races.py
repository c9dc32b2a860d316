"""Writes that race with another program changing the file, and new files on a failing disk: no
write is reported done that is in no file, points at an entry that is gone, or is glued to a
torn line; a new file is whole or absent."""

from __future__ import annotations

import errno
import fcntl
import os

import orjson
import pytest

from tests.conftest import Builder
from tests.core.test_write_failures import path  # noqa: F401 (a fixture: a user message and its reply)
from tests.test_cli import run
from webapp.core import storage
from webapp.core.errors import InvalidWrite, SessionError
from webapp.core.session import Session, create_session


def lines(path):
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_a_write_waiting_for_the_lock_while_the_file_is_replaced_lands_in_the_new_file(path, monkeypatch):
    """`cp F F.new; mv F.new F` while a writer waits: its line must be in the file at the path."""
    session = Session.open(path)
    session.tree
    real_flock = fcntl.flock
    replaced = []

    def flock_after_a_replace(fd, op):
        if not replaced:
            replaced.append(True)
            copy = path.with_name("s.jsonl.new")
            copy.write_bytes(path.read_bytes())
            os.replace(copy, path)
        return real_flock(fd, op)

    monkeypatch.setattr(storage.fcntl, "flock", flock_after_a_replace)
    written = session.append_message({"role": "user", "content": "three"})
    assert replaced and lines(path)[-1]["id"] == written["id"]


def test_a_file_replaced_at_every_try_is_refused(path, monkeypatch):
    real_flock = fcntl.flock

    def always_replaced(fd, op):
        copy = path.with_name("s.jsonl.new")
        copy.write_bytes(path.read_bytes())
        os.replace(copy, path)
        return real_flock(fd, op)

    monkeypatch.setattr(storage.fcntl, "flock", always_replaced)
    before = path.read_bytes()
    with pytest.raises(SessionError, match="kept being replaced"):
        Session.open(path).append_message({"role": "user", "content": "x"})
    assert path.read_bytes() == before


def _rename_in_place(path, old: str, new: str) -> None:
    """A rewrite of the same size that renames an entry (the start and end 4 KiB unchanged)."""
    data = path.read_bytes()
    assert len(old) == len(new)
    path.write_bytes(data.replace(f'"id":"{old}"'.encode(), f'"id":"{new}"'.encode()))


@pytest.fixture
def long_path(tmp_path):
    """An entry `mid` with more than 4 KiB of lines on either side, as the fingerprint reads."""
    b = Builder()
    b.user("x" * 5000, id="u1")
    b.assistant("mid", id="mid")
    b.user("y" * 5000, id="u2")
    b.assistant("end", id="a2")
    return b.write(tmp_path / "long.jsonl")


def test_a_label_is_refused_when_its_target_was_renamed_in_place(long_path):
    session = Session.open(long_path)
    assert "mid" in session.tree.by_id
    _rename_in_place(long_path, "mid", "MID")
    before = long_path.read_bytes()
    with pytest.raises(InvalidWrite, match="'mid'"):
        session.append_entry({"type": "label", "targetId": "mid", "label": "x"})
    assert long_path.read_bytes() == before


def test_a_fork_is_refused_when_its_parent_was_renamed_in_place(long_path):
    session = Session.open(long_path)
    session.tree
    _rename_in_place(long_path, "mid", "MID")
    before = long_path.read_bytes()
    with pytest.raises(InvalidWrite, match="'mid'"):
        session.append_message({"role": "user", "content": "after mid"}, parent="mid")
    assert long_path.read_bytes() == before
    written = session.append_message({"role": "user", "content": "after MID"}, parent="MID")  # read again
    assert lines(long_path)[-1]["id"] == written["id"]


def test_a_write_after_a_torn_tail_starts_on_a_new_line(path, capsys, monkeypatch):
    with open(path, "ab") as f:
        f.write(b'{"type":"message","id":"torn","parentId":"a1","message":{"role":"us')
    code, out, err = run(capsys, "append", path, stdin=b'{"type":"custom","customType":"x"}', monkeypatch=monkeypatch)
    assert code == 0, err
    raw = path.read_bytes().splitlines()
    assert raw[-2].startswith(b'{"type":"message","id":"torn"') and orjson.loads(raw[-1])["id"] == out.strip()
    tree = Session.open(path).tree
    assert [b.line for b in tree.bad_lines] == [len(raw) - 1] and out.strip() in tree.by_id


TORN = b'{"type":"message","id":"torn","parentId":"a1","message":{"role":"us'


def test_a_tail_torn_while_a_writer_waits_for_the_lock_is_ended_before_its_line(path, monkeypatch):
    """The issue's race, in one process: a writer killed part way through its line while this one
    waited for the lock. What this writer read before the lock ended whole; the check that
    matters is the one made under the lock, on the file as it is then."""
    session = Session.open(path)
    assert session.tree.bad_lines == []  # read before: the file ends in a newline
    real_flock = fcntl.flock
    torn_meanwhile = []

    def flock_after_a_killed_writer(fd, op):
        if not torn_meanwhile:
            torn_meanwhile.append(True)
            with open(path, "ab") as f:
                f.write(TORN)
        return real_flock(fd, op)

    monkeypatch.setattr(storage.fcntl, "flock", flock_after_a_killed_writer)
    written = session.append_message({"role": "user", "content": "after the torn line"})
    raw = path.read_bytes().split(b"\n")
    assert torn_meanwhile and raw[-3:] == [TORN, orjson.dumps(written), b""]
    tree = Session.open(path).tree
    assert [(b.line, b.raw, b.torn) for b in tree.bad_lines] == [(4, TORN.decode(), False)]
    assert tree.entry(written["id"]).line == 5 and tree.entry(written["id"]).message["content"] == "after the torn line"


def test_the_torn_check_reads_the_locked_file_not_the_path(path):
    """A file replaced at the path after the lock was taken (by a program that does not take it,
    here with its torn tail mended): the line goes to the locked file, so whether a newline must
    come first is asked of that file, not of the one now at the path."""
    with open(path, "ab") as f:
        f.write(TORN)
    store = storage.JsonlStorage(path)
    with open(path, "rb") as locked_file:  # (kept open: the locked file is unlinked by the replace)
        with store.locked():
            mended = path.with_name("s.jsonl.new")
            mended.write_bytes(path.read_bytes()[:-len(TORN)])
            os.replace(mended, path)
            store.append_lines([b'{"type":"custom","customType":"x","id":"n1","parentId":"a1"}'])
        data = locked_file.read()
    assert data.endswith(TORN + b'\n{"type":"custom","customType":"x","id":"n1","parentId":"a1"}\n')


# -- new files: whole, or nothing and a clear error -------------------------------------------------


def _full_disk(monkeypatch):
    real_write = os.write

    def write(fd, data):
        if os.fstat(fd).st_size == 0 and not os.isatty(fd):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(storage.os, "write", write)


def test_new_on_a_full_disk_leaves_no_file(tmp_path, monkeypatch):
    _full_disk(monkeypatch)
    with pytest.raises(SessionError, match="No space left on device"):
        create_session(tmp_path, "/proj")
    assert list(tmp_path.rglob("*")) == []


def test_new_on_a_read_only_file_system_says_so(tmp_path, monkeypatch):
    (tmp_path / "--proj--").mkdir()
    real_open = os.open

    def read_only(path, flags, *args):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real_open(path, flags, *args)

    monkeypatch.setattr(storage.os, "open", read_only)
    with pytest.raises(SessionError, match="cannot create .*Read-only file system"):
        create_session(tmp_path, "/proj")
    assert list((tmp_path / "--proj--").iterdir()) == []


@pytest.mark.parametrize("argv", [
    lambda p, d: ["new", d, "--cwd", "/proj"],
    lambda p, d: ["fork", p, "--from", "a1", "--new-file"],
    lambda p, d: ["export", p, "-o", d / "out.html"],
])
def test_commands_that_make_a_file_fail_cleanly_on_a_full_disk(path, tmp_path, capsys, monkeypatch, argv):
    before = set(tmp_path.rglob("*"))
    _full_disk(monkeypatch)
    code, out, err = run(capsys, *argv(path, tmp_path), monkeypatch=monkeypatch)
    assert code == 2 and "No space left on device" in err and "Traceback" not in err, err
    assert set(tmp_path.rglob("*")) == before


def test_continue_in_a_new_session_on_a_full_disk_is_a_clear_error(tmp_path, monkeypatch):
    from webapp.web.app import create_app

    path = tmp_path / "v2.jsonl"  # a pi v2 file: read-only, continued in a new file
    path.write_bytes(orjson.dumps({"type": "session", "version": 2, "id": "s2", "timestamp": "2026-01-02T03:04:05Z",
                                   "cwd": "/p"}) + b"\n" + orjson.dumps(
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-02T03:04:06Z",
         "message": {"role": "user", "content": "hi"}}) + b"\n")
    app = create_app(tmp_path)
    client = app.test_client()
    _full_disk(monkeypatch)
    r = client.post("/s/v2.jsonl/-/continue-new", data={"node": "m1", "csrf_token": app.config["CSRF_TOKEN"]},
                    headers={"Origin": "http://localhost"})
    assert r.status_code == 409 and "No space left on device" in r.get_data(as_text=True)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["v2.jsonl"]
