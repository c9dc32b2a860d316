"""`session-tree verdict FILE LEAF better|worse|winner [--note TEXT]`: a person's verdict on a
branch, appended to a pi v3 file or kept in the data folder for a file this app never writes."""

from __future__ import annotations

from ..core.entries import short_id
from ..core.session import Session
from ..core.verdicts import PERSON_VERDICTS, give_verdict, verdicts
from .output import print_json_line


def cmd_verdict(args) -> int:
    session = Session.open(args.file)
    v = give_verdict(session, args.leaf, args.verdict, args.note)
    if args.json:
        print_json_line({"target": v.target, "verdict": v.verdict, "note": v.note, "by": v.by,
                            "at": v.at, "kept_in": v.where})
        return 0
    where = "appended to the session" if v.where == "file" else "kept in the data folder (the file is read-only)"
    print(f"{v.verdict} on {short_id(v.target)}{f' ({v.note})' if v.note else ''}: {where}")
    return 0


def verdict_rows(session: Session, tips: list[str]) -> list[list[str]]:
    """The verdict row of `session-tree compare`'s table (none when no branch has a verdict)."""
    given = verdicts(session)
    if not any(t in given for t in tips):
        return []
    return [["verdict", *[", ".join(f"{v.verdict} ({v.by})" for v in given.get(t, {}).values()) or "–"
                          for t in tips]]]


def register(command) -> None:
    sp = command("verdict", cmd_verdict)
    sp.add_argument("leaf", metavar="LEAF", help="the branch's leaf (a unique short id is enough)")
    sp.add_argument("verdict", choices=PERSON_VERDICTS)
    sp.add_argument("--note", metavar="TEXT")
    sp.add_argument("--json", action="store_true")
