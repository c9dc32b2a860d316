"""`session-tree sql` and `ls --index` while a server holds the index (DuckDB lets no other
process read it then): the server that wrote where it answers beside the index answers, and the
command prints what it prints on an index nobody holds."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest

from tests.serve_process import start_serve
from webapp.cli import main
from webapp.corpus.holder import holder_path

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
QUERIES = [
    ["SELECT agent, count(*) AS n, sum(entries) AS entries FROM sessions GROUP BY agent"],
    ["SELECT file, created, cost FROM sessions ORDER BY file", "--csv"],
    ["SELECT leaf_id, status, time FROM branches ORDER BY file, leaf_id", "--json"],
    ["SELECT entry_id, role FROM entries ORDER BY file, line", "--limit", "3"],
    ["SELECT chr(27) || '[2J' || chr(127) || chr(155) || chr(7) || 'x' AS c", "--json"],  # controls in an answer
]
RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture
def server(tmp_path):
    """(the index, the server's address, its process) of a real `session-tree serve` on a copy
    of the samples, with its first index built."""
    root, db = tmp_path / "sessions", tmp_path / "c.duckdb"
    shutil.copytree(SAMPLES, root)
    served = start_serve([root, "--db", db])
    try:
        # (a page answers however long a loaded machine takes: what is waited on is the state the
        # page says, for as long as the suite's own limit on a test)
        asked = urllib.request.Request(served.url, headers=served.headers())
        while "indexed so far" in urllib.request.urlopen(asked, timeout=120).read().decode():
            time.sleep(0.1)  # (the page says so while the first index builds)
        yield root, db, served.url, served.proc
    finally:
        served.stop()


def test_sql_on_a_served_index_is_answered_by_that_server_as_it_is_when_nobody_holds_it(server, capsys):
    _, db, url, proc = server
    holder = json.loads(holder_path(db).read_text())
    assert (holder["pid"], holder["url"]) == (proc.pid, url)
    assert oct(holder_path(db).stat().st_mode & 0o777) == "0o600"  # (its token is the user's alone)
    served = []
    for query in QUERIES:
        assert main(["sql", *query, "--db", str(db)]) == 0
        served.append(capsys.readouterr())
    assert main(["sql", "DROP TABLE sessions", "--db", str(db)]) == 2
    assert "only SELECT queries are run here" in capsys.readouterr().err
    proc.send_signal(signal.SIGTERM)  # a server stopped takes its file away
    assert proc.wait(60) == 0
    assert not holder_path(db).exists()
    for query, got in zip(QUERIES, served):
        assert main(["sql", *query, "--db", str(db)]) == 0
        assert capsys.readouterr() == got, query  # what the server answered is what is read alone
    assert "pi\t7\t" in served[0].out and served[3].err == "session-tree: only the first 3 rows (--limit)\n"
    # JSON escapes, not the bytes a terminal would obey; the same value read back
    assert not RAW_CONTROLS.search(served[4].out) and json.loads(served[4].out) == [{"c": "\x1b[2J\x7f\x9b\x07x"}]


def test_the_servers_sql_answers_only_with_the_token_it_wrote(server):
    _, db, url, _ = server
    ask = f"{url}-/corpus/sql?sql=SELECT+1&how=text&limit=5&seconds=5"
    token = json.loads(holder_path(db).read_text())["token"]
    cookie = f"session-tree-{url.rstrip('/').rpartition(':')[2]}="
    for headers in ({}, {"Authorization": f"token not-{token}"}, {"X-Session-Tree-Token": token},
                    {"Cookie": cookie + token}):  # (a browser's cookie is not the CLI's token either)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(ask, headers=headers), timeout=60)
        assert refused.value.code == 401
        assert "only with the token it wrote beside its index" in json.load(refused.value)["error"]
    with urllib.request.urlopen(urllib.request.Request(ask, headers={"Authorization": f"token {token}"}),
                                timeout=60) as got:
        assert json.load(got) == {"output": "1\n1\n", "truncated": False, "over_bytes": False}


def test_ls_index_on_a_served_index_lists_what_ls_lists_once_the_server_has_read_what_changed(server, capsys,
                                                                                                monkeypatch):
    root, db, _, _ = server
    grown = next(root.rglob("*.jsonl"))
    with grown.open("a") as f:  # after the server's first index: its refresh reads it
        f.write('{"type":"session_info","id":"late-name","parentId":null,"timestamp":"2026-03-01T00:00:00.000Z",'
                '"name":"Named after the server started"}\n')
    monkeypatch.chdir(root.parent)
    printed = {}
    for how in (["--index", "--db", str(db)], []):
        for out in ([], ["--json"]):
            assert main(["ls", root.name, *how, *out]) == 0
            printed[bool(how), bool(out)] = capsys.readouterr().out
    assert "Named after the server started" in printed[True, False]
    assert sorted(orjson.loads(printed[True, True]), key=str) == sorted(orjson.loads(printed[False, True]), key=str)
    assert sorted(printed[True, False].splitlines()) == sorted(printed[False, False].splitlines())


def test_index_and_ls_index_of_a_folder_outside_the_servers_are_refused_in_one_line(server, capsys):
    root, db, _, _ = server
    elsewhere = root.parent / "elsewhere"
    elsewhere.mkdir()
    for command in (["ls", str(elsewhere), "--index"], ["index", str(elsewhere)]):
        assert main([*command, "--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert err.endswith(f"indexes {root}, and {elsewhere} is not in it: give this command an index of its own "
                            "with --db PATH\n"), command


def test_index_of_a_served_index_is_the_servers_refresh_of_what_changed(server, capsys):
    root, db, url, proc = server
    grown, gone = sorted(root.rglob("*.jsonl"))[:2]
    with grown.open("a") as f:
        f.write('{"type":"custom","id":"late-1","parentId":null,"timestamp":"2026-03-01T00:00:00.000Z"}\n')
    gone.unlink()
    (root / "new.jsonl").write_bytes(b'{"type":"session","version":3,"id":"new-1","timestamp":"2026-03-01T00:00:00.000Z"}\n')
    assert main(["index", str(root), "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    assert err == f"session-tree: the server at {url} (PID {proc.pid}) holds this index; it brings it up to date\n"
    assert re.fullmatch(rf"session-tree: 7 sessions in {re.escape(str(db))}; read 2 \(1 grown\), removed 1, "
                        r"failed 0, in \d+\.\d s\n", out), out


def test_a_file_left_by_another_process_is_not_asked(tmp_path, capsys, monkeypatch):
    from tests.corpus.test_index_in_use import HOLD

    db = tmp_path / "c.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        # (a server that was killed left its file; the index is held by a process that is no server)
        holder_path(db).write_text(json.dumps({"pid": holder.pid + 1, "url": "http://127.0.0.1:9/", "token": "t"}))
        assert main(["sql", "SELECT 1", "--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert f"in use by another process (PID {holder.pid})" in err and "wait for it to end, or stop it" in err
    finally:
        holder.stdin.close()
        holder.wait(60)
    assert os.path.exists(holder_path(db))  # (not ours to remove)


def test_a_server_that_cannot_write_beside_its_index_serves_all_the_same(tmp_path, capsys):
    from webapp.corpus.holder import announced

    db = tmp_path / "c.duckdb"
    holder_path(db).mkdir()  # (where the file would go: a folder, which no open() replaces)
    with announced(db, "http://127.0.0.1:1/", "t"):
        ran = True
    assert ran and holder_path(db).is_dir()
    assert "c.duckdb.server.json: not written" in capsys.readouterr().err


def test_a_second_server_on_a_held_index_shows_that_index_never_the_files(server, tmp_path):
    # DuckDB lets no other process open the index a server holds: a second server asks the first
    # for its rows (its list, search, figures and SQL box), and reads no session file
    from webapp.web.app import create_app

    root, db, _, _ = server
    first = {p.name for p in root.rglob("*.jsonl")}
    app = create_app(root, CORPUS_DB=db, CSRF_TOKEN="t")
    client = app.test_client()
    listed = client.get("/").get_data(as_text=True)
    assert "No corpus index" not in listed and "7 sessions" in listed
    for path in root.rglob("*.jsonl"):  # gone from the folder, still in the first server's index
        path.unlink()
    assert not any(root.rglob("*.jsonl"))
    page = client.get("/").get_data(as_text=True)
    rows = page.split('<section class="cwd-group">')[1:]
    assert len(rows) >= 2 and rows == listed.split('<section class="cwd-group">')[1:]
    hits = client.get("/?q=invoice", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "Entries mentioning" in hits and 'class="hit"' in hits
    corpus = client.post("/corpus", data={"csrf_token": "t", "sql": "SELECT count(*) AS n FROM sessions"}).text
    assert "7 sessions" in corpus and "<td class=\"num\">7</td>" in corpus
    refused = client.post("/corpus", data={"csrf_token": "t", "sql": "DROP TABLE sessions"}).text
    assert "only SELECT queries are run here" in refused
    assert len(first) == 7


def test_search_on_a_served_index_is_answered_by_that_server_as_it_is_when_nobody_holds_it(server, capsys):
    root, db, _, proc = server
    assert holder_path(db).exists()  # (so the index is the server's: search asks it)
    assert main(["search", "bleach", str(root), "--db", str(db), "--limit", "2"]) == 0
    served = capsys.readouterr()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0
    assert main(["search", "bleach", str(root), "--db", str(db), "--limit", "2"]) == 0
    assert capsys.readouterr() == served
    assert served.out.count(f"{root}/") == 2 and "bleach" in served.out.lower()
    assert served.err == "session-tree: the first 2 hits shown; more follow (--limit)\n"
