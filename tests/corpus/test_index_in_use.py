"""An index another process writes (DuckDB lets one process write a database, or several read
it): every command and the index page say which process holds it and what to do, in one line,
and a second server can be given an index of its own."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import pytest

from webapp.cli import main
from webapp.corpus.db import Index
from webapp.corpus.sql import default_db_path
from webapp.web.app import create_app
from tests.corpus.test_index_page import write_sessions

HOLD = "import sys; from webapp.corpus.db import Index; held = Index(sys.argv[1]); print('held', flush=True); sys.stdin.read()"


@pytest.fixture
def held(tmp_path, monkeypatch):
    """(the index's path, the PID of the process that holds it open for writing): the default
    index, in a cache folder of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    db = default_db_path()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        yield db, holder.pid
    finally:
        holder.stdin.close()
        holder.wait(60)


@pytest.mark.parametrize("command, says", [
    (["index"], "one process at a time may write an index: stop that one, or give this one its own with --db PATH"),
    (["ls", "--index"], "one process at a time may write an index"),
    (["sql", "SELECT count(*) FROM sessions"], "nothing else may read it meanwhile: wait for it to end, or stop it"),
])
def test_a_command_on_an_index_another_process_writes_says_which_in_one_line(held, tmp_path, capsys, command, says):
    db, pid = held
    write_sessions(tmp_path / "root", 1)
    argv = [*command, *([str(tmp_path / "root")] if command[0] != "sql" else []), "--db", str(db)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"session-tree: error: {db}: in use by another process (PID {pid}); ")
    assert says in err and err.count("\n") == 1 and err.endswith("\n")


def test_the_index_page_of_a_second_server_says_which_process_holds_the_index(held, tmp_path):
    db, pid = held
    write_sessions(tmp_path / "root", 2)
    page = create_app(tmp_path / "root", CORPUS_DB=db).test_client().get("/").text
    assert "2 sessions" in page  # read from the files
    assert f"No corpus index ({db}: in use by another process (PID {pid}); one process at a time" in page


def test_serve_db_gives_a_second_server_an_index_of_its_own(held, tmp_path, monkeypatch):
    import webapp.web.app as web_app

    write_sessions(tmp_path / "root", 2)
    own = tmp_path / "own.duckdb"
    apps = []
    # (while it serves: its first build ended; a server that stops ends its build)
    monkeypatch.setattr(web_app.Flask, "run", lambda app, **kw: apps.append(app) or app.extensions["corpus"].join())
    assert main(["serve", str(tmp_path / "root"), "--db", str(own), "--port", "5999"]) == 0
    app = apps[0]
    page = app.test_client().get("/").text
    assert "2 sessions" in page and "No corpus index" not in page
    assert own.is_file()
    app.extensions["corpus"].index.close()


def test_a_database_that_fails_during_a_build_is_said_in_one_line(tmp_path, capsys, monkeypatch):
    def full(self, roots, on_progress=None):
        raise duckdb.IOException("IO Error: Could not write file: No space left on device\nmore")

    write_sessions(tmp_path / "root", 1)
    monkeypatch.setattr(Index, "build", full)
    assert main(["index", str(tmp_path / "root"), "--db", str(tmp_path / "c.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err == (f"session-tree: error: {tmp_path / 'c.duckdb'}: the index could not be written "
                   "(IO Error: Could not write file: No space left on device)\n")


def test_an_index_that_cannot_be_written_is_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    """A full disk fails the text index's first write (SQLite: "disk I/O error"): `index` said it
    with a traceback, and a server started on it went without saying why."""
    import apsw

    from webapp.corpus import db as corpus_db

    def full(_path):
        raise apsw.IOError("disk I/O error")

    monkeypatch.setattr(corpus_db, "text_connect", full)
    root = tmp_path / "root"
    write_sessions(root, 1)
    assert main(["index", str(root), "--db", str(tmp_path / "c.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the index cannot be written here (disk I/O error)" in err
    page = create_app(root, CORPUS_DB=tmp_path / "web.duckdb").test_client().get("/").text
    assert "the index cannot be written here (disk I/O error)" in page


@pytest.mark.parametrize("cut", ["half", "empty"])
def test_an_index_a_full_disk_cut_short_is_set_aside_and_built_anew_on_the_next_start(tmp_path, capsys, cut):
    """A build stopped by a full disk can leave the database cut short (or empty): the next
    `index`, or a server's start, said only that it could not be opened, every time."""
    root, db = tmp_path / "root", tmp_path / "c.duckdb"
    write_sessions(root, 3)
    assert main(["index", str(root), "--db", str(db)]) == 0
    os.truncate(db, db.stat().st_size // 2 if cut == "half" else 0)
    capsys.readouterr()
    assert main(["index", str(root), "--db", str(db)]) == 0
    got = capsys.readouterr()
    assert got.err.count("\n") == 1 and "the index was damaged" in got.err and "c.duckdb.damaged" in got.err
    assert "3 sessions in" in got.out and (tmp_path / "c.duckdb.damaged").exists()
    os.truncate(db, db.stat().st_size // 2 if cut == "half" else 0)
    page = create_app(root, CORPUS_DB=db).test_client().get("/").text
    assert "cannot be" not in page and "3 sessions" in page
