"""How a branch ended: answered, asks a question, checks failed, error, aborted, waiting; on
hand-made branches and on the invoice sample, in the core, the per-leaf figures and the compare."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.core.test_compare import Tree, _stopped, assistant, user
from webapp.core.compare import compare
from webapp.core.leaf_figures import leaf_figures, sort_leaves
from webapp.core.outcome import asks_question, outcome
from webapp.core.session import Session

RICH = next((Path(__file__).resolve().parents[2] / "sample_sessions").rglob("*019cadd3-8025-7970-85d9-5954058b4714.jsonl"))


def bash_call(call_id, command, text=""):
    return {"type": "message", "message": {
        "role": "assistant", "provider": "p", "model": "m1", "stopReason": "toolUse",
        "content": ([{"type": "text", "text": text}] if text else [])
        + [{"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": command}}]}}


def bash_result(call_id, output, error=False):
    return {"type": "message", "message": {"role": "toolResult", "toolCallId": call_id, "toolName": "bash",
                                           "content": [{"type": "text", "text": output}], "isError": error}}


def branch(*fields):
    t = Tree()
    ids = t.chain(None, user("Fix the failing test"), *fields)
    return t, outcome(t.tree.path(ids[-1]))


@pytest.mark.parametrize("text, asks", [
    ("Should I do that, or revert?", True),
    ("Done. Shall I also update the docs?**", True),
    ("Want me to run it?\n\n", True),
    ("Fixed. Why did it fail? Float rounding.", False),
    ("All 14 tests pass.", False),
])
def test_an_answer_asks_a_question_when_its_last_sentence_does(text, asks):
    assert asks_question(text) is asks


def test_a_failed_test_run_in_the_last_turn_is_checks_failed():
    _, out = branch(bash_call("c1", "python -m pytest -q"), bash_result("c1", "1 failed, 13 passed", error=True),
                    assistant("I changed the rounding."))
    assert out.status == "checks_failed"
    assert out.status_text == "checks failed"
    assert "python -m pytest -q" in out.detail and "exit" in out.detail


def test_failed_lines_in_an_exit_zero_output_count_too():
    _, out = branch(bash_call("c1", "make check"), bash_result("c1", "ok\nFAILED tests/test_x.py::test_y\n"),
                    assistant("Looks fine to me."))
    assert out.status == "checks_failed"
    assert "FAILED tests/test_x.py::test_y" in out.detail


def test_a_passing_rerun_after_a_failure_is_answered():
    _, out = branch(bash_call("c1", "pytest"), bash_result("c1", "1 failed", error=True),
                    bash_call("c2", "pytest"), bash_result("c2", "14 passed in 0.38s"),
                    assistant("Fixed: all tests pass."))
    assert out.status == "answered" and out.detail == ""


def test_a_failing_command_that_is_no_check_is_not_a_failed_check():
    _, out = branch(bash_call("c1", "pip show bleach"), bash_result("c1", "not found", error=True),
                    assistant("bleach is not installed, so I used nh3."))
    assert out.status == "answered"


def test_a_failure_in_an_earlier_turn_does_not_stick():
    t = Tree()
    ids = t.chain(None, user("Run the tests"), bash_call("c1", "pytest"), bash_result("c1", "boom", error=True),
                  assistant("They fail."), user("Thanks, that's all"), assistant("You're welcome."))
    assert outcome(t.tree.path(ids[-1])).status == "answered"


def test_a_user_run_check_counts_like_a_tool_call():
    _, out = branch({"type": "message", "message": {"role": "bashExecution", "command": "cargo test",
                                                    "output": "test result: FAILED", "exitCode": 101}},
                    assistant("Let me look at it."))
    assert out.status == "checks_failed" and "cargo test" in out.detail


def test_a_question_after_a_failed_check_asks_and_names_the_failure():
    _, out = branch(bash_call("c1", "pytest -q"), bash_result("c1", "E   TypeError: unsupported", error=True),
                    assistant("Two functions need changing. Should I do that, or revert?"))
    assert out.status == "question"
    assert out.detail.startswith("and the last check failed: `pytest -q`")


@pytest.mark.parametrize("last, status", [
    (lambda: _stopped("", "error", error="overloaded"), "error"),
    (lambda: _stopped("Half", "aborted"), "aborted"),
    (lambda: bash_call("c1", "pytest"), "waiting_tool"),
    (lambda: bash_result("c0", "x"), "waiting"),
])
def test_the_model_side_ends_come_first(last, status):
    t = Tree()
    ids = t.chain(None, user("Go"), bash_call("c0", "pytest"), bash_result("c0", "FAILED", error=True))
    tip = ids[-1] if status == "waiting" else t.add(last(), ids[-1])
    assert outcome(t.tree.path(tip)).status == status


@pytest.fixture
def rich(tmp_path):
    copy = tmp_path / RICH.name
    shutil.copyfile(RICH, copy)
    return Session.open(copy).tree


def _regression_leaf(tree):
    regressed = next(i for i, label in tree.labels.items() if label == "regression")
    return next(leaf for leaf in tree.leaves() if regressed in {e.id for e in tree.path(leaf)})


def test_the_invoice_samples_regression_branch_asks_a_question(rich):
    leaf = _regression_leaf(rich)
    cmp = compare(rich, [leaf, rich.conversation_leaf(rich.active_leaf)])
    assert cmp.branches[0].outcome.status == "question"
    assert "pytest" in cmp.branches[0].outcome.detail  # and its last test run failed
    row = next(r for r in leaf_figures(rich) if r.leaf.id == leaf)
    assert (row.status, row.status_text) == ("question", "asks a question")
    assert row.label == "regression" and row.inherited_label is None


def test_sorting_by_status_puts_what_needs_a_look_first(rich):
    rows = sort_leaves(leaf_figures(rich), "status")
    ranks = [r.status_rank for r in rows]
    assert ranks == sorted(ranks, reverse=True)
    assert rows[0].status != "answered" and rows[-1].status == "answered"


def test_a_label_on_the_shared_part_is_inherited_not_own(rich):
    good = next(i for i, label in rich.labels.items() if label == "good approach")
    below = [r for r in leaf_figures(rich) if good in {e.id for e in rich.path(r.leaf.id)}]
    assert len(below) >= 2  # the main line goes on in more than one branch below the label
    assert all(r.label != "good approach" for r in below)
    assert any(r.inherited_label == "good approach" for r in below)
    cmp = compare(rich, [b.leaf.id for b in below[:2]] + [_regression_leaf(rich)])
    first, second, regression = cmp.branches
    assert "good approach" not in first.unique_labels and "good approach" in first.inherited_labels
    assert regression.unique_labels == ["regression"]
