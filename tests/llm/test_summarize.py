"""Compaction and branch summaries: extractive (deterministic) and by a model (one call)."""

import pytest

from tests.conftest import Builder, lines_of
from tests.llm.conftest import rich_session
from webapp.core.compaction import plan_branch_summary, plan_compaction
from webapp.core.summary_writes import write_compaction
from webapp.core.errors import InvalidWrite
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.tree import SessionTree
from webapp.model.llm import ModelConfig, ModelError
from webapp.model.limits import estimated_tokens, summary_max_tokens
from webapp.model.summarize import (
    extractive_branch_summary,
    extractive_compaction_summary,
    fork_with_summary,
    model_compaction_summary,
    summarize_branch,
    summarize_compaction,
)

SECTIONS = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress",
            "### Blocked", "## Key Decisions", "## Next Steps", "## Critical Context"]
T100 = "x" * 400


def work_session() -> Builder:
    """A goal, a tool turn that edits a file, a constraint, an answer, and a last request."""
    b = Builder()
    b.user("Add retries to the HTTP client.")
    b.assistant("", calls=[{"id": "c1", "name": "read", "arguments": {"path": "src/http.py"}}])
    b.tool_result("c1", "class Client: ..." + T100)
    b.assistant("", calls=[{"id": "c2", "name": "edit", "arguments": {"path": "src/http.py"}}])
    b.tool_result("c2", "edited", name="edit")
    b.assistant("Retries added with exponential backoff." + T100)
    b.user("Never retry POST requests.")
    b.assistant("POST is now excluded from retries." + T100)
    b.user("Now write the tests." + T100)
    return b


def tree_of(b: Builder) -> SessionTree:
    return SessionTree(parse_bytes(b.data()))


def the_plan(b: Builder, keep: int = 100):
    tree = tree_of(b)
    return plan_compaction(tree, tree.active_leaf, keep_recent_tokens=keep)


# -- extractive ------------------------------------------------------------------------------------


def test_extractive_compaction_summary_quotes_the_session_in_the_model_sections():
    plan = the_plan(work_session())
    assert plan.first_kept_entry_id == "e9"
    text = extractive_compaction_summary(plan)
    assert text == extractive_compaction_summary(the_plan(work_session()))  # deterministic
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert text.split("\n")[1] == "Add retries to the HTTP client."  # the goal: the first user message
    assert "- Never retry POST requests." in text  # a later user message: a constraint
    assert "- [x] POST is now excluded from retries." in text  # the last answers: progress
    assert "Files modified: src/http.py" in text
    assert "Now write the tests" not in text  # kept after the cut, not summarized


def test_extractive_update_keeps_the_previous_goal_and_bullets():
    b = work_session()
    first = the_plan(b)
    b.add("compaction", summary=extractive_compaction_summary(first), firstKeptEntryId="e9",
          tokensBefore=1000, details={"readFiles": [], "modifiedFiles": ["src/http.py"]})
    b.assistant("Tests written." + T100)
    b.user("Make the timeout configurable." + T100)
    plan = the_plan(b)
    assert plan.previous_summary
    text = extractive_compaction_summary(plan)
    assert text.split("\n")[1] == "Add retries to the HTTP client."  # not "Now write the tests."
    assert "- Never retry POST requests." in text  # carried over
    assert "Now write the tests." in text  # the new user message became a constraint
    assert "- [x] Tests written." in text and "- [x] POST is now excluded" in text
    assert "Files modified: src/http.py" in text  # cumulative from the previous compaction


def test_extractive_split_turn_is_in_progress():
    b = Builder()
    b.user("Refactor the storage layer." + T100)
    b.assistant("", calls=[{"id": "c1", "name": "read", "arguments": {"path": "a.py"}}])
    b.tool_result("c1", T100)
    b.assistant(T100)
    plan = the_plan(b, keep=150)
    assert plan.split_turn
    text = extractive_compaction_summary(plan)
    assert "- [ ] Refactor the storage layer." in text and "continues in the kept messages" in text


def test_extractive_branch_summary():
    b = Builder()
    b.user("Pick a parser.", id="u1")
    b.user("Try a regex approach.", id="u2")
    b.assistant("", id="a3", calls=[{"id": "c1", "name": "write", "arguments": {"path": "re_parse.py"}}])
    b.tool_result("c1", "ok", id="t4", name="write")
    b.assistant("Regex parser written; it is slow.", id="a5")
    tree = tree_of(b)
    plan = plan_branch_summary(tree, "a5", "u1")
    text = extractive_branch_summary(plan)
    assert text == extractive_branch_summary(plan_branch_summary(tree, "a5", "u1"))
    assert text.split("\n")[1] == "Try a regex approach."
    assert "- [x] Regex parser written; it is slow." in text and "Files modified: re_parse.py" in text
    assert all(s in text for s in SECTIONS)


def test_nothing_to_summarize_is_refused():
    tree = tree_of(work_session())
    with pytest.raises(InvalidWrite, match="nothing to compact"):
        extractive_compaction_summary(plan_compaction(tree, tree.active_leaf))
    with pytest.raises(InvalidWrite, match="nothing to summarize"):
        extractive_branch_summary(plan_branch_summary(tree, "e9", "e9"))


def test_without_a_model_the_summarizer_is_extractive():
    plan = the_plan(work_session())
    for config in (None, ModelConfig(None)):
        text, details = summarize_compaction(config, plan)
        assert details == {"summarizer": "extractive", "model": None, "label": "draft (no model)"}
        assert text == extractive_compaction_summary(plan)


# -- model -----------------------------------------------------------------------------------------


# what the fake server reports for each call (tests/fake_llm.py), priced at 0 (an unknown model)
USAGE = {"input": 12, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 17,
         "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0}}


def prompt_of(llm_server) -> str:
    system, user = llm_server.requests[-1]["messages"]
    assert system["role"] == "system" and "only the structured summary" in system["content"]
    return user["content"]


def test_model_summary_is_one_call_with_a_transcript_and_the_sections(llm_server, config):
    llm_server.behave("reply", text="## Goal\nRetries.")
    plan = the_plan(work_session())
    text, details = summarize_compaction(config, plan, instructions="Mention the backoff.")
    assert text == "## Goal\nRetries."
    assert details == {"summarizer": "model", "model": config.model, "usage": USAGE}
    assert len(llm_server.requests) == 1 and llm_server.requests[0]["stream"]  # timed out on silence only
    assert llm_server.requests[0]["max_tokens"] == summary_max_tokens(estimated_tokens(plan.messages_to_summarize()))
    prompt = prompt_of(llm_server)
    assert "[User]: Add retries to the HTTP client." in prompt
    assert '[Assistant tool call]: edit({"path":"src/http.py"})' in prompt and "[Tool result]: edited" in prompt
    assert "Now write the tests" not in prompt  # kept, not summarized
    assert all(s in prompt for s in SECTIONS) and "Mention the backoff." in prompt
    assert "<previous-summary>" not in prompt


def test_model_summary_updates_the_previous_summary(llm_server, config, tmp_path):
    session = Session.open(rich_session(tmp_path / "s.jsonl"))
    plan = plan_compaction(session.tree, "u10", keep_recent_tokens=5)
    model_compaction_summary(config, plan)
    prompt = prompt_of(llm_server)
    assert "<previous-summary>\n## Goal\nBuild a config parser.\n</previous-summary>" in prompt
    assert "UPDATE the previous summary" in prompt
    assert "[User]: Keep it in pure Python" in prompt  # kept by the previous compaction: summarized now
    assert "Tried a regex approach" in prompt  # the branch summary on the path


def test_model_summary_marks_the_early_part_of_a_split_turn(llm_server, config):
    b = Builder()
    b.user("Old question.")
    b.assistant("Old answer." + T100)
    b.user("Refactor the storage layer." + T100)
    b.assistant("", calls=[{"id": "c1", "name": "read", "arguments": {"path": "a.py"}}])
    b.tool_result("c1", T100)
    b.assistant(T100)
    plan = the_plan(b, keep=150)
    assert plan.split_turn and [e.id for e in plan.summarize] == ["e1", "e2"]
    model_compaction_summary(config, plan)
    prompt = prompt_of(llm_server)
    conversation, prefix = prompt.split("<turn-prefix>")
    assert "Old question." in conversation and "Refactor the storage layer." not in conversation
    assert "Refactor the storage layer." in prefix and "EARLY PART of a turn" in prefix


def test_model_branch_summary_and_its_failures(llm_server, config):
    tree = tree_of(work_session())
    plan = plan_branch_summary(tree, "e9", "e1")
    llm_server.behave("reply", text="## Goal\nBranch.")
    assert summarize_branch(config, plan) == ("## Goal\nBranch.", {"summarizer": "model", "model": config.model,
                                                                   "usage": USAGE})
    assert "BRANCH the user is leaving" in prompt_of(llm_server)
    llm_server.behave("reply", text="   ")
    with pytest.raises(ModelError, match="neither text nor tool calls"):
        summarize_branch(config, plan)
    llm_server.behave("429")
    with pytest.raises(ModelError) as e:
        summarize_branch(config, plan)
    assert e.value.kind == "rate-limit"  # a failing model is reported, not replaced by an extract


def test_a_model_summary_is_written_with_its_details(llm_server, config, tmp_path):
    path = work_session().write(tmp_path / "s.jsonl")
    session = Session.open(path)
    plan = plan_compaction(session.tree, session.tree.active_leaf, keep_recent_tokens=100)
    llm_server.behave("reply", text="## Goal\nRetries for the HTTP client.")
    entry = write_compaction(session, plan, *summarize_compaction(config, plan))
    assert entry["details"] == {"readFiles": [], "modifiedFiles": ["src/http.py"], "summarizer": "model",
                                "model": config.model}
    assert entry["usage"] == USAGE  # beside the details, where pi keeps a summary's usage
    assert entry["summary"].endswith("<modified-files>\nsrc/http.py\n</modified-files>")


def test_fork_with_summary_writes_a_branch_summary_at_the_new_leaf(tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    session = Session.open(path)
    result = fork_with_summary(session, "u10", "before")
    entry = lines_of(path.read_bytes())[-1]
    assert entry == result.entry and result.leaf_id == entry["id"] and result.edit_text == (
        "Now add error messages with line numbers.")
    assert entry["type"] == "branch_summary" and entry["fromId"] == "u10" and entry["parentId"] == "b9"
    assert entry["details"]["summarizer"] == "extractive"
    assert Session.open(path).tree.active_leaf == entry["id"]
