"""The offline summarizer as a draft people can use, and branch summaries across a compaction."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import PI_FIXTURES
from webapp.core.compaction import plan_branch_summary, plan_compaction
from webapp.core.entries import content_text
from webapp.core.session import Session
from webapp.model.summarize import (
    branch_prompt,
    extractive_branch_summary,
    extractive_compaction_summary,
    is_chatter,
    _section,
)
from webapp.web.app import create_app

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
RICH = next(SAMPLES.rglob("*019cadd3-8025-7970-85d9-5954058b4714.jsonl"))
COMPACTION = "019cade6-daa7-7c0a-a19a-fb01c3b51464"  # on the active branch of RICH
LARGE = next(p for p in PI_FIXTURES if p.name == "pi-mono_large-session.jsonl")


@pytest.mark.parametrize("text", ["yo", "ok", "OK!", "thanks", "Thank you.", "hmm", "?", "/mode", "continue",
                                  '{"type": "text", "items": [1, 2, 3]}', '[{"a": 1}, {"b": '])
def test_chatter(text):
    assert is_chatter(text)


@pytest.mark.parametrize("text", ["Keep EUR as the default currency.", "no, use Decimal", "Rewrite it properly"])
def test_not_chatter(text):
    assert not is_chatter(text)


def bullets(summary: str, title: str) -> list[str]:
    return [re.sub(r"^(?:-|\d+\.)\s*(?:\[[ x]\]\s*)?", "", ln) for ln in (_section(summary, title) or "").splitlines()]


def test_on_the_real_pi_file_the_sections_hold_no_chatter_and_done_no_narration():
    tree = Session.open(LARGE).tree
    plan = plan_compaction(tree, tree.active_leaf, 20000)
    summary = extractive_compaction_summary(plan)
    goal = _section(summary, "Goal")
    assert goal != "/mode" and goal.startswith("read packages/coding-agent/docs/theme.md")
    constraints = bullets(summary, "Constraints & Preferences")
    assert constraints and not any(is_chatter(c) or c.startswith(("{", "[")) for c in constraints)
    done = bullets(summary, "Done")
    # Done: files the tool calls changed, and the assistant's last word in a turn; never the
    # narration that accompanies a tool call ("Let me check ...").
    narration = {content_text(e.message.get("content")).strip().splitlines()[0]
                 for e in plan.summarize if e.role == "assistant" and e.message.get("content")
                 and any(b.get("type") == "toolCall" for b in e.message["content"])
                 and content_text(e.message.get("content")).strip()}
    assert any(d.startswith("Edited `") for d in done)
    assert not any(d in narration for d in done), done


def test_a_comparison_of_the_active_branch_never_says_it_was_left():
    tree = Session.open(RICH).tree
    active = tree.conversation_leaf(tree.active_leaf)
    for leaf in tree.leaves():
        ancestor = tree.common_ancestor(leaf, active) if leaf != active else tree.parent[tree.path(leaf)[-3].id]
        plan = plan_branch_summary(tree, leaf, ancestor)
        if plan.has_content:
            assert "was left" not in extractive_branch_summary(plan)


def docs_request(tree) -> str:
    """The user message, before the compaction, that asked for the docs section."""
    return next(e.id for e in tree.path(COMPACTION) if e.role == "user"
                and "docs/usage.md" in content_text(e.message.get("content")))


def test_a_branch_summary_that_meets_a_compaction_carries_its_summary_forward():
    tree = Session.open(RICH).tree
    old = tree.conversation_leaf(tree.active_leaf)
    plan = plan_branch_summary(tree, old, docs_request(tree))
    assert plan.compaction is not None and plan.compaction.id == COMPACTION
    assert "Rounding fixed" in plan.previous_summary
    assert "/home/ana/projects/invoice-api/docs/usage.md" in plan.modified_files  # the compaction's files count too
    summary = extractive_branch_summary(plan)
    assert "Rounding fixed" in summary and "Fix the rounding bug" in _section(summary, "Goal")
    prompt = branch_prompt(plan)
    assert prompt.startswith("<previous-summary>\n## Goal\nFix the rounding bug") and "Carry it forward" in prompt


def test_right_after_a_compaction_the_fork_form_offers_a_branch_summary(tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "s")
    rel = RICH.relative_to(SAMPLES).as_posix()
    session = Session.open(tmp_path / "s" / rel)
    session.fork(COMPACTION, "at")  # the active leaf is the compaction itself
    target = docs_request(session.tree)
    plan = plan_branch_summary(session.tree, COMPACTION, target)
    assert plan.entries == [] and plan.has_content
    client = create_app(tmp_path / "s").test_client()
    page = client.get(f"/s/{rel}/-/fork-form?node={target}&position=at", headers={"HX-Request": "true"})
    assert page.status_code == 200
    assert "The branch you are leaving" in page.get_data(as_text=True)
    assert "Summarize the branch I am leaving" in page.get_data(as_text=True)
