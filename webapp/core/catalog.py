"""Facts about a session file at a glance: what `ls` and the index page list for each session."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from .entries import COMPACTION, MESSAGE, as_key, content_text
from .session import Session
from .tree import SessionTree


_JSON_KEYS = {"first_message": "firstMessage", "bad_lines": "badLines"}


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
    problems: int
    version: int | None

    def as_dict(self) -> dict:
        return {_JSON_KEYS.get(k, k): v for k, v in asdict(self).items()}

    @property
    def title(self) -> str:
        return self.name or self.first_message or Path(self.path).name


def first_user_message(tree: SessionTree) -> str | None:
    for e in tree.entries:
        if e.type == MESSAGE and e.role == "user":
            text = content_text(e.message.get("content"), " ").strip()
            if text:
                return text
    return None


def summarize_session(path: Path, session: Session | None = None) -> SessionSummary:
    session = session or Session.open(path)
    tree = session.tree
    st = path.stat()
    header = tree.header or {}
    return SessionSummary(
        path=str(path),
        id=as_key(header.get("id")),
        name=tree.name,
        first_message=first_user_message(tree),
        cwd=as_key(header.get("cwd")),
        created=as_key(header.get("timestamp")),
        modified=datetime.fromtimestamp(st.st_mtime, timezone.utc).isoformat(timespec="seconds"),
        size=st.st_size,
        entries=len(tree.entries),
        leaves=len(tree.leaves()),
        compactions=sum(1 for e in tree.entries if e.type == COMPACTION),
        bad_lines=len(tree.bad_lines),
        problems=len(tree.all_problems()),
        version=session.log.version,
    )
