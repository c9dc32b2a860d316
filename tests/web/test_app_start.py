"""What a server pays before its first page: creating the app, and a session page, import no
DuckDB, pyarrow or numpy (60 MB and half a second at start: the corpus routes import them when
first asked, see webapp/web/corpus.py), while the corpus page still works (it counts the one session)."""

import subprocess
import sys

HEAVY = ("duckdb", "pyarrow", "numpy")


def test_the_app_and_a_session_page_import_no_database_nor_arrow(tmp_path):
    code = (
        "import sys\n"
        "from webapp.web.app import create_app\n"
        "from webapp.web.auth import owner_client\n"
        f"client = owner_client(create_app({str(tmp_path)!r}, CORPUS_DB={str(tmp_path / 'c.duckdb')!r}))\n"
        f"started = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "status = client.get('/s/p/s.jsonl').status_code\n"
        f"paged = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "corpus = client.get('/corpus')\n"
        "print(started, paged, status, corpus.status_code, 'duckdb' in sys.modules, b'1 session' in corpus.data)\n"
    )
    session = tmp_path / "p" / "s.jsonl"
    session.parent.mkdir()
    session.write_text('{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
                       '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
                       '"message":{"role":"user","content":"hello"}}\n')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "[]", "200", "200", "True", "True"]
