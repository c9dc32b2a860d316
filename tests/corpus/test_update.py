"""A small update of the index: what it reads of the files (their stamps), how it writes (no
Arrow), and the per-session text the index page's filter asks."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import orjson

from tests.conftest import FIXTURES
from webapp.core.session import Session, user_message
from webapp.corpus.db import Index
from webapp.corpus.discovery import corpus_files
from webapp.corpus.extract import COLUMNS, file_mtime
from webapp.corpus.listing import content_matches
from webapp.corpus.stamps import stamps
from webapp.corpus.text import text_path

REPO = Path(__file__).resolve().parents[2]


def rows(index: Index, table: str) -> list[tuple]:
    return index.cursor().execute(f"SELECT * FROM {table} ORDER BY {', '.join(COLUMNS[table])}").fetchall()


def test_stamps_are_the_size_and_mtime_file_mtime_gives_sub_agents_and_all(home):
    root, files = home
    session = files["d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"]
    nested = session.with_suffix("") / "subagents" / "agent-1.jsonl"  # 2.1.x: in a folder of the session's name
    nested.parent.mkdir(parents=True)
    nested.write_bytes(b'{"type":"user","uuid":"s1","parentUuid":null,"isSidechain":true}\n')
    os.utime(nested, ns=(0, os.stat(session).st_mtime_ns + 5 * 10**9))  # newer than its session
    paths = corpus_files(root) + [root / "gone.jsonl"]
    got = stamps(paths)
    assert isinstance(got[-1], FileNotFoundError)
    assert got[:-1] == [(p.stat().st_size, file_mtime(p)) for p in paths[:-1]]
    assert got[paths.index(session)][1] == os.stat(nested).st_mtime_ns / 1e9  # the sub-agent's, not its own


def test_a_grown_session_is_written_without_arrow_and_gives_the_rows_of_a_fresh_build(home, tmp_path):
    """In a fresh process, as `session-tree index` runs after a session grew: pyarrow and pandas
    (a second to import, more than the update itself) are never imported."""
    root, files = home
    db = tmp_path / "c.duckdb"
    Index(db).build([root])
    path = files["agent-sessions_pi_small.jsonl"]
    Session.open(path).append_message(user_message("a zanzibar question appended later"))
    script = ("import sys, json\nfrom pathlib import Path\nfrom webapp.corpus.db import Index\n"
              f"index = Index(Path({str(db)!r}))\np = index.build([Path({str(root)!r})])\nindex.close()\n"
              "print(json.dumps([p.read, p.grown, sorted(m for m in ('pyarrow', 'pandas') if m in sys.modules)]))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True)
    assert orjson.loads(out.stdout.splitlines()[-1]) == [1, 1, []]
    index, other = Index(db), Index(tmp_path / "fresh.duckdb")
    other.build([root])
    for t in COLUMNS:
        assert rows(index, t) == rows(other, t), t
    # the text index's rows too: the tips the growth moved (`update_doc_tips`) are a fresh build's
    docs = "SELECT f.file, entry_id, leaf_id, line FROM docs JOIN doc_files f ON f.id = file_id ORDER BY f.file, line"
    assert index.text.execute(docs).fetchall() == other.text.execute(docs).fetchall()
    assert content_matches(text_path(db), "zanzibar") == [str(path)]
    # a phrase is asked of the entries' words (the per-session words keep no positions)
    assert content_matches(text_path(db), '"zanzibar question"') == [str(path)]
    assert content_matches(text_path(db), '"question zanzibar"') == []


def test_the_index_page_filter_asks_one_row_per_session_kept_up_to_date(home, tmp_path):
    root, files = home
    db = tmp_path / "c.duckdb"
    index = Index(db)
    index.build([root])
    text = text_path(db)
    entry_level = sorted({r[0] for r in index.text.execute(
        "SELECT f.file FROM body JOIN docs ON docs.id = body.rowid JOIN doc_files f ON f.id = docs.file_id "
        "WHERE body MATCH 'the'")})
    assert len(entry_level) > 3 and content_matches(text, "the") == entry_level
    rows_, files_ = index.text.execute("SELECT count(*), count(DISTINCT file) FROM session_docs").fetchone()
    assert rows_ == files_ == 7  # one row per session (each was written once)
    grown = files["agent-sessions_pi_small.jsonl"]
    Session.open(grown).append_message(user_message("what of the okapi"))
    index.build([root])
    assert content_matches(text, "okapi") == [str(grown)]
    assert content_matches(text, "okap") == [str(grown)]  # the last word as a prefix: one being typed
    original = FIXTURES / "pi" / grown.name
    grown.write_bytes(original.read_bytes())  # rewritten: shorter than what was indexed
    assert index.build([root]).grown == 0
    assert content_matches(text, "okapi") == []
    other = grown
    Session.open(other).append_message(user_message("and the zebu"))
    index.build([root])
    assert content_matches(text, "zebu") == [str(other)]
    other.unlink()
    index.build([root])
    assert content_matches(text, "zebu") == []  # its words are forgotten with it

SAMPLE = next((Path(__file__).resolve().parents[2] / "sample_sessions").glob("--home-ana-projects-data-pipeline--/*.jsonl"))


def _grown_against_fresh(tmp_path, monkeypatch, head: bytes, rest: bytes) -> list[str]:
    """Index `head`, let the file grow by `rest`, index again: the ids of the summaries audited
    by the second build (its rows are checked against a fresh build of the whole file)."""
    import webapp.corpus.extract as extract_module
    from webapp.corpus.db import Index
    from webapp.corpus.extract import COLUMNS

    root = tmp_path / "root"
    root.mkdir()
    path = root / "s.jsonl"
    path.write_bytes(head)
    index = Index(tmp_path / "grown.duckdb")
    index.build([root])
    audited = []
    real = extract_module.audit_entry
    monkeypatch.setattr(extract_module, "audit_entry", lambda tree, id: audited.append(id) or real(tree, id))
    with open(path, "ab") as f:
        f.write(rest)
    assert index.build([root]).grown == 1
    by_growth = list(audited)  # (not the fresh build's below)
    whole = Index(tmp_path / "whole.duckdb")
    whole.build([root])
    for t, columns in COLUMNS.items():
        order = ", ".join(columns)
        assert (index.cursor().execute(f"SELECT * FROM {t} ORDER BY {order}").fetchall()
                == whole.cursor().execute(f"SELECT * FROM {t} ORDER BY {order}").fetchall()), t
    return by_growth


def test_a_grown_file_keeps_its_earlier_summaries_rows_and_audits_only_the_new_ones(tmp_path, monkeypatch):
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    kinds = [orjson.loads(line).get("type") for line in lines]
    summaries = [n for n, k in enumerate(kinds) if k in ("compaction", "branch_summary")]
    cut = summaries[len(summaries) // 2] + 1  # half the summaries before the growth, half after
    audited = _grown_against_fresh(tmp_path, monkeypatch, b"".join(lines[:cut]), b"".join(lines[cut:]))
    # (the last line indexed is read again: the summary on it is audited again)
    after = {orjson.loads(lines[n])["id"] for n in summaries if n >= cut - 1}
    assert len(after) == 4 and set(audited) == after  # the earlier ones' rows held, not made again


def test_a_growth_that_gives_an_earlier_entry_its_parent_audits_every_summary_again(tmp_path, monkeypatch):
    # (a line naming a parent that only a later line holds: the path an earlier audit read changes)
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    kinds = [orjson.loads(line).get("type") for line in lines]
    first = next(n for n, k in enumerate(kinds) if k == "compaction")
    head = lines[:first + 3]
    orphan = orjson.loads(head[first - 1])  # the compaction's parent, on the path its audit reads
    parent = orjson.loads(head[first - 2])
    head[first - 1] = orjson.dumps({**orphan, "parentId": "given-later"}) + b"\n"
    rest = orjson.dumps({**parent, "id": "given-later", "parentId": parent["parentId"]}) + b"\n"
    audited = _grown_against_fresh(tmp_path, monkeypatch, b"".join(head), rest)
    assert orjson.loads(lines[first])["id"] in audited


def test_a_build_stopped_after_its_first_file_writes_no_half_batch_and_the_next_build_reads_the_rest(home, tmp_path):
    """What a server stopping does to the build it runs: the build ends at once, the index stays
    whole, and the files it had not written are read by the next one."""
    root, _ = home
    stop = threading.Event()
    index = Index(tmp_path / "c.duckdb")
    stopped = index.build([root], on_progress=lambda progress: stop.set(), stop=stop)
    assert stopped.done < stopped.total and rows(index, "sessions") == []
    whole = index.build([root])
    assert whole.read == stopped.total and whole.done == whole.total
    fresh = Index(tmp_path / "fresh.duckdb")
    fresh.build([root])
    for t in COLUMNS:
        assert rows(index, t) == rows(fresh, t), t


def test_a_claude_session_read_with_its_sub_agents_gives_the_rows_of_a_fresh_build_as_they_grow(tmp_path):
    """A sub-agent's lines are numbered in its own file, so no line of its session says what is
    new: a grown session read with its sub-agents is read whole again. Read from the session's
    last line on, the sub-agent's rows kept what they held when the session was half written (no
    parent: the call that started it was not there yet)."""
    import shutil
    import time

    source = FIXTURES / "conversations" / "claude-code" / "-home-ana-projects-shop"
    sid = "aaaaaaaa-0000-4000-8000-000000000001"
    root = tmp_path / "root"
    folder = root / "-home-ana-projects-shop"
    folder.mkdir(parents=True)
    shutil.copytree(source / sid, folder / sid)
    session = folder / f"{sid}.jsonl"
    (agent,) = (folder / sid / "subagents").glob("agent-*.jsonl")
    lines, agent_lines = (source / f"{sid}.jsonl").read_bytes().splitlines(True), agent.read_bytes().splitlines(True)
    session.write_bytes(b"".join(lines[:len(lines) // 2]))
    agent.write_bytes(agent_lines[0])
    index = Index(tmp_path / "c.duckdb")
    index.build([root])
    later = time.time() + 5
    for path, data in ((session, b"".join(lines)), (agent, b"".join(agent_lines))):  # both grew
        path.write_bytes(data)
        os.utime(path, (later, later))
    assert index.build([root]).read == 1
    fresh = Index(tmp_path / "fresh.duckdb")
    fresh.build([root])
    for t in COLUMNS:
        assert rows(index, t) == rows(fresh, t), t
