"""The audit of summaries: hand-built spans with known facts, summaries that omit known ones."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, Builder
from webapp.core.audit import CATEGORIES, audit_entry, audit_plan, judge, summaries_on_path
from webapp.core.compaction import plan_compaction
from webapp.core.session import Session
from webapp.core.storage import MemoryStorage

SUMMARY = (
    "Goal: a CSV export in src/report.py through `export_csv`. The database schema stays untouched. "
    "Tests: pytest -q tests/test_report.py failed."
)


def work_session(summary: str = SUMMARY) -> Session:
    return Session(MemoryStorage(work_data(summary)))


def work_data(summary: str = SUMMARY) -> bytes:
    """u1 a2 t3 a4 t5 a6 t7 u8 a9 | u10 a11 kept | c12 compaction of u1..a9, with `summary`."""
    b = Builder()
    b.user("Add a CSV export to `report.py`. Do not touch the database schema. "
           "See https://example.com/spec for the format; we use pandas 2.1.4.", id="u1")
    b.assistant("I will read it.", id="a2", calls=[{"id": "c1", "name": "read", "arguments": {"path": "src/report.py"}}])
    b.tool_result("c1", "def export():\n    raise ValueError('Error: not in this session')", id="t3")
    b.assistant("", id="a4", calls=[{"id": "c2", "name": "bash", "arguments": {"command": "pytest -q tests/test_report.py"}}])
    b.tool_result("c2", "FAILED tests/test_report.py::test_export - AssertionError\nCommand exited with code 1",
                  name="bash", id="t5")
    b.assistant("Fixed `export_csv` in src/report.py", id="a6",
                calls=[{"id": "c3", "name": "edit", "arguments": {"path": "src/report.py", "oldText": "a", "newText": "b"}}])
    b.add("message", id="t7", message={"role": "toolResult", "toolCallId": "c3", "toolName": "edit", "isError": True,
                                        "content": [{"type": "text", "text": "Could not find the exact text in src/report.py"}]})
    b.user("Keep the column order stable.", id="u8")
    b.assistant("Done.", id="a9")
    b.user("Now the docs. Never use tabs in `docs_index`.", id="u10")
    b.assistant("ok", id="a11")
    b.add("compaction", id="c12", summary=summary, firstKeptEntryId="u10", tokensBefore=900)
    return b.data()


def texts(facts) -> set[tuple[str, str]]:
    return {(f.category, f.text) for f in facts}


def test_known_facts_split_into_covered_and_missing_exactly():
    audit = audit_entry(work_session().tree, "c12")
    assert audit.problem is None
    assert audit.span == ["u1", "a2", "t3", "a4", "t5", "a6", "t7", "u8", "a9"]
    assert texts(audit.missing()) == {
        ("errors", "FAILED tests/test_report.py::test_export - AssertionError"),
        ("errors", "Could not find the exact text in src/report.py"),
        ("urls", "https://example.com/spec"),
        ("versions", "2.1.4"),
        ("instructions", "Keep the column order stable."),
    }
    assert texts(audit.covered()) == {
        ("files", "src/report.py"),  # `report.py` of u1 is the same file
        ("commands", "pytest -q tests/test_report.py"),
        ("identifiers", "export_csv"),
        ("instructions", "Do not touch the database schema."),
    }


def test_each_fact_names_the_entries_it_came_from_and_how_it_ended():
    audit = audit_entry(work_session().tree, "c12")
    by_text = {f.text: f for f in audit.facts}
    assert by_text["src/report.py"].sources == ["u1", "a2", "a6"]
    assert by_text["src/report.py"].details == ["read", "mentioned", "edited"]
    assert by_text["pytest -q tests/test_report.py"].sources == ["a4", "t5"]
    assert by_text["pytest -q tests/test_report.py"].details == ["exit 1"]
    assert by_text["Could not find the exact text in src/report.py"].details == ["edit failed"]
    assert by_text["Could not find the exact text in src/report.py"].sources == ["t7"]
    assert by_text["Keep the column order stable."].sources == ["u8"]
    # Error lines inside a file read are code, not errors; what was kept is not summarized.
    assert "Error: not in this session" not in " ".join(by_text)
    assert "docs_index" not in by_text
    assert audit.missing_entry_ids() == {"t5", "t7", "u1", "u8"}


def test_scores_per_category_and_overall():
    audit = audit_entry(work_session().tree, "c12")
    assert audit.scores() == {"files": 100, "commands": 100, "errors": 0, "identifiers": 100,
                              "urls": 0, "versions": 0, "instructions": 50}
    assert audit.score() == 50  # 4 of 9 facts, one of them a test run, which weighs 2: 5 of 10
    full = audit_entry(work_session(SUMMARY + " Keep column order stable; spec at https://example.com/spec "
                                    "(pandas 2.1.4). FAILED test_export with AssertionError. Could not find "
                                    "the exact text to edit.").tree, "c12")
    assert full.missing() == [] and full.score() == 100


@pytest.mark.parametrize("summary, covered", [
    ("Edited /home/ana/proj/src/report.py", True),  # the whole path, under another root
    ("Edited report.py", True),  # its last component
    ("Edited src/report.pyc", False),  # not the same name
    ("Edited myreport.py", False),
])
def test_paths_match_by_their_last_components(summary, covered):
    audit = audit_entry(work_session(summary).tree, "c12")
    assert ("files", "src/report.py") in texts(audit.covered() if covered else audit.missing())


def test_a_short_path_joins_the_one_longer_path_it_ends_with():
    b = Builder()
    b.user("Look at index.ts and at `util.py`.", id="u1")
    b.assistant("", id="a2", calls=[{"id": "r1", "name": "read", "arguments": {"path": "web/src/index.ts"}},
                                    {"id": "r2", "name": "read", "arguments": {"path": "api/src/index.ts"}},
                                    {"id": "r3", "name": "edit", "arguments": {"path": "lib/util.py"}}])
    b.user("next", id="u3")
    b.add("compaction", id="c4", summary="-", firstKeptEntryId="u3")
    audit = audit_entry(Session(MemoryStorage(b.data())).tree, "c4")
    files = {f.text: (f.sources, f.details) for f in audit.of("files")}
    assert files == {"index.ts": (["u1"], ["mentioned"]),  # two files end so: it stays apart
                     "web/src/index.ts": (["a2"], ["read"]), "api/src/index.ts": (["a2"], ["read"]),
                     "lib/util.py": (["u1", "a2"], ["edited", "mentioned"])}


def test_identifiers_match_case_sensitively():
    assert ("identifiers", "export_csv") in texts(audit_entry(work_session("EXPORT_CSV").tree, "c12").missing())
    assert ("identifiers", "export_csv") in texts(audit_entry(work_session("calls export_csv()").tree, "c12").covered())
    assert ("identifiers", "export_csv") in texts(audit_entry(work_session("export_csv_v2").tree, "c12").missing())


def test_a_second_compaction_carries_the_previous_summary_and_what_it_kept():
    b = Builder()
    b.user("Start the parser.", id="u1")
    b.assistant("ok", id="a2")
    b.user("Always run `make lint` first.", id="u3")
    b.add("compaction", id="c4", summary="Parser started in lib/parse.py (see RFC https://rfc.example/7159).",
          firstKeptEntryId="u3", details={"readFiles": ["lib/grammar.txt"], "modifiedFiles": []})
    b.assistant("Linted.", id="a5")
    b.user("Now the tests.", id="u6")
    b.assistant("ok", id="a7")
    b.add("compaction", id="c8", summary="Parser in lib/parse.py; run `make lint` always first.", firstKeptEntryId="u6")
    audit = audit_entry(Session(MemoryStorage(b.data())).tree, "c8")
    assert audit.span == ["c4", "u3", "a5"]
    assert texts(audit.missing()) == {("urls", "https://rfc.example/7159"), ("files", "lib/grammar.txt")}
    assert texts(audit.covered()) == {("files", "lib/parse.py"), ("instructions", "Always run `make lint` first.")}
    assert {f.text: f.sources for f in audit.facts}["lib/grammar.txt"] == ["c4"]


def test_an_old_cut_at_a_tool_result_still_tells_its_span():
    b = Builder()
    b.user("Read `setup.cfg` please.", id="u1")
    b.assistant("", id="a2", calls=[{"id": "r1", "name": "read", "arguments": {"path": "setup.cfg"}}])
    b.tool_result("r1", "[metadata]", id="t3")
    b.assistant("It holds metadata.", id="a4")
    b.add("compaction", id="c5", summary="Read the config.", firstKeptEntryId="t3")  # pi refuses this cut today
    audit = audit_entry(Session(MemoryStorage(b.data())).tree, "c5")
    assert audit.problem is None and audit.span == ["u1", "a2"]
    assert texts(audit.missing()) == {("files", "setup.cfg")}


def test_branch_summary_audit_lists_what_the_abandoned_branch_did():
    b = Builder()
    b.user("Fix the login bug.", id="u1")
    b.assistant("Looking.", id="a2")
    b.user("Never push to main.", id="u3")
    b.assistant("", id="a4", calls=[{"id": "k1", "name": "bash", "arguments": {"command": "git push origin fix-login"}}])
    b.tool_result("k1", "error: failed to push some refs\nCommand exited with code 1", name="bash", id="t5")
    b.add("branch_summary", id="b6", parent="a2", fromId="t5", summary="Tried to push the fix-login branch.")
    audit = audit_entry(Session(MemoryStorage(b.data())).tree, "b6")
    assert audit.kind == "branch_summary" and audit.span == ["u3", "a4", "t5"]
    assert texts(audit.missing()) == {("instructions", "Never push to main."),
                                      ("commands", "git push origin fix-login"),
                                      ("errors", "error: failed to push some refs")}
    assert audit.covered() == []
    assert {f.text: f.details for f in audit.facts}["git push origin fix-login"] == ["exit 1"]


def test_preview_audits_a_summary_not_written_yet_with_the_file_lists_it_will_get():
    session = work_session()
    plan = plan_compaction(session.tree, "a11", first_kept="u10")  # what c12 was made from
    assert plan.can_compact
    before = session.storage.read_from(0)
    audit = audit_plan(plan, "nothing useful")
    assert audit.kind == "preview" and audit.summary_id is None
    assert audit.span == ["u1", "a2", "t3", "a4", "t5", "a6", "t7", "u8", "a9"]
    assert ("files", "src/report.py") in texts(audit.covered())  # in the appended <modified-files>
    assert ("urls", "https://example.com/spec") in texts(audit.missing())
    assert ("urls", "https://example.com/spec") in texts(audit_plan(plan, "see https://example.com/spec").covered())
    assert session.storage.read_from(0) == before


def test_judge_opinion_is_a_separate_column():
    audit = audit_entry(work_session().tree, "c12")
    asked = []

    def ask(prompt):
        asked.append(prompt)
        return "Yes\nIt says the spec is elsewhere." if "example.com" in prompt else "no\nNot mentioned."

    judge(audit, ask, "test-model")
    assert len(asked) == len(audit.missing()) == 5
    assert SUMMARY in asked[0]
    opinions = {f.text: f.judge for f in audit.facts}
    assert opinions["https://example.com/spec"] == "implied"
    assert opinions["2.1.4"] == "not implied"
    assert opinions["src/report.py"] is None  # covered facts are not asked about
    assert audit.score() == 50 and audit.judged_by == "test-model"
    assert audit.as_dict()["facts"]["urls"][0]["modelOpinion"] == {"verdict": "implied", "reason": "It says the spec is elsewhere."}


def test_not_a_summary_is_refused():
    with pytest.raises(ValueError, match="not a compaction"):
        audit_entry(work_session().tree, "u1")


def strings(value) -> str:
    """Every string inside a JSON value, whitespace squashed: the text an entry holds."""
    if isinstance(value, str):
        return " ".join(value.split())
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return " ".join(strings(v) for v in items)


def test_real_pi_session_with_two_compactions():
    """The audit runs on a real v1 file, and each missing fact points at entries that hold it."""
    tree = Session.open(FIXTURES / "pi" / "pi-mono_before-compaction.jsonl").tree
    compactions = [e for e in summaries_on_path(tree, tree.active_leaf) if e.type == "compaction"]
    assert len(compactions) == 2
    for c in compactions:
        audit = audit_entry(tree, c.id)
        assert audit.problem is None and len(audit.span) > 100
        assert audit.missing() and audit.covered()
        assert set(audit.as_dict()["scores"]) == set(CATEGORIES)
        for fact in audit.missing():
            assert fact.sources and set(fact.sources) <= set(audit.span)
            held = " ".join(strings(tree.by_id[i].raw) for i in fact.sources)
            assert fact.text[:20] in held, (c.id, fact)


def test_a_claude_code_compaction_summarized_all_the_context_before_it():
    """Claude Code's compact boundary names no kept entry: the whole context before it was replaced."""
    tree = Session.open(FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl").tree
    [comp] = summaries_on_path(tree, tree.active_leaf)
    audit = audit_entry(tree, comp.id)
    assert audit.problem is None
    assert audit.span == ["u1", "a1", "b2u", "b2a", "b2u2", "b2a2"]  # the context at its parent
    assert texts(audit.missing()) == {("instructions", "Keep going")}


def lost_in_one_branch() -> Session:
    """u1 a2, then branch A: u3 a4 u5 c6 (a compaction losing u3's instruction) and branch B: u7 a8."""
    b = Builder()
    b.user("Start the linter work.", id="u1")
    b.assistant("ok", id="a2")
    b.user("Always run `make lint` before committing.", id="u3")
    b.assistant("Noted.", id="a4")
    b.user("Go on.", id="u5")
    b.add("compaction", id="c6", summary="Linter work started.", firstKeptEntryId="u5")
    b.user("Try another way.", id="u7", parent="a2")
    b.assistant("Trying.", id="a8")
    return Session(MemoryStorage(b.data()))


def test_compare_counts_the_facts_each_branch_lost_to_compactions():
    from webapp.core.compare import FIGURE_ROWS, compare, comparison_data

    tree = lost_in_one_branch().tree
    assert texts(audit_entry(tree, "c6").missing()) == {("instructions", "Always run `make lint` before committing.")}
    data = comparison_data(compare(tree, ["c6", "a8"]))
    row = next(r for r in FIGURE_ROWS if r.key == "lost_facts")
    assert row.title == "Facts lost by compactions"
    assert [b["figures"]["lost_facts"] for b in data["branches"]] == [
        {"after_divergence": 1, "whole_path": 1}, {"after_divergence": 0, "whole_path": 0}]


_HINT_SAMPLES = [
    "plain words, nothing else", "see src/app.py and app.py then ./run.sh", "~/notes.md, ../up/x.ts",
    "v1.2 and 3.4.5-rc.1 but not 1.2", "ValueError: bad", "FAILED tests/x.py::t", "E   assert 1 == 2",
    "src/a.ts(3,4): error TS2322: no", "error[E0308]: mismatched", "  error: x", "Error\u2028E  x",
    "a\rE  b", "fine.\nall good", "report.py.bak", "@notes.md +x.py", "e.g. 10.5", "a/b", "/", ".",
]


@pytest.mark.parametrize("text", _HINT_SAMPLES)
def test_the_audits_shortcuts_find_what_the_whole_patterns_find(text):
    """The collector skips a pattern on a text lacking what every match of it holds (a `/` for a
    path's first two forms, a digit-dot-digit for a version, an error line's words): each shortcut
    finds exactly what the whole pattern finds."""
    from webapp.core import audit

    if "/" not in text:
        assert [m.group(0) for m in audit._NAME_PATH.finditer(text)] == [m.group(0) for m in audit._PATH.finditer(text)]
    if not audit._DIGIT_DOT_DIGIT.search(text):
        assert not audit._VERSION.search(text)
    if any(audit._ERROR_LINE.search(line) for line in text.splitlines()):
        assert audit._ERROR_HINT.search(text)


def test_a_claude_code_compaction_after_a_long_context_still_summarized_all_of_it():
    """A compaction that names no kept entry replaced the whole context, however long: no cut is
    planned for it at the default budget (a 100,000-character message once left the audit only
    the entries before such a cut)."""
    data = (FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl").read_bytes()
    long = "Second attempt " + "at the export, with more words " * 3_300
    assert data.count(b'"text":"Second attempt"') == 1
    tree = Session(MemoryStorage(data.replace(b'"text":"Second attempt"', f'"text":"{long}"'.encode()))).tree
    [comp] = summaries_on_path(tree, tree.active_leaf)
    assert audit_entry(tree, comp.id).span == ["u1", "a1", "b2u", "b2a", "b2u2", "b2a2"]
