"""Sub-agent conversations (Claude Code's sidechains) as a reader reaches them: from the entry
that started them (the `Task` or `Agent` call), not as branches of the session.

A run hangs under its Task call's entry (`formats/claude.py`), beside the main path's next entry;
it is one conversation of its own, read from its first entry to its last. `subagent_runs` says
which run each call started (what a transcript links the call to); `runs_on` gives the runs
themselves, in order, for a page that prints them.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from .entries import Entry, tool_calls
from .entry_types import content_text
from .tree import SessionTree

TASK_TOOLS = frozenset({"Task", "Agent"})


@dataclass(frozen=True)
class Run:
    """A sub-agent's conversation: the entry it hangs under, its entries in order."""

    caller: str
    entries: list[Entry]

    @property
    def start(self) -> str:
        return self.entries[0].id


def starts_under(tree: SessionTree, entry_id: str) -> list[str]:
    """The first entries of the sub-agent runs started at `entry_id` (a main-line entry)."""
    if tree.by_id[entry_id].sidechain:
        return []
    return [c for c in tree.conversation_children(entry_id) if tree.by_id[c].sidechain]


def run_from(tree: SessionTree, caller: str, start: str) -> Run:
    """The run beginning at `start`: its entries down to its last (where a run forks, which a
    sub-agent's file does not do, the last child written is followed)."""
    entries, node = [], start
    while True:
        entries.append(tree.by_id[node])
        kids = [c for c in tree.conversation_children(node) if tree.by_id[c].sidechain]
        if not kids:
            return Run(caller, entries)
        node = kids[-1]


def runs_on(tree: SessionTree, entries: list[Entry]) -> list[Run]:
    """Every sub-agent run started by one of `entries`, in their order."""
    if not has_runs(tree):
        return []
    return [run_from(tree, e.id, s) for e in entries for s in starts_under(tree, e.id)]


def has_runs(tree: SessionTree) -> bool:
    """Whether the tree holds any sub-agent's entries (most files hold none: then no entry need
    be asked what it started). Found once per tree, as `subagent_runs` is."""
    found = _has_runs.get(tree)
    if found is None:
        found = _has_runs[tree] = any(e.sidechain for e in tree.entries)
    return found


@dataclass(frozen=True)
class SubAgentRun:
    root: str  # the run's first entry
    tip: str  # its last entry (the end of its last branch)
    entries: int


_runs: "weakref.WeakKeyDictionary[SessionTree, dict[str, SubAgentRun]]" = weakref.WeakKeyDictionary()
_has_runs: "weakref.WeakKeyDictionary[SessionTree, bool]" = weakref.WeakKeyDictionary()


def subagent_runs(tree: SessionTree) -> dict[str, SubAgentRun]:
    """Task call id -> the sub-agent run it started, found once per tree: by the `agentId` its
    result carries (newer files), else by the run's first message being the call's prompt."""
    found = _runs.get(tree)
    if found is None:
        found = _runs[tree] = _find(tree) if any(e.sidechain for e in tree.entries) else {}
    return found


def _find(tree: SessionTree) -> dict[str, SubAgentRun]:
    by_agent: dict[str, str] = {}  # agentId -> the call id its result answers
    by_prompt: dict[str, list[str]] = {}  # a Task call's prompt -> call ids, in file order
    for e in tree.entries:
        if e.sidechain:
            continue
        if e.role == "toolResult":
            details = e.message.get("details")
            agent = details.get("agentId") if isinstance(details, dict) else None
            if isinstance(agent, str) and isinstance(e.message.get("toolCallId"), str):
                by_agent[agent] = e.message["toolCallId"]
        for call in tool_calls(e):
            args = call.get("arguments")
            if call.get("name") in TASK_TOOLS and isinstance(args, dict) and isinstance(args.get("prompt"), str) \
                    and isinstance(call.get("id"), str) and call["id"]:
                by_prompt.setdefault(args["prompt"].strip(), []).append(call["id"])
    out: dict[str, SubAgentRun] = {}
    for e in tree.entries:
        parent = tree.parent.get(e.id)
        if not e.sidechain or (parent is not None and tree.by_id[parent].sidechain):
            continue
        source = e.source[0] if isinstance(e.source, list) and e.source else e.source
        agent = source.get("agentId") if isinstance(source, dict) else None
        call = by_agent.get(agent) if isinstance(agent, str) else None
        if call is None and e.role == "user":
            calls = by_prompt.get(content_text(e.message.get("content"), "\n").strip())
            call = calls.pop(0) if calls else None
        if call is not None and call not in out:
            out[call] = _run(tree, e.id)
    return out


def _run(tree: SessionTree, root: str) -> SubAgentRun:
    """The run from `root`: its size, and its tip (following the last child down)."""
    count, tip, stack = 0, root, [root]
    while stack:
        x = stack.pop()
        count += 1
        stack.extend(tree.children.get(x, ()))
    while kids := tree.children.get(tip, ()):
        tip = kids[-1]
    return SubAgentRun(root, tip, count)


def task_prompt(block: dict) -> tuple[str, str, str]:
    """A Task call's (description, sub-agent type, prompt), each '' when not given."""
    args = block.get("arguments") if isinstance(block.get("arguments"), dict) else {}
    return tuple(str(args.get(k) or "") for k in ("description", "subagent_type", "prompt"))  # type: ignore[return-value]
