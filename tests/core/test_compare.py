"""Branch comparison (webapp.core.compare) on hand-built trees: where branches part, how their
turns line up, and the figures each branch gets."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import Builder
from webapp.core.compaction import plan_compaction
from webapp.core.summary_writes import write_compaction
from webapp.core.align import align_sequences
from webapp.core.compare import (
    FIGURE_ROWS,
    common_prefix,
    compare,
    comparison_data,
    figures,
    outcome,
    split_turns,
    word_diff,
    words,
)
from webapp.core.errors import UnknownEntry
from webapp.core.session import Session

HEADER = orjson.dumps(
    {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
) + b"\n"


def user(text):
    return {"type": "message", "message": {"role": "user", "content": text}}


def assistant(text="", calls=(), cost=0.0, model="m1", tokens=None, sent=0):
    content = ([{"type": "text", "text": text}] if text else []) + [
        {"type": "toolCall", "id": cid, "name": name, "arguments": {"path": path}} for cid, name, path in calls
    ]
    msg = {"role": "assistant", "content": content, "provider": "p", "model": model, "stopReason": "stop",
           "usage": {"input": sent, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens or 0,
                     "cost": {"total": cost}}}
    return {"type": "message", "message": msg}


def result(call_id, name, error=False):
    return {"type": "message", "message": {"role": "toolResult", "toolCallId": call_id, "toolName": name,
                                           "content": [{"type": "text", "text": "out"}], "isError": error}}


class Tree:
    """A session in memory; `add(fields, after)` appends with an explicit parent, returns the id."""

    def __init__(self):
        self.session = Session.in_memory(HEADER)

    def add(self, fields, after):
        return self.session.append(fields, parent=after)["id"]

    def chain(self, after, *fields):
        ids = []
        for f in fields:
            after = self.add(f, after)
            ids.append(after)
        return ids

    @property
    def tree(self):
        return self.session.tree


@pytest.fixture
def fork3():
    """A shared first turn, then three branches of 1, 2 and 3 turns after an assistant answer."""
    t = Tree()
    root_user, answer = t.chain(None, user("Fix the bug"), assistant("Found it"))
    a = t.chain(answer, user("Now add tests"), assistant("Added", [("c1", "write", "t.py")], cost=0.5))
    b = t.chain(answer, user("Now add docs"), assistant("Docs", cost=0.25), user("And a changelog"), assistant("Done"))
    c = t.chain(answer, user("Now add tests please"), assistant("Added"), user("More"), assistant("x"),
                user("Even more"), assistant("y"))
    return t, answer, a[-1], b[-1], c[-1]


def test_common_ancestor_of_three_branches_of_different_lengths(fork3):
    t, answer, a, b, c = fork3
    assert [e.id for e in common_prefix(t.tree, [a, b, c])] == [t.tree.parent[answer], answer]
    assert common_prefix(t.tree, [c, a])[-1].id == answer
    assert compare(t.tree, [a, b, c]).ancestor == answer


def test_branches_from_different_roots_share_nothing():
    t = Tree()
    (a,) = t.chain(None, user("one"))
    (b,) = t.chain(None, user("two"))
    cmp = compare(t.tree, [a, b])
    assert cmp.shared == [] and cmp.ancestor is None
    assert cmp.divergence == 0
    assert [[c.user_text for c in row.cells] for row in cmp.rows] == [["one", "two"]]


def test_divergence_at_the_root_message():
    """Two answers to the same first message: the root is shared, the turn continues differently."""
    t = Tree()
    root = t.add(user("Plan it"), None)
    (a,) = t.chain(root, assistant("Plan A"))
    (b,) = t.chain(root, assistant("Plan B"))
    cmp = compare(t.tree, [a, b])
    assert cmp.ancestor == root
    (row,) = cmp.rows
    assert row.continued and row.number == 1 and row.differs
    assert [c.answer.id for c in row.cells] == [a, b]


def test_turns_align_by_number_and_short_branches_leave_gaps(fork3):
    t, answer, a, b, c = fork3
    cmp = compare(t.tree, [a, b, c], alignment="number")
    assert len(cmp.shared) == 2 and [turn.number for turn in cmp.shared_turns] == [1]
    assert [row.number for row in cmp.rows] == [2, 3, 4]
    texts = [[cell.user_text if cell else None for cell in row.cells] for row in cmp.rows]
    assert texts == [
        ["Now add tests", "Now add docs", "Now add tests please"],
        [None, "And a changelog", "More"],
        [None, None, "Even more"],
    ]
    assert cmp.divergence == 0


def test_instruction_diffs_are_against_the_baseline_branch(fork3):
    t, answer, a, b, c = fork3
    row = compare(t.tree, [a, b, c]).rows[0]
    assert row.user_diffs[0] is None  # the reference itself
    assert ("insert", "docs") in row.user_diffs[1] and ("delete", "tests") in row.user_diffs[1]
    assert row.user_diffs[2] == [("equal", "Now add tests"), ("insert", " please")]
    row = compare(t.tree, [a, b, c], baseline=2).rows[0]
    assert row.user_diffs[2] is None
    assert row.user_diffs[0] == [("equal", "Now add tests"), ("delete", " please")]


def test_one_branch_a_prefix_of_another(fork3):
    t, answer, a, b, c = fork3
    cmp = compare(t.tree, [answer, c])
    assert cmp.ancestor == answer
    assert cmp.branches[0].turns == []
    assert all(row.cells[0] is None and row.differs for row in cmp.rows)
    assert len(cmp.rows) == 3 and cmp.divergence == 0


def test_a_replayed_turn_is_not_a_divergence():
    """Same instruction and answer typed again on a fork: the branches part where content differs."""
    t = Tree()
    root = t.add(user("Start"), None)
    a = t.chain(root, user("Same"), assistant("Same answer"), user("Go left"))
    b = t.chain(root, user("Same"), assistant("Same answer"), user("Go right"))
    cmp = compare(t.tree, [a[-1], b[-1]])
    assert [row.differs for row in cmp.rows] == [False, True]
    assert cmp.divergence == 1


def test_figures_count_turns_messages_tools_errors_cost_files_labels_models():
    t = Tree()
    first = t.add(user("Read and fix"), None)
    call = t.add(assistant("", [("c1", "read", "a.py"), ("c2", "read", "b.py")], cost=0.1), first)
    r1 = t.add(result("c1", "read"), call)
    r2 = t.add(result("c2", "read", error=True), r1)
    edit = t.add(assistant("", [("c3", "edit", "a.py")], cost=0.2, model="m2"), r2)
    r3 = t.add(result("c3", "edit"), edit)
    tip = t.add(assistant("Fixed", cost=0.3), r3)
    t.session.set_label(call, "reading")
    f = figures(t.tree, tip)
    assert (f.turns, f.assistant_messages, f.tool_errors) == (1, 3, 1)
    assert f.tool_calls == {"edit": 1, "read": 2}
    assert f.cost == pytest.approx(0.6)
    assert f.files_read == ["b.py"] and f.files_modified == ["a.py"]
    assert f.labels == [(call, "reading")]
    assert f.models == ["m1", "m2"]
    assert f.compactions == []


def test_wall_time_runs_from_the_first_to_the_last_timestamp():
    b = Builder()
    b.user("q", ts="2026-01-01T10:00:00.000Z")
    b.assistant("a", ts="2026-01-01T10:02:30.500Z")
    tip = b.user("again", ts="2026-01-01T10:05:00Z")
    session = Session.in_memory(b.data())
    assert figures(session.tree, tip).wall_seconds == 300.0


def test_a_compaction_on_one_side_shows_in_its_figures_only():
    t = Tree()
    root = t.add(user("x" * 4000), None)
    shared = t.add(assistant("y" * 4000, tokens=2500), root)
    plain = t.chain(shared, user("Plain side"), assistant("ok", tokens=2600))[-1]
    side = t.chain(shared, user("Compacted side"), assistant("z" * 400, tokens=2700))[-1]
    plan = plan_compaction(t.tree, side, keep_recent_tokens=50)
    comp = write_compaction(t.session, plan, "Summary of the work", {"readFiles": ["notes.md"]})
    tip = t.add(user("After the compaction"), comp["id"])
    cmp = compare(t.tree, [plain, tip])
    left, right = (b.mine for b in cmp.branches)
    assert left.compactions == [] and right.compactions == [comp["id"]]
    assert right.files_read == ["notes.md"] and left.files_read == []
    assert cmp.branches[0].context_tokens == 2600
    assert cmp.branches[1].context_tokens < 2600  # the summary replaced the long start of the context
    assert [row.number for row in cmp.rows] == [2, 3]
    assert [e.id for e in cmp.rows[0].cells[1].notable] == [comp["id"]]


def test_unknown_id_is_refused(fork3):
    t, answer, a, b, c = fork3
    with pytest.raises(UnknownEntry):
        compare(t.tree, [a, "nope"])


def test_split_turns_keeps_what_precedes_the_first_user_message():
    t = Tree()
    ids = t.chain(None, {"type": "model_change", "provider": "p", "modelId": "m"}, user("hi"), assistant("yo"))
    turns = split_turns(t.tree.path(ids[-1]))
    # The model change opens the turn of the prompt it comes before (a replay's branch begins so).
    assert [(turn.number, turn.continued, len(turn.entries)) for turn in turns] == [(1, False, 3)]
    assert turns[0].user_text == "hi" and turns[0].entries[0].type == "model_change"
    alone = split_turns(t.tree.path(ids[0]))  # with nothing after it, it is kept all the same
    assert [(turn.number, turn.continued, len(turn.entries)) for turn in alone] == [(0, True, 1)]


def test_word_diff_rebuilds_both_texts():
    a, b = "Keep it minimal: one line.", "Keep it small: one or two lines."
    ops = word_diff(a, b)
    assert "".join(t for op, t in ops if op != "insert") == a
    assert "".join(t for op, t in ops if op != "delete") == b
    assert ("delete", "minimal") in ops and ("insert", "small") in ops
    assert "".join(words(a)) == a


def test_existing_branch_summary_is_found_by_its_from_id(fork3):
    t, answer, a, b, c = fork3
    summary = t.add({"type": "branch_summary", "fromId": a, "summary": "Tests were added"}, answer)
    cmp = compare(t.tree, [a, b])
    assert cmp.branches[0].summary.id == summary
    assert cmp.branches[1].summary is None


# -- alignment by content --------------------------------------------------------------------------


def _prompts(cmp):
    return [[cell.user_text if cell else None for cell in row.cells] for row in cmp.rows]


def _fork(*branches):
    """A shared first turn, then one branch per list of (prompt, answer) pairs; returns the tips."""
    t = Tree()
    answer = t.chain(None, user("Fix the bug"), assistant("Found it"))[-1]
    tips = []
    for turns in branches:
        fields = [f for prompt, reply in turns for f in (user(prompt), assistant(reply))]
        tips.append(t.chain(answer, *fields)[-1])
    return t, tips


def test_an_inserted_turn_leaves_a_gap_in_the_other_branch():
    t, (a, b) = _fork(
        [("Add tests for the parser", "ok"), ("Update the changelog", "ok")],
        [("Add tests for the parser", "ok"), ("Run the linter on everything", "ok"), ("Update the changelog", "ok")],
    )
    cmp = compare(t.tree, [a, b])
    assert _prompts(cmp) == [
        ["Add tests for the parser", "Add tests for the parser"],
        [None, "Run the linter on everything"],
        ["Update the changelog", "Update the changelog"],
    ]
    assert [row.differs for row in cmp.rows] == [False, True, False]
    assert cmp.divergence == 1 and cmp.divergence_kind == "prompt"
    # by number, the same branches pair the changelog with the linter
    assert _prompts(compare(t.tree, [a, b], alignment="number"))[1] == ["Update the changelog", "Run the linter on everything"]


def test_a_skipped_turn_leaves_a_gap_and_later_turns_stay_paired():
    t, (a, b) = _fork(
        [("Write the migration", "ok"), ("Backfill the old rows", "ok"), ("Deploy to staging", "ok")],
        [("Write the migration", "ok"), ("Deploy to staging", "ok")],
    )
    assert _prompts(compare(t.tree, [a, b])) == [
        ["Write the migration", "Write the migration"],
        ["Backfill the old rows", None],
        ["Deploy to staging", "Deploy to staging"],
    ]


def test_a_reworded_prompt_stays_on_its_row_with_a_word_diff():
    t, (a, b) = _fork(
        [("Add a --currency option to the invoice command", "Added"), ("Now document it", "ok")],
        [("Please add a --currency flag to the invoice command", "Added"), ("Now document it", "ok")],
    )
    cmp = compare(t.tree, [a, b])
    assert len(cmp.rows) == 2
    first = cmp.rows[0]
    assert first.prompts_differ and first.cells[0] and first.cells[1]
    assert ("insert", "flag") in first.user_diffs[1] and ("delete", "option") in first.user_diffs[1]
    assert cmp.divergence == 0 and cmp.divergence_kind == "prompt"


def test_unrelated_prompts_are_not_paired():
    t, (a, b) = _fork(
        [("Rename the config loader", "ok"), ("Speed up the CSV export", "ok")],
        [("Rename the config loader", "ok"), ("Translate the error messages to German", "ok")],
    )
    assert _prompts(compare(t.tree, [a, b])) == [
        ["Rename the config loader", "Rename the config loader"],
        ["Speed up the CSV export", None],
        [None, "Translate the error messages to German"],
    ]


def test_identical_branches_have_no_divergence():
    t, (a, b) = _fork([("One", "ok"), ("Two", "fine")], [("One", "ok"), ("Two", "fine")])
    cmp = compare(t.tree, [a, b])
    assert _prompts(cmp) == [["One", "One"], ["Two", "Two"]]
    assert not any(row.differs for row in cmp.rows)
    assert cmp.divergence is None and cmp.divergence_kind is None
    assert cmp.answer_diffs == [None, None]


def test_same_prompt_different_answer_diverges_at_the_answer():
    t, (a, b) = _fork([("Pick a name", "Call it totals")], [("Pick a name", "Call it sums")])
    cmp = compare(t.tree, [a, b])
    assert cmp.divergence == 0 and cmp.divergence_kind == "answer"
    assert cmp.rows[0].answer_diffs[1] == [("equal", "Call it "), ("delete", "totals"), ("insert", "sums")]


def test_progressive_alignment_of_three_sequences_keeps_every_index_once_and_in_order():
    seqs = [["a b", "c d", "e f"], ["c d", "e f"], ["a b", "x y", "e f"]]
    rows = align_sequences(seqs)
    for k, seq in enumerate(seqs):
        column = [r[k] for r in rows if r[k] is not None]
        assert column == list(range(len(seq)))
    assert [0, None, 0] in rows and [2, 1, 2] in rows


# -- figures after the divergence, outcomes ---------------------------------------------------------


def test_figures_after_the_divergence_leave_out_the_shared_part():
    t = Tree()
    first = t.add(user("Read it"), None)
    shared = t.chain(first, assistant("", [("c1", "read", "shared.py")], cost=1.0), result("c1", "read"),
                     assistant("Read", cost=1.0))[-1]
    t.session.set_label(first, "start")
    a = t.chain(shared, user("Edit a"), assistant("", [("c2", "edit", "a.py")], cost=0.5),
                result("c2", "edit", error=True), assistant("Edited a", cost=0.25))[-1]
    b = t.chain(shared, user("Edit b"), assistant("", [("c3", "edit", "b.py"), ("c4", "read", "shared.py")],
                cost=0.1), result("c3", "edit"), result("c4", "read"), assistant("Edited b"))[-1]
    t.session.set_label(a, "winner")
    cmp = compare(t.tree, [a, b])
    left, right = cmp.branches
    assert left.mine.cost == pytest.approx(0.75) and left.whole.cost == pytest.approx(2.75)
    assert (left.mine.turns, left.whole.turns) == (1, 2)
    assert (left.mine.tool_errors, right.mine.tool_errors) == (1, 0)
    assert left.mine.tool_calls == {"edit": 1} and left.whole.tool_calls == {"edit": 1, "read": 1}
    assert left.mine.files_modified == ["a.py"] and left.mine.files_read == []
    assert left.whole.files_read == ["shared.py"]
    assert right.mine.files_read == ["shared.py"]  # read again on its own part
    assert left.only_files == ["a.py"] and right.only_files == ["b.py", "shared.py"]
    assert left.unique_labels == ["winner"] and right.unique_labels == []  # "start" is shared history
    assert left.whole.labels == [(first, "start"), (a, "winner")]
    data = comparison_data(cmp)
    assert data["branches"][0]["figures"]["cost"] == {"after_divergence": pytest.approx(0.75),
                                                      "whole_path": pytest.approx(2.75)}
    assert {r.key for r in FIGURE_ROWS} <= set(data["branches"][1]["figures"])


def test_a_label_shared_by_two_of_three_branches_belongs_to_none_of_them(fork3):
    t, answer, a, b, c = fork3
    below = t.chain(c, user("Split here"), assistant("ok"))[-1]
    other = t.chain(c, user("Or here"), assistant("ok"))[-1]
    t.session.set_label(c, "good approach")
    cmp = compare(t.tree, [a, below, other])
    assert [br.unique_labels for br in cmp.branches] == [[], [], []]
    assert [lbl for _, lbl in cmp.branches[1].mine.labels] == ["good approach"]


def test_context_growth_is_measured_from_the_common_ancestor():
    t = Tree()
    root = t.add(user("Start"), None)
    shared = t.add(assistant("ok", tokens=1000), root)
    a = t.chain(shared, user("More"), assistant("ok", tokens=1800))[-1]
    b = t.chain(shared, user("Less"), assistant("ok", tokens=1200))[-1]
    cmp = compare(t.tree, [a, b])
    assert [(br.context_tokens, br.context_growth) for br in cmp.branches] == [(1800, 800), (1200, 200)]


def test_context_growth_and_the_context_sent_are_the_servers_count_when_another_server_answered():
    """An Ask on another model: its server counts the same prompt otherwise (a local model 3,016
    tokens where the recorded one counted 7.0k). The growth is measured on the count of the
    server that answered, and the context sent is that count, said to be the server's."""
    t = Tree()
    root = t.add(user("Start"), None)
    shared = t.add(assistant("ok", tokens=7000, sent=6990), root)
    asked = t.add(user("And the VAT?"), shared)
    same = t.add(assistant("ok", tokens=7100, sent=7000), asked)
    other = t.add(assistant("ok", tokens=3056, sent=3016, model="local"), asked)
    no_usage = t.add({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}],
                                                     "stopReason": "stop"}}, asked)
    cmp = compare(t.tree, [same, other, no_usage])
    growth = {br.tip: br.context_growth for br in cmp.branches}
    assert growth[same] == 100 and growth[other] == 40  # not 3,056 - 7,000-odd
    sent = {br.tip: br.context_sent for br in cmp.branches}
    assert sent[other] == {"sent_tokens": 3016, "sent_estimated": False}
    assert sent[no_usage]["sent_estimated"] is True and sent[no_usage]["sent_tokens"] == cmp.shared_tokens


def _stopped(text, stop, calls=(), error=None):
    fields = assistant(text, calls)
    fields["message"]["stopReason"] = stop
    if error:
        fields["message"]["errorMessage"] = error
    return fields


@pytest.mark.parametrize("last, status", [
    (lambda: _stopped("All done", "stop"), "answered"),
    (lambda: _stopped("", "error", error="overloaded"), "error"),
    (lambda: _stopped("Half", "aborted"), "aborted"),
    (lambda: _stopped("Let me look", "toolUse", [("c9", "read", "x.py")]), "waiting_tool"),
    (lambda: user("Are you there?"), "waiting"),
])
def test_outcome_status_of_a_branch(last, status):
    t = Tree()
    first = t.chain(None, user("Go"), assistant("An earlier answer"))[-1]
    tip = t.add(last(), first)
    out = outcome(t.tree.path(tip))
    assert out.status == status
    expected_answer = "All done" if status == "answered" else "Half" if status == "aborted" else \
        "Let me look" if status == "waiting_tool" else "An earlier answer"
    assert out.answer_text == expected_answer
    if status == "error":
        assert out.detail == "overloaded"


def test_the_outcome_of_each_compared_branch(fork3):
    t, answer, a, b, c = fork3
    waiting = t.add(user("Still there?"), c)
    cmp = compare(t.tree, [b, waiting, a])
    assert [br.outcome.status for br in cmp.branches] == ["answered", "waiting", "waiting_tool"]
    assert cmp.branches[2].outcome.detail == "write called, no result recorded"
    assert cmp.branches[0].outcome.answer_text == "Done"
    assert cmp.branches[1].outcome.answer_text == "y"  # its last answer, before the unanswered prompt
    assert cmp.answer_diffs[1] == [("delete", "Done"), ("insert", "y")]


def test_wall_time_leaves_out_the_pauses_of_a_path_a_branch_added_months_later_included():
    from webapp.core.compare import figures_of

    t = Tree()
    ids = t.chain(None, user("hi"), assistant("yo"), user("more"), assistant("done"))
    entries = t.tree.path(ids[-1])
    stamps = ["2025-03-01T10:00:00.000Z", "2025-03-01T10:00:30.000Z",  # a turn of 30 s
              "2026-12-04T20:00:00.000Z", "2026-12-04T20:01:00.000Z"]  # months later, a turn of 60 s
    for e, stamp in zip(entries, stamps):
        e.raw["timestamp"] = stamp
    assert figures_of(t.tree, entries).wall_seconds == 90.0  # not the 6,657 hours in between
