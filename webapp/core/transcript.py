"""A path of the tree read as a conversation: which entries a transcript shows, grouped as a
reader expects (a tool result under the call it answers), filtered, and cut into windows.

Nothing here renders: the web layer turns `Item`s into HTML one window at a time, so a path of
100k entries costs a list of small objects, never 100k rendered entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .entries import (
    ACTIVE_TOOLS_CHANGE,
    BRANCH_SUMMARY,
    COMPACTION,
    CUSTOM_MESSAGE,
    MESSAGE,
    MODEL_CHANGE,
    SESSION_INFO,
    THINKING_LEVEL_CHANGE,
    Entry,
    content_text,
    tool_calls,
)
from .subagents import SubAgentRun, subagent_runs
from .tree import SessionTree

# What a transcript can show: every conversational entry, the same without tool traffic, only the
# user's messages, only labelled entries, or every entry (markers and custom data included).
FILTERS = ("default", "no-tools", "user", "labelled", "all")
FILTER_NAMES = {
    "default": "Default",
    "no-tools": "No tools",
    "user": "User only",
    "labelled": "Labelled",
    "all": "All entries",
}
WINDOW = 40  # items rendered per request: the first screen and each page after it

MARK_TYPES = (MODEL_CHANGE, THINKING_LEVEL_CHANGE, ACTIVE_TOOLS_CHANGE, SESSION_INFO)


@dataclass(frozen=True)
class Options:
    """How the transcript is read: the filter and two toggles, all carried in the URL."""

    filter: str = "default"
    thinking: bool = True  # show thinking blocks (folded)
    output: bool = True  # show tool results (folded under their call)

    @classmethod
    def from_args(cls, args) -> "Options":
        f = args.get("filter", "default")
        return cls(
            filter=f if f in FILTERS else "default",
            thinking=args.get("thinking", "show") != "hide",
            output=args.get("output", "show") != "hide",
        )

    def params(self) -> dict[str, str]:
        """The URL parameters that differ from the defaults."""
        out = {}
        if self.filter != "default":
            out["filter"] = self.filter
        if not self.thinking:
            out["thinking"] = "hide"
        if not self.output:
            out["output"] = "hide"
        return out

    def params_with(self, **changes) -> dict[str, str]:
        """The URL parameters of these options with some changed: what a filter link points to."""
        return replace(self, **changes).params()


@dataclass
class Item:
    """One shown entry; an assistant message carries the tool results that answer its calls."""

    entry: Entry
    kind: str  # user, assistant, tool, bash, custom, system, compaction, branch-summary, mark, meta
    at: int  # its index in the path
    results: dict[str, Entry] = field(default_factory=dict)  # toolCallId -> toolResult entry
    subagents: dict[str, SubAgentRun] = field(default_factory=dict)  # Task call id -> the run it started


def kind_of(entry: Entry) -> str:
    t = entry.type
    if t == MESSAGE:
        role = entry.role
        if role in ("user", "assistant"):
            return role
        return {"toolResult": "tool", "bashExecution": "bash", "custom": "custom", "system": "system"}.get(role or "", "meta")
    if t == CUSTOM_MESSAGE:
        return "custom"
    if t == COMPACTION:
        return "compaction"
    if t == BRANCH_SUMMARY:
        return "branch-summary"
    if t in MARK_TYPES:
        return "mark"
    return "meta"


def only_tool_calls(entry: Entry) -> bool:
    """An assistant turn with nothing to read but tool calls (no text)."""
    return bool(tool_calls(entry)) and not content_text(entry.message.get("content")).strip()


def _keep(item: Item, kind: str, options: Options, labels: dict[str, str]) -> bool:
    f = options.filter
    if f == "all":
        return True
    if f == "labelled":
        return item.entry.id in labels
    if f == "user":
        return kind == "user"
    if kind == "meta":
        return False
    if f == "no-tools":
        return kind != "tool" and not (kind == "assistant" and only_tool_calls(item.entry))
    return True


def path_to_leaf(tree: SessionTree, node: str, leaf: str | None = None) -> list[Entry]:
    """The path through `node`: root → node, then on to `leaf` when `node` lies on its path, else
    down to a tip, following the active branch where it goes on and the newest child elsewhere."""
    if not (leaf and leaf in tree.by_id and tree.is_ancestor(node, leaf)):
        leaf = descend(tree, node, tree.path_ids(tree.active_leaf) if tree.active_leaf else set())
    return tree.path(leaf)


def descend(tree: SessionTree, node: str, active: set[str]) -> str:
    """The tip below `node` a reader goes on to: along the active path (`active`, its ids) where
    it continues, else by the newest child."""
    kids = tree.conversation_children(node)
    while kids:
        node = next((k for k in kids if k in active), kids[-1])
        kids = tree.conversation_children(node)
    return node


@dataclass
class Transcript:
    path: list[Entry]
    items: list[Item]
    node: str | None  # the entry the reader asked for
    options: Options

    @property
    def leaf(self) -> str | None:
        return self.path[-1].id if self.path else None

    def index_of(self, entry_id: str | None) -> int:
        """The item showing `entry_id` (a tool result is shown by its call), or the last item
        before it when the filter hides it; 0 when it is not on the path."""
        if entry_id is None:
            return 0
        target = next((i for i, e in enumerate(self.path) if e.id == entry_id), None)
        if target is None:
            return 0
        best = 0
        for i, item in enumerate(self.items):
            if item.entry.id == entry_id or any(r.id == entry_id for r in item.results.values()):
                return i
            if item.at > target:
                break
            best = i
        return best

    def window(self, start: int, size: int = WINDOW) -> list[Item]:
        return self.items[max(0, start): max(0, start) + size]


def build_transcript(tree: SessionTree, node: str, leaf: str | None = None,
                     options: Options = Options()) -> Transcript:
    """The transcript of the path through `node` (see `path_to_leaf`), filtered by `options`."""
    path = path_to_leaf(tree, node, leaf)
    items = items_of(path, options, tree.labels)
    runs = subagent_runs(tree)
    if runs:
        for item in items:
            if item.kind == "assistant":
                item.subagents = {c["id"]: runs[c["id"]] for c in tool_calls(item.entry) if c.get("id") in runs}
    return Transcript(path, items, node, options)


def items_of(entries: list[Entry], options: Options, labels: dict[str, str]) -> list[Item]:
    """The items that show `entries` (consecutive entries of a path) under `options`."""
    items: list[Item] = []
    open_calls: dict[str, Item] = {}  # toolCallId -> the assistant item that made the call
    for at, e in enumerate(entries):
        kind = kind_of(e)
        if kind == "tool":
            call_id = e.message.get("toolCallId")
            owner = open_calls.get(call_id) if isinstance(call_id, str) else None
            if owner is not None:
                owner.results[call_id] = e
                if options.filter != "labelled" or e.id not in labels:
                    continue  # shown under its call (on its own only in the labelled filter)
        item = Item(e, kind, at)
        if kind == "assistant":
            open_calls = {c["id"]: item for c in tool_calls(e) if isinstance(c.get("id"), str)}
        elif kind == "user":
            open_calls = {}
        if _keep(item, kind, options, labels):
            items.append(item)
    return items


def other_branches(tree: SessionTree, path: list[Entry], index: int) -> list[str]:
    """The conversation children of `path[index]` that the path does not go on with (a
    sub-agent's run started there is no branch: `subagents.starts_under` names those)."""
    kids = tree.conversation_children(path[index].id)
    if len(kids) < 2:
        return []
    nxt = path[index + 1].id if index + 1 < len(path) else None
    on = tree.conversation_leaf(nxt) if nxt else None
    runs = () if path[index].sidechain else {k for k in kids if tree.by_id[k].sidechain}
    return [k for k in kids if k != nxt and k != on and k not in runs]


def turns(path: list[Entry]) -> list[int]:
    """Where each turn starts in `path`: at every user message. What comes before the first one
    is a turn of its own when it says something (a message, a summary), and otherwise (the
    model and thinking settings a session opens with) belongs to the first turn. A presenter
    steps from one to the next."""
    starts = [i for i, e in enumerate(path) if e.type == MESSAGE and e.role == "user"]
    if path and (not starts or starts[0] != 0):
        said = any(e.type in (MESSAGE, CUSTOM_MESSAGE, COMPACTION, BRANCH_SUMMARY) for e in path[:starts[0] if starts else None])
        if said or not starts:
            starts.insert(0, 0)
        else:
            starts[0] = 0
    return starts


@dataclass
class Section:
    """A branch's own part: the entries no branch listed before it holds. Read after the section
    it continues (`parent`), from the entry `fork`, it is the whole path to `leaf`."""

    leaf: str
    entries: list[Entry]
    parent: int | None  # index of the section it continues; None when it starts at a root
    fork: str | None  # the last entry before its own part


def branch_sections(tree: SessionTree, leaves: list[str]) -> list[Section]:
    """Every entry on the paths to `leaves` exactly once, cut into one section per branch, in
    the order of `leaves`: an export holds each entry once however many branches share it."""
    owner: dict[str, int] = {}
    sections: list[Section] = []
    for leaf in leaves:
        own = tree.path(leaf, stop=owner)  # (the walk up ends where an earlier branch's part does)
        if not own:
            continue  # already shown whole by an earlier branch
        fork = tree.parent.get(own[0].id)
        fork = fork if fork in owner else None
        for e in own:
            owner[e.id] = len(sections)
        sections.append(Section(leaf, own, owner[fork] if fork else None, fork))
    return sections
