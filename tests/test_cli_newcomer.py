"""What a newcomer meets in fifteen minutes at the command line: `search`, `tree --json`, `sql`
rows that stay rows, one way to say that nothing was found, no `None`, sizes in bytes that are
the file's own, and `audit` naming the option that reaches a compaction off the active path."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from tests.conftest import Builder, lines_of
from tests.test_cli import run, run_json

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions"
RICH = next(SAMPLES.rglob("*019cadd3-8025-7970-85d9-5954058b4714.jsonl"))


@pytest.fixture
def branched(tmp_path) -> Path:
    """u1 → a2 → u3 → a4 (active), and a5, a second answer to u1 holding the word "zebra"; c6, a
    compaction on that side branch."""
    b = Builder()
    b.user("How do I parse\tthe config?", id="u1")
    b.assistant("Use a line-by-line reader.\nSecond line.", id="a2")
    b.user("And the errors?", id="u3")
    b.assistant("Raise ParseError with the line number.", id="a4")
    b.assistant("A zebra-striped approach.", id="a5", parent="u1")
    b.add("compaction", id="c6", parent="a5", summary="Tried stripes.", firstKeptEntryId="a5", tokensBefore=100)
    b.add("leaf", id="f7", targetId="a4", parent="c6")
    return b.write(tmp_path / "s.jsonl")


# -- search ----------------------------------------------------------------------------------------


def test_search_in_one_session_lists_each_entry_with_its_branch_and_snippet(capsys, branched):
    code, out, err = run(capsys, "search", "ZEBRA", branched)
    assert code == 0 and err == ""
    assert out.splitlines() == ["  a5 assistant  [How do I parse the config?]  A zebra-striped approach."]
    hits = run_json(capsys, "search", "line", branched, "--json")
    assert [(h["entryId"], h["onActivePath"], h["leafId"]) for h in hits] == [("a2", True, "a4"), ("a4", True, "a4")]
    assert hits[0]["snippet"] == "Use a line-by-line reader. Second line."


def test_search_says_in_one_line_when_nothing_matches_or_the_limit_cuts(capsys, branched):
    assert run(capsys, "search", "nowhere-to-be-found", branched) == (
        0, "", f"session-tree: no entry mentions 'nowhere-to-be-found' in {branched}\n")
    code, out, err = run(capsys, "search", "the", branched, "--limit", "1")
    assert code == 0 and len(out.splitlines()) == 1
    assert err == "session-tree: the first 1 hits shown; more follow (--limit)\n"


def test_search_in_every_session_under_a_root_reads_the_index(capsys, tmp_path, branched):
    db = tmp_path / "index" / "c.duckdb"
    hits = run_json(capsys, "search", "zebra", tmp_path, "--db", db, "--json")
    assert [(h["path"], h["entryId"], h["role"]) for h in hits] == [(str(branched), "a5", "assistant")]
    assert "zebra" in hits[0]["snippet"].lower() and hits[0]["title"] == "How do I parse\tthe config?"
    code, out, _ = run(capsys, "search", "zebra", tmp_path, "--db", db)
    assert code == 0 and out.startswith(f"{branched} a5 assistant")


# -- tree ------------------------------------------------------------------------------------------


def test_tree_json_lists_the_drawn_entries_flat_with_their_parents(capsys, branched):
    got = run_json(capsys, "tree", branched, "--json")
    assert got["activeLeaf"] == "a4" and got["path"] == str(branched)
    rows = {e["id"]: e for e in got["entries"]}
    assert list(rows) == ["u1", "a2", "u3", "a4", "a5", "c6"]  # the text tree's order; the leaf marker is not drawn
    assert rows["a5"]["parentId"] == "u1" and not rows["a5"]["onActivePath"] and rows["a4"]["onActivePath"]
    assert rows["u1"] == {"id": "u1", "parentId": None, "type": "message", "role": "user",
                          "text": "How do I parse the config?", "label": None, "onActivePath": True, "orphan": False}


def test_tree_of_a_file_that_is_not_a_session_is_an_error_in_one_line(capsys, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("Shopping list\n- milk\n")
    code, out, err = run(capsys, "tree", notes)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"session-tree: error: {notes}: not a session file")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert run(capsys, "tree", tmp_path / "empty.jsonl") == (0, "(no entries)\n", "")


# -- sql -------------------------------------------------------------------------------------------


def test_sql_text_keeps_each_row_on_one_line(capsys, tmp_path, branched):
    db = tmp_path / "index" / "c.duckdb"
    assert run(capsys, "index", tmp_path, "--db", db)[0] == 0
    code, out, _ = run(capsys, "sql", "SELECT entry_id, text FROM entries WHERE entry_id IN ('u1', 'a2') "
                                     "ORDER BY line", "--db", db)
    assert code == 0
    assert out.splitlines() == ["entry_id\ttext", "u1\tHow do I parse\\tthe config?",
                                "a2\tUse a line-by-line reader.\\nSecond line."]
    code, out, _ = run(capsys, "sql", "SELECT 'C:\\temp' AS p", "--db", db)
    assert out == "p\nC:\\\\temp\n"  # a backslash is doubled: `\t` above cannot be read as one


# -- nothing found ---------------------------------------------------------------------------------


def test_ls_ls_index_and_index_say_alike_that_a_root_holds_no_session(capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    db = tmp_path / "index" / "c.duckdb"
    said = f"session-tree: no sessions under {empty}\n"
    assert run(capsys, "ls", empty) == (0, "", said)
    assert run(capsys, "ls", empty, "--json") == (0, "[]\n", said)
    assert run(capsys, "ls", empty, "--index", "--db", db) == (0, "", said)
    code, out, err = run(capsys, "index", empty, "--db", db)
    assert code == 0 and out.startswith("session-tree: 0 sessions in") and err == said


def test_without_a_root_in_a_home_with_no_agents_folders_they_say_where_they_looked(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    db = tmp_path / "index" / "c.duckdb"
    looked = ("session-tree: no sessions under the agents' usual folders (~/.pi/agent/sessions, "
              "~/.claude/projects, ~/.codex/sessions); name a ROOT to look elsewhere\n")
    assert run(capsys, "ls") == (0, "", looked)
    assert run(capsys, "ls", "--index", "--db", db) == (0, "", looked)
    assert run(capsys, "index", "--db", db)[2] == looked
    assert run(capsys, "ls", "--pi")[2] == looked.replace(", ~/.claude/projects, ~/.codex/sessions", "")


# -- missing values and sizes ----------------------------------------------------------------------


def test_a_missing_value_prints_as_a_dash_never_none(capsys, tmp_path):
    b = Builder(with_header=False)
    b.user("hello")
    b.assistant("hi")
    path = b.write(tmp_path / "no-header.jsonl")
    for argv in (["ls", tmp_path], ["show", path]):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and "None" not in out
    assert "id -  cwd -" in run(capsys, "ls", tmp_path)[1]
    assert run_json(capsys, "ls", tmp_path, "--json")[0]["id"] is None  # JSON keeps its null


def test_every_written_file_is_said_with_its_own_size_in_bytes(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out_file = tmp_path / "one.html"
    code, out, _ = run(capsys, "export", RICH, "-o", out_file)
    assert code == 0 and out == f"session-tree: wrote {out_file} ({out_file.stat().st_size:,} bytes)\n"
    cmp_file = tmp_path / "cmp.html"
    tips = [line["id"] for line in lines_of(RICH.read_bytes()) if line.get("type") == "message"][-2:]
    code, out, _ = run(capsys, "compare", RICH, *tips, "--html", cmp_file)
    assert code == 0 and out == f"session-tree: wrote {cmp_file} ({cmp_file.stat().st_size:,} bytes)\n"
    site = tmp_path / "site"
    code, out, _ = run(capsys, "export", SAMPLES, "-o", site)
    sizes = {name: sum(p.stat().st_size for p in (site / name).iterdir()) for name in ("sessions", "static")}
    index = (site / "index.html").stat().st_size
    assert code == 0 and out.startswith(
        f"session-tree: wrote {site}{os.sep} ({index + sum(sizes.values()):,} bytes): index.html {index:,} bytes, "
        f"7 pages in sessions{os.sep} {sizes['sessions']:,} bytes, "
        f"{len(list((site / 'static').iterdir()))} assets in static{os.sep} {sizes['static']:,} bytes")


# -- audit -----------------------------------------------------------------------------------------


def test_audit_without_a_compaction_on_the_active_path_names_the_option_and_the_others(capsys, branched):
    code, out, _ = run(capsys, "audit", branched)
    assert code == 0
    assert out == "no compaction on the active path; audit the one elsewhere with --compaction c6\n"
    code, out, _ = run(capsys, "audit", branched, "--compaction", "c6")
    assert code == 0 and out.startswith("compaction c6 ")
    assert orjson.loads(run(capsys, "audit", branched, "--json")[1]) == []
