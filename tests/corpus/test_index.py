"""The embedded index: every fixture's rows, and a build kept up to date file by file."""

from __future__ import annotations

import shutil
import sqlite3

import duckdb
import orjson
import pytest

import webapp.corpus.db as db
import webapp.corpus.text_writes as text_writes
import webapp.corpus.workers as workers
from tests.conftest import FIXTURES
from webapp.corpus.db import Index
from webapp.corpus.discovery import corpus_files
from webapp.corpus.extract import COLUMNS, extract
from webapp.core.session import Session, user_message

TABLES = tuple(COLUMNS)
BY_FILE = "SELECT f.file, count(*) FROM docs JOIN doc_files f ON f.id = docs.file_id GROUP BY f.file"


def rows(index: Index, table: str, file: str | None = None) -> list[tuple]:
    where = "WHERE file = ?" if file else ""
    order = ", ".join(COLUMNS[table])
    return index.cursor().execute(f"SELECT * FROM {table} {where} ORDER BY {order}",
                                  [file] if file else []).fetchall()


def fresh(tmp_path, roots, name="fresh.duckdb") -> Index:
    index = Index(tmp_path / name)
    index.build(roots)
    return index


def test_a_root_holding_the_agents_folders_is_searched_as_the_home_folder(home):
    root, files = home
    found = corpus_files(root)
    assert sorted(found) == sorted(files.values())  # Codex's YYYY/MM/DD found, hidden folders entered
    assert sorted(corpus_files(root / ".codex")) == sorted(p for p in files.values() if ".codex" in p.parts)


def test_every_file_gives_its_rows_and_a_second_build_reads_nothing(home, tmp_path):
    root, files = home
    index = Index(tmp_path / "c.duckdb")
    first = index.build([root])
    assert (first.read, first.failed) == (len(files), 0)
    for name, path in files.items():
        got = extract(path)
        for t in TABLES:
            have, want = rows(index, t, str(path)), got.rows[t]
            if t == "sessions":  # its conversation, decided over the whole table (joins.py): each file is alone here
                assert [r[-2:] for r in have] == [(str(path), None)], name
                have, want = [r[:-2] for r in have], [r[:-2] for r in want]
            assert sorted(have, key=repr) == sorted(want, key=repr), (name, t)
    again = index.build([root])
    assert (again.total, again.read) == (0, 0)
    session = Session.open(files["pi-mono_large-session.jsonl"])
    sessions = dict(index.cursor().execute("SELECT file, entries FROM sessions").fetchall())
    assert sessions[str(files["pi-mono_large-session.jsonl"])] == len(session.tree.entries)
    assert len(rows(index, "branches", str(files["pi-mono_large-session.jsonl"]))) == len(session.tree.leaves())


def test_a_grown_file_is_read_from_where_it_stopped_and_gives_the_rows_of_a_fresh_build(home, tmp_path):
    root, files = home
    path = files["agent-sessions_pi_small.jsonl"]  # pi v3: the one format we append to
    index = Index(tmp_path / "c.duckdb")
    index.build([root])
    before = index.cursor().execute("SELECT count(*) FROM entries WHERE file = ?", [str(path)]).fetchone()[0]
    session = Session.open(path)
    session.append_message(user_message("a zanzibar question appended later"))
    seen = []
    p = index.build([root], extract_fn=lambda f, n: seen.append((f, n)) or extract(f, n))
    assert (p.read, p.grown) == (1, 1)
    assert seen[0][0] == str(path) and seen[0][1] > 0  # not from the first line
    after = index.cursor().execute("SELECT count(*) FROM entries WHERE file = ?", [str(path)]).fetchone()[0]
    assert after == before + 1
    other = fresh(tmp_path, [root])
    for t in TABLES:
        assert sorted(rows(index, t), key=repr) == sorted(rows(other, t), key=repr), t
    hits = index.text.execute("SELECT count(*) FROM body WHERE body MATCH 'zanzibar'").fetchone()[0]
    assert hits == 1


def test_a_rewritten_file_is_read_again_and_a_deleted_one_removed(home, tmp_path):
    root, files = home
    index = Index(tmp_path / "c.duckdb")
    index.build([root])
    target = files["pi-mono_large-session.jsonl"]
    shutil.copy(files["agent-sessions_pi_small.jsonl"], target)  # smaller: not a growth
    gone = files["agent-sessions_codex_small.jsonl"]
    gone.unlink()
    p = index.build([root])
    assert (p.read, p.grown, p.removed) == (1, 0, 1)
    other = fresh(tmp_path, [root])
    for t in TABLES:
        assert sorted(rows(index, t), key=repr) == sorted(rows(other, t), key=repr), t
    assert rows(index, "sessions", str(gone)) == []
    left = index.text.execute("SELECT count(*) FROM docs JOIN doc_files f ON f.id = docs.file_id WHERE f.file = ?",
                              (str(gone),)).fetchone()[0]
    assert left == 0


def test_a_same_size_rewrite_is_not_taken_for_an_unchanged_file(home, tmp_path):
    root, files = home
    path = files["agent-sessions_pi_small.jsonl"]
    index = Index(tmp_path / "c.duckdb")
    index.build([root])
    data = path.read_bytes()
    path.write_bytes(data.replace(b"a", b"b", 1))
    assert index.build([root]).read == 1


def test_a_damaged_file_is_indexed_with_its_bad_lines_and_a_failing_one_listed(home, tmp_path):
    root, files = home
    torn = files["pi-mono_large-session.jsonl"]
    torn.write_bytes(torn.read_bytes()[:3000] + b"\n\xff\xfe not json\n")
    index = Index(tmp_path / "c.duckdb")
    broken = str(files["agent-sessions_claude_small.jsonl"])

    def extract_or_fail(file, line):
        if file == broken:
            raise ValueError("this file cannot be read")
        return extract(file, line)

    p = index.build([root], extract_fn=extract_or_fail)
    assert p.failed == 1 and p.read == len(files)
    failed = index.cursor().execute("SELECT file, error FROM files WHERE error IS NOT NULL").fetchall()
    assert failed == [(broken, "ValueError: this file cannot be read")]
    bad = index.cursor().execute("SELECT bad_lines FROM sessions WHERE file = ?", [str(torn)]).fetchone()[0]
    assert bad >= 1
    assert index.cursor().execute("SELECT count(*) FROM sessions").fetchone()[0] == len(files) - 1
    assert index.build([root]).read == 1  # the failed file is tried again, the rest are unchanged


def test_the_index_command_prints_its_figures_and_sql_answers(home, tmp_path, capsys):
    from webapp.cli import main

    root, files = home
    db = tmp_path / "c.duckdb"
    assert main(["index", str(root), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"{len(files)} sessions in {db}" in out
    assert main(["sql", "SELECT agent, count(*) AS n FROM sessions GROUP BY agent ORDER BY agent",
                 "--db", str(db), "--json"]) == 0
    got = orjson.loads(capsys.readouterr().out)
    assert got == [{"agent": "claude-code", "n": 3}, {"agent": "codex", "n": 1}, {"agent": "pi", "n": 3}]
    assert main(["sql", "SELECT agent FROM sessions ORDER BY agent LIMIT 2", "--db", str(db), "--csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["agent", "claude-code", "claude-code"]


@pytest.mark.parametrize("query, timeout, says", [
    ("DELETE FROM sessions", "0.5", "only SELECT"),
    ("DROP TABLE sessions", "0.5", "only SELECT"),
    ("SELECT 1; DELETE FROM sessions", "0.5", "one statement"),
    ("SELECT * FROM read_csv('/etc/passwd')", "0.5", "read_csv() is not allowed"),
    ("SELECT count(*) FROM range(100000000000) a, range(10) b", "0.5", "stopped after"),
    ("ATTACH '/tmp/other.duckdb' AS other", "0.5", "only SELECT"),
    ("COPY sessions TO '/tmp/sessions.csv'", "0.5", "only SELECT"),
    ("INSTALL httpfs", "0.5", "only SELECT"),
    ("LOAD httpfs", "0.5", "only SELECT"),
    ("PRAGMA threads = 1", "0.5", "only SELECT"),
    ("SET enable_external_access = true", "0.5", "only SELECT"),
    # a time limit it cannot keep (inf overflowed the timer with a traceback)
    ("SELECT 1", "0", "argument --timeout: must be a number of seconds above 0, not '0'"),
    ("SELECT 1", "-1", "argument --timeout: must be a number of seconds above 0, not '-1'"),
    ("SELECT 1", "nan", "argument --timeout: must be a number of seconds above 0, not 'nan'"),
    ("SELECT 1", "inf", "argument --timeout: must be a number of seconds above 0, not 'inf'"),
    ("SELECT 1", "1e308", "the time limit must be above 0 and at most 86,400 seconds, not 1e+308"),
])
def test_sql_refuses_writes_other_files_long_queries_and_time_limits_it_cannot_keep(home, tmp_path, capsys, query,
                                                                                    timeout, says):
    from webapp.cli import main

    root, _ = home
    db = tmp_path / "c.duckdb"
    main(["index", str(root), "--db", str(db)])
    capsys.readouterr()
    try:
        code = main(["sql", query, "--db", str(db), f"--timeout={timeout}"])
    except SystemExit as exc:  # (argparse's refusal)
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["sql", "SELECT count(*) FROM sessions", "--db", str(db)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "7"


def test_ls_of_a_root_holding_the_agents_folders_lists_their_sessions(home, capsys):
    from webapp.cli import main

    root, files = home
    assert main(["ls", str(root), "--json"]) == 0
    listed = orjson.loads(capsys.readouterr().out)
    assert sorted(r["path"] for r in listed) == sorted(str(p) for p in files.values())


def test_ls_index_lists_the_rows_of_ls_from_the_index(home, tmp_path, capsys, monkeypatch):
    # A script moved from `ls --json` to `ls --index --json` reads the same rows: the paths as
    # ROOT was typed, the times written alike, the format's version.
    from webapp.cli import main

    root, files = home
    monkeypatch.chdir(root.parent)
    typed = root.name  # a relative ROOT
    listings = {}
    for how in ([], ["--index", "--db", str(tmp_path / "c.duckdb")]):
        assert main(["ls", typed, *how, "--json"]) == 0
        listings[bool(how)] = {r["path"]: r for r in orjson.loads(capsys.readouterr().out)}
    plain, indexed = listings[False], listings[True]
    assert plain and indexed == plain
    assert all(path.startswith(typed + "/") for path in indexed)
    assert {r["version"] for r in indexed.values() if r["format"].startswith("pi-v")} == {1, 3}
    long = files["pi-mono_before-compaction.jsonl"]  # a first message longer than a listing holds
    assert len(plain[f"{typed}/{long.relative_to(root)}"]["firstMessage"]) == 500


def test_ls_index_prints_the_lines_of_ls_and_a_name_with_a_newline_on_its_own_line(home, tmp_path, capsys):
    from webapp.cli import main

    root, files = home
    odd = root / ".pi/agent/sessions/--odd--/odd.jsonl"
    odd.parent.mkdir(parents=True)
    odd.write_bytes(b'{"type":"session","version":3,"id":"odd-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/odd"}\n'
                    b'{"type":"session_info","id":"n1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
                    b'"name":"two\\nlines"}\n')
    printed = {}
    for how in ([], ["--index", "--db", str(tmp_path / "c.duckdb")]):
        assert main(["ls", str(root), *how]) == 0
        printed[bool(how)] = capsys.readouterr().out
    blocks = {plain: sorted(b.strip() for b in ("\n" + text).split("\n" + str(root))[1:])
              for plain, text in printed.items()}
    assert blocks[True] == blocks[False] and len(blocks[True]) == len(files) + 1
    assert "\n    two\\nlines\n" in printed[True]


def docs(index: Index) -> list[tuple]:
    """The text index's rows (ids aside: they are given in the order rows are written), each with
    its words where they are (the index keeps no copy of the text: FTS5's own list of them)."""
    con = index.text
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.body_words USING fts5vocab(main, body, instance)")
    words: dict[int, list[tuple[int, str]]] = {}
    for term, doc, offset in con.execute("SELECT term, doc, offset FROM temp.body_words"):
        words.setdefault(doc, []).append((offset, term))
    return sorted((*r[1:], tuple(sorted(words.get(r[0], ())))) for r in con.execute(
        "SELECT docs.id, f.file, entry_id, leaf_id, line, type, role, model, time, f.agent, f.project, tool_output "
        "FROM docs JOIN doc_files f ON f.id = docs.file_id"))


def test_a_big_build_made_by_worker_processes_gives_the_rows_of_one_read_here(home, tmp_path, monkeypatch):
    # A big build: the tables by the SQL projection in worker processes first, then the text and
    # the audits; every row of every table and of the text index is the file-by-file build's.
    root, files = home
    here = fresh(tmp_path, [root], "here.duckdb")
    monkeypatch.setattr("webapp.corpus.db.POOL_BYTES", 0)  # as if the corpus were big
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    spawned = []
    real = workers.ProcessPoolExecutor
    monkeypatch.setattr(workers, "ProcessPoolExecutor", lambda *a, **k: spawned.append(a) or real(*a, **k))
    seen = []
    pooled = Index(tmp_path / "pooled.duckdb")
    progress = pooled.build([root], on_progress=lambda p: seen.append((p.tables_ready is not None, p.later_done,
                                                                        p.audits_done)))
    assert spawned and spawned[0][0] == 2  # a worker per core
    summarized = here.cursor().execute("SELECT count(DISTINCT file) FROM summaries").fetchone()[0]
    assert (progress.later_total, progress.audits_total) == (len(files), summarized) and summarized >= 3
    assert seen[0] == (False, 0, 0) and (True, len(files), summarized) in seen  # the tables first, then text and audits
    for t in TABLES:
        assert rows(pooled, t) == rows(here, t), t
    assert docs(pooled) == docs(here)
    assert pooled.cursor().execute("SELECT count(*) FROM later").fetchone() == (0,)


def test_a_worker_frees_the_cycles_of_a_batch_once_it_is_made():
    # A worker's collector runs only once a batch is made (`workers._batch`), never while its trees
    # are built: the cycles of a batch's trees must still go then, or a worker grows with every
    # batch. (A worker's settings are set here, in this process, and put back after.)
    import gc
    import weakref

    class Node:
        pass

    left: list = []

    def make(n):
        assert not gc.isenabled()  # (no collection while a batch is made)
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle: reference counting alone never frees it
        left.append(weakref.ref(a))
        return n + 1

    enabled = gc.isenabled()
    try:
        workers._worker_start(0)
        assert workers._batch(make, 1) == 2
        assert left[0]() is None
        assert workers._batch(make, 2) == 3 and left[1]() is None  # (and after the next)
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def test_the_workers_are_handed_batches_ahead_bounded_in_bytes():
    # While this process writes a batch the workers must have files to go on with, but the rows
    # of big files waiting to be written must not pile up here.
    from concurrent.futures import Future

    handed = []

    class Pool:
        _max_workers = 2  # (as a ProcessPoolExecutor of two processes tells its size)

        def submit(self, fn, *args):  # (workers._batch, the function, its batch)
            handed.append(args[-1])
            done = Future()
            done.set_result(fn(*args))
            return done

    jobs = list(range(10 * workers.BATCH_FILES))  # files of 1,000 bytes
    groups = workers.batches(jobs, lambda j: 1000)
    assert [len(g) for g in groups] == [workers.BATCH_FILES] * 10
    got = workers.in_workers(Pool(), groups, len, lambda g: g, lambda j: 1000)
    assert next(got) == (groups[0], workers.BATCH_FILES)
    assert len(handed) == 2 * workers.AHEAD_PER_WORKER + 1  # the first one given, and one behind it for each worker
    assert [g for g, _ in got] == groups[1:]  # in order, each once
    assert handed == groups

    big = [0, 10**9, 1, 2]  # a file bigger than a batch is a batch of its own, and holds the next ones back
    sizes = lambda j: j if j == 10**9 else 1000  # noqa: E731
    groups = workers.batches(big, sizes)
    assert groups == [[0], [10**9], [1, 2]]
    handed.clear()
    got = workers.in_workers(Pool(), groups, len, lambda g: g, sizes)
    next(got)
    assert handed == [[0], [10**9]]
    assert [g for g, _ in got] == [[10**9], [1, 2]]

    class OnePool(Pool):  # (the audits' worker of its own): one batch made while one is written
        _max_workers = 1

    handed.clear()
    groups = workers.batches(jobs, lambda j: 1000)
    got = workers.in_workers(OnePool(), groups, len, lambda g: g, lambda j: 1000)
    next(got)
    assert handed == groups[:2]

    handed.clear()  # (the text stage: one batch ahead in all, whatever the pool's size)
    got = workers.in_workers(Pool(), groups, len, lambda g: g, lambda j: 1000, at_once=1)
    next(got)
    assert handed == groups[:2]


def test_a_batch_the_workers_could_not_make_is_made_here(home, tmp_path, monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    root, files = home
    monkeypatch.setattr("webapp.corpus.db.POOL_BYTES", 0)
    monkeypatch.setattr("os.cpu_count", lambda: 2)

    def broken(pool, groups, fn, args, size, stop=None, at_once=None):
        for group in groups:
            yield group, BrokenProcessPool("a worker died")

    monkeypatch.setattr(db, "in_workers", broken)
    index = Index(tmp_path / "c.duckdb")
    progress = index.build([root])
    assert (progress.read, progress.failed) == (len(files), 0)
    here = fresh(tmp_path, [root], "here.duckdb")
    for t in TABLES:
        assert rows(index, t) == rows(here, t), t
    assert docs(index) == docs(here)


def test_a_select_that_writes_is_refused_by_its_read_only_transaction(tmp_path):
    from webapp.corpus.sql import QueryError, run_query

    index = Index(tmp_path / "c.duckdb")
    index.con.execute("CREATE SEQUENCE counter")  # nextval is a SELECT that writes the sequence
    with pytest.raises(QueryError, match="read-only"):
        run_query(index.cursor(), "SELECT nextval('counter')")
    assert index.con.execute("SELECT nextval('counter')").fetchone() == (1,)  # never moved
    with pytest.raises(duckdb.Error, match="lock"):  # no setting changes after the lock, not even through the writer
        index.con.execute("SET enable_external_access = true")
    secret = tmp_path / "secret.txt"
    secret.write_text("not the corpus's")
    with pytest.raises(QueryError, match=r"read_text\(\) is not allowed"):
        run_query(index.cursor(), f"SELECT * FROM read_text('{secret}')")
    with pytest.raises(duckdb.Error, match="disabled"):  # and beneath that check, the connection's own lock
        index.cursor().execute(f"SELECT * FROM read_text('{secret}')")
    assert run_query(index.cursor(), "SELECT count(*) FROM sessions").rows == [(0,)]


def test_a_claude_code_2_0_sub_agent_file_beside_its_session_is_no_session_of_its_own(home, tmp_path, capsys):
    from webapp.cli import main

    root, files = home
    session = files["d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"]
    session_id = session.stem.split("_", 1)[1]
    moved = session.with_name(f"{session_id}.jsonl")  # named by its id, as Claude Code names it
    session.rename(moved)
    first = orjson.loads(moved.read_bytes().splitlines()[0])
    agent = moved.with_name("agent-5e1f.jsonl")  # 2.0.x: beside the session, its lines name the session
    agent.write_bytes(orjson.dumps({"type": "user", "uuid": "side-1", "parentUuid": None, "isSidechain": True,
                                    "agentId": "5e1f", "sessionId": session_id, "timestamp": first.get("timestamp"),
                                    "message": {"role": "user", "content": "a sub-agent's prompt"}}) + b"\n")
    index = fresh(tmp_path, [root])
    listed = [r[0] for r in index.cursor().execute("SELECT file FROM sessions").fetchall()]
    assert str(moved) in listed and str(agent) not in listed and len(listed) == 7
    entries = index.cursor().execute("SELECT count(*) FROM entries WHERE file = ? AND entry_id = 'side-1'",
                                     [str(moved)]).fetchone()[0]
    assert entries == 1  # its entries are its session's
    for args in (["ls", str(root), "--json"], ["ls", str(root), "--index", "--db", str(tmp_path / "c.duckdb"), "--json"]):
        assert main(args) == 0
        paths = [r["path"] for r in orjson.loads(capsys.readouterr().out)]
        assert str(moved) in paths and str(agent) not in paths, args
    orphan = moved.with_name("agent-0rph.jsonl")  # a sub-agent file whose session is gone is listed
    orphan.write_bytes(agent.read_bytes().replace(session_id.encode(), b"no-such-session"))
    assert str(orphan) in [str(p) for p in corpus_files(root)]


def test_a_claude_code_2_1_sub_agent_and_workflow_file_whose_session_is_gone_are_indexed_saying_it(tmp_path):
    root = tmp_path / "projects"
    shutil.copytree(FIXTURES / "conversations" / "claude-code", root)
    own = root / "-home-ana-projects-shop" / "aaaaaaaa-0000-4000-8000-000000000001"
    nested = sorted(str(p) for p in own.rglob("agent-*.jsonl"))
    assert len(nested) == 2 and not set(nested) & {str(p) for p in corpus_files(root)}  # read with their session
    own.with_name(own.name + ".jsonl").unlink()
    assert set(nested) <= {str(p) for p in corpus_files(root)}
    index = fresh(tmp_path, [root])
    got = index.cursor().execute(f"SELECT file, link_kind, link_field, link_names, parent_file FROM sessions "
                                 f"WHERE file IN ({', '.join('?' * len(nested))}) ORDER BY file", nested).fetchall()
    assert got == [(f, "subagent", "sessionId", "aaaaaaaa-0000-4000-8000-000000000001", None) for f in nested]


@pytest.mark.parametrize("where", ["text", "tables"])
def test_a_batch_whose_text_or_tables_are_refused_lists_that_file_and_writes_the_rest_once(home, tmp_path, monkeypatch, where):
    # The text is written in a thread while the tables are: a failure on either side must leave
    # the two agreeing, the file refused listed with its error, every other file written once.
    root, files = home
    bad = str(files["agent-sessions_pi_small.jsonl"])
    if where == "text":
        real = db.add_docs

        def add_docs(con, columns):
            if bad in columns[0]:  # (the files' column)
                raise sqlite3.OperationalError("disk I/O error")
            real(con, columns)

        monkeypatch.setattr(db, "add_docs", add_docs)
    else:
        real = db.insert_rows

        def insert_rows(cur, table, rows, *args):
            if table == "sessions" and any(r[0] == bad for r in rows):
                raise duckdb.ConstraintException("refused")
            real(cur, table, rows, *args)

        monkeypatch.setattr(db, "insert_rows", insert_rows)
    index, failed = _built_with_one_failure(tmp_path, root)
    assert [f for f, _ in failed] == [bad] and ("disk I/O error" if where == "text" else "refused") in failed[0][1]
    indexed = {r[0] for r in index.cursor().execute("SELECT file FROM sessions").fetchall()}
    assert indexed == {str(p) for p in files.values()} - {bad}
    texts = dict(index.text.execute(BY_FILE).fetchall())
    assert bad not in texts
    want = fresh(tmp_path, [root], "plain.duckdb")
    assert texts == {f: n for f, n in want.text.execute(BY_FILE) if f != bad}


def _built_with_one_failure(tmp_path, root) -> tuple[Index, list[tuple]]:
    """An index of `root` whose build listed one file as failed, and (file, error) of it."""
    index = Index(tmp_path / "c.duckdb")
    assert index.build([root]).failed == 1
    return index, index.cursor().execute("SELECT file, error FROM files WHERE error IS NOT NULL").fetchall()


def _big_build_here(monkeypatch) -> None:
    """A build takes the big build's way (tables first, then text and audits, a batch at a time)
    with the workers' batches made in this process, so that a test can refuse one."""
    import contextlib

    monkeypatch.setattr("webapp.corpus.db.POOL_BYTES", 0)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr(db, "_pool", lambda workers, least=2, nice=0: contextlib.nullcontext(object()))
    monkeypatch.setattr(db, "in_workers", lambda pool, groups, fn, args, size, stop=None, at_once=None:
                        ((g, fn(args(g))) for g in groups))


def test_a_big_builds_batch_the_database_refuses_lists_that_file_and_writes_the_rest(home, tmp_path, monkeypatch):
    root, files = home
    bad = str(files["pi-mono_large-session.jsonl"])
    real = Index._write_arrow

    def write_arrow(self, group, got):
        if any(job.file == bad for job in group):
            raise duckdb.ConstraintException("refused")
        real(self, group, got)

    _big_build_here(monkeypatch)
    monkeypatch.setattr(Index, "_write_arrow", write_arrow)
    index, failed = _built_with_one_failure(tmp_path, root)
    assert failed == [(bad, "ConstraintException: refused")]
    want = fresh(tmp_path, [root], "plain.duckdb")
    for t in TABLES:
        assert rows(index, t) == [r for r in rows(want, t) if r[0] != bad], t
    assert docs(index) == [d for d in docs(want) if d[0] != bad]


@pytest.mark.parametrize("batch_files", [64, 2])
def test_a_big_builds_text_the_text_index_refuses_lists_that_file_and_writes_the_rest(home, tmp_path, monkeypatch,
                                                                                     batch_files):
    """In one batch, or in one of several, each written while the next is made ready: the batch
    before and the batches after it are written once, whole."""
    root, files = home
    monkeypatch.setattr(workers, "BATCH_FILES", batch_files)
    want = fresh(tmp_path, [root], "plain.duckdb")
    bad = str(files["agent-sessions_pi_small.jsonl"])
    real = text_writes.add_docs  # (the text stage's writer: `text_writes.TextWriter`)

    def add_docs(con, columns):
        if bad in columns[0]:  # (the files' column)
            raise sqlite3.OperationalError("disk I/O error")
        real(con, columns)

    _big_build_here(monkeypatch)
    monkeypatch.setattr(text_writes, "add_docs", add_docs)
    batches, put = [], text_writes.TextWriter.put
    monkeypatch.setattr(text_writes.TextWriter, "put", lambda self, f, m: (batches.append([x for x, _ in f]), put(self, f, m)))
    index, failed = _built_with_one_failure(tmp_path, root)
    at = next(i for i, b in enumerate(batches) if bad in b)
    assert len(batches) == 1 if batch_files == 64 else 0 < at < len(batches) - 1  # (a batch before it and after)
    assert failed == [(bad, "its text could not be written: OperationalError: disk I/O error")]
    assert index.cursor().execute("SELECT file FROM later").fetchall() == [(bad,)]  # (still to come)
    assert docs(index) == [d for d in docs(want) if d[0] != bad]
    monkeypatch.setattr(text_writes, "add_docs", real)  # the next build reads it again, whole
    assert index.build([root]).read == 1
    for t in TABLES:
        assert rows(index, t) == rows(want, t), t
    assert docs(index) == docs(want)


def test_a_big_builds_text_batch_duckdb_refuses_is_written_file_by_file_and_lists_the_one_refused(home, tmp_path,
                                                                                                   monkeypatch):
    """DuckDB refuses a batch's text: the batch is written again file by file, the file refused
    again is listed with its text still to come, and every other file is written whole."""
    root, files = home
    monkeypatch.setattr(workers, "BATCH_FILES", 2)
    want = fresh(tmp_path, [root], "plain.duckdb")
    bad = str(files["agent-sessions_pi_small.jsonl"])
    real = text_writes.TextWriter._set_text

    def set_text(self, batch):
        if bad in [f for f, _, _ in batch.ok]:
            raise duckdb.IOException("could not write")
        real(self, batch)

    _big_build_here(monkeypatch)
    monkeypatch.setattr(text_writes.TextWriter, "_set_text", set_text)
    index, failed = _built_with_one_failure(tmp_path, root)
    assert failed == [(bad, "its text could not be written: IOException: could not write")]
    assert index.cursor().execute("SELECT file FROM later").fetchall() == [(bad,)]  # (still to come)
    assert docs(index) == [d for d in docs(want) if d[0] != bad]
    monkeypatch.setattr(text_writes.TextWriter, "_set_text", real)  # the next build reads it again, whole
    assert index.build([root]).read == 1
    for t in TABLES:
        assert rows(index, t) == rows(want, t), t
    assert docs(index) == docs(want)


def test_a_build_ended_between_a_batchs_text_and_its_words_is_mended_by_the_next(home, tmp_path, monkeypatch):
    """The process ends once DuckDB has committed a batch's text, before the text index took its
    words: the batch's `later` rows say it is still to come, and the next build writes it whole."""
    root, _ = home
    monkeypatch.setattr(workers, "BATCH_FILES", 2)
    want = fresh(tmp_path, [root], "plain.duckdb")
    _big_build_here(monkeypatch)
    real, started = text_writes.TextWriter._start_words, []

    def start_words(self, batch):
        started.append(batch)
        if len(started) == 2:
            raise SystemExit("the process ends")
        real(self, batch)

    monkeypatch.setattr(text_writes.TextWriter, "_start_words", start_words)
    index = Index(tmp_path / "c.duckdb")
    with pytest.raises(SystemExit):
        index.build([root])
    cut = sorted(f for f, _, _ in started[1].ok)
    left = [f for (f,) in index.cursor().execute("SELECT file FROM later ORDER BY file").fetchall()]
    assert set(cut) <= set(left)  # (its text in DuckDB, not its words: still to come)
    assert index.cursor().execute("SELECT count(*) FROM entries WHERE file IN (SELECT unnest(?::VARCHAR[])) "
                                  "AND text IS NOT NULL", [cut]).fetchone()[0] > 0
    monkeypatch.setattr(text_writes.TextWriter, "_start_words", real)
    index.build([root])
    for t in TABLES:
        assert rows(index, t) == rows(want, t), t
    assert docs(index) == docs(want)


def test_a_build_with_no_text_to_write_reads_no_places_for_it(home, tmp_path, monkeypatch):
    """A small build makes each file's text as it reads it; a refresh that changed nothing has no
    text to write: neither reads the text stage's places (`TextWriter._places`)."""
    root, _ = home

    def places(self):
        raise AssertionError("read with no text to write")

    monkeypatch.setattr(text_writes.TextWriter, "_places", places)
    index = Index(tmp_path / "c.duckdb")
    assert index.build([root]).failed == 0
    _big_build_here(monkeypatch)
    assert index.build([root]).failed == 0  # (nothing changed: the big build's way, no text to write)
    assert index.cursor().execute("SELECT count(*) FROM entries WHERE text IS NOT NULL").fetchone()[0] > 0


@pytest.mark.parametrize("moved", ["nothing", "rows read", "rows updated"])
def test_a_big_builds_text_batches_find_their_rows_by_place_and_by_name_once_rows_moved(home, tmp_path, monkeypatch,
                                                                                       moved):
    """Each text batch reads and updates only the rows in the places its files' rows were in when
    the stage began (`TextWriter._places`). Should rows have moved since, it finds fewer there
    than it counted, and reads or updates them by name alone: the same rows either way."""
    root, _ = home
    monkeypatch.setattr(workers, "BATCH_FILES", 2)
    want = fresh(tmp_path, [root], "plain.duckdb")
    _big_build_here(monkeypatch)
    far = 10 ** 6  # (rowids no row of the fixtures has)
    places, meta, ready = text_writes.TextWriter._places, text_writes.TextWriter._meta, text_writes.TextWriter._ready
    reads: list[bool] = []  # each read of a batch's rows: by place (True) or by name alone

    def moved_places(self):
        got = places(self)
        assert got  # (every file whose text is to come, in one read)
        return {f: (a + far, b + far, n) for f, (a, b, n) in got.items()} if moved == "rows read" else got

    def moved_rows(self, files, made):
        batch = ready(self, files, made)
        if moved == "rows updated" and batch.rowids:
            batch.rowids = (batch.rowids[0] + far, batch.rowids[1] + far)
        return batch

    monkeypatch.setattr(text_writes.TextWriter, "_places", moved_places)
    monkeypatch.setattr(text_writes.TextWriter, "_meta", lambda self, w, m, low, high, rowids: (
        reads.append(rowids is not None), meta(self, w, m, low, high, rowids))[1])
    monkeypatch.setattr(text_writes.TextWriter, "_ready", moved_rows)
    index = Index(tmp_path / "c.duckdb")
    index.build([root])
    assert len(reads) > 2
    if moved == "rows read":  # (each read by place, found short, read again by name)
        assert reads == [True, False] * (len(reads) // 2)
    else:
        assert all(reads)
    for t in TABLES:
        assert rows(index, t) == rows(want, t), t
    assert docs(index) == docs(want)


def test_the_index_checkpoints_its_log_every_256_mb_not_every_16(tmp_path):
    index = Index(tmp_path / "c.duckdb")  # (a build spends a sixth less CPU writing so)
    assert index.con.execute("SELECT current_setting('checkpoint_threshold')").fetchone()[0] == "244.1 MiB"  # (256 MB)


def test_an_index_made_anew_beside_an_old_text_index_does_not_keep_that_text(home, tmp_path):
    """A person deletes the database to have it built again and leaves the text index beside it:
    its rows would be searched twice over (a new build writes every file's text again), or not
    fit the new text index's tables at all."""
    root, _ = home
    db = tmp_path / "c.duckdb"
    first = Index(db)
    first.build([root])
    counted = BY_FILE.replace("SELECT f.file, count(*)", "SELECT count(*)").split(" GROUP BY")[0]
    entries = first.text.execute(counted).fetchone()[0]
    first.close()
    for part in (db, db.with_name(db.name + ".wal")):
        part.unlink(missing_ok=True)
    again = Index(db)
    again.build([root])
    assert entries > 0 and again.text.execute(counted).fetchone()[0] == entries
    assert sorted(again.text.execute(BY_FILE).fetchall()) == sorted(fresh(tmp_path, [root]).text.execute(BY_FILE).fetchall())

