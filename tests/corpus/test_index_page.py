"""The index page reads the corpus index: paged and filtered in the database, built in the
background, its progress shown while it runs."""

from __future__ import annotations

import threading

import orjson
import pytest

import webapp.corpus.tuples as tuples
import webapp.corpus.service as service
from webapp.web.app import create_app


def write_sessions(root, n, word="hello"):
    folder = root / "--home-ana-proj--"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        lines = [{"type": "session", "version": 3, "id": f"s{i:04d}", "timestamp": "2026-01-02T03:04:05.000Z",
                  "cwd": "/home/ana/proj"},
                 {"type": "message", "id": f"m{i:04d}", "parentId": None, "timestamp": "2026-01-02T03:04:06.000Z",
                  "message": {"role": "user", "content": f"session number {i} says {word if i % 50 == 7 else 'nothing'}"}}]
        (folder / f"s{i:04d}.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def test_the_index_page_reads_the_index_and_pages_in_it(tmp_path, monkeypatch):
    write_sessions(tmp_path, 250, word="kangaroo")
    app = create_app(tmp_path, CORPUS_DB=tmp_path / "c.duckdb")
    client = app.test_client()
    first = client.get("/").text
    assert "250 sessions" in first and "page 1 of 2" in first
    assert first.count('class="session-row"') == 200
    monkeypatch.setattr("webapp.web.store.summarize_session", lambda *a: pytest.fail("a file was opened"))
    monkeypatch.setattr("webapp.corpus.tuples.extract_rows", lambda *a: pytest.fail("a file was read again"))
    second = client.get("/?page=2").text
    assert second.count('class="session-row"') == 50 and "s0249.jsonl" in second
    found = client.get("/?q=kangaroo").text  # a word only in the text of 5 sessions
    assert "5 sessions matching" in found and "s0207.jsonl" in found and "s0208.jsonl" not in found
    assert "1 session matching" in client.get("/?q=s0013").text  # by file name


def test_a_new_file_is_listed_on_the_next_visit(tmp_path):
    write_sessions(tmp_path, 3)
    app = create_app(tmp_path, CORPUS_DB=tmp_path / "c.duckdb")
    client = app.test_client()
    assert "3 sessions" in client.get("/").text
    write_sessions(tmp_path, 5)
    assert "5 sessions" in client.get("/").text
    (tmp_path / "--home-ana-proj--" / "s0000.jsonl").unlink()
    assert "4 sessions" in client.get("/").text


def test_the_first_page_answers_while_a_big_first_index_builds(tmp_path, monkeypatch):
    write_sessions(tmp_path, 20)
    release = threading.Event()
    real = tuples.extract_rows
    extracted: list[str] = []

    def slow(file, line):
        release.wait(120)
        extracted.append(file)
        return real(file, line)

    monkeypatch.setattr(tuples, "extract_rows", slow)
    monkeypatch.setattr(service, "SMALL_BYTES", 0)  # as if the corpus were big
    app = create_app(tmp_path, CORPUS_DB=tmp_path / "c.duckdb")
    client = app.test_client()
    page = client.get("/").text
    assert extracted == []  # the page answered while the index could read no file
    assert "Indexing: 0 files of 20" in page and 'hx-trigger="every 1s"' in page
    release.set()
    app.extensions["corpus"].join()
    assert "Indexing" not in client.get("/-/corpus/progress").text
    assert "20 sessions" in client.get("/").text


def test_without_an_index_the_page_reads_the_files_and_says_why(tmp_path):
    write_sessions(tmp_path, 2)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    app = create_app(tmp_path, CORPUS_DB=blocker / "c.duckdb")
    page = app.test_client().get("/").text
    assert "2 sessions" in page and "No corpus index" in page


def test_the_corpus_page_shows_a_first_build_and_reloads_itself_when_it_ends(tmp_path, monkeypatch):
    write_sessions(tmp_path, 4)
    release = threading.Event()
    real = tuples.extract_rows
    monkeypatch.setattr(tuples, "extract_rows", lambda f, n: release.wait(120) and real(f, n))
    monkeypatch.setattr(service, "SMALL_BYTES", 0)
    app = create_app(tmp_path, CORPUS_DB=tmp_path / "c.duckdb")
    client = app.test_client()
    page = client.get("/corpus").text
    assert "Indexing: 0 files of 4" in page and "then=corpus" in page
    release.set()
    app.extensions["corpus"].join()
    done = client.get("/-/corpus/progress?then=corpus").text
    assert 'hx-target="section.corpus"' in done and "/corpus" in done
    assert 'hx-target="#session-list"' in client.get("/-/corpus/progress").text


def test_a_big_corpus_is_listed_from_the_index_without_waiting_and_checked_again_later(tmp_path, monkeypatch):
    write_sessions(tmp_path, 3)
    monkeypatch.setattr(service, "SMALL_FILES", 2)  # as if 3 files were a big corpus
    monkeypatch.setattr(service, "REST", 10**6)
    app = create_app(tmp_path, CORPUS_DB=tmp_path / "c.duckdb")
    client = app.test_client()
    client.get("/")
    corpus = app.extensions["corpus"]
    corpus.join()
    assert "3 sessions" in client.get("/").text and corpus.builds == 1
    builds = corpus.builds
    write_sessions(tmp_path, 5)
    page = client.get("/").text  # within the rest after a slow check: the index as it is, no new check
    assert "3 sessions" in page and "Indexing" not in page and corpus.builds == builds and not corpus.building
    corpus.start()
    corpus.join()
    assert "5 sessions" in client.get("/").text


def test_the_pages_say_what_is_still_coming_while_a_big_build_makes_the_text_and_audits(tmp_path, monkeypatch):
    # A big build writes the tables first: the list and the figures answer, and the index page,
    # its search and the corpus page say that the text and the audit scores are still coming.
    import contextlib

    import webapp.corpus.db as db

    write_sessions(tmp_path, 30, word="wombat")
    summary = {"type": "compaction", "id": "c1", "parentId": "m0007", "timestamp": "2026-01-02T03:04:07.000Z",
               "summary": "the wombat work so far", "firstKeptEntryId": "m0007", "tokensBefore": 100}
    with (tmp_path / "--home-ana-proj--" / "s0007.jsonl").open("ab") as f:
        f.write(orjson.dumps(summary) + b"\n")
    release, waiting = threading.Event(), threading.Event()

    def here(pool, groups, fn, args, size, stop=None, at_once=None):  # (the workers' batches, made here)
        for group in groups:
            if fn.__name__ in ("texts_of", "audits_of"):
                waiting.set()
                release.wait(30)
            yield group, fn(args(group))

    monkeypatch.setattr("webapp.corpus.db.POOL_BYTES", 0)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr(db, "_pool", lambda workers, least=2, nice=0: contextlib.nullcontext(object()))
    monkeypatch.setattr(db, "in_workers", here)
    monkeypatch.setattr(service, "SMALL_BYTES", 0)  # (a page does not wait for it)
    app = create_app(tmp_path, CORPUS_DB=tmp_path / "c.duckdb")
    client = app.test_client()
    try:
        client.get("/")
        assert waiting.wait(30)
        listed = client.get("/").text
        assert "30 sessions" in listed and "Still coming: the text search reads (0 files of 30)" in listed
        assert "and the audit scores of the summaries (0 files of 1)" in listed
        hits = client.get("/?q=wombat", headers={"HX-Request": "true"}).text
        assert "Still indexing the text of 30 sessions: their entries are not searched yet." in hits
        figures = client.get("/corpus").text
        assert "the audits of 1 summary still coming" in figures and "Still coming" in figures
    finally:
        release.set()
        app.extensions["corpus"].join()
    assert "Still" not in client.get("/").text
    hits = client.get("/?q=wombat", headers={"HX-Request": "true"}).text
    assert "Still indexing" not in hits and hits.count('class="hit"') >= 1
    assert "still coming" not in client.get("/corpus").text
