"""The compaction lab from the corpus page: the compactions a query selects, worked on in the
server's background, followed on its own page; its rows in the tables the SQL box reads, and a
chart of them on the corpus page. A query that names a file the server does not serve opens
nothing."""

from __future__ import annotations

from tests.lab_session import lab_session
from webapp.web.app import create_app

TOKEN = "t" * 32


def corpus_app(tmp_path, **config):
    root = tmp_path / "root"
    folder = root / "--home-ana-proj--"
    folder.mkdir(parents=True)
    for name in ("a.jsonl", "b.jsonl"):
        lab_session().write(folder / name)
    lab_session(compacted=False).write(folder / "plain.jsonl")
    app = create_app(root, CORPUS_DB=tmp_path / "c.duckdb", CSRF_TOKEN=TOKEN, **config)
    return app, app.test_client()


def wait_for_end(app, run: str) -> None:
    """Until the run's thread ends (it ends by itself: nothing here calls a model)."""
    thread, _ = app.extensions["corpus_lab_runs"][run]
    thread.join(timeout=120)
    assert not thread.is_alive()


def test_a_lab_over_the_corpus_runs_in_the_background_and_fills_the_tables(tmp_path):
    app, client = corpus_app(tmp_path)
    page = client.get("/corpus").text
    assert 'action="/corpus/lab"' in page and "ORDER BY score LIMIT 20" in page
    r = client.post("/corpus/lab", data={"csrf_token": TOKEN, "model": ["extractive"], "prompt": ["ours"],
                                         "keep": "60", "turns": "0"})
    assert r.status_code == 303
    run = r.headers["Location"].rsplit("/", 1)[1]
    wait_for_end(app, run)
    html = client.get(f"/corpus/lab/{run}").text
    assert "Finished" in html and html.count("<table class=\"lab-table\">") == 2
    assert "a.jsonl @ k1" in html and "b.jsonl @ k1" in html and "extractive · extractive · keep 60" in html
    sql = client.post("/corpus", data={"csrf_token": TOKEN, "sql": f"SELECT count(*) AS n FROM lab_candidates WHERE run = '{run}'"}).text
    assert "<td class=\"num\">6</td>" in sql  # two compactions: the recorded, and two cuts each
    page = client.get("/corpus").text
    assert "judged as good as the uncompacted original" in page and run in page


def test_a_query_naming_a_file_outside_the_served_sessions_is_refused(tmp_path):
    app, client = corpus_app(tmp_path)
    client.get("/corpus")
    r = client.post("/corpus/lab", data={"csrf_token": TOKEN, "model": ["extractive"], "prompt": ["ours"],
                                         "query": "SELECT '/etc/passwd' AS file, 'x' AS entry_id"})
    assert r.status_code == 400 and "not a session this server serves" in r.text
    r = client.post("/corpus/lab", data={"csrf_token": TOKEN, "model": ["extractive"], "prompt": ["ours"],
                                         "query": "SELECT file FROM sessions"})
    assert r.status_code == 400 and "`file` and `entry_id` columns" in r.text
    assert "corpus_lab_runs" not in app.extensions


def test_a_read_only_server_offers_no_lab_run(tmp_path):
    app, client = corpus_app(tmp_path, READ_ONLY=True)
    assert 'action="/corpus/lab"' not in client.get("/corpus").text
    r = client.post("/corpus/lab", data={"csrf_token": TOKEN, "model": ["extractive"], "prompt": ["ours"]})
    assert r.status_code == 403
