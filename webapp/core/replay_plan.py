"""What a replay of a branch on another model sends and answers, worked out from the tree alone.

A replay takes a branch (its leaf), a start node on its path and a model: the user messages of
the branch after the start are sent again, in order, and the model works after each until it
answers without a tool call. This module says which messages those are, what the original branch
recorded for each tool call (keyed by the tool's name and the canonical JSON of its arguments,
so that the same call made again gets the same result), and, for a branch a replay wrote, what
it was a replay of and how its tool calls fared (SPEC §5d). Nothing here calls a model or writes.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import orjson

from .entries import CUSTOM, MESSAGE, MODEL_CHANGE, Entry, content_text, short_id, tool_calls
from .errors import InvalidWrite
from .outcome import REPLAY_STOP
from .tree import SessionTree

TOOL_MODES = ("recorded", "sandbox")
DEFAULT_MAX_STEPS = 20  # model calls: a model that keeps calling tools must not run for ever
DEFAULT_MAX_COPY_MB = 50.0  # the largest working directory a sandbox copies unless told
# What a replay's tool results record of how they were answered (`details.replay`).
HIT, MISS, RAN, REFUSED = "recorded", "not recorded", "sandbox", "refused"
UNFAIR_SHARE = 0.25  # misses above this share of the calls: the comparison is not a fair one
UNFAIR = "not a fair comparison: the model often asked for what the recording does not hold"


def canonical_arguments(arguments) -> str:
    """The arguments of a tool call as one canonical JSON text (keys sorted, no spaces), so that
    `{"b": 1, "a": 2}` and `{"a": 2, "b": 1}` are the same call."""
    try:
        return orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return repr(arguments)


def call_key(name, arguments) -> tuple[str, str]:
    return str(name), canonical_arguments(arguments)


@dataclass(frozen=True)
class Recorded:
    """A tool result as the original branch got it."""

    text: str
    is_error: bool


@dataclass
class ReplayPlan:
    leaf: str
    start: str
    prompts: list[Entry]  # the user messages after the start, in order
    answers_start: bool  # the start waits for the model (a user message or a tool result)
    recorded: dict[tuple[str, str], list[Recorded]] = field(default_factory=dict)

    @property
    def steps_needed(self) -> int:
        """At least one model call per prompt (and one for the start when it waits)."""
        return len(self.prompts) + (1 if self.answers_start else 0)


def _waits_for_model(tree: SessionTree, entry_id: str) -> bool:
    entry = tree.entry(tree.conversation_leaf(entry_id) or entry_id)
    return entry.type == MESSAGE and entry.role in ("user", "toolResult")


def recorded_results(path: list[Entry]) -> dict[tuple[str, str], list[Recorded]]:
    """Every tool call of `path` that has a recorded result: (name, canonical arguments) ->
    its results, in the order the branch got them (the same call made twice may have read a
    file before and after an edit)."""
    calls: dict[str, tuple[str, str]] = {}
    out: dict[tuple[str, str], list[Recorded]] = {}
    for e in path:
        if e.type != MESSAGE:
            continue
        if e.role == "assistant":
            for c in tool_calls(e):
                calls[str(c.get("id", ""))] = call_key(c.get("name", ""), c.get("arguments", {}))
        elif e.role == "toolResult":
            key = calls.pop(str(e.message.get("toolCallId", "")), None)
            if key is not None:
                text = content_text(e.message.get("content"))
                out.setdefault(key, []).append(Recorded(text, bool(e.message.get("isError"))))
    return out


def plan_replay(tree: SessionTree, leaf: str, start: str) -> ReplayPlan:
    """The replay of the branch ending at `leaf` from `start`; InvalidWrite (saying why) when the
    start is not on that branch or nothing after it would be sent, UnknownEntry for an id the
    session lacks. The recorded results are those of the part replayed, then (for a call the
    replayed part never made) those before the start."""
    tree.entry(leaf)
    tree.entry(start)
    path = tree.path(leaf)
    ids = [e.id for e in path]
    if start not in ids:
        raise InvalidWrite(f"{start} is not on the branch ending at {leaf}: a replay starts on the branch it replays")
    cut = ids.index(start) + 1
    prompts = [e for e in path[cut:] if e.type == MESSAGE and e.role == "user"]
    waits = _waits_for_model(tree, start)
    if not prompts and not waits:
        raise InvalidWrite(f"no user message follows {start} on the branch ending at {leaf}: nothing to replay")
    return ReplayPlan(leaf, start, prompts, waits, recorded_around(path, cut))


def recorded_around(path: list[Entry], cut: int) -> dict[tuple[str, str], list[Recorded]]:
    """The recorded results a replay of `path[cut:]` answers from: those of that part, then (for
    a call it never made) those before it, the latest first."""
    recorded = recorded_results(path[cut:])
    for key, results in recorded_results(path[:cut]).items():
        recorded.setdefault(key, list(reversed(results)))  # (the latest state first)
    return recorded


def default_start(tree: SessionTree, leaf: str) -> str | None:
    """Where a replay of `leaf` starts unless told: the branch point nearest above its last user
    messages (so its own part is replayed), else the parent of its first user message (so all
    of it is), None when the branch has no user message."""
    path = tree.path(leaf)
    users = [i for i, e in enumerate(path) if e.type == MESSAGE and e.role == "user"]
    if not users:
        return None
    for i in range(users[-1] - 1, -1, -1):
        if len(tree.conversation_children(path[i].id)) > 1:
            return path[i].id
    first = users[0]
    return path[first - 1].id if first > 0 else path[first].id


def start_choices(tree: SessionTree, leaf: str) -> list[Entry]:
    """The entries of a branch a replay may start at: its messages that leave something to send."""
    path = tree.path(leaf)
    out = []
    for i, e in enumerate(path):
        if e.type != MESSAGE:
            continue
        later_user = any(x.type == MESSAGE and x.role == "user" for x in path[i + 1:])
        if later_user or e.role in ("user", "toolResult"):
            out.append(e)
    return out


@dataclass
class ReplayInfo:
    """What a branch written by a replay says of itself: what it replays, how its tool calls were
    answered, and why it stopped (when a budget, a limit or a failure ended it)."""

    first: str  # the entry that records the replay
    replay_of: str
    replay_from: str
    tools: str
    model: str | None
    hits: int = 0
    misses: int = 0
    ran: int = 0
    refused: int = 0
    stop: dict | None = None  # the replay-stop entry's data

    @property
    def calls(self) -> int:
        return self.hits + self.misses + self.ran + self.refused

    @property
    def unfair(self) -> bool:
        """A recorded replay whose calls were often not in the recording: the model worked
        without what it asked for, so its branch is not a fair comparison."""
        return self.tools == "recorded" and self.misses > 0 and self.misses > UNFAIR_SHARE * self.calls

    def summary(self) -> str:
        """One line a person reads: "replay of leaf X from Y, recorded tools: 5 hits, 2 misses"."""
        line = f"replay of leaf {short_id(self.replay_of)} from {short_id(self.replay_from)}"
        if self.model:
            line += f" on {self.model}"
        if self.tools == "recorded":
            line += f", recorded tools: {counted(self.hits, 'hit')}, {counted(self.misses, 'miss')}"
        else:
            line += f", sandbox tools: {counted(self.ran, 'call')} run"
            if self.refused:
                line += f", {self.refused} refused"
        if self.unfair:
            line += f" ({UNFAIR})"
        if self.stop:
            line += f"; stopped: {self.stop.get('reason')}"
        return line


def counted(count: int, word: str) -> str:
    """`1 hit`, `2 hits`, `1 miss`, `2 misses`."""
    plural = word + ("es" if word.endswith(("s", "sh")) else "s")
    return f"{count} {word if count == 1 else plural}"


def is_replay_stop(entry: Entry) -> bool:
    return entry.type == CUSTOM and entry.get("customType") == REPLAY_STOP


def replay_details(entry: Entry) -> dict | None:
    """The `details` of an entry that records a replay (SPEC §5d), else None."""
    details = entry.get("details") if entry.type == MESSAGE else None
    if isinstance(details, dict) and isinstance(details.get("replayOf"), str):
        return details
    return None


_FIRSTS: "weakref.WeakKeyDictionary[SessionTree, frozenset[str]]" = weakref.WeakKeyDictionary()


def replay_firsts(tree: SessionTree) -> frozenset[str]:
    """The ids of the entries that record a replay (its first replies), found once per tree. A
    replay's branch begins with its `model_change`, then (perhaps) a user message, then its first
    reply: only the first assistant message below each model change can be one, so a few bodies
    are read (model changes are few), never every entry's, and a file without replays answers every
    branch at once (the Branches tab asks of every one)."""
    found = _FIRSTS.get(tree)
    if found is None:
        by_id, children = tree.by_id, tree.children
        out = set()
        for e in [e for e in by_id.values() if e.type == MODEL_CHANGE]:
            below = children.get(e.id, ())
            for _ in range(2):  # the model change's children, or those of the user message after it
                after = []
                for c in below:
                    if by_id[c].role != "assistant":
                        after.extend(children.get(c, ()))
                    elif replay_details(by_id[c]) is not None:
                        out.add(c)
                below = after
        _FIRSTS[tree] = found = frozenset(out)
    return found


def replay_info(tree: SessionTree, node: str) -> ReplayInfo | None:
    """The replay the branch through `node` was written by (the nearest one above it), with its
    tool calls counted down to the end of its part of the branch; None when no replay wrote it.
    The walk up follows parent ids only (no path is built): most branches were no replay."""
    firsts = replay_firsts(tree)
    if not firsts:
        return None
    tree.entry(node)
    by_id, made_roots, up, cur = tree.by_id, tree.parent.made_roots, [], node
    while cur is not None and cur not in firsts:
        up.append(cur)
        cur = None if cur in made_roots else by_id[cur].parent_id
    if cur is None:
        return None
    e = tree.by_id[cur]
    details = replay_details(e)
    info = ReplayInfo(e.id, details["replayOf"], str(details.get("replayFrom", "")),
                      str(details.get("tools", "recorded")), e.message.get("model"))
    tip = [e, *(tree.by_id[x] for x in reversed(up))]
    kids = tree.conversation_children(tip[-1].id)
    while len(kids) == 1:  # down to the end of the replay's own part
        tip.append(tree.entry(kids[0]))
        kids = tree.conversation_children(kids[0])
    for x in tip:
        if x.type == MESSAGE and x.role == "toolResult":
            details = x.message.get("details")
            how = details.get("replay") if isinstance(details, dict) else None
            if how == HIT:
                info.hits += 1
            elif how == MISS:
                info.misses += 1
            elif how == RAN:
                info.ran += 1
            elif how == REFUSED:
                info.refused += 1
        elif is_replay_stop(x) and isinstance(x.get("data"), dict):
            info.stop = x.get("data")
    return info
