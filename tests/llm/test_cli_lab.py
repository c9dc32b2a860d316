"""`session-tree lab`: at one compaction of a file, over the compactions a query of the corpus
selects (whose results then fill the corpus tables the SQL reads), shown again by name,
resumed after a failure, and held to its budget."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.lab_session import lab_session
from tests.llm.conftest import MODEL, run
from tests.llm.test_lab import script

QUERY = "SELECT file, entry_id FROM summaries WHERE kind = 'compaction' ORDER BY score LIMIT 20"


def test_a_lab_at_one_compaction_prints_its_ranked_table(tmp_path, capsys, model_env, llm_server):
    llm_server.behave("script", script=script)
    path = lab_session().write(tmp_path / "s.jsonl")
    before = path.read_bytes()
    code, out, err = run(capsys, "lab", path, "--at", "k1", *model_env, "--prompt", "ours", "--turns", "1",
                         "--run", "first")
    assert code == 0, err
    assert "run first: 1 target" in err and "finished: " in err
    assert "no corpus index here" in err  # and none was made for it:
    assert not (Path(os.environ["XDG_CACHE_HOME"]) / "session-tree" / "corpus.duckdb").exists()
    lines = out.splitlines()
    assert lines[0].startswith(f"{path.resolve()} @ k1: lab at compaction k1")
    assert any("recorded · recorded · recorded cut" in line for line in lines)
    assert any(f"{MODEL} · ours · recorded cut" in line and "as well" in line for line in lines)
    assert path.read_bytes() == before
    asked = len(llm_server.requests)
    code, again, _ = run(capsys, "lab", "--run", "first")  # shown again, nothing asked
    assert code == 0 and again == out and len(llm_server.requests) == asked
    code, out, _ = run(capsys, "lab", "--run", "first", "--json")
    assert json.loads(out)["targets"][0]["table"][0]["rank"] == 1


def test_a_lab_over_a_query_fills_the_corpus_tables(tmp_path, capsys, model_env, llm_server):
    llm_server.behave("script", script=script)
    root = tmp_path / "root"
    root.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        lab_session().write(root / name)
    lab_session(compacted=False).write(root / "plain.jsonl")
    db = tmp_path / "corpus.duckdb"
    assert run(capsys, "index", root, "--db", db)[0] == 0
    code, out, err = run(capsys, "lab", "--query", QUERY, "--db", db, *model_env, "--model", "extractive",
                         "--prompt", "ours", "--turns", "1", "--concurrency", "3")
    assert code == 0, err
    assert "2 targets" in err and "lab_candidates and lab_tests" in err
    code, out, _ = run(capsys, "sql", "SELECT model, count(*) AS n, count(DISTINCT file) AS files FROM lab_candidates "
                                      "GROUP BY model ORDER BY model", "--db", db, "--json")
    assert json.loads(out) == [{"model": "extractive", "n": 2, "files": 2}, {"model": MODEL, "n": 2, "files": 2},
                               {"model": "recorded", "n": 2, "files": 2}]
    code, out, _ = run(capsys, "sql", "SELECT candidate, turn, prompt, reply, recorded_reply FROM lab_tests "
                                      "WHERE candidate = 'uncompacted' ORDER BY file", "--db", db, "--json")
    rows = json.loads(out)
    assert [r["turn"] for r in rows] == [1, 1] and rows[0]["recorded_reply"] == "All 3 tests pass."
    code, out, _ = run(capsys, "sql", "SELECT count(*) AS n FROM lab_tests", "--db", db, "--json")
    assert json.loads(out) == [{"n": 2 * 4}]  # per file: the reference and three candidates, one turn each
    code, out, _ = run(capsys, "sql", "SELECT status, targets FROM lab_runs", "--db", db, "--json")
    assert json.loads(out) == [{"status": "finished", "targets": 2}]


def test_a_query_that_names_no_compaction_is_refused_in_one_line(tmp_path, capsys, model_env):
    db = tmp_path / "corpus.duckdb"
    root = tmp_path / "root"
    root.mkdir()
    run(capsys, "index", root, "--db", db)
    code, _, err = run(capsys, "lab", "--query", "SELECT 1 AS x", "--db", db, *model_env)
    assert code == 2 and "`file` and `entry_id` columns" in err
    code, _, err = run(capsys, "lab", "--query", "SELECT 'f' AS file, 'x' AS other", "--db", db, *model_env)
    assert code == 2 and "`file` and `entry_id` columns" in err and err.count("\n") == 1


def test_a_failed_run_resumes_and_makes_only_what_failed(tmp_path, capsys, model_env, llm_server):
    path = lab_session().write(tmp_path / "s.jsonl")
    llm_server.behave("500")
    code, _, err = run(capsys, "lab", path, "--at", "k1", *model_env, "--prompt", "pi", "--turns", "0",
                       "--run", "flaky")
    assert code == 0 and "failed: The model server failed" in err  # (the recorded one needed no model)
    llm_server.behave("script", script=script)
    code, out, err = run(capsys, "lab", "--run", "flaky", "--resume", *model_env)
    assert code == 0, err
    assert "resuming run flaky: 2 candidates" in err
    assert "failed:" not in out and len(out.splitlines()) == 4
    assert len([r for r in llm_server.requests if r.get("stream")]) == 2  # the failed one, asked once more


def test_a_budget_too_small_for_any_call_stops_before_anything_is_sent(tmp_path, capsys, model_env, llm_server):
    llm_server.behave("script", script=script)
    path = lab_session().write(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "lab", path, "--at", "k1", *model_env, "--max-tokens", "100")
    assert code == 1 and "budget reached" in err
    assert llm_server.requests == []
