"""One name for a branch, the same in every view that lists branches side by side.

Branches made by asking several models the same question, or by replaying a branch on another
model, share their last prompt: named by it they all read alike. So a branch is named by what
tells it apart from the branches it is shown with: its own prompt where the prompts differ, else
the model that answered it, else its own label or its verdict, and only when nothing else differs
its id. Every view (compare headers, the Branches tab, the every-branch table, the replay
choices, the export, print) asks `branch_names` so that the same branch reads the same way.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from .entries import MESSAGE, MODEL_CHANGE, content_text, short_id
from .tree import SessionTree

NAME_WIDTH = 70  # characters of a name
MODEL_WALK = 5000  # entries walked up from a tip to find the model that answered it


@dataclass(frozen=True)
class BranchFacts:
    """What a branch could be named by, read from its tip upwards."""

    leaf: str
    prompt: str  # its last user message, on one line ("" when it has none)
    model: str  # the model of its last reply ("" when none says)
    label: str  # the nearest label on its own part (below its last fork point)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


def branch_facts(tree: SessionTree, leaf: str) -> BranchFacts:
    """The facts of the branch ending at `leaf`, found by walking up from it (never the whole
    path: a name costs the branch's last turn, not its depth)."""
    by_id, parent, labels = tree.by_id, tree.parent, tree.labels
    prompt = model = label = ""
    own = True  # still on the branch's own part (below its last fork point)
    node: str | None = leaf
    steps = 0
    while node is not None and steps < MODEL_WALK and not (prompt and model and (label or not own)):
        e = by_id[node]
        if own and not label and node in labels:
            label = _one_line(labels[node])
        if e.type == MESSAGE:
            if e.role == "user" and not prompt:
                prompt = _one_line(content_text(e.message.get("content")))
            elif e.role == "assistant" and not model:
                found = e.message.get("model")
                model = found if isinstance(found, str) else ""
        elif e.type == MODEL_CHANGE and not model:
            found = e.get("modelId")
            model = found if isinstance(found, str) else ""
        up = parent.get(node)
        if up is not None and len(tree.conversation_children(up)) > 1:
            own = False
        node = up
        steps += 1
    return BranchFacts(leaf, prompt, model, label)


def _names(facts: list[BranchFacts], verdicts: dict[str, str], width: int) -> dict[str, str]:
    """Each branch's prompt, with what tells it apart from the branches sharing that prompt."""
    by_prompt: dict[str, list[BranchFacts]] = {}
    for f in facts:
        by_prompt.setdefault(f.prompt, []).append(f)
    out: dict[str, str] = {}
    for prompt, group in by_prompt.items():
        for f in group:
            extra = ""
            if len(group) > 1:
                extra = _distinction(f, group, verdicts)
            base = prompt or "(no user message)"
            if extra:
                room = width - len(extra) - 3
                out[f.leaf] = f"{_cut(base, max(room, 12))} · {extra}"
            else:
                out[f.leaf] = _cut(base, width)
    return out


def _distinction(f: BranchFacts, group: list[BranchFacts], verdicts: dict[str, str]) -> str:
    """What sets `f` apart within `group` (branches with the same prompt): its model when the
    models differ, else its own label or verdict, else its id."""
    parts: list[str] = []
    if len({g.model for g in group}) > 1:
        parts.append(f.model or "no model named")
        same = [g for g in group if g.model == f.model]
    else:
        same = group
    if len(same) > 1:
        if len({g.label for g in same}) > 1 and f.label:
            parts.append(f"“{_cut(f.label, 30)}”")
        elif len({verdicts.get(g.leaf, "") for g in same}) > 1 and verdicts.get(f.leaf):
            parts.append(verdicts[f.leaf])
        else:
            parts.append(short_id(f.leaf))
    return " · ".join(parts)


def branch_names(tree: SessionTree, leaves: list[str], verdicts: dict[str, str] | None = None,
                 width: int = NAME_WIDTH) -> dict[str, str]:
    """Leaf id -> the name of its branch among `leaves` (the branches shown together):
    `verdicts` (leaf id -> a person's verdict word) tell apart branches alike in all else."""
    known = _every.get(tree) or {}
    facts = [known.get(leaf) or branch_facts(tree, leaf) for leaf in dict.fromkeys(leaves)]
    return _names(facts, verdicts or {}, width)


_every: "weakref.WeakKeyDictionary[SessionTree, dict[str, BranchFacts]]" = weakref.WeakKeyDictionary()


def _every_facts(tree: SessionTree) -> dict[str, BranchFacts]:
    """Leaf id -> the facts of every branch of the session, found once per tree (a tree does not
    change once built; a view naming many branches one at a time walks each once)."""
    facts = _every.get(tree)
    if facts is None:
        facts = _every[tree] = {leaf: branch_facts(tree, leaf) for leaf in tree.leaves()}
    return facts


def branch_name(tree: SessionTree, leaf: str, width: int = NAME_WIDTH, verdicts: dict[str, str] | None = None) -> str:
    """The name of one branch among every branch of its session (what a view showing that
    branch alone calls it: the name the lists give it). A node that is no leaf is named as the
    branch ending there would be."""
    facts = _every_facts(tree)
    mine = facts.get(leaf) or branch_facts(tree, leaf)
    alike = [f for f in facts.values() if f.prompt == mine.prompt and f.leaf != leaf]
    return _names([mine, *alike], verdicts or {}, width)[leaf]
