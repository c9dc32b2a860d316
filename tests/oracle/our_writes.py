"""Files session-tree writes, for pi to read: every kind of write the app makes, on copies of the
oracle's pi 1.6.0 trees (labels, forks, context edits, replies, compactions, branch summaries) and
a continuation of a pi v1 file (SPEC §5c). `pi_oracle.py fixtures` has pi 1.6.0 record them, and
the test suite checks that pi's context at every leaf is the one we show."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from webapp.core.compaction import plan_branch_summary, plan_compaction
from webapp.core.context_edits import is_editable
from webapp.core.continuation import continue_in_new_session
from webapp.core.errors import SessionError
from webapp.core.session import Session, user_message
from webapp.core.summary_writes import write_branch_summary, write_compaction

USAGE = {"input": 1200, "output": 300, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1500,
         "cost": {"input": 0.0036, "output": 0.0045, "cacheRead": 0, "cacheWrite": 0, "total": 0.0081}}


def _reply(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "openai-completions",
            "provider": "openai", "model": "gpt-5.1", "usage": USAGE, "stopReason": "stop", "timestamp": 1}


def _writes(session: Session, rng: random.Random) -> None:
    tree = session.tree
    leaf = tree.active_leaf
    path = tree.path(leaf)
    session.set_label(rng.choice(path).id, "checked")
    editable = [e for e in path if is_editable(e)]
    if editable:
        session.append_context_edit(rng.choice(editable).id, None)
        session.append_context_edit(rng.choice(editable).id, {"content": "Shortened by a person."})
    user = session.append_message(user_message("And now?"))
    session.append_message(_reply("Now this."), parent=user["id"])
    plan = plan_compaction(session.tree, session.tree.active_leaf, keep_recent_tokens=rng.choice([20, 40, 60]))
    if plan.can_compact:
        write_compaction(session, plan, "We worked on the parser.", {"usage": USAGE})
    old = session.tree.active_leaf
    target = rng.choice(session.tree.path(old)[:-2] or session.tree.path(old))
    session.fork(target.id, "at")
    session.append_message(user_message("Another way."))
    branch = plan_branch_summary(session.tree, session.tree.active_leaf, old)
    if branch.entries:
        write_branch_summary(session, branch, "We tried another way.", {"usage": USAGE})
    session.append_message(_reply("Back here."))


def write_our_files(sources: list[Path], out: Path, v1: Path, seed: int = 38) -> list[Path]:
    """Copies of `sources` in `out` with our writes appended, and a continuation of the pi v1 file
    `v1` (copied into `out`); returns the files written."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for src in sources:
        dst = out / f"ours-{src.name}"
        shutil.copyfile(src, dst)
        _writes(Session.open(dst), rng)
        files.append(dst)
    old = out / "ours-v1.jsonl"
    shutil.copyfile(v1, old)
    session = Session.open(old)
    try:
        session.append_message(user_message("refused"))
    except SessionError:
        pass
    made = continue_in_new_session(session, session.tree.active_leaf)
    continued = Session.open(made)
    continued.append_message(user_message("Continued here."))
    continued.append_message(_reply("In a file of its own."))
    files.append(made.rename(out / "ours-v1-continued.jsonl"))
    return files
