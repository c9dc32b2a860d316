"""Every figure of the corpus page, checked against the same figure computed from the files
directly with the core (not with the extractor); the page's links and its SQL box."""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone

import pytest

from webapp.core.audit import audit_entry
from webapp.core.agents import source_of
from webapp.core.compare import outcome
from webapp.core.entries import BRANCH_SUMMARY, COMPACTION, MESSAGE, content_blocks
from webapp.core.outcome import STATUSES
from webapp.core.session import Session
from webapp.core.prices import PriceTable
from webapp.corpus.db import Index
from webapp.corpus.figures import corpus_figures
from webapp.corpus.schema import SCHEMA_VERSION
from webapp.web.app import create_app

TOKEN = "the-form-token"  # (the SQL box runs a query only from its form: a POST with the token)


@pytest.fixture
def built(home, tmp_path):
    root, files = home
    index = Index(tmp_path / "c.duckdb")
    index.build([root])
    trees = {str(p): Session.open(p).tree for p in files.values()}
    return index, trees, str(root.resolve()) + "/"


def close(a, b):
    return abs((a or 0) - (b or 0)) < 1e-6


def test_cost_and_tokens_by_model_agent_project_and_week(built):
    """The costs the sessions record, summed as the core reads them (a price table without rows:
    nothing is computed; tests/corpus/test_prices.py checks what is)."""
    index, trees, prefix = built
    fig = corpus_figures(index.cursor(), prefix, PriceTable("no prices"))
    assert fig.costs.computed == 0 and fig.costs.unpriced_tokens > 0
    by_model, by_agent, by_project, by_week = (defaultdict(float) for _ in range(4))
    sessions_of_agent = Counter()
    for file, tree in trees.items():
        agent = source_of(tree.format)
        cwd = (tree.header or {}).get("cwd")
        sessions_of_agent[agent] += 1
        for e in tree.entries:
            by_agent[agent] += e.cost
            by_project[cwd or os.path.dirname(file)] += e.cost
            if e.type == MESSAGE and e.role == "assistant":
                if e.message.get("model"):
                    by_model[e.message["model"]] += e.cost
                if e.instant is not None:
                    day = datetime.fromtimestamp(e.instant, timezone.utc).date()
                    by_week[(day - timedelta(days=day.weekday())).isoformat()] += e.cost
    assert {m: round(c, 6) for m, c, *_ in fig.by_model} == {m: round(c, 6) for m, c in by_model.items()}
    assert {a: (round(c, 6), n) for a, c, _, _, n, _ in fig.by_agent} == \
        {a: (round(by_agent[a], 6), sessions_of_agent[a]) for a in sessions_of_agent}
    assert {p: round(c, 6) for p, c, *_ in fig.by_project} == {p: round(c, 6) for p, c in by_project.items()}
    weeks = dict(sorted(by_week.items(), reverse=True)[:12])
    assert {w: round(c, 6) for w, c, *_ in fig.by_week} == {w: round(c, 6) for w, c in weeks.items()}
    assert fig.totals[0] == len(trees) and fig.totals[1] == sum(len(t.entries) for t in trees.values())


def test_branches_summaries_tools_and_outcomes(built):
    index, trees, prefix = built
    fig = corpus_figures(index.cursor(), prefix)
    leaves = sorted(((len(t.leaves()), f) for f, t in trees.items() if len(t.leaves()) > 1), key=lambda x: (-x[0], x[1]))
    assert [(f, n) for f, _, n in fig.most_branches] == [(f, n) for n, f in leaves[:12]]

    scores = {}
    for f, t in trees.items():
        for e in t.entries:
            if e.type in (COMPACTION, BRANCH_SUMMARY):
                a = audit_entry(t, e.id)
                scores[(f, e.id)] = (a.score(), len(a.missing()), len(a.facts))
    assert sum(n for n, _ in fig.summary_totals.values()) == len(scores)
    for f, entry, _, score, missing, facts, _, _ in fig.summaries:
        assert scores[(f, entry)] == (score, missing, facts)
    lowest = sorted(scores.values(), key=lambda s: (s[0] is None, s[0] or 0, -s[1]))[:12]
    assert [s[0] for s in lowest] == [s[3] for s in fig.summaries]

    calls, errors = Counter(), Counter()
    for t in trees.values():
        failed = {e.tool_call_id for e in t.entries if e.role == "toolResult" and e.is_error}
        for e in t.entries:
            if e.role == "assistant":
                for b in content_blocks(e.message.get("content")):
                    if b.get("type") == "toolCall":
                        calls[b.get("name")] += 1
                        errors[b.get("name")] += b.get("id") in failed
    got = {name: (n, err) for name, n, err, _ in fig.tool_errors}
    for name, (n, err) in got.items():
        assert (calls[name], errors[name]) == (n, err), name
    assert len(got) == min(12, len(calls))

    outcomes = defaultdict(Counter)
    for t in trees.values():
        for leaf in t.leaves():
            path = t.path(leaf)
            model = next((e.message.get("model") for e in reversed(path) if e.type == MESSAGE
                          and e.role == "assistant" and e.message.get("model")), None)
            outcomes[model or "(none)"][outcome(path).status] += 1
    assert {m: dict(c) for m, c in fig.outcomes} == {m: dict(c) for m, c in outcomes.items()}


def test_the_corpus_page_draws_every_figure_and_links_to_the_sessions_behind(home, tmp_path):
    root, files = home
    client = create_app(root, CORPUS_DB=tmp_path / "c.duckdb").test_client()
    page = client.get("/corpus").text
    assert page.count('<svg class="chart"') == 8
    assert "/corpus?by=model&amp;value=claude-sonnet-4-20250514#behind" in page
    behind = client.get("/corpus?by=model&value=claude-sonnet-4-20250514").text
    assert 'href="/s/.claude/projects/-home-ana-proj/d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"' in behind
    assert "tab=audit" in page and "tab=branches" in page
    assert client.get("/corpus?by=nothing&value=x").status_code == 400


def test_branch_outcomes_by_model_read_as_the_core_names_them(home, tmp_path):
    root, files = home
    page = create_app(root, CORPUS_DB=tmp_path / "c.duckdb").test_client().get("/corpus").text
    outcomes = defaultdict(Counter)
    for p in files.values():
        t = Session.open(p).tree
        for leaf in t.leaves():
            path = t.path(leaf)
            model = next((e.message.get("model") for e in reversed(path) if e.type == MESSAGE
                          and e.role == "assistant" and e.message.get("model")), None)
            outcomes[model or "(none)"][outcome(path).status] += 1
    assert len({s for c in outcomes.values() for s in c}) >= 2  # the fixtures end in more than one way
    for model, counts in outcomes.items():  # each model's bar says its counts with the core's words, most first
        ranked = sorted((s for s in STATUSES if counts.get(s)), key=lambda s: (-counts[s], list(STATUSES).index(s)))
        said = " · ".join(f"{counts[s]} {STATUSES[s]}" for s in ranked)
        assert f"{model}: {said}</title>" in page, model
        for s in counts:
            assert f'class="chart-bar outcome-{s}"' in page
    legend = page.split("Branch outcomes by model")[1].split("</figcaption>")[0]
    assert all(label in legend for label in STATUSES.values())


def test_the_sql_box_answers_a_select_and_refuses_writes_and_long_queries(home, tmp_path, monkeypatch):
    root, _ = home
    client = create_app(root, CORPUS_DB=tmp_path / "c.duckdb", CSRF_TOKEN=TOKEN).test_client()
    ok = client.post("/corpus", data={"csrf_token": TOKEN, "sql": "SELECT agent, count(*) AS n FROM sessions GROUP BY agent ORDER BY agent"}).text
    assert '<td>claude-code</td><td class="num">3</td>' in ok and '<td>pi</td><td class="num">3</td>' in ok
    refused = client.post("/corpus", data={"csrf_token": TOKEN, "sql": "DELETE FROM sessions"}).text
    assert "only SELECT queries are run here" in refused
    assert "7 sessions" in client.get("/corpus").text
    assert "read_text() is not allowed here" in client.post("/corpus", data={"csrf_token": TOKEN, "sql": "SELECT * FROM read_text('/etc/passwd')"}).text
    written = tmp_path / "out.csv"
    for query in (f"COPY sessions TO '{written}'", f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
                  "INSTALL httpfs", "LOAD httpfs", "PRAGMA threads = 1", "SET enable_external_access = true",
                  "INSERT INTO sessions SELECT * FROM sessions", "CREATE TABLE mine AS SELECT 1"):
        assert "only SELECT queries are run here" in client.post("/corpus", data={"csrf_token": TOKEN, "sql": query}).text, query
    assert not written.exists() and not (tmp_path / "other.duckdb").exists()
    monkeypatch.setattr("webapp.corpus.sql.SECONDS", 0.3)
    slow = client.post("/corpus", data={"csrf_token": TOKEN, "sql": "SELECT count(*) FROM range(100000000000) a, range(10) b"}).text
    assert "stopped after 0.3 s" in slow
    monkeypatch.setattr("webapp.corpus.sql.ROW_CAP", 5)
    capped = client.post("/corpus", data={"csrf_token": TOKEN, "sql": "SELECT * FROM range(100)"}).text
    assert capped.count('<tr><td class="num">') == 5 and "(the first 5)" in capped


def test_the_sql_box_reads_no_file_not_even_the_database_s_own(home, tmp_path):
    """DuckDB keeps the database's own files readable whatever `enable_external_access` says: a
    query naming a file-reading table function, or a file as a table, is refused before it runs."""
    from webapp.corpus.sql import QueryError, read_only_connection, run_query

    root, _ = home
    db = tmp_path / "c.duckdb"
    Index(db).close()
    Index(db).build([root])
    client = create_app(root, CORPUS_DB=tmp_path / "web.duckdb", CSRF_TOKEN=TOKEN).test_client()
    web_db = tmp_path / "web.duckdb"
    for query, refused in ((f"SELECT size, content FROM read_blob('{web_db}')", "read_blob()"),
                           (f"SELECT * FROM read_text('{web_db}.wal')", "read_text()"),
                           (f"SELECT * FROM (SELECT 1) a, LATERAL (SELECT * FROM glob('{tmp_path}/*')) b", "glob()"),
                           (f"SELECT * FROM sessions WHERE file IN (SELECT filename FROM read_blob('{web_db}'))",
                            "read_blob()"),
                           ("SELECT * FROM query('SELECT 1')", "query()"),
                           (f"SELECT * FROM '{web_db}'", "is a file name")):
        page = client.post("/corpus", data={"csrf_token": TOKEN, "sql": query}).text
        assert refused in page and "the SQL box reads the corpus tables only" in page, query
        assert 'class="sql-rows"' not in page, query  # (no rows at all)
    con = read_only_connection(db)
    try:
        with pytest.raises(QueryError, match=r"read_blob\(\) is not allowed"):
            run_query(con, f"SELECT content FROM read_blob('{db}')")
        with pytest.raises(QueryError, match=r"read_csv_auto\(\) is not allowed"):
            run_query(con, "WITH t AS (SELECT * FROM read_csv_auto('/etc/passwd')) SELECT * FROM t")
        # what a power user needs still runs: the tables, CTEs, range, unnest and the catalog
        assert run_query(con, "WITH n AS (SELECT count(*) c FROM sessions) SELECT c, x FROM n, unnest([1, 2]) u(x), "
                              "range(1) r").rows == [(7, 1), (7, 2)]
        assert ("sessions",) in run_query(con, "SELECT table_name FROM duckdb_tables()").rows
    finally:
        con.close()


def test_the_sql_box_cuts_a_long_value_and_says_how_long_it_was(home, tmp_path):
    root, _ = home
    client = create_app(root, CORPUS_DB=tmp_path / "c.duckdb", CSRF_TOKEN=TOKEN).test_client()
    page = client.post("/corpus", data={"csrf_token": TOKEN, "sql": "SELECT repeat('ab', 5000) AS long, 'short' AS s, NULL AS n"}).text
    assert f"<td>{'ab' * 150}… (10,000 characters)</td><td>short</td><td></td>" in page
    assert "each value cut to 300 characters" in page


def test_the_sql_box_links_the_tables_doc_which_the_app_serves(home, tmp_path):
    root, _ = home
    client = create_app(root, CORPUS_DB=tmp_path / "c.duckdb").test_client()
    page = client.get("/corpus").text
    assert 'href="/docs/corpus-tables"' in page
    doc = client.get("/docs/corpus-tables")
    assert doc.status_code == 200
    assert "<h1>The corpus tables" in doc.text and "<td>cache_read_tokens, cache_write_tokens</td>" in doc.text
    assert f"(schema version {SCHEMA_VERSION})</h1>" in doc.text  # the version the tables are
    assert client.get("/docs/..%2Fpyproject.toml").status_code == 404 and client.get("/docs/README").status_code == 404


def test_the_sql_box_runs_a_query_only_from_its_form(home, tmp_path):
    """`<img src=/corpus?sql=...>` on another site's page must not make the server run a query: a
    GET only puts the query in the box; a POST without the form's token is refused."""
    root, _ = home
    client = create_app(root, CORPUS_DB=tmp_path / "c.duckdb", CSRF_TOKEN=TOKEN).test_client()
    page = client.get("/corpus", query_string={"sql": "SELECT 'ran' || 'it' AS x"}).text
    assert "ranit" not in page and 'class="sql-rows"' not in page and "This query was not run" in page
    assert "SELECT &#39;ran&#39; || &#39;it&#39; AS x</textarea>" in page  # in the box, to run with a click
    assert client.post("/corpus", data={"sql": "SELECT 1"}).status_code == 403
    assert client.post("/corpus", data={"csrf_token": TOKEN, "sql": "SELECT 1"},
                       headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert "<td>ranit</td>" in client.post("/corpus", data={"csrf_token": TOKEN, "sql": "SELECT 'ran' || 'it' AS x"}).text


def test_sql_answers_are_capped_in_bytes(home, tmp_path, monkeypatch):
    """1,001 rows of 0.5 MB each: the SQL box cuts each value inside the query (no long value
    reaches the server), and every answer stops at its byte cap, saying so."""
    from webapp.corpus.sql import BYTE_CAP, read_only_connection, run_query

    root, _ = home
    db = tmp_path / "c.duckdb"
    Index(db).close()
    Index(db).build([root])
    big = "SELECT repeat('x', 500000) AS v, range AS i FROM range(1001)"
    con = read_only_connection(db)
    try:
        whole = run_query(con, big, limit=10_000)
        assert whole.over_bytes and whole.truncated and 0 < len(whole.rows) <= BYTE_CAP // 500_000
        assert len(whole.rows[0][0]) == 500_000  # the CLI's values are whole, up to the cap
        cut = run_query(con, big, limit=10_000, max_bytes=10**9, cell_chars=300)
        assert len(cut.rows) == 1001 and not cut.truncated
        assert cut.rows[5][0] == "x" * 300 and cut.rows[5][0].full_length == 500_000 and cut.rows[5][1] == 5
        odd = run_query(con, "SELECT [1, 2] AS l, 1 AS l, 'a\"b' AS \"q\"\"\" -- a comment at the end", cell_chars=300)
        assert odd.columns == ["l", "l_1", 'q"'] and odd.rows == [("[1, 2]", 1, 'a"b')]
    finally:
        con.close()
    client = create_app(root, CORPUS_DB=tmp_path / "web.duckdb", CSRF_TOKEN=TOKEN).test_client()
    monkeypatch.setattr("webapp.corpus.sql.PAGE_BYTE_CAP", 100_000)
    page = client.post("/corpus", data={"csrf_token": TOKEN, "sql": big}).text
    assert f"<td>{'x' * 300}… (500,000 characters)</td>" in page
    assert "(the first rows only: their values fill the" in page and page.count("<tr><td>") < 1001


def test_a_read_only_server_still_answers_the_sql_box(home, tmp_path):
    root, _ = home
    client = create_app(root, CORPUS_DB=tmp_path / "c.duckdb", CSRF_TOKEN=TOKEN, READ_ONLY=True).test_client()
    page = client.post("/corpus", data={"csrf_token": TOKEN, "sql": "SELECT 40 + 2 AS x"})
    assert page.status_code == 200 and '<td class="num">42</td>' in page.text
