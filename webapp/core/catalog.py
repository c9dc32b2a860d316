"""Facts about a session file at a glance: what `ls` and the index page list for each session,
and how a listing groups them (by agent, in the registry's order, then project)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timezone
from pathlib import Path

from .agents import DEFAULT, source_of, titles
from .conversations import Facts, group, link_of, relation, root_id
from .entries import COMPACTION, MESSAGE, as_key, content_text
from .session import Session
from .tree import SessionTree


_JSON_KEYS = {"first_message": "firstMessage", "bad_lines": "badLines", "link_kind": "linkKind",
              "link_field": "linkField", "link_names": "linkNames", "root_id": "rootId"}


@dataclass(frozen=True)
class Member:
    """A file of a conversation across files, listed under its first file: how it goes on from
    the file it continues (`parent`, as the listing names it), or what it names that is not here."""

    rel: str
    summary: SessionSummary
    relation: str
    parent: str | None
    missing: str | None = None


def fold_listing(rows: list[tuple]) -> list[tuple]:
    """(rel path, summary, error) rows as a listing shows them: one row per conversation across
    files, (rel, summary, error, its other files as `Member`s, what it names that is not here);
    a file alone is a conversation of one."""
    grouping = group(s.facts(rel) for rel, s, e in rows if s is not None)
    by_rel = {rel: s for rel, s, e in rows}
    out = []
    for rel, summary, error in rows:
        if summary is None:
            out.append((rel, None, error, [], None))
        elif grouping.first.get(rel, rel) == rel:
            out.append((rel, summary, error, members_of(grouping, by_rel, rel), grouping.missing.get(rel)))
    return out


def members_of(grouping, by_rel: dict, rel: str) -> list[Member]:
    """The other files of the conversation `rel` is the first file of, as the listing shows them."""
    out = []
    for m in grouping.members(rel)[1:]:
        s = by_rel[m]
        out.append(Member(m, s, relation(s.link_kind, True), grouping.parent.get(m), grouping.missing.get(m)))
    return out


def group_sessions(rows: list[tuple]) -> dict[tuple[str, str], list]:
    """Listing rows ((rel path, summary, error, ...)) grouped by agent, then project: the session's
    working folder, else the folder it is in. Agents in a fixed order, projects by name."""
    groups: dict[tuple[str, str], list] = {}
    named = titles()
    for row in rows:
        rel, summary = row[0], row[1]
        source = summary.source if summary else DEFAULT.name
        project = summary.cwd if summary and summary.cwd else rel.rsplit("/", 1)[0] if "/" in rel else "(no folder)"
        groups.setdefault((named.get(source, source), project), []).append(row)
    order = {title: i for i, title in enumerate(named.values())}
    return dict(sorted(groups.items(), key=lambda g: (order.get(g[0][0], len(order)), g[0][1])))


@dataclass(frozen=True)
class SessionSummary:
    path: str
    id: str | None
    name: str | None
    first_message: str | None
    cwd: str | None
    created: str | None
    modified: str
    size: int
    entries: int
    leaves: int
    compactions: int
    bad_lines: int
    problems: int  # damage: what `validate` fails on
    version: int | None
    format: str = "pi-v3"  # SessionLog.format: pi-v3, pi-v1, claude-code, codex, ...
    warnings: int = 0  # what `validate` lists without failing (tree.WARNING_KINDS)
    # What joins it to other files (conversations.Facts): the link it makes, its first entry's id.
    link_kind: str | None = None
    link_field: str | None = None
    link_names: str | None = None
    root_id: str | None = None

    @property
    def source(self) -> str:
        """The agent that wrote the file."""
        return source_of(self.format)

    def as_dict(self) -> dict:
        # (its fields are plain values: `dataclasses.asdict`, which deep-copies each, cost 0.4 ms
        # a row, 4 s for `ls --json` of 10,000 sessions)
        return {key: getattr(self, name) for name, key in _FIELD_KEYS}

    @property
    def title(self) -> str:
        return self.name or self.first_message or Path(self.path).name

    def facts(self, file: str | None = None) -> Facts:
        """What joining it to other files reads (`file`: how the listing names it, else its path)."""
        return Facts(file or self.path, self.id, self.created, self.root_id, self.link_kind, self.link_field,
                     self.link_names)


_FIELD_KEYS = tuple((f.name, _JSON_KEYS.get(f.name, f.name)) for f in fields(SessionSummary))


FIRST_MESSAGE_CHARS = 500  # of the first message a listing holds (a pasted file is not a title)


def first_message_preview(tree: SessionTree) -> str | None:
    """The start of the first user message, as `ls` and the index both list it."""
    return (first_user_message(tree) or "")[:FIRST_MESSAGE_CHARS] or None


# What an agent writes as a user message for the model's sake, not the person's: Codex's
# environment and AGENTS.md blocks. A session is not titled by them.
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions")  # (as the Codex reader has them)


def is_injected(text: str) -> bool:
    """Whether a user message's text is context an agent put there (Codex's `<environment_context>`
    and instructions blocks) rather than what the person asked."""
    return text.lstrip().startswith(_INJECTED)


def first_user_message(tree: SessionTree) -> str | None:
    """What the person first asked: the first user message of the main line that is neither
    marked meta (Claude Code) nor context an agent injected (Codex)."""
    for e in tree.entries:
        if e.type == MESSAGE and e.role == "user" and not e.sidechain and not e.message.get("isMeta"):
            text = content_text(e.message.get("content"), " ").strip()
            if text and not is_injected(text):
                return text
    return None


def summarize_session(path: Path, session: Session | None = None) -> SessionSummary:
    session = session or Session.open(path)
    tree = session.tree
    st = path.stat()
    header = tree.header or {}
    damage, warnings = tree.problem_counts()
    link = link_of(tree)
    return SessionSummary(
        path=str(path),
        id=as_key(header.get("id")),
        name=tree.name,
        first_message=first_message_preview(tree),
        cwd=as_key(header.get("cwd")),
        created=as_key(header.get("timestamp")),
        modified=datetime.fromtimestamp(st.st_mtime, timezone.utc).isoformat(timespec="seconds"),
        size=st.st_size,
        entries=len(tree.entries),
        leaves=len(tree.leaves()),
        compactions=sum(1 for e in tree.entries if e.type == COMPACTION),
        bad_lines=len(tree.bad_lines),
        problems=damage,
        version=session.log.version,
        format=tree.format,
        warnings=warnings,
        link_kind=link.kind if link else None,
        link_field=link.field if link else None,
        link_names=link.names if link else None,
        root_id=root_id(tree),
    )
