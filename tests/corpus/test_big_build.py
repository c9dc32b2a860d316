"""A big build (the tables by the SQL projection in worker processes, then the text and the
audits) gives exactly the rows of the build that reads every file here through the seam, on a
generated corpus beside the fixtures, and again after files grew, were rewritten, damaged and
deleted: every table, every column, and the text index."""

from __future__ import annotations

import shutil

import orjson

from samplegen.builder import write_jsonl
from samplegen.synthetic import synthetic_session
from tests.corpus.test_index import TABLES, docs, rows
from webapp.corpus.db import Index
from webapp.corpus.extract import extract


def _generate(root) -> list:
    """Six generated pi sessions (branches, compactions, labels, leaf entries) under root."""
    folder = root / ".pi" / "agent" / "sessions" / "--gen--"
    paths = []
    for n, size in enumerate((60, 110, 160, 220, 300, 420)):
        header, entries = synthetic_session(size, seed=n, branches=1 + n % 2, compactions=n % 2,
                                            tool_result_sizes=(40, 400))
        path = folder / f"gen-{n}.jsonl"
        write_jsonl(path, header, entries)
        paths.append(path)
    return paths


def _same(big: Index, here: Index) -> None:
    for t in TABLES:
        assert rows(big, t) == rows(here, t), t
    assert docs(big) == docs(here)
    assert big.cursor().execute("SELECT count(*) FROM later").fetchone() == (0,)


def test_a_big_build_gives_the_rows_of_the_seam_on_a_generated_corpus_as_it_changes(home, tmp_path, monkeypatch):
    root, files = home
    generated = _generate(root)
    here = Index(tmp_path / "here.duckdb")
    big = Index(tmp_path / "big.duckdb")

    def build_both(expect_projected: int | None = None):
        here.build([root], extract_fn=extract)  # every file read here by the seam, whole
        with monkeypatch.context() as m:
            m.setattr("webapp.corpus.db.POOL_BYTES", 0)  # as if the corpus were big
            m.setattr("os.cpu_count", lambda: 2)
            progress = big.build([root])
        _same(big, here)
        return progress

    first = build_both()
    assert first.read == len(files) + len(generated) and first.tables_ready is not None

    grown = generated[4]  # grows by a turn on its active path: read from where it stopped
    last = orjson.loads(grown.read_bytes().splitlines()[-1])
    with grown.open("ab") as f:
        f.write(orjson.dumps({"type": "message", "id": "grown-1", "parentId": last["id"],
                              "timestamp": "2026-06-01T00:00:00.000Z",
                              "message": {"role": "user", "content": "a quokka question, asked later"}}) + b"\n")
    shutil.copy(generated[0], generated[1])  # rewritten (shorter: not a growth)
    damaged = generated[2]
    damaged.write_bytes(damaged.read_bytes() + b'{"type":"message","id":"torn-1","parentId":nul\n')
    generated[3].unlink()
    again = build_both()
    assert (again.read, again.grown, again.removed) == (3, 2, 1)  # (the damaged one grew by a bad line)
    hits = big.text.execute("SELECT count(*) FROM body WHERE body MATCH 'quokka'").fetchone()[0]
    assert hits == 1
    bad = big.cursor().execute("SELECT bad_lines FROM sessions WHERE file = ?", [str(damaged)]).fetchone()
    assert bad == (1,)
