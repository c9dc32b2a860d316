"""What the app keeps of its own is the user's alone (webapp/core/private.py): the corpus index
(the text of every session) and its folder, the data folder's verdicts, and a folder an
earlier version left open is closed."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from webapp.cli import main
from webapp.corpus.db import Index, index_files
from webapp.corpus.sql import default_db_path

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def shared(tmp_path) -> Path:
    """A folder every account may enter and read, as a user's own folders often are."""
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o755)
    return folder


def test_index_makes_its_folder_0700_and_its_files_0600(shared, capsys):
    db = shared / "new" / "deeper" / "c.duckdb"
    assert main(["index", str(SAMPLES), "--db", str(db)]) == 0
    assert "7 sessions" in capsys.readouterr().out
    assert mode(shared / "new") == mode(db.parent) == 0o700  # every folder it made
    files = [p for p in db.parent.iterdir()]
    assert db in files and len(files) >= 2
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}


def test_a_build_under_way_keeps_every_file_of_the_index_0600(shared, monkeypatch):
    """The logs DuckDB and SQLite write while a build runs (in a folder others may enter)."""
    from webapp.corpus import db as corpus_db

    seen: dict[str, int] = {}
    real = corpus_db.Index._write_batch

    def look(self, batch, progress):
        real(self, batch, progress)
        seen.update({p.name: mode(p) for p in shared.iterdir()})

    monkeypatch.setattr(corpus_db.Index, "_write_batch", look)
    assert main(["index", str(SAMPLES), "--db", str(shared / "c.duckdb")]) == 0
    assert {"c.duckdb", "c.duckdb.wal", "c.duckdb.text.sqlite", "c.duckdb.text.sqlite-wal"} <= set(seen)
    assert seen == {name: 0o600 for name in seen}
    assert mode(shared) == 0o755  # a folder the user chose is left as it is


def test_the_default_cache_folder_is_made_private_and_an_open_one_closed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = default_db_path().parent
    folder.mkdir(parents=True)
    os.chmod(folder, 0o755)  # as an earlier version left it
    old = [default_db_path(), default_db_path().with_name("corpus.duckdb.text.sqlite")]
    index = Index()
    index.close()
    for part in old:
        os.chmod(part, 0o644)
    Index().close()  # opened again: what it finds open is closed
    assert mode(folder) == 0o700
    assert {p.name: mode(p) for p in index_files(default_db_path()) if p.exists()} == {p.name: 0o600 for p in old}


def test_a_verdict_kept_in_the_data_folder_is_the_users_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    session = tmp_path / "claude.jsonl"
    shutil.copy(FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl", session)
    from webapp.core.session import Session

    leaf = Session.open(session).tree.active_leaf
    assert main(["verdict", str(session), leaf, "better"]) == 0
    assert "kept in the data folder" in capsys.readouterr().out
    kept = list((tmp_path / "data" / "session-tree" / "verdicts").iterdir())
    assert len(kept) == 1 and mode(kept[0]) == 0o600
    assert mode(tmp_path / "data" / "session-tree") == mode(kept[0].parent) == 0o700
