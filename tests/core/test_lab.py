"""The lab's plan from the tree alone: its target, cuts, candidates, audits, the recorded replies
its tests are read beside, and how its table ranks candidates; the run file it keeps."""

import orjson
import pytest

from tests.conftest import Builder
from tests.lab_session import SUMMARY, lab_session
from webapp.core.errors import InvalidWrite
from webapp.core.lab import (
    EXTRACTIVE, MAX_CANDIDATES, RECORDED, Cut, audit_candidate, candidate_specs, cut_choices, cuts_for, lab_target,
    plan_for, ranked, recorded_replies, recorded_spec, summary_diff, table_rows,
)
from webapp.core.lab_store import RunFile, check_run_name, list_runs, read_run
from webapp.core.reader import parse_bytes
from webapp.core.tree import SessionTree


def tree(compacted=True) -> SessionTree:
    return SessionTree(parse_bytes(lab_session(compacted).data()))


def test_a_lab_at_a_compaction_writes_beside_it_and_tests_with_the_turns_after_it():
    t = lab_target(tree(), "k1")
    assert (t.parent, t.leaf, t.recorded.id) == ("e2", "a12", "k1")
    assert [e.id for e in t.prompts] == ["u4", "u5", "u6"]
    assert not t.answers_start and t.testable
    assert t.recorded_summary == SUMMARY and t.recorded_cut == "u3"
    assert recorded_replies(t) == ["All 3 tests pass.", "Documented --strict in README.md.", "Committed as abc123."]


def test_a_lab_at_a_node_compacts_there_and_fewer_turns_are_asked_for():
    t = lab_target(tree(compacted=False), "e2", turns=2)
    assert (t.parent, t.recorded) == ("e2", None)
    assert [e.id for e in t.prompts] == ["u4", "u5"]
    assert len(recorded_replies(t)) == 2


def test_a_lab_at_a_user_message_first_answers_it():
    t = lab_target(tree(compacted=False), "u4", turns=2)
    assert t.answers_start and [e.id for e in t.prompts] == ["u5"]
    assert recorded_replies(t) == ["All 3 tests pass.", "Documented --strict in README.md."]


def test_at_the_leaf_there_is_nothing_to_test_and_it_says_so():
    t = lab_target(tree(), "a12")
    assert not t.testable
    assert "audited, not tested" in t.describe()


def test_cuts_are_the_recorded_one_and_spec_6s_per_budget_one_per_entry():
    t = lab_target(tree(), "k1")
    cuts = cuts_for(t, [5, 6, 100_000])
    assert cuts[0] == Cut("u3", None, "recorded cut")
    # 5 and 6 tokens cut at the same entry: one cut, named by the first budget; 100k leaves nothing to compact
    assert [c.keep for c in cuts[1:]] == [5]
    assert cuts[1].first_kept == plan_for(t, cuts[1]).first_kept_entry_id


def test_a_moved_cut_must_be_a_cut_point_of_the_context():
    t = lab_target(tree(), "k1")
    choices = [e.id for e in cut_choices(t)]
    assert "u2" in choices and "t1" not in choices and "u1" not in choices
    assert any(c.name == "moved cut" and c.first_kept == "u2" for c in cuts_for(t, [], "u2"))
    with pytest.raises(InvalidWrite, match="not a cut point"):
        cuts_for(t, [], "t1")


def test_nothing_to_compact_is_refused_with_the_budgets_named():
    t = lab_target(tree(compacted=False), "e2")
    with pytest.raises(InvalidWrite, match="nothing to compact .* 100,000 tokens"):
        cuts_for(t, [100_000])


def test_candidates_are_models_by_prompts_by_cuts_and_the_extractive_one_once_per_cut():
    cuts = [Cut("u3", None, "recorded cut"), Cut("u2", 100, "keep 100")]
    specs = candidate_specs(["m1", "m2", EXTRACTIVE], ["pi", "ours"], cuts)
    assert len(specs) == 2 * 2 * 2 + 2
    assert len({s.id for s in specs}) == len(specs)
    assert [s.prompt for s in specs if s.model == EXTRACTIVE] == [EXTRACTIVE, EXTRACTIVE]
    # the same lab asked again names its candidates alike (what a resumed run knows them by)
    assert [s.id for s in specs] == [s.id for s in candidate_specs(["m1", "m2", EXTRACTIVE], ["pi", "ours"], cuts)]
    with pytest.raises(InvalidWrite, match="at most"):
        candidate_specs([f"m{i}" for i in range(MAX_CANDIDATES)], ["pi", "ours"], cuts)
    with pytest.raises(InvalidWrite, match="at least one model"):
        candidate_specs([], ["pi"], cuts)


def test_the_recorded_summary_is_a_candidate_of_its_own():
    spec = recorded_spec(lab_target(tree(), "k1"))
    assert (spec.model, spec.prompt, spec.cut.first_kept) == (RECORDED, RECORDED, "u3")
    assert recorded_spec(lab_target(tree(compacted=False), "e2")) is None


def test_the_audit_of_a_candidate_says_what_it_kept_and_lost_per_category():
    t = lab_target(tree(), "k1")
    plan = plan_for(t, cuts_for(t, [])[0])
    kept = audit_candidate(plan, "Built src/importer.py; `pytest -q` failed with KeyError: 'amount'.")
    assert "src/importer.py" in kept.kept["files"]
    assert "pytest -q" in kept.kept["commands"]
    assert any("global state" in i for i in kept.lost["instructions"])
    assert kept.missing == sum(len(v) for v in kept.lost.values()) > 0
    assert 0 < kept.score < 100
    # the file lists the write appends count as carried: docs/spec.md is kept even unnamed
    assert "docs/spec.md" in kept.kept["files"]


def test_a_summary_diff_leaves_the_file_lists_out():
    ops = summary_diff("Goal: a.\n\n<read-files>\nx.py\n</read-files>", "Goal: b.")
    assert ("delete", "a") in ops and ("insert", "b") in ops
    assert not any("x.py" in text for _, text in ops)


def test_the_table_ranks_the_judges_word_first_then_the_audit_then_the_smaller_context():
    rows = ranked([
        {"id": "worse", "judge": "worse", "score": 100, "tokens_after": 10},
        {"id": "disagreed", "judge": "disagreed", "score": 100, "tokens_after": 10},
        {"id": "better", "judge": "better", "score": 10, "tokens_after": 900},
        {"id": "as-well-small", "judge": "as well", "score": 50, "tokens_after": 100},
        {"id": "as-well-big", "judge": "as well", "score": 50, "tokens_after": 200},
        {"id": "untested", "judge": None, "score": 100, "tokens_after": 1},
        {"id": "failed", "error": "the model failed", "judge": None},
    ])
    assert [r["id"] for r in rows] == ["better", "as-well-small", "as-well-big", "disagreed", "worse", "untested", "failed"]
    assert [r["rank"] for r in rows] == [1, 2, 3, 4, 5, 6, 7]


def test_table_rows_join_a_candidate_its_test_and_its_judgment():
    cand = {"id": "c1", "name": "m · pi · keep 5", "model": "m", "prompt": "pi", "cut": {"name": "keep 5", "first_kept": "u3"},
            "tokens_after": 700, "cost": 0.01, "kept": {"score": 80, "facts": 10, "kept": {"files": ["a"]},
                                                          "lost": {"errors": ["E"], "files": []}}}
    rows = table_rows([cand], {"c1": {"errors": 2, "tokens": 99}}, {"c1": {"verdict": "as well", "reference": "uncompacted"}})
    row = rows[0]
    assert (row["score"], row["missing"], row["files_kept"], row["errors_lost"]) == (80, 1, 1, 1)
    assert (row["test_errors"], row["judge"], row["rank"]) == (2, "as well", 1)


# -- the run file ---------------------------------------------------------------------------------------


def test_a_run_file_keeps_each_result_and_a_resumed_run_reads_what_is_done(tmp_path):
    run = RunFile.create("r1", {"settings": {"models": ["m"]}}, tmp_path)
    run.add("candidate", {"file": "f", "at": "k1", "id": "c1", "summary": "S"})
    run.add("candidate", {"file": "f", "at": "k1", "id": "c2", "error": "the model failed"})
    run.add("spend", {"tokens": 100, "cost": 0.5})
    run.add("spend", {"tokens": 20, "cost": 0.25})
    with open(run.path, "ab") as f:
        f.write(b'{"type": "test", "file": "f", "at"')  # a crash mid-line
    state = read_run(run.path)
    assert state.settings == {"models": ["m"]}
    assert state.done_candidate("f", "k1", "c1")["summary"] == "S"
    assert state.done_candidate("f", "k1", "c2") is None  # failed: made again on resume
    assert (state.spent_tokens, state.spent_cost, state.calls, state.bad_lines) == (120, 0.75, 2, 1)
    assert list_runs(tmp_path) == [run.path]
    assert oct(run.path.stat().st_mode & 0o777) == "0o600"


def test_a_run_name_is_checked_and_never_reused(tmp_path):
    RunFile.create("r1", {}, tmp_path)
    with pytest.raises(InvalidWrite, match="exists"):
        RunFile.create("r1", {}, tmp_path)
    for bad in ("../x", "", "a/b", ".hidden"):
        with pytest.raises(InvalidWrite, match="run name"):
            check_run_name(bad)
    assert orjson.loads((tmp_path / "r1.jsonl").read_bytes().splitlines()[0])["id"] == "r1"


def test_a_lab_at_the_first_message_has_nothing_to_cut():
    b = Builder()
    b.user("hello", id="u1")
    t = lab_target(SessionTree(parse_bytes(b.data())), "u1")
    with pytest.raises(InvalidWrite, match="nothing to compact"):
        cuts_for(t, [1])
    assert cut_choices(t) == []
