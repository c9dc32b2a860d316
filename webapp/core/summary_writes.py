"""Writing a planned compaction or branch summary (`compaction`'s plans) to its session.

As pi 1.6 writes them: the summarizer call's usage in the entry's own `usage` (what pi counts in
the session's cost), the rest of what drafted it in `details`; a compaction also carries the
system prompt and tools in force (`systemMessage`, added by `Session.append_compaction`).

Above the session: each write is one append through `Session`'s typed methods, which check the
cut point again under the file lock, so a session that moved on since the plan was made gets
nothing written and an error that says why.
"""

from __future__ import annotations

from .compaction import BranchSummaryPlan, CompactionPlan, with_file_lists
from .errors import InvalidWrite
from .session import Session
from .tokens import format_tokens
from .tree import SessionTree


def write_compaction(
    session: Session,
    plan: CompactionPlan,
    summary: str,
    details: dict | None = None,
    must_shrink: bool = False,
) -> dict:
    """Append the compaction the plan describes, with `summary`, after checking it again.
    `must_shrink` refuses one that would leave the context no smaller (a model's summary that ran
    on, the figures said); a summary a person supplies as a file is theirs to judge.

    The check runs under the lock: if the session moved on since the plan was made (another
    branch became active, the cut point vanished), nothing is written and the error says why.
    """
    if not plan.can_compact:
        raise InvalidWrite(plan.reason)
    if not summary.strip():
        raise InvalidWrite("the summary is empty")
    text = with_file_lists(summary, plan.read_files, plan.modified_files)
    after = plan.tokens_after(text)
    refusal = shrink_refusal(plan, summary) if must_shrink else None
    if refusal:
        raise InvalidWrite(refusal)

    def check(tree: SessionTree, parent_id: str | None) -> None:
        if plan.at_active_leaf and tree.active_leaf != plan.active_leaf:
            raise InvalidWrite("the session moved on since the compaction was planned: plan it again")

    details, usage = _without_usage(details)
    return session.append_compaction(
        text, plan.first_kept_entry_id, plan.tokens_before, after,
        {"readFiles": plan.read_files, "modifiedFiles": plan.modified_files, **details},
        parent=plan.leaf_id, check=check, usage=usage,
    )


def shrink_refusal(plan: CompactionPlan, summary: str) -> str | None:
    """Why a compaction with `summary` is refused as not shrinking the context, with the figures;
    None when it shrinks it. The preview says it before Commit is offered, the write refuses it."""
    after = plan.tokens_after(with_file_lists(summary, plan.read_files, plan.modified_files))
    if after < plan.tokens_before:
        return None
    return (f"this compaction would not shrink the context: {format_tokens(plan.tokens_before)} tokens now, "
            f"{format_tokens(after)} after (estimated, the summary included): shorten the summary, or keep fewer "
            "recent tokens")


def _without_usage(details: dict | None) -> tuple[dict, dict | None]:
    """`details` without the summarizer's usage, and that usage (pi keeps it beside them)."""
    details = dict(details or {})
    usage = details.pop("usage", None)
    return details, usage if isinstance(usage, dict) else None


def write_branch_summary(
    session: Session, plan: BranchSummaryPlan, summary: str, details: dict | None = None
) -> dict:
    """Append the branch summary at the new leaf; it becomes the active leaf."""
    if plan.old_leaf is None:
        raise InvalidWrite("there is no branch to summarize: the conversation was empty")
    text = with_file_lists(summary, plan.read_files, plan.modified_files)
    details, usage = _without_usage(details)
    details = {"readFiles": plan.read_files, "modifiedFiles": plan.modified_files, **details}
    return session.fork_with_summary(plan.new_leaf, "at", text, details, from_id=plan.old_leaf, usage=usage).entry
