"""Codex rollouts read as Codex reads them when it resumes one: a `compacted` line without
`replacement_history` rebuilt as Codex rebuilds it, tool outputs sent whole, web searches and
compaction items kept in the context, a resumed rollout one line of history, and the token
counts known around a compaction."""

import orjson

from tests.conftest import FIXTURES
from webapp.core.context import build_context
from webapp.core.session import Session
from webapp.core.tree import WARNING_KINDS

OLDER = FIXTURES / "codex" / "reduced_older_rollout_compacted_without_history.jsonl"


def context_of(path):
    tree = Session.open(path).tree
    return tree, build_context(tree, tree.active_leaf)


def test_compacted_without_replacement_history_is_rebuilt_as_codex_does():
    tree, ctx = context_of(OLDER)
    texts = [(m["role"], m["content"]) for m in ctx.messages]
    assert texts[0][0] == "user" and texts[0][1].startswith("<environment_context>")
    assert texts[1] == ("user", "Fix the failing test in tests/test_api.py")
    assert texts[2][0] == "user" and texts[2][1].startswith("The user asked to fix tests/test_api.py.")
    assert texts[3] == ("user", "Now run the whole suite")
    assert texts[4] == ("assistant", "All 42 tests pass.")
    assert ctx.problems == [] and [p for p in tree.all_problems() if p.kind == "codex-rebuilt-history"] == []


def test_a_rollout_that_cannot_be_rebuilt_says_so(tmp_path):
    lines = [orjson.loads(x) for x in OLDER.read_bytes().splitlines()]
    del lines[1]  # no initial context recorded
    path = tmp_path / "rollout-2025-09-20T08-15-00-0199a3c2-7d10-7b31-9e55-2f0c1d4e8a01.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    tree, ctx = context_of(path)
    problems = [p for p in tree.all_problems() if p.kind == "codex-rebuilt-history"]
    assert len(problems) == 1 and "no initial context" in problems[0].message
    assert "codex-rebuilt-history" in WARNING_KINDS
    assert ctx.messages[0]["content"] == "Fix the failing test in tests/test_api.py"


def test_a_tool_output_in_the_old_json_envelope_is_sent_whole():
    tree, _ = context_of(OLDER)
    result = next(e for e in tree.entries if e.role == "toolResult")
    sent = orjson.loads(OLDER.read_bytes().splitlines()[result.line - 1])["payload"]["output"]
    full = build_context(tree, result.id)
    assert full.messages[-1] == {"role": "tool", "tool_call_id": "call_Rk2x", "content": sent, "entryId": result.id}
    assert result.message["isError"] is True


def test_web_searches_and_compaction_items_stay_in_the_context():
    tree, ctx = context_of(OLDER)
    search = next(e for e in tree.entries if e.line == 10)
    before = build_context(tree, search.id)
    assert before.messages[-1]["role"] == "assistant"
    assert before.messages[-1]["content"] == "[web search: pytest fixture not found conftest scope]"
    assert ctx.messages[-1] == {"role": "user", "content": "[compacted history: encrypted, 34 characters]",
                                "entryId": tree.entries[-1].id}


def test_a_resumed_rollout_is_one_line_of_history_with_the_token_counts_around_its_compaction():
    tree, _ = context_of(OLDER)
    assert len(tree.leaves()) == 1 and tree.branch_points() == []
    assert [e.id for e in tree.entries if tree.parent[e.id] is None] == [tree.entries[0].id]
    compaction = tree.compactions()[0]
    assert (compaction.get("tokensBefore"), compaction.get("tokensAfter")) == (12_000, 3_100)
