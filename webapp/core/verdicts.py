"""Verdicts on branches: a person's "better", "worse" or "winner" (SPEC §5d), with a note.

On a file this app may write (pi v3) a verdict is one appended `custom` entry, which pi keeps in
the tree and leaves out of the context; the tree looks through it like a label, so the branch it
was appended to stays a branch. A file this app never writes (SPEC §5c: pi v1/v2, Claude Code,
Codex) keeps its verdicts in the application's data folder instead, keyed by the session id and
the target entry id: the session file stays byte-identical and nothing is put beside it.
The latest verdict of one `by` on one target stands.
"""

from __future__ import annotations

import hashlib
import os
import re
import weakref
from dataclasses import dataclass, replace
from pathlib import Path

import orjson

from .entries import CUSTOM, now_iso
from .errors import InvalidWrite
from .private import open_private, private_folder
from .session import Session
from .tree import SessionTree

VERDICT_TYPE = "session-tree.verdict"
PERSON_VERDICTS = ("better", "worse", "winner")
VERDICTS = (*PERSON_VERDICTS, "tie")  # a judge may find neither better
PERSON = "person"
MAX_NOTE = 2000
# What a verdict says in words: "better" alone does not say better than what. A verdict is given
# on a branch against the branches it was compared with (a judge's against those it judged).
VERDICT_WORDS = {
    "winner": "winner",
    "better": "better than the others",
    "worse": "worse than the others",
    "tie": "tie with the others",
}
VERDICT_MEANINGS = {
    "winner": "the branch to keep: every overview, presenter, print and export shows it first",
    "better": "better than the other branches it was compared with",
    "worse": "worse than the other branches it was compared with",
    "tie": "neither better nor worse than the branches it was judged with",
}


@dataclass(frozen=True)
class Verdict:
    target: str
    verdict: str
    note: str
    by: str  # "person" or "judge:<model>"
    at: str  # when it was given
    where: str  # "file" (a custom entry of the session) or "data folder"
    reasons: tuple[str, ...] = ()  # a judge's

    @property
    def words(self) -> str:
        """The verdict as a reader should take it ("better than the others")."""
        return VERDICT_WORDS.get(self.verdict, self.verdict)

    @property
    def meaning(self) -> str:
        return VERDICT_MEANINGS.get(self.verdict, self.verdict)

    @property
    def rank(self) -> int:
        """Sorting by verdict: winner first, then better, no verdict, tie, worse."""
        return {"winner": 4, "better": 3, "tie": 1, "worse": 0}.get(self.verdict, 2)


def data_dir() -> Path:
    """The application's own data folder (XDG): `$XDG_DATA_HOME/session-tree`, by default
    `~/.local/share/session-tree`."""
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return root / "session-tree"


def session_key(session: Session) -> str:
    """The session's id (its header's), else a digest of where its file is."""
    sid = (session.tree.header or {}).get("id")
    if isinstance(sid, str) and sid.strip():
        return sid.strip()
    where = str(Path(str(getattr(session.storage, "path", session.storage.name))).resolve())
    return "path-" + hashlib.sha256(where.encode()).hexdigest()[:24]


def _store_file(key: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", key)[:120] or "session"
    return data_dir() / "verdicts" / f"{safe}.jsonl"


def _record(target: str, verdict: str, note: str, by: str) -> dict:
    return {"targetId": target, "verdict": verdict, "note": note, "by": by}


def check_verdict(tree: SessionTree, target: str, verdict: str, note: str | None, by: str = PERSON) -> str:
    """The note, cleaned; InvalidWrite (saying what is wrong) for a verdict that may not be given,
    UnknownEntry for a target the session lacks."""
    tree.entry(target)
    allowed = PERSON_VERDICTS if by == PERSON else VERDICTS
    if verdict not in allowed:
        raise InvalidWrite(f"verdict {verdict!r}: use one of {', '.join(allowed)}")
    note = (note or "").strip()
    if len(note) > MAX_NOTE:
        raise InvalidWrite(f"the note has {len(note)} characters; at most {MAX_NOTE}")
    return note


def give_verdict(session: Session, target: str, verdict: str, note: str | None = None,
                 by: str = PERSON, extra: dict | None = None) -> Verdict:
    """Record a verdict on the branch ending at `target` (an entry id) and return it: appended to
    a writable session, else kept in the data folder. `extra`: a judge's reasons, usage, cost."""
    tree = session.tree
    target = tree.find(target).id if target not in tree.by_id else target
    note = check_verdict(tree, target, verdict, note, by)
    data = {**_record(target, verdict, note, by), **(extra or {})}
    if session.read_only_reason is None:
        entry = session.append_custom(VERDICT_TYPE, data)
        return _verdict(data, entry["timestamp"], "file")
    key = session_key(session)
    path = _store_file(key)
    line = orjson.dumps({"sessionId": key, **data, "timestamp": now_iso()}) + b"\n"
    try:
        private_folder(data_dir(), tighten=True)  # (what a person thought of a session is theirs alone)
        private_folder(path.parent, tighten=True)
        with os.fdopen(open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab") as f:
            f.write(line)
    except OSError as exc:
        raise InvalidWrite(f"cannot keep the verdict in {path}: {exc.strerror or exc}") from None
    return _verdict(data, now_iso(), "data folder")


_in_file: "weakref.WeakKeyDictionary[SessionTree, list[Verdict]]" = weakref.WeakKeyDictionary()


def _from_file(tree: SessionTree) -> list[Verdict]:
    """The verdicts among the session's entries, read once per tree (a tree does not change once
    built): every page that draws the chosen branch first asks."""
    known = _in_file.get(tree)
    if known is None:
        known = _in_file[tree] = _read_file(tree)
    return known


def _read_file(tree: SessionTree) -> list[Verdict]:
    out = []
    for e in tree.entries:
        if e.type != CUSTOM or e.get("customType") != VERDICT_TYPE:
            continue
        data = e.get("data")
        if isinstance(data, dict):
            v = _verdict(data, e.timestamp, "file")
            if v is not None:
                out.append(v)
    return out


def _from_data_folder(session: Session) -> list[Verdict]:
    key = session_key(session)
    path = _store_file(key)
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    out = []
    for line in raw.splitlines():
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a line cut short by a crash: the others stand
        if isinstance(data, dict) and data.get("sessionId") == key:
            v = _verdict(data, str(data.get("timestamp") or ""), "data folder")
            if v is not None:
                out.append(v)
    return out


def _verdict(data: dict, at: str, where: str) -> Verdict | None:
    target, verdict, by = data.get("targetId"), data.get("verdict"), data.get("by") or PERSON
    if not isinstance(target, str) or verdict not in VERDICTS or not isinstance(by, str):
        return None
    note, reasons = data.get("note"), data.get("reasons")
    reasons = tuple(str(r) for r in reasons) if isinstance(reasons, list) else ()
    return Verdict(target, verdict, note if isinstance(note, str) else "", by, at, where, reasons)


def verdicts(session: Session) -> dict[str, dict[str, Verdict]]:
    """Target id -> by -> the verdict that stands (the latest), from the file and the data folder."""
    found: dict[str, dict[str, Verdict]] = {}
    for v in _from_file(session.tree) + _from_data_folder(session):
        found.setdefault(v.target, {})[v.by] = v
    return found


def persons(found: dict[str, dict[str, Verdict]]) -> dict[str, Verdict]:
    """Target id -> a person's verdict that stands."""
    return {t: by[PERSON] for t, by in found.items() if PERSON in by}


def sort_by_verdict(rows: list, given: dict[str, Verdict], descending: bool = True) -> list:
    """Rows with a `leaf` (LeafFigures) by a person's verdict on them: winner, better, none, worse
    (descending), stable so ties keep the tree's order."""
    return sorted(rows, key=lambda r: given[r.leaf.id].rank if r.leaf.id in given else 2, reverse=descending)


def file_verdicts(tree: SessionTree) -> dict[str, dict[str, Verdict]]:
    """Target id -> by -> the verdict that stands, from the session's own entries only (what a
    tree read without its session, such as a redacted copy's, still holds)."""
    found: dict[str, dict[str, Verdict]] = {}
    for v in _from_file(tree):
        found.setdefault(v.target, {})[v.by] = v
    return found


def winners(tree: SessionTree, found: dict[str, dict[str, Verdict]]) -> list[str]:
    """The branches a person marked "winner", the latest first (entries the tree lacks left out)."""
    marked = [v for v in persons(found).values() if v.verdict == "winner" and v.target in tree.by_id]
    return [v.target for v in sorted(marked, key=lambda v: v.at, reverse=True)]


def chosen_leaves(tree: SessionTree, found: dict[str, dict[str, Verdict]]) -> list[str]:
    """The branches every overview, presenter, print and export shows first, in order: those a
    person marked "winner" (the latest first), then the active leaf."""
    active = tree.conversation_leaf(tree.active_leaf)
    return list(dict.fromkeys([*winners(tree, found), *([active] if active else [])]))


def chosen_leaf(tree: SessionTree, found: dict[str, dict[str, Verdict]]) -> str | None:
    """The one branch a view opens on: the latest winner, else the active leaf."""
    chosen = chosen_leaves(tree, found)
    return chosen[0] if chosen else None


def for_a_redacted_copy(found: dict[str, dict[str, Verdict]]) -> dict[str, dict[str, Verdict]]:
    """The verdicts a redacted copy may show: those from the data folder without their notes and
    reasons (free text the redaction never read), those in the file as they are (the copy's own
    entries hold them redacted)."""
    return {t: {by: v if v.where == "file" else replace(v, note="", reasons=()) for by, v in by_.items()}
            for t, by_ in found.items()}
