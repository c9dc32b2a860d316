"""What an export holds as data: every entry it shows, once, and the order its parts read them
in, for its script (`static/export.js`) to render the entries past the first screens.

The server renders an export's header, figures, text tree, drawing and first screens; rendering
every entry there cost several times what pi's own `--export` takes, which embeds the session
and renders it in the browser. The data is one JSON object in a `<script type="application/json">`
block:
- `entries`: each entry's dict as read, in the order first shown (a lazy entry's line is copied
  as it is, neither parsed nor dumped: `entries.json_texts`); `ids`: each one's id in the tree (a
  duplicated or generated id makes it differ from the dict's); `kinds`: each one's kind
  (`transcript.kind_of`); `dom`: the element id of an entry whose id is not tame enough to be
  one; `sums`: the one-line summary of a mark or a meta entry; `labels`.
- `blocks`: one per part of the page (a branch's section, a sub-agent's run): its `key` (the
  `data-block` of its list), its `entries` (indexes into `entries`, in reading order), how many
  of them the server rendered (`shown`), and the links under an entry: the other branches that
  fork there (`forks`) and the sub-agent runs it started (`subs`), each as [id, element id, text].
Every `<` is written `\\u003c`, so no text in it can end the block.
"""

from __future__ import annotations

import dataclasses

import orjson

from ..core.entries import Entry, json_texts
from ..core.subagents import has_runs, starts_under
from ..core.transcript import (
    Item,
    Options,
    items_of,
    kind_of,
    only_tool_calls,
    other_branches,
)
from ..core.tree import SessionTree
from .graph import dom_id
from .render import FOLD_LINES, SHOWN_CHARS
from .views import entry_summary, short

_OPTIONS = Options(filter="all")  # everything is rendered; the filters only hide (CSS)


@dataclasses.dataclass
class Part:
    """One part of the page: its key, its entries, the items of the first `shown` of them (the
    server renders those), and the branches and runs that leave its entries."""

    key: str
    entries: list[Entry]
    shown: int
    rows: list[Item]
    branches_at: dict[str, list[str]]
    subagents_at: dict[str, list[str]]
    only_tools: set[str]

    @property
    def rest(self) -> int:
        return len(self.entries) - self.shown


def cut(tree: SessionTree, key: str, entries: list[Entry], budget: int, shown_ids: set[str], branch: bool) -> Part:
    """`entries` as a part of the page whose first `budget` entries (and the tool results right
    after them, which their calls show) the server renders."""
    n = max(0, min(len(entries), budget))
    while 0 < n < len(entries) and kind_of(entries[n]) == "tool":
        n += 1
    rows = items_of(entries[:n], _OPTIONS, tree.labels)
    branches_at, subagents_at = {}, {}
    if branch:
        runs = has_runs(tree)
        for at, e in enumerate(entries):
            kids = tree.conversation_children(e.id)
            if len(kids) > 1:
                others = [c for c in other_branches(tree, entries, at) if c in shown_ids]
                if others:
                    branches_at[e.id] = others
            if runs and kids:
                subs = starts_under(tree, e.id)
                if subs:
                    subagents_at[e.id] = subs
    only_tools = {it.entry.id for it in rows if it.kind == "assistant" and only_tool_calls(it.entry)} if branch else set()
    return Part(key, entries, n, rows, branches_at, subagents_at, only_tools)


def landing_spots(parts: list[Part], targets: set[str]) -> dict[str, list[str]]:
    """Part key -> the element ids among `targets` (the text tree's links) of entries it leaves
    to the script: with scripts off such a link lands on the line that says they need scripts
    rather than nowhere (the script replaces that line, and them, as it renders)."""
    rendered = {dom_id(e.id) for p in parts for e in p.entries[:p.shown]}
    left = targets - rendered
    out: dict[str, list[str]] = {}
    if left:
        tame = {d[2:] for d in left if d.startswith("e-")}  # (the entry's own id: no need to make every entry's element id)
        hashed = len(tame) < len(left)
        for p in parts:
            for e in p.entries[p.shown:]:
                if e.id in tame or hashed and dom_id(e.id) in left:
                    out.setdefault(p.key, []).append(dom_id(e.id))
    return out


def export_data(tree: SessionTree, parts: list[Part]) -> str:
    """The data block's text (see the module's docstring)."""
    index: dict[str, int] = {}
    entries: list[Entry] = []

    def at(e: Entry) -> int:
        i = index.get(e.id)
        if i is None:
            i = index[e.id] = len(entries)
            entries.append(e)
        return i

    def links(ids: dict[str, list[str]], width: int) -> dict[str, list[list[str]]]:
        return {str(index[e]): [[c, dom_id(c), short(entry_summary(tree.by_id[c]) or c, width)] for c in cs] for e, cs in ids.items()}

    blocks = []
    for p in parts:
        order = [at(e) for e in p.entries]
        blocks.append({"key": p.key, "shown": p.shown, "entries": order,
                       "forks": links(p.branches_at, 50), "subs": links(p.subagents_at, 60)})
    ids = [e.id for e in entries]
    kinds = [kind_of(e) for e in entries]
    head = orjson.dumps({
        "fold": FOLD_LINES, "cap": SHOWN_CHARS, "ids": ids, "kinds": kinds, "labels": tree.labels, "blocks": blocks,
        "dom": {str(i): d for i, d in enumerate(map(dom_id, ids)) if d != "e-" + ids[i]},
        "sums": {str(i): entry_summary(e) for i, (e, k) in enumerate(zip(entries, kinds)) if k in ("mark", "meta")},
    }, default=str)
    text = head[:-1] + b',"entries":[' + b",".join(json_texts(entries)) + b"]}"
    return text.replace(b"<", b"\\u003c").decode()

