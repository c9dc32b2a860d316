"""The same tables as Parquet: written here or by Ray Data on a local Ray instance, with exactly
the rows of the embedded index; read back by `sql --parquet` and `serve --corpus`."""

from __future__ import annotations

import orjson
import pytest

from webapp.corpus.db import Index
from webapp.corpus.extract import COLUMNS
from webapp.corpus.parquet import parquet_connection, session_files, write_embedded, write_ray
from webapp.web.app import create_app


def all_rows(cur, table):
    return sorted(cur.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


@pytest.fixture
def embedded(home, tmp_path):
    root, files = home
    index = Index(tmp_path / "c.duckdb")
    index.build([root])
    out = tmp_path / "parquet"
    from webapp.cli import main

    assert main(["index", str(root), "--parquet", str(out)]) == 0
    return root, index, out


def test_the_parquet_tables_hold_the_rows_of_the_index(embedded):
    _, index, out = embedded
    tables = parquet_connection(out)
    for t in COLUMNS:
        assert all_rows(tables, t) == all_rows(index.cursor(), t), t
        assert [d[0] for d in tables.execute(f"SELECT * FROM {t} LIMIT 0").description] == list(COLUMNS[t])


def test_the_ray_build_gives_exactly_the_rows_of_the_embedded_build(embedded, tmp_path):
    import ray

    root, index, out = embedded
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        counts = write_ray(session_files([root]), str(tmp_path / "ray"))
    finally:
        ray.shutdown()
    by_ray, here = parquet_connection(tmp_path / "ray"), parquet_connection(out)
    for t in COLUMNS:
        assert all_rows(by_ray, t) == all_rows(here, t) == all_rows(index.cursor(), t), t
        assert counts[t] == len(all_rows(here, t)), t


def test_sql_and_the_corpus_page_read_a_parquet_dataset(embedded, tmp_path, capsys):
    from webapp.cli import main

    root, _, out = embedded
    assert main(["sql", "SELECT count(*) AS n FROM sessions", "--parquet", str(out), "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out) == [{"n": 7}]
    page = create_app(tmp_path / "parquet", CORPUS_PARQUET=str(out), CORPUS_DB=tmp_path / "other.duckdb",
                      CSRF_TOKEN="t") \
        .test_client().post("/corpus", data={"csrf_token": "t", "sql": "SELECT sum(leaves) AS l FROM sessions"}).text
    assert "7 sessions" in page and page.count('<svg class="chart"') == 8
    assert "<td class=\"num\">%d</td>" % sum(r[0] for r in parquet_connection(out).execute("SELECT leaves FROM sessions").fetchall()) in page


@pytest.mark.parametrize("command", [["sql", "SELECT count(*) FROM sessions", "--parquet"], ["serve", "--corpus"]])
def test_a_parquet_folder_that_is_not_there_is_refused_not_read_as_empty_tables(tmp_path, capsys, command):
    from webapp.cli import main

    missing = tmp_path / "mistyped"
    assert main([*command, str(missing)]) == 2
    assert capsys.readouterr().err == f"session-tree: error: {missing}: not a folder of Parquet tables\n"
