"""`session-tree audit`: every compaction of the active path, scores, and --fail-under for CI."""

from __future__ import annotations

import orjson

from tests.conftest import FIXTURES
from tests.core.test_audit import work_data
from tests.test_cli import run, shell

PI = FIXTURES / "pi" / "pi-mono_before-compaction.jsonl"


def test_json_lists_each_compaction_of_the_active_path(capsys):
    code, out, _ = run(capsys, "audit", PI, "--json")
    assert code == 0
    audits = orjson.loads(out)
    assert [a["summaryId"] for a in audits] == ["L360", "L629"]
    for a in audits:
        assert 0 <= a["score"] <= 100 and a["judgedBy"] is None
        missing = [f for facts in a["facts"].values() for f in facts if not f["covered"]]
        assert missing and all(f["entryIds"] for f in missing)


def test_text_names_the_missing_facts_and_their_entries(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_bytes(work_data())
    code, out, _ = run(capsys, "audit", path)
    assert code == 0
    assert out.splitlines()[0] == "compaction c12 (line 13): 50% of 9 facts carried"
    assert "  missing urls: https://example.com/spec  <- u1" in out
    assert "  missing instructions: Keep the column order stable.  <- u8" in out
    assert "  instructions   50%  (1/2)" in out
    assert "missing files" not in out  # src/report.py is covered


def test_fail_under_exits_1_when_a_score_is_lower(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_bytes(work_data())
    assert run(capsys, "audit", path, "--compaction", "c12", "--fail-under", "0")[0] == 0
    assert run(capsys, "audit", path, "--fail-under", "1")[0] == 1  # errors, urls, versions: 0%
    full = tmp_path / "full.jsonl"
    full.write_bytes(work_data("src/report.py `export_csv` pytest -q tests/test_report.py; database schema "
                               "untouched; keep column order stable; https://example.com/spec pandas 2.1.4; "
                               "FAILED test_export AssertionError; could not find the exact text"))
    assert run(capsys, "audit", full, "--fail-under", "100")[0] == 0


def test_a_branch_summary_can_be_named_but_not_a_message(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(work_data())
    done = shell("audit", path, "--compaction", "u1")
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().strip() == "session-tree: error: u1 is a message, not a compaction or a branch summary"
