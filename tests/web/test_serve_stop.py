"""A server stopped with SIGTERM right after it served pages ends with 0 and takes its file beside
the index away, every time: no thread of its own is left for the interpreter to end inside C++
code (the index build in DuckDB, litellm's import), which aborted about one stop in four."""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path

from tests.serve_process import start_serve
from webapp.corpus.holder import holder_path

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
# (the last with a model: litellm is being imported in the background then)
ROUNDS = [[], [], [], ["--model", "openai/fake"]]


def test_a_server_stopped_right_after_serving_pages_exits_with_0_and_leaves_nothing_beside_its_index(
        tmp_path, llm_server):
    root = tmp_path / "sessions"
    shutil.copytree(SAMPLES, root)
    for round_, model in enumerate(ROUNDS):
        db = tmp_path / f"c{round_}.duckdb"  # a new index each time: stopped while it is built
        served = start_serve([root, "--db", db, *model, "--api-base", llm_server.api_base])
        try:
            for page in ("", "corpus"):
                asked = urllib.request.Request(served.url + page, headers=served.headers())
                assert urllib.request.urlopen(asked, timeout=120).status == 200
            assert holder_path(db).exists()
        finally:
            code = served.stop()
        said = "".join(served.output)
        assert code == 0, said
        assert not holder_path(db).exists()
        assert "Traceback" not in said and "FATAL" not in said, said
