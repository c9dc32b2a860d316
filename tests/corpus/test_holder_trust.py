"""The CLI asks the server named beside a held index only if that file is this user's alone:
it, its folder and the server's process are the user's, and nobody else may read or write the
file. Another account that could write it would otherwise receive the commands' questions and
answer them with what it likes; the command refuses in one line and asks nobody."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from tests.corpus.test_index_in_use import HOLD
from webapp.cli import main
from webapp.corpus.holder import holder_path

NOBODY = 65534


@pytest.fixture
def held(tmp_path):
    """(the index, the PID of the process that holds it, a listening socket where server.json points)."""
    db = tmp_path / "idx" / "c.duckdb"
    db.parent.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    try:
        assert holder.stdout.readline() == "held\n"
        path = holder_path(db)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"pid": holder.pid, "url": f"http://127.0.0.1:{listener.getsockname()[1]}/", "token": "t"}, f)
        yield db, holder.pid, listener
    finally:
        listener.close()
        holder.stdin.close()
        holder.wait(60)


def asked(listener) -> bool:
    try:
        listener.accept()[0].close()
        return True
    except BlockingIOError:
        return False


def another_user(monkeypatch, path) -> None:
    """`path` belongs to another account: given to `nobody` when the test runs as root (as here and
    in CI); else the test's own uid is taken to be another."""
    if os.getuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    else:
        real = os.getuid()
        monkeypatch.setattr("webapp.core.private.os.getuid", lambda: real + 1)


@pytest.mark.parametrize("command", [["sql", "SELECT 1"], ["ls", "--index"], ["index"]])
def test_a_file_others_may_read_is_not_trusted(held, capsys, command, tmp_path):
    db, _, listener = held
    os.chmod(holder_path(db), 0o644)
    argv = [*command, *([str(tmp_path)] if command[0] != "sql" else []), "--db", str(db)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (f"session-tree: error: {holder_path(db)}: not trusted, so the server it names is not asked: "
                   "others may read or write it (mode 0644)\n")
    assert not asked(listener)


def test_a_file_of_another_user_is_not_trusted(held, capsys, monkeypatch):
    db, _, listener = held
    another_user(monkeypatch, holder_path(db))
    assert main(["sql", "SELECT 1", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"{holder_path(db)}: not trusted, so the server it names is not asked: it belongs to another user" in err
    assert err.count("\n") == 1 and not asked(listener)


def test_a_file_in_a_folder_of_another_user_is_not_trusted(held, capsys, monkeypatch):
    db, _, listener = held
    if os.getuid() == 0:
        os.chown(db.parent, NOBODY, NOBODY)
    else:  # (the folder alone is another's: the file stays the test's)
        real_stat, folder = os.stat, str(db.parent)
        monkeypatch.setattr("webapp.core.private.os.stat", lambda p, *a, **k: os.stat_result(
            (*real_stat(p)[:4], real_stat(p).st_uid + 1, *real_stat(p)[5:])) if str(p) == folder else real_stat(p))
    assert main(["sql", "SELECT 1", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"{db.parent}: not trusted, so the server it names is not asked: it belongs to another user" in err
    assert not asked(listener)


def test_a_server_process_of_another_user_is_not_trusted(held, capsys, monkeypatch):
    db, pid, listener = held
    monkeypatch.setattr("webapp.corpus.holder.process_owner", lambda p: NOBODY if p == pid else os.getuid())
    assert main(["sql", "SELECT 1", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"its process (PID {pid}) is run by another user (uid {NOBODY})\n") and not asked(listener)


def test_a_trusted_file_is_asked(held, capsys):
    """(the control: the same file, left as `serve` writes it, names the server the command asks)"""
    db, pid, listener = held
    listener.setblocking(True)
    hung_up = threading.Thread(target=lambda: listener.accept()[0].close())  # (a server that hangs up at once)
    hung_up.start()
    assert main(["sql", "SELECT 1", "--db", str(db)]) == 2
    hung_up.join()
    assert f"(PID {pid}), which holds the index, did not answer" in capsys.readouterr().err
